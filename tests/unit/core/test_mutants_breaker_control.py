"""The board's breakers and a plain pause (mutants of core/breaker.py and core/control.py)."""

from __future__ import annotations

from desktop_agent.core.breaker import BreakerBoard
from desktop_agent.core.control import RunControl


def test_the_board_makes_each_tool_its_own_breaker_named_by_the_tool() -> None:
    board = BreakerBoard(clock=lambda: 0.0)
    assert board["click"].name == "click"
    assert board["click"] is board["click"]
    assert board["type_text"] is not board["click"]


def test_a_pause_asked_without_a_reason_is_a_request() -> None:
    # the run_paused event says "request" (window, tray, API) unless the user took over
    asked, taken_over = RunControl(), RunControl()
    asked.pause()
    taken_over.pause("user")
    assert (asked.pause_reason, taken_over.pause_reason) == ("request", "user")
