"""The window's Qt-free parts (ui/tasks.py, ui/run_on_show.py's start): what it spawned, and
when a run started from it may act."""

from __future__ import annotations

import asyncio
import concurrent.futures

import pytest

from desktop_agent.ui.run_on_show import act_when_out_of_the_way
from desktop_agent.ui.tasks import Spawned


async def test_spawned_keeps_each_task_until_done_and_hands_on_what_one_raised() -> None:
    failed: list[BaseException] = []
    tasks = Spawned(failed.append)
    release = asyncio.Event()

    async def held() -> None:
        await release.wait()

    async def broken() -> None:
        raise ValueError("the slot broke")

    kept = tasks.spawn(held())
    tasks.spawn(broken())
    assert len(tasks) == 2
    await asyncio.sleep(0)
    await asyncio.sleep(0)  # the done callback runs a turn after the task ends
    assert [str(error) for error in failed] == ["the slot broke"] and len(tasks) == 1
    release.set()
    await kept
    await asyncio.sleep(0)
    assert not tasks and len(failed) == 1


async def test_closing_spawned_cancels_and_awaits_every_task_and_reports_no_cancel() -> None:
    failed: list[BaseException] = []
    tasks = Spawned(failed.append)
    forever = tasks.spawn(asyncio.Event().wait())
    await tasks.close()
    assert forever.cancelled() and failed == []


async def test_the_run_acts_once_the_window_is_out_of_the_way_or_that_failed() -> None:
    ready: concurrent.futures.Future[None] = concurrent.futures.Future()
    moved = asyncio.Event()

    async def out_of_the_way() -> None:
        assert not ready.done()  # not before the window is gone
        moved.set()

    await act_when_out_of_the_way(out_of_the_way, ready)
    assert moved.is_set() and ready.done()

    failing: concurrent.futures.Future[None] = concurrent.futures.Future()

    async def fails() -> None:
        raise OSError("no window manager")

    with pytest.raises(OSError):
        await act_when_out_of_the_way(fails, failing)
    assert failing.done()  # the run acts anyway: the window could not move
    nothing: concurrent.futures.Future[None] = concurrent.futures.Future()
    await act_when_out_of_the_way(None, nothing)
    assert nothing.done()


async def test_a_window_closing_while_it_gets_out_of_the_way_never_lets_the_run_act() -> None:
    ready: concurrent.futures.Future[None] = concurrent.futures.Future()
    started = asyncio.Event()

    async def slow() -> None:
        started.set()
        await asyncio.Event().wait()

    waiting = asyncio.ensure_future(act_when_out_of_the_way(slow, ready))
    await started.wait()
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert not ready.done()
