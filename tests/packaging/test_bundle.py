"""The installable app: packaging/build makes the bundle and the .deb; the installed files are
right, the frozen app shows its window (WM_CLASS of the .desktop entry) and tray icon, and
the same bundle carries out a `desktop-agent run` against a model, with AT-SPI controls."""

from __future__ import annotations

import configparser
import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import display_clients, inventory_of
from tests.packaging.conftest import Built
from tests.support.app import GNOME_DESKTOP, libraries_loaded_by_the_first_paint, spawn_app
from tests.support.model_server import ModelServer, Reply, serve_in_thread
from tests.support.xdisplay import XSession, close_window, start_tray, wait_until

ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)


def desktop_entry(built: Built) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(built.root / "usr/share/applications/desktop-agent.desktop", encoding="utf-8")
    return parser["Desktop Entry"]


def frozen(built: Built) -> Path:
    """The app as the .deb installs it (under the extracted root)."""
    return built.root / "opt/desktop-agent/desktop-agent"


def test_the_deb_installs_the_bundle_a_launcher_the_entry_and_the_icons(
    built: Built, tmp_path: Path
) -> None:
    print(f"build took {built.seconds:.0f} s; {built.log.strip().splitlines()[-3:]}")
    fields = subprocess.run(
        ["dpkg-deb", "-f", str(built.deb), "Package", "Version", "Depends"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "Package: desktop-agent" in fields and "Version: 0.1.0" in fields
    assert "libxcb-icccm4" in fields

    assert frozen(built).stat().st_mode & 0o111
    assert (built.root / "opt/desktop-agent/desktop-agent-cli").stat().st_mode & 0o111
    # the command on PATH is a relative link to the bundle's executable (no script to start
    # first), which works where the .deb is unpacked as where it is installed
    launcher = built.root / "usr/bin/desktop-agent"
    assert os.readlink(launcher) == "../../opt/desktop-agent/desktop-agent"
    assert launcher.resolve() == frozen(built).resolve()
    # started through the link, the bootloader finds its _internal folder
    stopped = subprocess.run(
        [str(launcher), "--data-dir", str(tmp_path), "stop-all"],
        env={**os.environ, "DESKTOP_AGENT_HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (stopped.returncode, stopped.stdout.strip()) == (0, "stopped 0 run(s)"), stopped.stderr
    icons = built.root / "usr/share/icons/hicolor"
    for size in ICON_SIZES:
        png = icons / f"{size}x{size}/apps/desktop-agent.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png
        assert int.from_bytes(png.read_bytes()[16:20], "big") == size  # IHDR width
    assert (icons / "scalable/apps/desktop-agent.svg").read_text().startswith("<svg")
    # the bundle carries the app's own resources (desktop_agent/ui/icons.py finds them)
    assert (
        built.root / "opt/desktop-agent/_internal/desktop_agent/resources/icons/desktop-agent.svg"
    ).is_file()
    # built by a builder with a private umask (conftest), installed for every user all the same
    unreadable = [
        p for p in built.root.rglob("*") if not p.is_symlink() and not p.stat().st_mode & 0o004
    ]
    assert not unreadable, unreadable[:5]


def test_the_desktop_entry_is_valid_and_names_the_launcher_and_the_icon(built: Built) -> None:
    path = built.root / "usr/share/applications/desktop-agent.desktop"
    checked = subprocess.run(
        ["desktop-file-validate", str(path)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0 and checked.stdout == "", checked.stdout + checked.stderr

    entry = desktop_entry(built)
    assert entry["Exec"].split()[0] == "desktop-agent"
    assert (built.root / "usr/bin" / entry["Exec"].split()[0]).is_file()
    assert entry["Icon"] == "desktop-agent" and entry["StartupWMClass"] == "desktop-agent"


def _app_windows(display_name: str) -> list[tuple[int, str, tuple[str, ...]]]:
    """(id, title, WM_CLASS) of every mapped top-level client window."""
    from Xlib import X, display

    connection = display.Display(display_name)
    try:
        found = []
        for frame in connection.screen().root.query_tree().children:
            for window in [frame, *frame.query_tree().children]:
                if window.get_attributes().map_state != X.IsViewable:
                    continue
                wm_class = window.get_wm_class()
                if wm_class:
                    found.append((window.id, window.get_wm_name() or "", tuple(wm_class)))
        return found
    finally:
        connection.close()


def test_the_frozen_app_runs_no_run_time_hook_for_what_it_does_not_use(built: Built) -> None:
    """What the executable runs before the app's first line: its embedded scripts (typecode 's'
    in the executable's CArchive, in the order the bootloader runs them, read as
    pyi-archive_viewer reads it: PyInstaller/archive/readers.py, CArchiveReader). The hooks for
    multiprocessing, inspect and pkgutil imported what the app does not use at every start;
    PySide6's imported PySide6 and shiboken6 before the app turns the garbage collector off for
    its start (PySide6 finds its Qt folder itself). The spec's own hook, which gives the imports
    back to Python's finders (packaging/rthook_finders.py), runs right after PyInstaller's
    bootstrap, before any other; OpenSSL's stays."""
    from PyInstaller.archive.readers import CArchiveReader

    toc = CArchiveReader(str(frozen(built))).toc
    scripts = [name for name, entry in toc.items() if entry[4] == "s"]
    assert not set(scripts) & {
        "pyi_rth_multiprocessing",
        "pyi_rth_inspect",
        "pyi_rth_pkgutil",
        "pyi_rth_pyside6",
    }
    assert scripts[:2] == ["pyiboot01_bootstrap", "rthook_finders"]
    assert {"pyi_rth_cryptography_openssl", "entry"} <= set(scripts)
    assert scripts[-1] == "entry"


def _environ(pid: int) -> dict[str, str]:
    entries = Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace").split("\0")
    return dict(entry.partition("=")[::2] for entry in entries if entry)


def test_the_frozen_stop_all_loads_no_qt(built: Built, tmp_path: Path) -> None:
    """`desktop-agent stop-all` from the bundle answers without Qt: the dynamic linker's own
    list of the libraries it loads (LD_DEBUG=files, glibc's ld.so) names none of Qt's. With
    PyInstaller's PySide6 hook every frozen process imported PySide6.QtCore (and shiboken6)
    before its first line: ~100 ms of CPU of a stop that answers in ~20 without."""
    env = {
        **os.environ,
        "DESKTOP_AGENT_HOME": str(tmp_path),
        "LD_DEBUG": "files",
        "LD_DEBUG_OUTPUT": str(tmp_path / "ld"),
    }
    stopped = subprocess.run(
        [str(frozen(built)), "--data-dir", str(tmp_path), "stop-all"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (stopped.returncode, stopped.stdout.strip()) == (0, "stopped 0 run(s)"), stopped.stderr
    loaded = "".join(path.read_text() for path in tmp_path.glob("ld.*"))
    assert "libpython3" in loaded  # the list is the frozen process's
    assert "libQt6Core" not in loaded and "libshiboken6" not in loaded


def test_the_frozen_app_on_a_gnome_desktop_paints_without_loading_gtk(
    built: Built, xsession: XSession, tmp_path: Path
) -> None:
    """On a GNOME desktop Qt would take GTK 3's platform theme, and GTK 3 with it (~40 ms of CPU
    of the start); the bundle leaves the theme plugin out and Qt takes its own GNOME theme. The
    libraries the frozen app loads by its first paint are the dynamic linker's own list
    (LD_DEBUG=files, glibc's ld.so)."""
    loaded = libraries_loaded_by_the_first_paint(
        tmp_path / "data", session=xsession, extra_env=GNOME_DESKTOP, command=(str(frozen(built)),)
    )
    assert "libqxcb.so" in loaded  # the list is the frozen app's, on X
    assert "libqgtk3" not in loaded and "libgtk-3" not in loaded
    themes = built.bundle / "_internal/PySide6/Qt/plugins/platformthemes"
    assert not (themes / "libqgtk3.so").exists()


def test_the_frozen_app_shows_its_window_with_the_entrys_wm_class_and_a_tray_icon(
    built: Built, xsession: XSession, tmp_path: Path
) -> None:
    entry = desktop_entry(built)
    tray = start_tray(xsession, "--height", "24")
    try:
        with spawn_app(tmp_path, session=xsession, command=(str(frozen(built)),)) as app:
            windows = wait_until(
                lambda: [w for w in _app_windows(xsession.display) if w[1] == "Desktop Agent"],
                timeout=30,
                what="the frozen app's window",
            )
            (window_id, _, wm_class) = windows[0]
            assert wm_class == (entry["StartupWMClass"], entry["StartupWMClass"])
            app.wait_painted(timeout=10)
            # the tray icon comes with the services, once the local API is up
            app.wait_serving()
            # closing the window hides it to the tray: the tray icon is there
            close_window(xsession.display, window_id)
            app.wait_for(lambda: "window closed: hidden to the tray" in app.log(),
                         "the window hidden to the tray", timeout=10)  # fmt: skip
            assert app.process.poll() is None
            app.quit_with_sigterm()
            assert "No system tray" not in app.log()
    finally:
        xsession.stop(tray)


class EditorCheckModel:
    """Launches l3afpad, then is done once the element list shows its text area (AT-SPI)."""

    def __init__(self) -> None:
        self.launched = False
        self.screens: list[str] = []

    def __call__(self, body: dict[str, Any]) -> Reply:
        screen = inventory_of(body)
        self.screens.append(screen)
        if not self.launched:
            self.launched = True
            return Reply(
                {"action": "tool", "tool": "launch_app", "args": {"command": "l3afpad"},
                 "reason": "start the editor"}
            )  # fmt: skip
        if "L3afpad" in screen and "] edit" in screen:
            return Reply({"action": "done", "message": "the editor is open", "reason": "seen"})
        return Reply(
            {"action": "tool", "tool": "wait", "args": {"seconds": 0.2}, "reason": "settling"}
        )


@pytest.fixture
def model_server() -> Iterator[tuple[ModelServer, EditorCheckModel]]:
    model = EditorCheckModel()
    with serve_in_thread(ModelServer([], respond=model)) as server:
        yield server, model


def test_the_bundle_runs_a_task_lists_it_stops_all_and_passes_the_doctor(
    built: Built, xsession: XSession, tmp_path: Path, model_server: Any
) -> None:
    server, model = model_server
    # DESKTOP_AGENT_E2E marks the apps the run launches, for display_clients() to end them
    env = xsession.child_env({"DESKTOP_AGENT_HOME": str(tmp_path), "DESKTOP_AGENT_E2E": "1"})
    cli = [str(frozen(built)), "--data-dir", str(tmp_path)]
    try:
        run = subprocess.run(
            [*cli, "run", "open the text editor", "--base-url", server.base_url,
             "--model", "qwen2.5vl", "--vision", "yes", "--json", "--approve", "all",
             "--allow-dangerous", "launch_app", "--max-steps", "40"],
            env=env, capture_output=True, text=True, timeout=180, check=False,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr[-3000:]
        events = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
        final = events[-1]
        assert final["type"] == "run_finished"
        assert (final["run"]["status"], final["run"]["stop_reason"]) == ("completed", "done")
        # the frozen bundle listed l3afpad's controls through AT-SPI, not just its window
        assert any("] menu" in screen and "] edit" in screen for screen in model.screens)
        # the program it launched was not pointed at the bundle's Qt plugins (PyInstaller's
        # PySide6 hook set QT_PLUGIN_PATH and QML2_IMPORT_PATH for every frozen process) nor at
        # its libraries (the bootloader's LD_LIBRARY_PATH: its own GTK, GLib, X11 first)
        launched = [_environ(pid) for pid in display_clients(xsession.display)]
        assert launched, "l3afpad is not running"
        for environ in launched:
            assert not {"QT_PLUGIN_PATH", "QML2_IMPORT_PATH"} & set(environ), environ
            assert environ.get("LD_LIBRARY_PATH") == env.get("LD_LIBRARY_PATH"), environ
            assert "LD_LIBRARY_PATH_ORIG" not in environ

        listed = subprocess.run(
            [*cli, "runs", "--json"], env=env, capture_output=True, text=True, timeout=60
        )
        assert json.loads(listed.stdout)[0]["id"] == final["run_id"]
        stopped = subprocess.run(
            [*cli, "stop-all"], env=env, capture_output=True, text=True, timeout=60
        )
        assert (stopped.returncode, stopped.stdout.strip()) == (0, "stopped 0 run(s)")
        doctor = subprocess.run(
            [*cli, "doctor", "--base-url", server.base_url, "--model", "qwen2.5vl"],
            env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert doctor.returncode == 0, doctor.stdout + doctor.stderr
        assert "ok   inventory  atspi: " in doctor.stdout
    finally:
        for pid in display_clients(xsession.display):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
