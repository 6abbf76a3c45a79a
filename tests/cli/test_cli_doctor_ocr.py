"""`doctor` says whether the OCR program the injection guard reads pixel-only regions with is
there (its path and version), and when it is missing while the guard is on, what that means
and what to install: a FAIL, as a missing xclip is."""

from __future__ import annotations

import socket
import stat
import sys
from pathlib import Path

import pytest

from desktop_agent.cli import commands
from desktop_agent.desktop import ocr
from desktop_agent.desktop.doctor import DoctorItem
from desktop_agent.desktop.ocr import OcrProgram
from desktop_agent.launch import main

#: what Debian 12's tesseract 5.3.0 prints for `--version` (measured: all on stdout)
TESSERACT_VERSION = "tesseract 5.3.0\n leptonica-1.82.0\n  libgif 5.2.1 : libpng 1.6.39\n"


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def bin_dir(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH is one empty folder of the test's (no tesseract), on an X11 desktop where OCR
    reads; no model server answers."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.setenv("DESKTOP_AGENT_DESKTOP", "x11")
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("DESKTOP_AGENT_PROBE_PORTS", str(_closed_port()))
    isolated_home.mkdir(parents=True)
    return folder


def _doctor(home: Path, capsys: pytest.CaptureFixture[str], guard: str = "on") -> list[str]:
    (home / "settings.toml").write_text(f'injection_guard = "{guard}"\n')
    main(["doctor"])
    return capsys.readouterr().out.splitlines()


def _ocr_lines(out: list[str]) -> list[str]:
    at = next(i for i, line in enumerate(out) if line[5:].startswith("ocr "))
    return out[at : at + 2] if out[at + 1].lstrip().startswith("fix:") else out[at : at + 1]


def test_doctor_without_tesseract_says_the_guard_cannot_read_pixels_and_what_to_install(
    bin_dir: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _ocr_lines(_doctor(isolated_home, capsys)) == [
        "FAIL ocr        tesseract not found on PATH: text in notifications and images is not "
        "read by the injection guard",
        "                fix: install tesseract (Debian/Ubuntu: sudo apt install tesseract-ocr), "
        "or put it on PATH",
    ]


def test_doctor_names_the_tesseract_it_finds_and_its_version(
    bin_dir: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = bin_dir / "tesseract"
    program.write_text(f"#!/bin/sh\nprintf '%s' '{TESSERACT_VERSION}'\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)

    assert _ocr_lines(_doctor(isolated_home, capsys)) == [
        f"ok   ocr        tesseract 5.3.0 at {program}"
    ]


def test_doctor_says_a_tesseract_that_does_not_run(
    bin_dir: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = bin_dir / "tesseract"
    program.write_text("#!/bin/sh\necho 'error while loading shared libraries' >&2\nexit 127\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)

    assert _ocr_lines(_doctor(isolated_home, capsys)) == [
        f"FAIL ocr        {program} does not run (exit 127): text in notifications and images "
        "is not read by the injection guard",
        f"                fix: check that `{program} --version` runs, or reinstall it "
        "(Debian/Ubuntu: sudo apt install --reinstall tesseract-ocr)",
    ]


def test_with_the_guard_off_a_missing_tesseract_passes(
    bin_dir: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The guard's own FAIL line says it is off; OCR reads nothing then."""
    assert _ocr_lines(_doctor(isolated_home, capsys, guard="off")) == [
        "ok   ocr        tesseract not found on PATH; not used while the injection guard is off"
    ]


def test_on_windows_where_no_region_is_read_by_ocr_a_missing_tesseract_passes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """UI Automation lists no pixel-only region: the observer never runs OCR on Windows, so
    installing it would change nothing."""
    monkeypatch.setattr(ocr, "find_ocr_program", lambda: OcrProgram(None))
    monkeypatch.setattr(sys, "platform", "win32")

    assert commands._ocr_check(guard=True) == DoctorItem(
        "ocr",
        True,
        "tesseract not found on PATH; not used on Windows: UI Automation lists no region that "
        "only its pixels show",
    )


def test_on_a_wayland_session_a_missing_tesseract_fails_as_on_x11(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Wayland screen whose active window is not on the accessibility bus is read from its
    pixels (atspi_wayland.SCREEN): without tesseract the guard reads none of it."""
    monkeypatch.setattr(ocr, "find_ocr_program", lambda: OcrProgram(None))
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("DESKTOP_AGENT_DESKTOP", "wayland")

    item = commands._ocr_check(guard=True)
    assert (item.ok, item.detail) == (
        False,
        "tesseract not found on PATH: text in notifications and images is not read by the "
        "injection guard",
    )
