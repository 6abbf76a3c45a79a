"""The real app process from its first paint to a window that can start a run: what it loads
on the way, and what it leaves for later (benchmarks/README.md, "Issue 22, the app usable
after its paint")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.app import run_python

pytestmark = [pytest.mark.gui, pytest.mark.posix]


def run_until_bound(tmp_path: Path, report: str, *, before: str = "") -> list[str]:
    """The app as `desktop-agent` starts it; `before` runs first, and once its window is bound
    to the engine (Start on) `report` (an expression) is printed as JSON and the process
    ends. Its printed value."""
    script = (
        "import gc, json, os, sys\n"
        "from desktop_agent.ui.main_window import MainWindow\n"
        "from desktop_agent.__main__ import main\n"
        f"{before}"
        "bind = MainWindow.bind\n"
        "def bound(window, client, runs):\n"
        "    bind(window, client, runs)\n"
        f"    print(json.dumps({report}))\n"
        "    sys.stdout.flush()\n"
        "    os._exit(0)\n"
        "MainWindow.bind = bound\n"
        f"main(['--data-dir', {str(tmp_path)!r}])\n"
    )
    done = run_python(script, tmp_path)
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stderr
    value: list[str] = json.loads(lines[0])
    return value


#: what the window's Start does not wait for: the local API's server (aiohttp's imports, the
#: client's with it: ~0.2 s) comes once Start is on, on a worker thread (Host.serve_api); the
#: planner itself (its client, prompt, grammars: ~20 ms) with a run (the model line's check
#: needs only the vision check)
NOT_BEFORE_START = ("aiohttp", "desktop_agent.api.server", "openai", "desktop_agent.planner.client")


def test_the_tools_argument_models_are_built_at_their_first_use_not_by_the_start(
    tmp_path: Path,
) -> None:
    # pydantic's validators and schemas of the 15 built-in tools' arguments (~45 ms of CPU):
    # a run's first prompt or call builds them; the window only names the tools
    report = (
        "[spec.name for spec in __import__('desktop_agent.core.builtin_tools', fromlist=['x'])"
        ".BUILTIN_TOOLS if spec.args_model.__pydantic_complete__]"
    )
    assert run_until_bound(tmp_path, report) == []


def test_the_window_can_start_a_run_before_the_local_apis_server_and_the_planner_are_imported(
    tmp_path: Path,
) -> None:
    report = f"sorted(m for m in {NOT_BEFORE_START!r} if m in sys.modules)"
    assert run_until_bound(tmp_path, report) == []


def test_no_garbage_collection_runs_from_the_first_paint_until_the_engine_and_api_are_up(
    tmp_path: Path,
) -> None:
    # the start's imports and objects (engine, store, adapters, the API server) live as long as
    # the app; the GUI thread's collector ticks passed over them every 100 ms (2-15 ms each)
    # and freed next to nothing. Counted from the entry point (none before the paint:
    # test_app_process; this script's own imports come before it, collected as usual) to the
    # end of DesktopApp.start_services (the API, the hotkey and the takeover watch up)
    script = (
        "import gc, os, sys\n"
        "collections = []\n"
        "from desktop_agent.app import DesktopApp\n"
        "from desktop_agent.__main__ import main\n"
        "start_services = DesktopApp.start_services\n"
        "async def started(app):\n"
        "    await start_services(app)\n"
        "    print(len(collections), app.client.host.api_port is not None)\n"
        "    sys.stdout.flush()\n"
        "    os._exit(0)\n"
        "DesktopApp.start_services = started\n"
        "gc.callbacks.append(lambda phase, info: phase == 'start' and collections.append(1))\n"
        f"main(['--data-dir', {str(tmp_path)!r}])\n"
    )
    done = run_python(script, tmp_path)
    assert done.stdout.split() == ["0", "True"], done.stderr


def test_asyncio_is_imported_off_the_gui_thread_after_the_first_paint(tmp_path: Path) -> None:
    # its imports were 50-60 ms of the GUI thread right after the paint (the window did not
    # answer meanwhile); a worker imports them while Qt's own loop goes on
    before = (
        "import threading\n"
        "importers = []\n"
        "class Watch:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'asyncio':\n"
        "            importers.append(threading.current_thread().name)\n"
        "        return None\n"
        "sys.meta_path.insert(0, Watch())\n"
    )
    importers = run_until_bound(tmp_path, "importers", before=before)
    assert importers and "MainThread" not in importers
