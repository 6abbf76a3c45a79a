"""`doctor` says when the injection guard is off, with the fix (issue 31)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from desktop_agent.launch import main


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("setting", ["off", "on"])
def test_doctor_warns_while_the_injection_guard_is_off(
    setting: str,
    isolated_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DESKTOP_AGENT_PROBE_PORTS", str(_closed_port()))
    isolated_home.mkdir(parents=True)
    (isolated_home / "settings.toml").write_text(f'injection_guard = "{setting}"\n')

    main(["doctor"])
    out = capsys.readouterr().out

    warned = [line for line in out.splitlines() if line.startswith("FAIL injection")]
    if setting == "off":
        assert warned == [
            "FAIL injection  the injection guard is off: text on the screen that gives orders "
            "to an AI is not asked about, and under a blanket approval the model may act on it "
            "unasked"
        ]
        assert '     fix: set injection_guard = "on" in settings.toml' in out
    else:
        assert warned == []
