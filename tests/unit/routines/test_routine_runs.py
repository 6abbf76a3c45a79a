"""Routine runs through the runner's admission: grants per routine, stop-all, the handover."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.agent import Agent
from desktop_agent.core.events import StepStarted
from desktop_agent.core.models import (
    Effect,
    Element,
    ElementRef,
    Policy,
    RunKind,
    RunStatus,
    StepKind,
    StopReason,
    ToolResult,
)
from desktop_agent.core.permissions import Permissions
from desktop_agent.core.routine import (
    FILE_FORMAT,
    FILE_VERSION,
    Routine,
    RoutineError,
    RoutineStep,
    read_routine_text,
)
from desktop_agent.core.routine import dump_routine_text as dumps_routine
from desktop_agent.core.routine_player import PATIENCE_TURNS
from desktop_agent.core.targets import element_ref
from desktop_agent.host import routines as service
from desktop_agent.host.starts import RoutineRequest, RunRequest, admit
from desktop_agent.settings import Settings
from desktop_agent.store import SqliteRunRepository
from tests.fakes import (
    FakeExecutor,
    FakeObserver,
    ScriptedGate,
    ScriptedPlanner,
    done,
    final_run,
    tool,
)
from tests.fakes import make_observation as observation

WINDOW = Element(1, "window", "Report - Viewer", (200, 100, 800, 600), focused=True)
EXPORT = Element(2, "push button", "Export", (220, 120, 90, 30))
SCREEN = observation([WINDOW, EXPORT])


def routine(**changes: Any) -> Routine:
    click = RoutineStep("click", {"element": 2}, element_ref("click", {"element": 2}, SCREEN),
                        Effect.UNKNOWN)  # fmt: skip
    made = Routine("export", "export the report", (click, click), grants=("click",))
    return made.with_(**changes)


@pytest.fixture
async def agent(tmp_path: Path) -> AsyncIterator[Agent]:
    repo = await asyncio.to_thread(SqliteRunRepository.open, tmp_path)
    made = Agent.assemble(
        tmp_path,
        Settings(approval_timeout_s=5.0),
        repo,
        observer=FakeObserver(SCREEN),
        executor=FakeExecutor(),
        gate=ScriptedGate(),
        permissions=Permissions({"wait": Policy.ALLOW}),
        planner_factory=lambda run: ScriptedPlanner([], then=done("never asked")),
        check_model=False,
    )
    await repo.save_routine(routine())
    yield made
    await made.close()


def gate_of(agent: Agent) -> ScriptedGate:
    gate = agent.runner.services.gate
    assert isinstance(gate, ScriptedGate)
    return gate


def executor_of(agent: Agent) -> FakeExecutor:
    executor = agent.runner.services.executor
    assert isinstance(executor, FakeExecutor)
    return executor


async def test_a_routines_grants_allow_its_tools_unasked_for_its_run_only(agent: Agent) -> None:
    final = await final_run(admit(agent, RoutineRequest("export")))

    assert (final.status, final.kind, final.routine) == (RunStatus.COMPLETED, RunKind.ROUTINE,
                                                         "export")  # fmt: skip
    assert gate_of(agent).requests == []
    assert [name for name, _ in executor_of(agent).calls] == ["click", "click"]
    assert agent.permissions.task_grants(final.id) == frozenset()
    # an agent run of the same tool still asks
    agent.planner_factory = lambda run: ScriptedPlanner([tool("click", x=5, y=5), done()])
    await final_run(admit(agent, RunRequest("click", allowed_tools=("click",))))
    assert [a.tool for a in gate_of(agent).requests] == ["click"]


async def test_stop_all_revokes_the_routine_grants_of_the_current_run(agent: Agent) -> None:
    clicking, release = asyncio.Event(), asyncio.Event()

    async def slow_click(args: Any, context: Any) -> ToolResult:
        clicking.set()
        await release.wait()
        return ToolResult.success("clicked")

    executor_of(agent).handlers["click"] = slow_click
    handle = admit(agent, RoutineRequest("export"))
    ending = asyncio.ensure_future(final_run(handle))
    await asyncio.wait_for(clicking.wait(), 5)
    assert agent.permissions.task_grants(handle.run_id) == frozenset({"click"})

    assert agent.stop_all() == 1
    assert agent.permissions.task_grants(handle.run_id) == frozenset()
    final = await asyncio.wait_for(ending, 5)

    assert (final.status, final.stop_reason) == (RunStatus.STOPPED, StopReason.USER_STOP)
    assert len(executor_of(agent).calls) == 1


async def test_on_a_mismatch_the_agent_takes_over_without_the_routine_grants(agent: Agent) -> None:
    agent.runner.services.observer = FakeObserver(observation([WINDOW]))  # no Export button
    asked: list[Any] = []

    def model(run: Any) -> ScriptedPlanner:
        planner = ScriptedPlanner([tool("click", x=300, y=300), done("exported by the agent")])
        asked.append(planner)
        return planner

    agent.planner_factory = model
    await agent.repo.save_routine(routine(steps=routine().steps[:1]), replace=True)
    events: list[Any] = []
    handle = admit(agent, RoutineRequest("export"))
    async for event in handle.events:
        events.append(event)
    final = events[-1].run

    assert (final.status, final.message) == (RunStatus.COMPLETED, "exported by the agent")
    (planner,) = asked
    assert "Remaining steps of the routine" in planner.requests[0].goal
    # the routine granted click; the agent's click asks all the same
    assert [a.tool for a in gate_of(agent).requests] == ["click"]
    waits = [e.step for e in events if isinstance(e, StepStarted)
             and e.step.kind is StepKind.ACTION and e.step.tool == "wait"]  # fmt: skip
    assert len(waits) == PATIENCE_TURNS  # it waited for the button before handing over


async def test_without_a_model_a_mismatch_ends_routine_mismatch(agent: Agent) -> None:
    agent.runner.services.observer = FakeObserver(observation([WINDOW]))
    await agent.repo.save_routine(routine(), replace=True)

    final = await final_run(admit(agent, RoutineRequest("export", handover=False)))

    assert (final.status, final.stop_reason) == (RunStatus.FAILED, StopReason.ROUTINE_MISMATCH)
    assert 'step 1 (click on push button "Export" in "Report - Viewer")' in final.message


def test_a_routine_would_ask_nothing_once_its_steps_are_granted(agent: Agent) -> None:
    ungranted = routine(grants=())
    asked = service.questions(ungranted, agent.registry, agent.permissions, ("delete",))
    assert asked == [
        'step 1 click on push button "Export" in "Report - Viewer": input tool, not granted',
        'step 2 click on push button "Export" in "Report - Viewer": input tool, not granted',
    ]
    assert service.questions(routine(), agent.registry, agent.permissions, ("delete",)) == []
    # a sensitive target asks every time, granted or not
    assert service.questions(routine(), agent.registry, agent.permissions, ("export",)) == [
        f'step {n} click on push button "Export" in "Report - Viewer": the target push button '
        '"Export" is sensitive ("export")'
        for n in (1, 2)
    ]
    assert agent.permissions.task_grants("routine-questions") == frozenset()


# ── the preview judges what will run ─────────────────────────────────────────

TERMINAL = ElementRef("focus", "terminal", "", "me@box: ~ — xterm", (0, 20, 800, 580),
                      (0, 0, 800, 600))  # fmt: skip


def typed_into_terminal(args: dict[str, Any], **changes: Any) -> Routine:
    """A hand-written routine file's one step (as `routine import` reads it), type_text granted."""
    step = {"tool": "type_text", "args": args, "element": TERMINAL.to_json()}
    text = json.dumps({"format": FILE_FORMAT, "version": FILE_VERSION, "name": "shell",
                       "goal": "type in the shell", "steps": [step], **changes})  # fmt: skip
    return read_routine_text(text, source="shell.json").with_(grants=("type_text",))


@pytest.mark.parametrize("enter", ["false", 0, "no"])
def test_the_preview_judges_a_hand_written_steps_validated_arguments(
    agent: Agent, enter: object
) -> None:
    # pydantic reads each of these as False: the loop's gate sees no Enter, and the preview
    # must not say the run would ask (it refused scheduled runs that would have run)
    quiet = typed_into_terminal({"text": "ls", "enter": enter})
    assert service.questions(quiet, agent.registry, agent.permissions, ()) == []

    pressing = typed_into_terminal({"text": "ls", "enter": "true"})
    assert service.questions(pressing, agent.registry, agent.permissions, ()) == [
        'step 1 type_text {"text": "ls", "enter": true} on terminal "" in "me@box: ~ — xterm": '
        "typing a line that ends with Enter into a terminal runs it"
    ]


def test_the_preview_judges_the_values_the_run_is_given(agent: Agent) -> None:
    params = [{"name": "line", "steps": [1], "default": "ls"}]
    made = typed_into_terminal({"text": "ls"}, params=params)
    assert service.questions(made, agent.registry, agent.permissions, ()) == []

    asked = service.questions(made, agent.registry, agent.permissions, (), {"line": "rm -rf ~\n"})

    assert asked == [
        'step 1 type_text {"text": "rm -rf ~\\n"} on terminal "" in "me@box: ~ — xterm": '
        "typing a line that ends with Enter into a terminal runs it"
    ]


async def test_a_step_that_does_not_validate_is_a_one_line_refusal_before_anything_runs(
    agent: Agent,
) -> None:
    params = [{"name": "line", "steps": [1], "default": "ls"}]
    made = typed_into_terminal({"text": "ls"}, params=params)
    await agent.repo.save_routine(made)
    why = "routine shell: step 1: invalid arguments for type_text: text: String should have at "

    with pytest.raises(RoutineError, match=why):
        service.questions(made, agent.registry, agent.permissions, (), {"line": ""})
    with pytest.raises(RoutineError, match=why):
        await final_run(admit(agent, RoutineRequest("shell", {"line": ""})))
    assert await agent.repo.list_runs() == []


async def test_a_hand_written_element_id_follows_its_element_like_a_taught_one(
    agent: Agent,
) -> None:
    # the file says "2" where a run stores 2: the routine must find its element again all the
    # same, not click whatever has id 2 on today's screen
    text = dumps_routine(routine(steps=routine().steps[:1]))
    text = text.replace('"element": 2', '"element": "2"')
    assert '"element": "2"' in text
    await agent.repo.save_routine(read_routine_text(text, source="export.json").with_(
        name="typed", grants=("click",)))  # fmt: skip
    moved = Element(7, "push button", "Export", (420, 220, 90, 30))
    agent.runner.services.observer = FakeObserver(observation([WINDOW, moved]))

    final = await final_run(admit(agent, RoutineRequest("typed", handover=False)))

    assert final.status is RunStatus.COMPLETED
    ((name, args),) = executor_of(agent).calls
    assert (name, args.model_dump(exclude_unset=True)) == ("click", {"element": 7})


# ── a step nobody is asked about acts only in the window it was taught in ────

CHAT = observation([
    Element(1, "window", "Team chat — Mozilla Firefox", (0, 0, 1000, 700), focused=True),
    Element(2, "entry", "Message", (20, 640, 900, 40), focused=True),
])  # fmt: skip
ATTACKER = observation([
    Element(1, "window", "attacker.example — Mozilla Firefox", (0, 0, 1000, 700), focused=True),
    Element(2, "entry", "Message", (20, 640, 900, 40), focused=True),
])  # fmt: skip


async def chat_routine(agent: Agent, *, grants: tuple[str, ...] = ("type_text",)) -> None:
    """A routine taught in the team chat: type a message there; `grants` its grants."""
    typed = RoutineStep("type_text", {"text": "the quarterly numbers"},
                        element_ref("type_text", {}, CHAT), Effect.UNKNOWN)  # fmt: skip
    await agent.repo.save_routine(Routine("post", "post the numbers", (typed,), grants=grants))
    agent.runner.services.observer = FakeObserver(ATTACKER)  # the same browser, another site


async def test_a_granted_step_never_types_into_another_site_of_the_same_browser(
    agent: Agent,
) -> None:
    await chat_routine(agent)

    final = await final_run(admit(agent, RoutineRequest("post", handover=False)))

    assert (final.status, final.stop_reason) == (RunStatus.FAILED, StopReason.ROUTINE_MISMATCH)
    assert (
        'the active window is "attacker.example — Mozilla Firefox", not "Team chat — Mozilla '
        'Firefox" (the same program; a step nobody is asked about acts only in the window it '
        "was taught in)"
    ) in final.message
    assert [name for name, _ in executor_of(agent).calls] == ["wait"] * PATIENCE_TURNS


async def test_a_granted_step_in_another_window_hands_over_and_the_agent_asks(
    agent: Agent,
) -> None:
    await chat_routine(agent)
    agent.planner_factory = lambda run: ScriptedPlanner(
        [tool("type_text", text="the quarterly numbers"), done("posted by the agent")]
    )

    final = await final_run(admit(agent, RoutineRequest("post")))

    assert final.status is RunStatus.COMPLETED
    # the agent's typing is asked about: the routine's grant went with the handover
    assert [a.tool for a in gate_of(agent).requests] == ["type_text"]


async def test_every_step_of_a_scheduled_run_needs_its_window_by_label(agent: Agent) -> None:
    # not granted but allowed by the policy: a scheduled run asks nobody, so the label decides
    agent.permissions.set_policy("type_text", Policy.ALLOW)
    await chat_routine(agent, grants=())

    final = await final_run(admit(agent, RoutineRequest("post", handover=False, scheduled=True)))

    assert (final.status, final.stop_reason) == (RunStatus.FAILED, StopReason.ROUTINE_MISMATCH)
    assert 'not "Team chat — Mozilla Firefox" (the same program' in final.message
    assert "type_text" not in [name for name, _ in executor_of(agent).calls]


async def test_a_step_that_asks_still_plays_in_another_window_of_its_program(agent: Agent) -> None:
    # nobody granted it: the gate asks, showing the call and where it lands; the answer decides
    await chat_routine(agent, grants=())

    final = await final_run(admit(agent, RoutineRequest("post", handover=False)))

    assert final.status is RunStatus.COMPLETED
    assert [a.tool for a in gate_of(agent).requests] == ["type_text"]
    assert [name for name, _ in executor_of(agent).calls] == ["type_text"]


@pytest.mark.parametrize("window", [None, ""])
async def test_a_granted_step_whose_window_was_never_recorded_does_not_play(
    agent: Agent, window: str | None
) -> None:
    # a hand-written file's step without its element (or taught with no window active): a
    # grant of type_text would otherwise type wherever the focus is
    ref = None if window is None else ElementRef("focus", "entry", "Message", "", (0, 0, 9, 9))
    typed = RoutineStep("type_text", {"text": "the quarterly numbers"}, ref)
    await agent.repo.save_routine(Routine("post", "post", (typed,), grants=("type_text",)))
    agent.runner.services.observer = FakeObserver(ATTACKER)

    final = await final_run(admit(agent, RoutineRequest("post", handover=False)))

    assert (final.status, final.stop_reason) == (RunStatus.FAILED, StopReason.ROUTINE_MISMATCH)
    assert "nobody is asked about it" in final.message
    assert "type_text" not in [name for name, _ in executor_of(agent).calls]


def test_the_preview_lists_a_step_whose_window_was_never_recorded(agent: Agent) -> None:
    # a scheduled run would end routine_mismatch there: it refuses before it starts instead
    blind = routine(
        steps=(RoutineStep("click", {"x": 5, "y": 5}), RoutineStep("wait", {"seconds": 1}))
    )

    asked = service.questions(blind, agent.registry, agent.permissions, ())

    assert asked == ['step 1 click {"x": 5, "y": 5}: where it acts was not recorded']
