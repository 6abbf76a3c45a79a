"""The takeover watch on monitor 3 (issue 33 item 5): a run acting on the third RandR monitor
is not paused by its own click there, and the user's hand on that monitor pauses it."""

from __future__ import annotations

import re
import signal
import threading
from typing import Any

from desktop_agent.eval.monitors_desk import MonitorsSession
from tests.e2e.conftest import Cli, Lines, last_user_text
from tests.monitors.target import TITLE, TargetWindow
from tests.support.model_server import Reply
from tests.support.xdisplay import READY_TIMEOUT_S, wait_until

THIRD = (3200, 300, 1024, 768)  # DUMMY2 of THREE_MONITORS: monitor 3
#: the model "thinks" this long on the turn the user acts in
THINKING_S = 4.0
_TARGET_LINE = re.compile(r'^\[(\d+)\] window "' + TITLE + r'[^"]*" @ ', re.M)


def test_the_users_input_on_monitor_3_pauses_a_run_acting_there(
    cli: Cli, model: Any, monitors_desk: MonitorsSession, target: TargetWindow
) -> None:
    target.place(3300, 400)  # on monitor 3
    thinking = threading.Event()

    def respond(body: dict[str, Any]) -> Reply:
        text = last_user_text(body).split("Windows and elements on the other monitors")[0]
        found = _TARGET_LINE.search(text)
        if not target.pressed():
            if found is None:  # the element list is not there yet
                return Reply({"action": "tool", "tool": "wait", "args": {"seconds": 0.1},
                              "reason": "-"})  # fmt: skip
            args = {"element": int(found.group(1))}
            return Reply({"action": "tool", "tool": "click", "args": args, "reason": "-"})
        thinking.set()
        return Reply(
            {"action": "tool", "tool": "wait", "args": {"seconds": 0}, "reason": "-"},
            delay_s=THINKING_S,
        )

    server = model(respond=respond)
    process = cli.start_run("click the target, then wait", server, "--approve", "all")
    out = Lines(process)
    try:
        wait_until(thinking.is_set, timeout=60, what="the turn after the click")
        assert not [e for e in out.events() if e["type"] == "run_paused"], "its own click"
        # the user's hand: on monitor 3, beside the window the run clicked
        monitors_desk.xdotool("mousemove", "3900", "900", "click", "1")
        wait_until(
            lambda: [e for e in out.events() if e["type"] == "run_paused"],
            timeout=READY_TIMEOUT_S * 3,
            what="the pause",
        )
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
        out.join()
    events = out.events()
    (paused,) = [e for e in events if e["type"] == "run_paused"]
    assert paused["reason"] == "user"
    actions = [(e["step"]["tool"], e["step"]["status"]) for e in events
               if e["type"] == "step_finished" and e["step"]["kind"] == "action"]  # fmt: skip
    assert ("click", "ok") in actions
    # the decision made while the user had the mouse is never carried out
    assert ("wait", "ok") not in actions[actions.index(("click", "ok")) :]
    ((x, y),) = target.pressed()
    assert THIRD[0] <= x < THIRD[0] + THIRD[2] and THIRD[1] <= y < THIRD[1] + THIRD[3]
