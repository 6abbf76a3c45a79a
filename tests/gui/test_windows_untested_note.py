"""Where a Windows user reads, it says plainly that nothing of the Windows app has run on a
real Windows machine yet, with the checklist as the way to check (issue 37 item 10)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from desktop_agent.ui.model_servers import ModelServersDialog

pytestmark = [pytest.mark.gui]

ROOT = Path(__file__).resolve().parents[2]


def section(path: str, heading: str) -> str:
    """The text of `heading`'s section of a Markdown file, up to the next heading of its level."""
    text = (ROOT / path).read_text(encoding="utf-8")
    level = heading.split(" ", 1)[0]
    start = text.index(heading + "\n")
    end = text.find("\n" + level + " ", start + len(heading))
    return text[start : end if end >= 0 else None]


@pytest.mark.parametrize(
    ("path", "heading"),
    [("README.md", "## Windows"), ("packaging/README.md", "## Windows (10/11, x64)")],
)
def test_the_windows_sections_say_nothing_has_run_on_a_real_windows_machine(
    path: str, heading: str
) -> None:
    words = " ".join(section(path, heading).split())
    assert "run on a real Windows machine" in words
    assert "windows-checklist.md" in words


def test_the_installers_first_page_says_so() -> None:
    iss = (ROOT / "packaging/windows/desktop-agent.iss").read_text(encoding="utf-8")
    [welcome] = [line for line in iss.splitlines() if line.startswith("WelcomeLabel2=")]
    assert "not yet been run on a real Windows machine" in welcome
    assert "windows-checklist.md" in welcome


def test_the_first_run_dialog_says_so_on_windows_only(qapp: QApplication) -> None:
    on_windows = ModelServersDialog(None, platform="win32")
    on_linux = ModelServersDialog(None, platform="linux")
    try:
        note = on_windows.untested_note
        assert note is not None and not note.isHidden()
        assert "has not yet run on a real Windows machine" in note.text()
        assert "docs/windows-checklist.md" in note.text()
        assert on_linux.untested_note is None
    finally:
        on_windows.deleteLater()
        on_linux.deleteLater()
