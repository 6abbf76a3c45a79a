"""ToolBreaker: closed → open → half-open with one trial → closed or open again (DESIGN §1)."""

from __future__ import annotations

import asyncio

from desktop_agent.core.breaker import COOLDOWN_S, BreakerBoard, BreakerState, ToolBreaker
from tests.fakes import ManualClock


def opened(clock: ManualClock) -> ToolBreaker:
    breaker = ToolBreaker("click", clock=clock)
    for _ in range(3):
        assert breaker.acquire()
        breaker.record(False)
    return breaker


def test_a_new_breaker_is_closed_and_lets_calls_through() -> None:
    breaker = ToolBreaker("click", clock=ManualClock())
    assert breaker.state is BreakerState.CLOSED
    assert all(breaker.acquire() for _ in range(5))
    assert breaker.retry_in_s() == 0.0


def test_the_breaker_opens_after_three_consecutive_failures_and_refuses_calls() -> None:
    clock = ManualClock()
    breaker = ToolBreaker("click", clock=clock)
    breaker.record(False)
    breaker.record(False)
    assert breaker.state is BreakerState.CLOSED
    assert breaker.acquire()
    breaker.record(False)
    # mypy holds the state it read before the calls that change it (a property)
    assert breaker.state is BreakerState.OPEN  # type: ignore[comparison-overlap]
    assert breaker.consecutive_failures == 3
    assert not breaker.acquire()
    assert breaker.retry_in_s() == COOLDOWN_S == 300.0


def test_a_success_between_failures_resets_the_count() -> None:
    breaker = ToolBreaker("click", clock=ManualClock())
    for ok in (False, False, True, False, False):
        breaker.record(ok)
    assert breaker.state is BreakerState.CLOSED
    assert breaker.consecutive_failures == 2


def test_the_breaker_stays_open_until_the_five_minute_cooldown_has_passed() -> None:
    clock = ManualClock()
    breaker = opened(clock)
    clock.advance(COOLDOWN_S - 0.1)
    assert breaker.state is BreakerState.OPEN
    assert not breaker.acquire()
    assert round(breaker.retry_in_s(), 3) == 0.1
    clock.advance(0.1)
    # mypy holds the state it read before the calls that change it (a property)
    assert breaker.state is BreakerState.HALF_OPEN  # type: ignore[comparison-overlap]


def test_after_the_cooldown_exactly_one_trial_call_passes() -> None:
    clock = ManualClock()
    breaker = opened(clock)
    clock.advance(COOLDOWN_S)
    assert breaker.acquire()  # the trial
    assert not breaker.acquire()  # a second, concurrent call is refused
    assert not breaker.acquire()
    assert breaker.state is BreakerState.HALF_OPEN


def test_a_successful_trial_closes_the_breaker() -> None:
    clock = ManualClock()
    breaker = opened(clock)
    clock.advance(COOLDOWN_S)
    assert breaker.acquire()
    breaker.record(True)
    assert breaker.state is BreakerState.CLOSED
    assert breaker.consecutive_failures == 0
    assert all(breaker.acquire() for _ in range(3))
    # and it takes three new failures to open it again
    breaker.record(False)
    breaker.record(False)
    assert breaker.state is BreakerState.CLOSED


def test_a_failed_trial_reopens_the_breaker_for_another_cooldown() -> None:
    clock = ManualClock()
    breaker = opened(clock)
    clock.advance(COOLDOWN_S)
    assert breaker.acquire()
    breaker.record(False)
    assert breaker.state is BreakerState.OPEN
    assert not breaker.acquire()
    assert breaker.retry_in_s() == COOLDOWN_S
    clock.advance(COOLDOWN_S)
    # mypy holds the state it read before the calls that change it (a property)
    assert breaker.state is BreakerState.HALF_OPEN  # type: ignore[comparison-overlap]
    assert breaker.acquire()
    assert not breaker.acquire()


def test_a_released_trial_is_not_a_failure_and_frees_the_trial_slot() -> None:
    clock = ManualClock()
    breaker = opened(clock)
    clock.advance(COOLDOWN_S)
    assert breaker.acquire()
    breaker.release()  # the run was stopped while the trial ran
    assert breaker.state is BreakerState.HALF_OPEN
    assert breaker.consecutive_failures == 3
    assert breaker.acquire()  # another trial may go
    assert not breaker.acquire()
    breaker.record(True)
    # mypy holds the state it read before the calls that change it (a property)
    assert breaker.state is BreakerState.CLOSED  # type: ignore[comparison-overlap]


def test_a_released_call_while_closed_counts_for_nothing() -> None:
    breaker = ToolBreaker("click", clock=ManualClock())
    breaker.record(False)
    breaker.record(False)
    assert breaker.acquire()
    breaker.release()
    assert breaker.state is BreakerState.CLOSED
    assert breaker.consecutive_failures == 2


def test_the_board_gives_one_breaker_per_tool_on_the_shared_clock() -> None:
    clock = ManualClock()
    board = BreakerBoard(clock=clock)
    assert board["click"] is board["click"]
    assert board["click"] is not board["wait"]
    for _ in range(3):
        board["click"].record(False)
    assert board.states() == {"click": BreakerState.OPEN, "wait": BreakerState.CLOSED}
    clock.advance(COOLDOWN_S)
    assert board.states()["click"] is BreakerState.HALF_OPEN


def test_a_slot_left_without_an_outcome_frees_the_half_open_trial() -> None:
    clock = ManualClock()
    breaker = opened(clock)
    clock.advance(COOLDOWN_S)
    assert breaker.acquire()  # the one trial call
    try:
        with breaker.slot():
            raise asyncio.CancelledError  # stopped while the call ran: counts for nothing
    except asyncio.CancelledError:
        pass
    assert breaker.state is BreakerState.HALF_OPEN
    assert breaker.acquire()  # the trial may be tried again


def test_a_slot_with_an_outcome_counts_it_and_releases_nothing_more() -> None:
    clock = ManualClock()
    breaker = opened(clock)
    clock.advance(COOLDOWN_S)
    assert breaker.acquire()
    with breaker.slot() as slot:
        slot.record(True)
    assert breaker.state is BreakerState.CLOSED and breaker.consecutive_failures == 0
