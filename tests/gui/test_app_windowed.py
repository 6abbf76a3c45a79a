"""The windowed Windows exe has no stderr (sys.stderr is None): a refusal to start is shown."""

from __future__ import annotations

import ctypes
import logging
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.app import run_app


class User32:
    """MessageBoxW as user32 takes it: (owner, text, caption, flags) → the button pressed."""

    def __init__(self) -> None:
        self.boxes: list[tuple[Any, str, str, int]] = []

    def MessageBoxW(self, owner: Any, text: str, caption: str, flags: int) -> int:  # noqa: N802
        self.boxes.append((owner, text, caption, flags))
        return 1  # IDOK


@pytest.fixture
def windowed_exe(monkeypatch: pytest.MonkeyPatch) -> User32:
    """A PyInstaller console=False process on Windows (the test sets sys.stderr to None in
    its body: pytest's capture puts its own back between the phases)."""
    user32 = User32()
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(ctypes, "windll", types.SimpleNamespace(user32=user32), raising=False)
    return user32


def test_a_data_dir_that_cannot_be_made_is_a_message_box_and_exit_3_without_stderr(
    windowed_exe: User32,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "stderr", None)
    monkeypatch.setattr(sys, "stdout", None)
    blocker = tmp_path / "data"
    blocker.write_text("a file where the data dir should be")

    with caplog.at_level(logging.ERROR, logger="desktop_agent.app"):
        code = run_app([], data_dir=blocker / "inner")

    assert code == 3
    ((owner, text, caption, flags),) = windowed_exe.boxes
    inner = blocker / "inner"
    assert text.startswith(f"Desktop Agent cannot start: data dir {inner} cannot be made")
    assert (owner, caption) == (None, "Desktop Agent")
    assert flags & 0x10  # MB_ICONERROR
    assert "cannot be made" in caplog.text
