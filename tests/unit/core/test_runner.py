"""TaskRunnerService: the 409 guard, stop_all and grants, and the owner rule (DESIGN §1)."""

from __future__ import annotations

import asyncio
import threading

import pytest
from pydantic import BaseModel

from desktop_agent.core.errors import AlreadyRunning, RefusedToStart, RunNotFound
from desktop_agent.core.events import (
    ApprovalRequested,
    RunFinished,
    StepFinished,
    TaskLoopEvent,
)
from desktop_agent.core.models import (
    ApprovalDecision,
    Decision,
    Element,
    Policy,
    Risk,
    RunStatus,
    RunView,
    StepKind,
    StepStatus,
    StopReason,
    TaskSpec,
    ToolResult,
)
from desktop_agent.core.ports import DecideRequest, ToolContext
from tests.fakes import ScriptedPlanner, done, make_observation, tool
from tests.unit.core.conftest import Blocker, Consumer, Harness, make_harness


async def yield_to_the_loop(times: int = 50) -> None:
    for _ in range(times):
        await asyncio.sleep(0)


def other_tasks() -> set[asyncio.Task[object]]:
    return {task for task in asyncio.all_tasks() if task is not asyncio.current_task()}


def blocking_planner(blocker: Blocker) -> ScriptedPlanner:
    async def never_answers(_request: DecideRequest) -> Decision:
        await blocker.block()
        return done()

    return ScriptedPlanner([never_answers])


def final_of(events: list[TaskLoopEvent]) -> tuple[RunStatus, StopReason | None]:
    last = events[-1]
    assert isinstance(last, RunFinished)
    return last.run.status, last.run.stop_reason


# ── create and start ─────────────────────────────────────────────────────────


async def test_create_without_allowed_tools_allows_every_offered_builtin(harness: Harness) -> None:
    run = await harness.runner.create(TaskSpec(goal="g"))
    assert "click" in run.allowed_tools
    assert "screen_snapshot" not in run.allowed_tools


async def test_create_refuses_an_unknown_tool_naming_it(harness: Harness) -> None:
    with pytest.raises(RefusedToStart, match="unknown tool\\(s\\): teleport"):
        await harness.runner.create(TaskSpec(goal="g", allowed_tools=("wait", "teleport")))
    assert harness.repo.runs == {}


async def test_run_returns_the_final_view_and_listeners_hear_every_event(
    harness: Harness,
) -> None:
    heard: list[TaskLoopEvent] = []
    unsubscribe = harness.runner.subscribe(heard.append)
    run = await harness.create()
    final = await harness.runner.run(run, ScriptedPlanner([tool("wait", seconds=0), done()]))
    assert (final.status, final.stop_reason) == (RunStatus.COMPLETED, StopReason.DONE)
    assert heard[0].type == "run_started"
    assert heard[-1] == RunFinished(final)
    unsubscribe()
    other = await harness.create()
    await harness.runner.run(other, ScriptedPlanner([done()]))
    assert heard[-1] == RunFinished(final)


async def test_the_run_is_active_from_start_until_run_finished_is_delivered(
    harness: Harness,
) -> None:
    run = await harness.create()
    events = harness.runner.start(run, ScriptedPlanner([done()]))
    assert harness.runner.active_ids == (run.id,)
    async for event in events:
        if isinstance(event, RunFinished):
            assert not harness.runner.is_active(run.id)
        else:
            assert harness.runner.is_active(run.id)
    # mypy holds the state it read before the calls that change it (a property)
    assert harness.runner.active_ids == ()  # type: ignore[comparison-overlap]


async def test_a_second_start_of_an_active_run_raises_already_running_and_the_first_carries_on(
    harness: Harness,
) -> None:
    run = await harness.create()
    blocker = Blocker()

    async def slow(_request: DecideRequest) -> Decision:
        await blocker.block()
        return tool("wait", seconds=0)

    first_planner = ScriptedPlanner([slow, done()])
    consumer = Consumer(harness.runner.start(run, first_planner))
    await blocker.entered.wait()

    second_planner = ScriptedPlanner([fail_now := tool("click", x=1, y=1)])
    with pytest.raises(AlreadyRunning, match=run.id):
        harness.runner.start(run, second_planner)
    with pytest.raises(AlreadyRunning):
        harness.runner.start(harness.stored(run.id), second_planner)
    assert harness.runner.active_ids == (run.id,)

    blocker.release.set()
    events = await consumer.finished()
    assert final_of(events) == (RunStatus.COMPLETED, StopReason.DONE)
    assert not blocker.cancelled
    assert second_planner.requests == [] and second_planner.script == [fail_now]
    assert [name for name, _ in harness.executor.calls] == ["wait"]
    assert events.count(events[0]) == 1 and events[0].type == "run_started"
    # mypy holds the state it read before the calls that change it (a property)
    assert harness.runner.active_ids == ()  # type: ignore[comparison-overlap]


async def test_a_second_start_before_the_first_is_iterated_is_refused_too(
    harness: Harness,
) -> None:
    run = await harness.create()
    first = harness.runner.start(run, ScriptedPlanner([done()]))
    with pytest.raises(AlreadyRunning):
        harness.runner.start(run, ScriptedPlanner([done()]))
    collected = [event async for event in first]
    assert final_of(collected) == (RunStatus.COMPLETED, StopReason.DONE)


async def test_a_stop_reaches_the_active_run_not_a_refused_second_start(harness: Harness) -> None:
    run = await harness.create()
    blocker = Blocker()
    consumer = Consumer(harness.runner.start(run, blocking_planner(blocker)))
    await blocker.entered.wait()
    with pytest.raises(AlreadyRunning):
        harness.runner.start(run, ScriptedPlanner([done()]))
    assert harness.runner.stop(run.id)
    assert final_of(await consumer.finished()) == (RunStatus.STOPPED, StopReason.USER_STOP)


@pytest.mark.parametrize("stop", ["stop", "stop_all"])
async def test_a_stop_while_the_run_is_found_in_the_store_ends_it_before_it_acts(
    harness: Harness, stop: str
) -> None:
    run = await harness.create()
    reading, answer = asyncio.Event(), asyncio.Event()

    async def slow_find() -> RunView:  # the store read of a queued run or a routine
        reading.set()
        await answer.wait()
        return run

    planner = ScriptedPlanner([tool("click", x=1, y=1)], then=done())

    async def prepare(_: RunView) -> ScriptedPlanner:
        return planner

    handle = harness.runner.admit_id(run.id, slow_find, prepare)
    consumer = Consumer(handle.events)
    await reading.wait()
    assert harness.runner.stop(run.id) if stop == "stop" else harness.runner.stop_all() == 1
    answer.set()
    events = await consumer.finished()

    assert [event.type for event in events] == ["run_started", "run_finished"]
    assert final_of(events) == (RunStatus.STOPPED, StopReason.USER_STOP)
    assert harness.stored(run.id).message == "stopped before it started"
    assert planner.requests == [] and harness.executor.calls == []
    assert harness.runner.active_ids == ()


async def test_what_the_find_raises_comes_from_the_events_and_frees_the_id(
    harness: Harness,
) -> None:
    async def no_such_run() -> RunView:
        raise RunNotFound("no run 'r1'")

    async def never(_: RunView) -> ScriptedPlanner:
        raise AssertionError("a run that was not found is not prepared")

    handle = harness.runner.admit_id("r1", no_such_run, never)
    with pytest.raises(RunNotFound):
        await anext(handle.events)
    assert harness.runner.active_ids == () and harness.repo.runs == {}


async def test_a_stop_reaches_only_runs_admitted_before_it(harness: Harness) -> None:
    """Admission is in the step of the ask (host/starts.py): a stop of an id nobody admitted
    is nobody's, and a run asked for after it is not touched by it."""
    run = await harness.create()
    assert not harness.runner.stop(run.id)
    assert harness.runner.stop_all() == 0
    assert final_of(await harness.collect(run, ScriptedPlanner([done()]))) == (
        RunStatus.COMPLETED,
        StopReason.DONE,
    )


# ── stop_all and grants ──────────────────────────────────────────────────────


async def test_stop_all_stops_every_active_run(harness: Harness) -> None:
    blockers = [Blocker(), Blocker(), Blocker()]
    runs = [await harness.create(f"goal {i}") for i in range(3)]
    consumers = [
        Consumer(harness.runner.start(run, blocking_planner(blocker)))
        for run, blocker in zip(runs, blockers, strict=True)
    ]
    for blocker in blockers:
        await blocker.entered.wait()
    assert harness.runner.stop_all() == 3
    for consumer, run in zip(consumers, runs, strict=True):
        assert final_of(await consumer.finished()) == (RunStatus.STOPPED, StopReason.USER_STOP)
        assert harness.stored(run.id).stop_reason is StopReason.USER_STOP
    assert all(blocker.cancelled for blocker in blockers)
    assert harness.runner.active_ids == ()
    assert harness.runner.stop_all() == 0


async def test_an_approval_answered_run_grants_the_tool_for_the_rest_of_that_run() -> None:
    h = make_harness(answers=[ApprovalDecision.RUN])
    run = await h.create()
    planner = ScriptedPlanner([tool("click", x=1, y=1), tool("click", x=2, y=2), done()])
    events = await h.collect(run, planner)
    assert final_of(events) == (RunStatus.COMPLETED, StopReason.DONE)
    assert len(h.gate.requests) == 1
    assert h.gate.requests[0].offer_run_grant is True
    assert [name for name, _ in h.executor.calls] == ["click", "click"]
    assert sum(isinstance(event, ApprovalRequested) for event in events) == 1
    assert h.permissions.task_grants(run.id) == frozenset()  # a task grant ends with its run


async def test_a_task_grant_does_not_cover_another_run() -> None:
    h = make_harness(answers=[ApprovalDecision.RUN, ApprovalDecision.ONCE])
    first = await h.create()
    await h.collect(first, ScriptedPlanner([tool("click", x=1, y=1), done()]))
    second = await h.create()
    await h.collect(second, ScriptedPlanner([tool("click", x=1, y=1), done()]))
    assert len(h.gate.requests) == 2


async def test_stop_all_revokes_task_grants_and_a_new_run_asks_again() -> None:
    h = make_harness(answers=[ApprovalDecision.RUN, ApprovalDecision.ONCE])
    run = await h.create()
    blocker = Blocker()

    async def then_hang(_request: DecideRequest) -> Decision:
        await blocker.block()
        return done()

    consumer = Consumer(h.runner.start(run, ScriptedPlanner([tool("click", x=1, y=1), then_hang])))
    await blocker.entered.wait()
    assert h.permissions.task_grants(run.id) == {"click"}
    assert h.permissions.decide(run.id, "click", Risk.INPUT) is Policy.ALLOW

    assert h.runner.stop_all() == 1
    # revoked at once, not only when the stopped loop gets round to it
    assert h.permissions.task_grants(run.id) == frozenset()
    assert h.permissions.decide(run.id, "click", Risk.INPUT) is Policy.ASK
    assert final_of(await consumer.finished()) == (RunStatus.STOPPED, StopReason.USER_STOP)

    again = await h.create()
    events = await h.collect(again, ScriptedPlanner([tool("click", x=5, y=5), done()]))
    assert final_of(events) == (RunStatus.COMPLETED, StopReason.DONE)
    assert len(h.gate.requests) == 2
    assert h.gate.requests[1].tool == "click"


async def test_stop_all_leaves_persistent_grants_alone() -> None:
    h = make_harness()
    h.permissions.grant_persistent("click")
    h.runner.stop_all()
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("click", x=1, y=1), done()]))
    assert h.gate.requests == []
    assert len(h.executor.calls) == 1


async def test_a_run_grant_never_covers_a_dangerous_tool_it_asks_every_call() -> None:
    h = make_harness(answers=[ApprovalDecision.RUN, ApprovalDecision.RUN, ApprovalDecision.RUN])
    run = await h.create()
    planner = ScriptedPlanner(
        [tool("launch_app", command="l3afpad"), tool("launch_app", command="xterm"), done()]
    )
    events = await h.collect(run, planner)
    assert final_of(events) == (RunStatus.COMPLETED, StopReason.DONE)
    assert [request.tool for request in h.gate.requests] == ["launch_app", "launch_app"]
    assert all(request.offer_run_grant is False for request in h.gate.requests)
    assert all(request.risk is Risk.DANGEROUS for request in h.gate.requests)
    assert len(h.executor.calls) == 2


async def test_a_persistent_grant_does_not_cover_a_dangerous_tool_either() -> None:
    h = make_harness()
    h.permissions.grant_persistent("launch_app")
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("launch_app", command="xterm"), done()]))
    assert [request.tool for request in h.gate.requests] == ["launch_app"]


async def test_typing_into_a_password_field_always_asks_and_its_text_is_stored_redacted() -> None:
    h = make_harness(answers=[ApprovalDecision.RUN, ApprovalDecision.RUN, ApprovalDecision.ONCE])
    plain = make_observation([Element(1, "edit", "User", (0, 0, 100, 20), focused=True)])
    secret = make_observation(
        [Element(2, "password text", "Password", (0, 30, 100, 20), focused=True, password=True)]
    )
    h.observer.observation = plain

    async def focus_password(_args: BaseModel, _context: ToolContext) -> ToolResult:
        h.observer.observation = secret
        return ToolResult.success("typed")

    h.executor.handlers["type_text"] = focus_password
    password_decision = Decision(
        action="tool",
        tool="type_text",
        args={"text": "hunter2"},
        reason="type the password",
        raw='{"action": "tool", "tool": "type_text", "args": {"text": "hunter2"}}',
    )
    run = await h.create()
    planner = ScriptedPlanner(
        [tool("type_text", text="alice"), password_decision, password_decision, done()]
    )
    events = await h.collect(run, planner)
    assert final_of(events) == (RunStatus.COMPLETED, StopReason.DONE)

    # the user name was granted for the run; the password asked at each call anyway
    assert [request.args for request in h.gate.requests] == [
        {"text": "alice"},
        {"text": "•••"},
        {"text": "•••"},
    ]
    assert [request.offer_run_grant for request in h.gate.requests] == [True, False, False]
    # the tool itself got the real text
    assert [getattr(args, "text", None) for _, args in h.executor.calls] == [
        "alice",
        "hunter2",
        "hunter2",
    ]
    stored = await h.repo.list_steps(run.id)
    for step in stored:
        assert "hunter2" not in repr(step.to_json()), step
    redacted = [step for step in stored if step.args.get("text") == "•••"]
    assert [step.kind for step in redacted] == [StepKind.DECIDE, StepKind.ACTION] * 2
    for event in events:
        if isinstance(event, StepFinished | ApprovalRequested):
            assert "hunter2" not in repr(event)


async def test_setting_a_value_into_a_password_element_asks_and_is_redacted() -> None:
    h = make_harness(answers=[ApprovalDecision.ONCE])
    h.permissions.grant_persistent("set_value")
    h.observer.observation = make_observation(
        [Element(7, "password text", "PIN", (0, 0, 50, 20), password=True)]
    )
    run = await h.create(allowed_tools=("set_value",))
    await h.collect(run, ScriptedPlanner([tool("set_value", element=7, value="1234"), done()]))
    assert [request.args for request in h.gate.requests] == [{"element": 7, "value": "•••"}]
    action = next(s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION)
    assert action.args == {"element": 7, "value": "•••"}
    assert action.status is StepStatus.OK


# ── the owner rule ───────────────────────────────────────────────────────────


async def test_a_consumer_that_closes_the_events_early_leaves_the_run_stopped_user_stop(
    harness: Harness,
) -> None:
    run = await harness.create()
    events = harness.runner.start(run, ScriptedPlanner([], then=tool("wait", seconds=0)))
    seen = [await anext(events) for _ in range(4)]
    assert seen[0].type == "run_started"
    await events.aclose()

    stored = harness.stored(run.id)
    assert (stored.status, stored.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
    assert stored.finished_at is not None
    assert harness.runner.active_ids == ()
    await yield_to_the_loop()
    assert other_tasks() == set()
    steps = await harness.repo.list_steps(run.id)
    assert all(step.status is not StepStatus.RUNNING for step in steps)


async def test_a_consumer_whose_task_is_cancelled_leaves_the_run_stopped_user_stop(
    harness: Harness,
) -> None:
    run = await harness.create()
    blocker = Blocker()
    consumer = Consumer(harness.runner.start(run, blocking_planner(blocker)))
    await blocker.entered.wait()
    consumer.task.cancel()
    await asyncio.gather(consumer.task, return_exceptions=True)

    stored = harness.stored(run.id)
    assert (stored.status, stored.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
    assert blocker.cancelled
    assert harness.runner.active_ids == ()
    await yield_to_the_loop()
    assert other_tasks() == set()
    decide = (await harness.repo.list_steps(run.id))[-1]
    assert (decide.kind, decide.status) == (StepKind.DECIDE, StepStatus.SKIPPED)


async def test_a_consumer_that_goes_away_during_a_thread_tool_cancels_the_tool(
    harness: Harness,
) -> None:
    started = threading.Event()
    saw_cancel = threading.Event()
    contexts: list[ToolContext] = []

    def typing(cancelled: threading.Event) -> None:
        started.set()
        for _ in range(5000):  # bounded, so a failing test cannot hang the session
            if cancelled.wait(0.001):
                saw_cancel.set()
                return

    async def threaded(_args: BaseModel, context: ToolContext) -> ToolResult:
        contexts.append(context)
        await asyncio.to_thread(typing, context.cancelled)
        return ToolResult.success("typed")

    harness.executor.handlers["wait"] = threaded
    run = await harness.create()
    consumer = Consumer(harness.runner.start(run, ScriptedPlanner([tool("wait", seconds=1)])))
    await asyncio.to_thread(started.wait, 5)
    consumer.task.cancel()
    await asyncio.gather(consumer.task, return_exceptions=True)

    assert contexts[0].cancelled.is_set()
    assert await asyncio.to_thread(saw_cancel.wait, 5)
    stored = harness.stored(run.id)
    assert (stored.status, stored.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)


async def test_a_consumer_that_closes_the_events_before_the_first_one_frees_the_run(
    harness: Harness,
) -> None:
    run = await harness.create()
    events = harness.runner.start(run, ScriptedPlanner([done()]))
    await events.aclose()
    assert harness.runner.active_ids == ()
    assert harness.observer.calls == 0
    # nothing ran: the run can still be started, and runs normally
    collected = await harness.collect(harness.stored(run.id), ScriptedPlanner([done()]))
    assert final_of(collected) == (RunStatus.COMPLETED, StopReason.DONE)
