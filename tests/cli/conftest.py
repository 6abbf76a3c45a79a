"""The CLI tests' shared fixture: a home of the test's own."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """DESKTOP_AGENT_HOME (settings, data) and XDG_CONFIG_HOME in the test's tmp_path, and
    none of the environment's overrides (server, model, grounding) nor a display: the
    settings are the defaults and what the test writes there. The home, not made yet."""
    home = tmp_path / "home"
    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in ("DESKTOP_AGENT_BASE_URL", "DESKTOP_AGENT_MODEL", "DESKTOP_AGENT_GROUNDING"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    return home
