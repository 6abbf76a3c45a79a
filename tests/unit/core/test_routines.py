"""Routines: saved from a run's steps, found again on a changed screen, played without a model."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from pydantic import BaseModel

from desktop_agent.core.errors import ActionPaused
from desktop_agent.core.events import ApprovalRequested, RunFinished
from desktop_agent.core.models import (
    ApprovalDecision,
    Effect,
    Element,
    ElementRef,
    Grounding,
    Observation,
    Policy,
    RunKind,
    RunStatus,
    StepKind,
    StepStatus,
    StepView,
    StopReason,
    TaskSpec,
    ToolResult,
    utcnow,
)
from desktop_agent.core.ports import ToolContext
from desktop_agent.core.routine import (
    REDACTED,
    Routine,
    RoutineError,
    RoutineParam,
    RoutineStep,
    dump_routine_text,
    read_routine_text,
    routine_from_run,
)
from desktop_agent.core.routine_player import RoutinePlayer
from desktop_agent.core.targets import Found, element_ref, find_again, relocate
from tests.fakes import (
    FakeFocusProbe,
    ScriptedGrounder,
    ScriptedPlanner,
    done,
    grey_signature,
    make_observation,
    tool,
)
from tests.unit.core.conftest import Consumer, Harness, make_harness

TITLE = "notes.txt - Editor"


def editor(
    left: int = 100,
    top: int = 100,
    width: int = 600,
    height: int = 400,
    *,
    title: str = TITLE,
    others: int = 0,
    save: bool = True,
    password: bool = False,
    signature: bytes = b"",
) -> Observation:
    """An editor window with a Save button and a text area; `others` windows listed first
    (so the ids shift)."""
    elements: list[Element] = [
        Element(id=i + 1, role="window", name=f"other {i}", box=(0, 0, 50, 50))
        for i in range(others)
    ]

    def add(role: str, name: str, box: tuple[int, int, int, int], **flags: Any) -> None:
        elements.append(Element(len(elements) + 1, role, name, box, **flags))

    add("window", title, (left, top, width, height), focused=True)
    if save:
        add("push button", "Save", (left + 10, top + 10, 80, 24))
    add("text", "", (left, top + 40, width, height - 40), focused=not password)
    if password:
        add("password text", "Passphrase", (left + 10, top + 60, 200, 24), focused=True)
    return make_observation(elements, signature=signature)


# ── targets ──────────────────────────────────────────────────────────────────


def test_a_clicked_element_is_found_again_in_its_moved_and_resized_window() -> None:
    taught = editor()
    ref = element_ref("click", {"element": 2}, taught)
    assert ref == ElementRef(
        "element", "push button", "Save", TITLE, (110, 110, 80, 24), (100, 100, 600, 400)
    )

    now = editor(700, 300, 900, 700, others=2, title="other.txt - Editor")
    found = find_again(ref, now)

    assert isinstance(found, Found) and found.element is not None
    assert (found.element.id, found.element.box) == (4, (710, 310, 80, 24))
    assert relocate({"element": 2}, ref, found) == {"element": 4}


def test_a_point_click_goes_to_where_its_element_is_now() -> None:
    ref = element_ref("click", {"x": 130, "y": 120}, editor())
    assert ref is not None and (ref.how, ref.name) == ("point", "Save")

    found = find_again(ref, editor(400, 50))

    assert isinstance(found, Found)
    assert relocate({"x": 130, "y": 120}, ref, found) == {"x": 430, "y": 70}


def test_a_missing_element_or_window_says_what_it_expected() -> None:
    ref = element_ref("click", {"element": 2}, editor())
    assert ref is not None
    assert find_again(ref, editor(save=False)) == f'no push button "Save" in "{TITLE}"'
    gone = make_observation([Element(1, "window", "Terminal", (0, 0, 9, 9), focused=True)])
    assert find_again(ref, gone) == f'the active window is "Terminal", not "{TITLE}"'


def test_typed_text_targets_the_focused_control() -> None:
    ref = element_ref("type_text", {"text": "hi"}, editor())
    assert ref is not None and (ref.how, ref.role, ref.window) == ("focus", "text", TITLE)
    assert find_again(ref, editor(password=True)) == f'no focused text "" in "{TITLE}"'


# ── saving a run ─────────────────────────────────────────────────────────────


def step(seq: int, turn: int, kind: StepKind, **fields: Any) -> StepView:
    return StepView(
        run_id="r1",
        seq=seq,
        index=turn,
        kind=kind,
        status=fields.pop("status", StepStatus.OK),
        started_at=utcnow() + timedelta(seconds=seq),
        **fields,
    )


def taught_steps() -> list[StepView]:
    screen = editor()
    return [
        step(1, 1, StepKind.OBSERVE, tool="screen_snapshot", screenshot="runs/r1/0001.jpg"),
        step(2, 1, StepKind.DECIDE, tool="click"),
        step(3, 1, StepKind.ACTION, tool="click", args={"element": 2},
             element=element_ref("click", {"element": 2}, screen), effect=Effect.CHANGED),
        step(4, 2, StepKind.ACTION, tool="click", args={"element": 9},
             status=StepStatus.FAILED, error="no element 9"),
        step(5, 3, StepKind.ACTION, tool="type_text", args={"text": "hello"},
             element=element_ref("type_text", {}, screen), effect=Effect.CHANGED),
        step(6, 4, StepKind.ACTION, tool="type_text", args={"text": REDACTED},
             element=element_ref("type_text", {}, editor(password=True))),
        step(7, 5, StepKind.ACTION, tool="hotkey", args={"keys": ["ctrl", "s"]},
             element=element_ref("hotkey", {}, screen)),
    ]  # fmt: skip


async def completed_run(harness: Harness) -> Any:
    run = await harness.create("write hello and save")
    return run.with_(status=RunStatus.COMPLETED)


async def test_a_run_is_saved_as_its_ok_actions_with_typed_texts_as_parameters(
    harness: Harness,
) -> None:
    run = await completed_run(harness)

    routine = routine_from_run(run, taught_steps(), "save-note", {"text": [3]})

    assert [(s.tool, s.turn) for s in routine.steps] == [
        ("click", 1), ("type_text", 3), ("type_text", 4), ("hotkey", 5)
    ]  # fmt: skip
    assert routine.steps[0].screenshot == "runs/r1/0001.jpg"
    assert routine.steps[0].element is not None and routine.steps[0].element.name == "Save"
    text, password = routine.params
    assert (text.name, text.steps, text.default, text.secret) == ("text", (2,), "hello", False)
    # the password field's text was never stored: a secret, asked at each run
    assert (password.name, password.steps, password.default, password.secret) == (
        "password", (3,), None, True
    )  # fmt: skip
    bound = routine.bind({"text": "other words", "password": "s3cret"})
    assert bound[1].args == {"text": "other words"} and bound[2].args == {"text": "s3cret"}
    with pytest.raises(RoutineError, match="needs a value for password"):
        routine.bind({})
    with pytest.raises(RoutineError, match="has no parameter colour"):
        routine.bind({"colour": "red", "password": "x"})


async def test_saving_refuses_a_run_that_did_not_complete_or_a_turn_that_typed_nothing(
    harness: Harness,
) -> None:
    run = await completed_run(harness)
    with pytest.raises(RoutineError, match=r"turn 1 typed no text .* \(turns that did: 3, 4\)"):
        routine_from_run(run, taught_steps(), "x", {"text": [1]})
    with pytest.raises(RoutineError, match="only a completed run"):
        routine_from_run(run.with_(status=RunStatus.FAILED), taught_steps(), "x")
    with pytest.raises(RoutineError, match="routine name 'a b'"):
        routine_from_run(run, taught_steps(), "a b")


# ── the file ─────────────────────────────────────────────────────────────────


async def test_export_then_import_gives_the_same_routine_without_grants(harness: Harness) -> None:
    run = await completed_run(harness)
    routine = routine_from_run(run, taught_steps(), "save-note", {"text": [3]}, grants=["click"])

    text = dump_routine_text(routine)
    back = read_routine_text(text, source="save-note.json")

    assert "\n  " in text  # readable: indented
    assert back.grants == ()  # the user's grants stay on this machine
    assert back.with_(grants=routine.grants) == routine.with_(
        steps=tuple(s.__class__(**{**_fields(s), "screenshot": None}) for s in routine.steps)
    )


def _fields(s: RoutineStep) -> dict[str, Any]:
    return {name: getattr(s, name) for name in s.__slots__}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{not json", "f.json: not JSON (line 1: Expecting property name"),
        ('{"format": "other"}', 'f.json: not a routine ("format" is not'),
        ('{"format": "desktop-agent-routine", "version": 1, "name": "n", "goal": "g", '
         '"steps": []}', "f.json: it has no steps"),
        ('{"format": "desktop-agent-routine", "version": 1, "name": "n", "goal": "g", '
         '"steps": [{"tool": "click", "element": {"how": "x"}}]}', "f.json: not a routine: "),
        ('{"format": "desktop-agent-routine", "version": 1, "goal": "g", '
         '"steps": [{"tool": "wait"}]}', "f.json: not a routine: missing 'name'"),
        ("[" * 100000, "f.json: not JSON"),
    ],
)  # fmt: skip
def test_a_malformed_routine_file_is_rejected_with_one_line(text: str, says: str) -> None:
    with pytest.raises(RoutineError) as caught:
        read_routine_text(text, source="f.json")
    message = str(caught.value)
    assert message.startswith(says) and "\n" not in message


def test_an_imported_secret_never_carries_a_value() -> None:
    data = json.loads(
        dump_routine_text(
            Routine(
                "n", "g", (RoutineStep("type_text", {"text": REDACTED}),),
                (RoutineParam("password", (1,), None, True),),
            )
        )
    )  # fmt: skip
    data["params"][0]["default"] = "leaked"
    routine = read_routine_text(json.dumps(data), source="f")
    assert routine.params[0].default is None


# ── playing ──────────────────────────────────────────────────────────────────


def note_routine(**changes: Any) -> Routine:
    screen = editor()
    routine = Routine(
        name="save-note",
        goal="write a note and save it",
        steps=(
            RoutineStep("click", {"element": 2}, element_ref("click", {"element": 2}, screen),
                        Effect.CHANGED),
            RoutineStep("type_text", {"text": "hello"}, element_ref("type_text", {}, screen)),
            RoutineStep("hotkey", {"keys": ["ctrl", "s"]}, element_ref("hotkey", {}, screen)),
        ),
    )  # fmt: skip
    return routine.with_(**changes)


async def play(harness: Harness, player: RoutinePlayer, **spec: Any) -> tuple[list[Any], Any]:
    run = await harness.runner.create(
        TaskSpec(
            goal=player.routine.goal,
            allowed_tools=("click", "type_text", "hotkey", "wait"),
            kind=RunKind.ROUTINE,
            routine=player.routine.name,
            **spec,
        )
    )
    events = await harness.collect(run, player)
    final = events[-1]
    assert isinstance(final, RunFinished)
    return events, final.run


async def test_a_routine_plays_on_a_moved_window_with_no_model_and_no_tokens() -> None:
    harness = make_harness(policies={"click": Policy.ALLOW, "type_text": Policy.ALLOW,
                                     "hotkey": Policy.ALLOW})  # fmt: skip
    harness.observer.observation = editor(640, 320, 800, 500, others=3)
    routine = note_routine()
    player = RoutinePlayer(routine, routine.bind({}))

    _, final = await play(harness, player)

    assert (final.status, final.stop_reason) == (RunStatus.COMPLETED, StopReason.DONE)
    assert (final.kind, final.routine) == (RunKind.ROUTINE, "save-note")
    assert (final.prompt_tokens, final.completion_tokens, final.tokens_estimated) == (0, 0, False)
    calls = [(name, args.model_dump(exclude_defaults=True)) for name, args in
             harness.executor.calls]  # fmt: skip
    assert calls == [
        ("click", {"element": 5}),  # the Save button's id on this screen
        ("type_text", {"text": "hello"}),
        ("hotkey", {"keys": ["ctrl", "s"]}),
    ]
    assert player.checked == 3
    decides = [s for s in harness.repo.steps[final.id].values() if s.kind is StepKind.DECIDE]
    assert "routine step 1/3: click" in (decides[0].reason or "")


async def test_a_missing_element_without_a_model_stops_routine_mismatch_naming_the_step() -> None:
    harness = make_harness(policies={"click": Policy.ALLOW})
    harness.observer.observation = editor(save=False)
    routine = note_routine()
    player = RoutinePlayer(routine, routine.bind({}), patience_turns=2, wait_s=0)

    _, final = await play(harness, player)

    assert (final.status, final.stop_reason) == (RunStatus.FAILED, StopReason.ROUTINE_MISMATCH)
    assert final.message.startswith('routine save-note: step 1 (click on push button "Save"')
    assert f'no push button "Save" in "{TITLE}"' in final.message
    assert [name for name, _ in harness.executor.calls] == ["wait", "wait"]  # waited, then gave up


async def test_a_step_that_no_longer_changes_the_screen_is_a_mismatch() -> None:
    harness = make_harness(policies={"click": Policy.ALLOW})
    harness.observer.observation = editor(signature=grey_signature(40))  # never changes
    taught = editor()
    close = Element(9, "push button", "Close", (300, 110, 80, 24))
    with_close = taught.with_(elements=(*taught.elements, close))
    routine = note_routine().with_(
        steps=(
            note_routine().steps[0],
            RoutineStep("click", {"element": 9}, element_ref("click", {"element": 9}, with_close)),
        )
    )

    _, final = await play(harness, RoutinePlayer(routine, routine.bind({}), patience_turns=0))

    assert final.stop_reason is StopReason.ROUTINE_MISMATCH
    assert "step 1" in final.message and "changed nothing on the screen" in final.message
    assert len(harness.executor.calls) == 1


async def test_no_visible_change_is_enough_when_the_next_steps_target_is_there() -> None:
    # one look after each action: the screen never changes here, waiting for it would not help
    harness = make_harness(policies={"click": Policy.ALLOW, "type_text": Policy.ALLOW,
                                     "hotkey": Policy.ALLOW}, effect_wait_s=0.0)  # fmt: skip
    harness.observer.observation = editor(signature=grey_signature(40))
    routine = note_routine()

    _, final = await play(harness, RoutinePlayer(routine, routine.bind({})))

    assert final.status is RunStatus.COMPLETED
    assert [name for name, _ in harness.executor.calls] == ["click", "type_text", "hotkey"]


async def test_on_a_mismatch_the_agent_takes_over_with_the_rest_as_a_plan() -> None:
    harness = make_harness(policies={"click": Policy.ALLOW, "type_text": Policy.ALLOW})
    screens = iter([editor(save=False)])

    async def next_screen(args: Any, context: Any) -> Any:
        harness.observer.observation = next(screens)
        return ToolResult.success("ok")

    harness.observer.observation = editor()
    harness.executor.handlers["click"] = next_screen
    routine = note_routine().with_(
        steps=note_routine().steps + (note_routine().steps[0],)  # Save is clicked again
    )
    agent = ScriptedPlanner([done("saved by the agent")])
    handed: list[bool] = []

    async def handover() -> ScriptedPlanner:
        return agent

    player = RoutinePlayer(
        routine, routine.bind({}), handover=handover, on_handover=lambda: handed.append(True),
        patience_turns=0,
    )  # fmt: skip
    _, final = await play(harness, player)

    assert (final.status, final.message) == (RunStatus.COMPLETED, "saved by the agent")
    assert handed == [True] and player.handed_over == 4
    goal = agent.requests[0].goal
    assert goal.startswith("write a note and save it\n")
    assert 'Done so far by the routine:\n1. click on push button "Save"' in goal
    assert '4. click on push button "Save"' in goal.split("as a plan")[1]


async def test_after_the_handover_the_agents_clicks_go_through_its_grounding() -> None:
    harness = make_harness(policies={"click": Policy.ALLOW})
    harness.observer.observation = editor(save=False)  # step 1's Save button is not there
    grounder = ScriptedGrounder(
        [Grounding(point=(130, 122), first=(150, 115), refined=True, summary="refined")]
    )
    agent = ScriptedPlanner(
        [tool("click", x=150, y=115, target="the Save button"), done()], grounder=grounder
    )

    async def handover() -> ScriptedPlanner:
        return agent

    routine = note_routine()
    player = RoutinePlayer(routine, routine.bind({}), handover=handover, patience_turns=0)

    _, final = await play(harness, player)

    assert final.status is RunStatus.COMPLETED
    assert [(r.target, r.point) for r in grounder.requests] == [("the Save button", (150, 115))]
    [(name, args)] = harness.executor.calls
    assert (name, args.x, args.y) == ("click", 130, 122)  # type: ignore[attr-defined]


async def test_a_password_parameter_is_asked_at_run_time_and_never_stored() -> None:
    harness = make_harness(
        policies={"type_text": Policy.ALLOW}, focus=FakeFocusProbe("password text")
    )
    harness.observer.observation = editor(password=True)
    screen = editor(password=True)
    routine = Routine(
        "login", "log in",
        (RoutineStep("type_text", {"text": REDACTED}, element_ref("type_text", {}, screen)),),
        (RoutineParam("password", (1,), None, True),),
        grants=("type_text",),
    )  # fmt: skip
    with pytest.raises(RoutineError, match="needs a value for password"):
        routine.bind({})
    harness.permissions.grant_for_run("any", "type_text")

    events, final = await play(
        harness, RoutinePlayer(routine, routine.bind({"password": "hunter2"}))
    )

    assert final.status is RunStatus.COMPLETED
    asked = [e.approval for e in events if isinstance(e, ApprovalRequested)]
    assert [a.caution for a in asked] == ["typing into a password field"]
    assert harness.executor.calls[0][1].model_dump()["text"] == "hunter2"
    stored = json.dumps([s.to_json() for s in harness.repo.steps[final.id].values()])
    assert "hunter2" not in stored


async def test_a_denied_step_ends_the_run_failed_not_handed_over() -> None:
    harness = make_harness(answers=[ApprovalDecision.DENY])
    harness.observer.observation = editor()
    routine = note_routine()

    async def handover() -> ScriptedPlanner:
        raise AssertionError("a denial is the user's answer, not a mismatch")

    _, final = await play(harness, RoutinePlayer(routine, routine.bind({}), handover=handover))

    assert (final.status, final.stop_reason) == (RunStatus.FAILED, StopReason.ERROR)
    assert "routine step 1 (click) was not allowed" in final.message


def test_a_password_fields_text_is_never_typed_into_a_look_alike() -> None:
    def screen(password: bool) -> Observation:
        return make_observation(
            [
                Element(1, "window", TITLE, (0, 0, 400, 300), focused=True),
                Element(2, "text", "Secret", (10, 60, 200, 24), focused=True, password=password),
            ]
        )

    ref = element_ref("type_text", {}, screen(True))
    assert ref is not None and ref.password
    assert isinstance(find_again(ref, screen(True)), Found)
    assert find_again(ref, screen(False)) == f'no focused text "Secret" in "{TITLE}"'


async def note_routine_run() -> tuple[Any, RoutinePlayer, Any]:
    """A harness that allows the note routine's tools on the editor, the routine's player and
    its run, stored and not started."""
    harness = make_harness(policies={"click": Policy.ALLOW, "type_text": Policy.ALLOW,
                                     "hotkey": Policy.ALLOW})  # fmt: skip
    harness.observer.observation = editor()
    routine = note_routine()
    player = RoutinePlayer(routine, routine.bind({}))
    run = await harness.runner.create(
        TaskSpec(goal=routine.goal, allowed_tools=("click", "type_text", "hotkey", "wait"),
                 kind=RunKind.ROUTINE, routine=routine.name)
    )  # fmt: skip
    return harness, player, run


async def test_a_step_dropped_by_a_pause_is_played_again_after_the_resume() -> None:
    harness, player, run = await note_routine_run()

    class TakenOver:
        """The user takes over while the first step is decided (the takeover watch pauses)."""

        asked = 0

        async def decide(self, request: Any) -> Any:
            decision = await player.decide(request)
            TakenOver.asked += 1
            if TakenOver.asked == 1:
                harness.runner.pause(run.id)
            return decision

    consumer = Consumer(harness.runner.start(run, TakenOver()))
    await consumer.wait_type("run_paused")
    assert harness.executor.calls == []  # the decision made before the pause is dropped
    harness.runner.resume(run.id)
    events = await consumer.finished()

    final = events[-1]
    assert isinstance(final, RunFinished) and final.run.status is RunStatus.COMPLETED
    assert [name for name, _ in harness.executor.calls] == ["click", "type_text", "hotkey"]
    skipped = [s for s in harness.repo.steps[run.id].values() if s.status is StepStatus.SKIPPED]
    assert [s.tool for s in skipped] == ["click"]


async def test_a_dangerous_step_asks_every_time_though_the_routine_grants_its_tool() -> None:
    harness = make_harness()
    routine = Routine("start", "start the editor",
                      (RoutineStep("launch_app", {"command": "l3afpad"}),),
                      grants=("launch_app",))  # fmt: skip
    player = RoutinePlayer(routine, routine.bind({}))
    run = await harness.runner.create(
        TaskSpec(goal=routine.goal, allowed_tools=("launch_app", "wait"), kind=RunKind.ROUTINE)
    )
    harness.permissions.grant_for_run(run.id, "launch_app")  # as host/routines.py does

    events = await harness.collect(run, player)

    asked = [e.approval for e in events if isinstance(e, ApprovalRequested)]
    assert [(a.tool, a.offer_run_grant) for a in asked] == [("launch_app", False)]
    assert [name for name, _ in harness.executor.calls] == ["launch_app"]


@pytest.mark.parametrize("partial", [False, True], ids=["before its first key", "part-way"])
async def test_a_step_a_pause_interrupted_is_played_again_only_if_it_sent_nothing(
    partial: bool,
) -> None:
    harness, player, run = await note_routine_run()
    typed = 0

    async def taken_over_while_typing(_args: BaseModel, _context: ToolContext) -> ToolResult:
        nonlocal typed
        typed += 1
        if typed > 1:
            return ToolResult.success("typed 5 characters")
        harness.runner.pause(run.id, reason="user")  # the executor saw the pause
        if partial:
            raise ActionPaused("paused during type_text after 2 of 5 keys", partial=True)
        raise ActionPaused("paused before the input")

    harness.executor.handlers["type_text"] = taken_over_while_typing
    consumer = Consumer(harness.runner.start(run, player))
    await consumer.wait_type("run_paused")
    harness.runner.resume(run.id)
    events = await consumer.finished()

    final = events[-1]
    assert isinstance(final, RunFinished)
    played = [name for name, _ in harness.executor.calls]
    if partial:  # "hel" may be in the field: typing "hello" again would make it "hehello"
        assert (final.run.status, final.run.stop_reason) == (
            RunStatus.FAILED,
            StopReason.ROUTINE_MISMATCH,
        )
        assert "a pause interrupted it part-way" in final.run.message
        assert played == ["click", "type_text"]
    else:
        assert final.run.status is RunStatus.COMPLETED
        assert played == ["click", "type_text", "type_text", "hotkey"]
