"""The real app collects Python's garbage on its GUI thread only (desktop_agent/ui/collector.py):
a collection started on the engine thread, the store's or a capture thread would free Qt
objects caught in cycles off the GUI thread, and Qt may segfault."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.model_server import ModelServer, Reply, serve_in_thread
from tests.support.xdisplay import XSession, close_window, start_xsession, wait_until

pytestmark = [pytest.mark.gui, pytest.mark.desktop]

ROOT = Path(__file__).resolve().parents[2]

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


def xdotool(session: XSession, *args: str) -> str:
    done = subprocess.run(
        ["xdotool", *args],
        env=session.child_env(),
        capture_output=True,
        text=True,
        timeout=20,
        check=True,
    )
    return done.stdout.strip()


def test_no_garbage_collection_runs_off_the_gui_thread_during_runs_through_the_window(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    recorded = tmp_path / "collections.json"
    session = start_xsession(1280, 800, atspi=False)
    stderr = (tmp_path / "stderr.txt").open("wb")
    try:
        with serve_in_thread(ModelServer()) as server:
            process = session.spawn(
                [sys.executable, "-c", RECORDING_APP, str(recorded), "--data-dir", str(data_dir)],
                extra_env={
                    "DESKTOP_AGENT_HOME": str(data_dir),
                    "DESKTOP_AGENT_BASE_URL": server.base_url,
                    "DESKTOP_AGENT_MODEL": "qwen2.5vl",
                    "QT_QPA_PLATFORM": "xcb",
                },
                cwd=ROOT,
                stderr=stderr,
            )
            instance = data_dir / "instances" / f"{process.pid}.json"
            wait_until(instance.exists, timeout=20, what="the app's API")
            main = xdotool(
                session, "search", "--sync", "--onlyvisible", "--name", "^Desktop Agent$"
            )
            for n in range(3):  # each run: a screenshot, a model request, the store's writes
                server.add(Reply({"action": "done", "message": f"nothing to do {n}"}))
                asked = len(server.requests)

                def asked_the_model(asked: int = asked) -> bool:
                    return len(server.requests) > asked

                xdotool(session, "windowactivate", "--sync", main)
                xdotool(session, "key", "--clearmodifiers", "ctrl+a")
                xdotool(session, "type", "--delay", "2", f"look at the screen {n}")
                xdotool(session, "key", "--clearmodifiers", "ctrl+Return")
                wait_until(asked_the_model, timeout=20, what="the run's model request")
            close_window(session.display, main)
            code = process.wait(timeout=20)
    finally:
        session.close()
        stderr.close()

    assert code == 0, (tmp_path / "stderr.txt").read_text()[-3000:]
    threads = json.loads(recorded.read_text())
    assert threads.get("MainThread", 0) > 0, "the GUI thread's timer collects"
    assert set(threads) == {"MainThread"}, f"collections by thread: {threads}"
