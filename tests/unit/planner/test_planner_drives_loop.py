"""The planner drives the real task loop against the loopback server, from goal to done."""

from __future__ import annotations

import asyncio

from desktop_agent.core.breaker import BreakerBoard
from desktop_agent.core.builtin_tools import BUILTIN_TOOLS, builtin_registry
from desktop_agent.core.models import Policy, RunStatus, StepKind, StepStatus, StopReason, TaskSpec
from desktop_agent.core.permissions import Permissions
from desktop_agent.core.runner import RunnerServices, TaskRunnerService
from tests.fakes import FakeExecutor, FakeObserver, ManualClock, MemoryRepository, ScriptedGate
from tests.support.model_server import Hang, ModelServer, Reply
from tests.unit.planner.conftest import decoded_image, make_observation, make_planner, user_text


def _runner() -> tuple[TaskRunnerService, MemoryRepository, FakeExecutor]:
    repo = MemoryRepository()
    executor = FakeExecutor()
    services = RunnerServices(
        repo=repo,
        observer=FakeObserver(make_observation(width=320, height=200)),
        executor=executor,
        gate=ScriptedGate(),
        registry=builtin_registry(),
        breakers=BreakerBoard(clock=ManualClock()),
        permissions=Permissions({spec.name: Policy.ALLOW for spec in BUILTIN_TOOLS}),
    )
    return TaskRunnerService(services), repo, executor


async def test_planner_drives_the_loop_from_goal_to_done() -> None:
    script = [
        Reply(
            {"action": "tool", "tool": "click", "args": {"element": 13}, "reason": "focus name"},
            usage=(900, 30),
        ),
        Reply(
            '```json\n{"action": "tool", "tool": "type_text", '
            '"args": {"text": "notes.txt", "enter": true}, "reason": "type the name"}\n```',
            usage=(950, 35),
        ),
        Reply({"action": "done", "message": "Saved as notes.txt.", "reason": "title shows it"}),
    ]
    runner, repo, executor = _runner()
    run = await runner.create(
        TaskSpec(goal="save the file as notes.txt", allowed_tools=("click", "type_text"))
    )
    async with ModelServer(script) as server, make_planner(server.base_url) as planner:
        final = await runner.run(run, planner)

    assert (final.status, final.stop_reason) == (RunStatus.COMPLETED, StopReason.DONE)
    assert final.message == "Saved as notes.txt."
    assert final.step_count == 3
    assert [name for name, _ in executor.calls] == ["click", "type_text"]

    decides = [s for s in await repo.list_steps(run.id) if s.kind is StepKind.DECIDE]
    assert [s.status for s in decides] == [StepStatus.OK] * 3
    assert (decides[0].tool, decides[0].args) == ("click", {"element": 13})
    assert (decides[0].prompt_tokens, decides[0].completion_tokens) == (900, 30)
    assert decides[0].reason == "focus name"
    assert all(s.latency_ms is not None and s.latency_ms > 0 for s in decides)

    # one request per turn, each with the screenshot and the history so far
    assert len(server.requests) == 3
    assert decoded_image(server.requests[2]).size == (320, 200)
    assert "Steps so far: none, this is the first turn." in user_text(server.requests[0])
    history = user_text(server.requests[2])
    assert '1. click {"element":13} → ok: click ok' in history
    assert '2. type_text {"text":"notes.txt","enter":true} → ok: type_text ok' in history


async def test_an_invalid_answer_is_a_failed_step_shown_to_the_model_next_turn() -> None:
    script = [
        Reply("I think I should click Save."),
        Reply({"action": "done", "message": "ok", "reason": "r"}),
    ]
    runner, repo, _ = _runner()
    run = await runner.create(TaskSpec(goal="save", allowed_tools=("click",)))
    async with ModelServer(script) as server, make_planner(server.base_url) as planner:
        final = await runner.run(run, planner)

    assert final.status is RunStatus.COMPLETED
    first = next(s for s in await repo.list_steps(run.id) if s.kind is StepKind.DECIDE)
    assert first.status is StepStatus.FAILED
    assert first.error == "the answer is not JSON: 'I think I should click Save.'"
    assert first.raw_output == "I think I should click Save."
    text = user_text(server.requests[1])
    assert "1. your answer was not valid: the answer is not JSON" in text
    assert "```error\nthe answer is not JSON: 'I think I should click Save.'\n```" in text


async def test_a_model_that_keeps_answering_badly_ends_the_run_at_max_failures() -> None:
    runner, _, executor = _runner()
    run = await runner.create(TaskSpec(goal="save", allowed_tools=("click",), max_failures=3))
    async with (
        ModelServer(then=Reply({"action": "tool", "tool": "rm_rf"})) as server,
        make_planner(server.base_url) as planner,
    ):
        final = await runner.run(run, planner)
    assert (final.status, final.stop_reason) == (RunStatus.FAILED, StopReason.MAX_FAILURES)
    assert 'unknown tool "rm_rf"' in final.message
    assert executor.calls == []
    assert len(server.requests) == 3


async def test_a_stop_while_the_model_request_is_in_flight_ends_the_run_stopped() -> None:
    runner, _, executor = _runner()
    run = await runner.create(TaskSpec(goal="save", allowed_tools=("click",)))
    async with ModelServer([Hang()]) as server, make_planner(server.base_url) as planner:
        task = asyncio.create_task(runner.run(run, planner))
        await server.wait_requests(1)
        assert runner.stop(run.id)
        final = await asyncio.wait_for(task, 5)
    assert (final.status, final.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
    assert executor.calls == []


async def test_a_ui_tars_model_drives_the_loop_in_its_own_grammar_and_coordinates() -> None:
    """UI-TARS-1.5 answers action text in pixels of its 364x224 smart_resize of the 320x200
    screenshot; the tools get screenshot pixels, `finished` ends the run done."""
    script = [
        Reply("Thought: Click the file name box.\nAction: click(start_box='(182,112)')"),
        Reply("Thought: Type the name and submit.\nAction: type(content='notes.txt\\n')"),
        Reply("Thought: The title shows notes.txt.\nAction: finished(content='Saved.')"),
    ]
    runner, _, executor = _runner()
    run = await runner.create(
        TaskSpec(goal="save as notes.txt", allowed_tools=("click", "type_text"))
    )
    async with (
        ModelServer(script) as server,
        make_planner(server.base_url, model="ui-tars-1.5-7b", profile="auto") as planner,
    ):
        final = await runner.run(run, planner)
    assert (final.status, final.stop_reason) == (RunStatus.COMPLETED, StopReason.DONE)
    assert final.message == "Saved."
    (click_name, click), (type_name, typed) = executor.calls
    assert (click_name, click.model_dump(exclude_none=True)) == (
        "click",
        {"x": 160, "y": 100, "button": "left", "clicks": 1},
    )
    assert (type_name, typed.model_dump()) == ("type_text", {"text": "notes.txt", "enter": True})
    assert "response_format" not in server.requests[0]
