"""The real app collects Python's garbage on its GUI thread only (desktop_agent/ui/collector.py):
a collection started on the engine thread, the store's or a capture thread would free Qt
objects caught in cycles off the GUI thread, and Qt may segfault."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support.app import spawn_app
from tests.support.model_server import ModelServer, Reply, serve_in_thread
from tests.support.xdisplay import close_window, start_xsession, wait_until

pytestmark = [pytest.mark.gui, pytest.mark.desktop]

#: `python -m desktop_agent` with every collection's thread counted (gc.callbacks), written
#: to argv[1] as {thread name: collections} when the app has exited
RECORDING_APP = """
import gc, json, runpy, sys, threading
out, sys.argv = sys.argv[1], ["desktop_agent", *sys.argv[2:]]
threads = {}
def record(phase, info):
    if phase == "start":
        name = threading.current_thread().name
        threads[name] = threads.get(name, 0) + 1
gc.callbacks.append(record)
try:
    runpy.run_module("desktop_agent", run_name="__main__", alter_sys=True)
finally:
    gc.callbacks.remove(record)
    with open(out, "w") as f:
        json.dump(threads, f)
"""


def test_no_garbage_collection_runs_off_the_gui_thread_during_runs_through_the_window(
    tmp_path: Path,
) -> None:
    recorded = tmp_path / "collections.json"
    session = start_xsession(1280, 800, atspi=False)
    try:
        with (
            serve_in_thread(ModelServer()) as server,
            spawn_app(
                tmp_path / "data", session=session, server=server,
                command=(sys.executable, "-c", RECORDING_APP, str(recorded)),
            ) as app,
        ):  # fmt: skip
            app.wait_serving()
            main = session.xdotool("search", "--sync", "--onlyvisible", "--name", "^Desktop Agent$")
            for n in range(3):  # each run: a screenshot, a model request, the store's writes
                server.add(Reply({"action": "done", "message": f"nothing to do {n}"}))
                asked = len(server.requests)

                def asked_the_model(asked: int = asked) -> bool:
                    return len(server.requests) > asked

                session.xdotool("windowactivate", "--sync", main)
                session.xdotool("key", "--clearmodifiers", "ctrl+a")
                session.xdotool("type", "--delay", "2", f"look at the screen {n}")
                session.xdotool("key", "--clearmodifiers", "ctrl+Return")
                wait_until(asked_the_model, timeout=20, what="the run's model request")
            close_window(session.display, main)
            code = app.wait_exit(timeout=20)
            stderr = app.stderr()
    finally:
        session.close()

    assert code == 0, stderr[-3000:]
    threads = json.loads(recorded.read_text())
    assert threads.get("MainThread", 0) > 0, "the GUI thread's timer collects"
    assert set(threads) == {"MainThread"}, f"collections by thread: {threads}"
