"""The gate judges each call: no grant or allow policy reaches a launcher key, a pasted
clipboard, a line into a terminal or a password field (issue #10 items 2 and 4)."""

from __future__ import annotations

import json

from desktop_agent.core.events import ApprovalRequested, RunFinished, StepFinished, StepStarted
from desktop_agent.core.models import (
    ApprovalDecision,
    ApprovalRequest,
    Decision,
    Element,
    Grounding,
    Policy,
    RunStatus,
    StepKind,
    StepStatus,
    StopReason,
)
from tests.fakes import (
    FakeFocusProbe,
    ScriptedGrounder,
    ScriptedPlanner,
    done,
    make_observation,
    tool,
)
from tests.unit.core.conftest import make_harness

EDITOR = make_observation([Element(1, "window", "notes — L3afpad", (0, 0, 800, 600), focused=True)])
TERMINAL = make_observation(
    [Element(1, "window", "alice@box: ~ — XTerm", (0, 0, 800, 600), focused=True)]
)


def pressed(h: object) -> list[list[str]]:
    return [list(getattr(args, "keys", [])) for _, args in h.executor.calls]  # type: ignore[attr-defined]


async def test_a_run_grant_on_hotkey_does_not_cover_a_launcher_combination() -> None:
    h = make_harness(answers=[ApprovalDecision.RUN, ApprovalDecision.RUN, ApprovalDecision.DENY])
    h.observer.observation = EDITOR
    run = await h.create()
    planner = ScriptedPlanner(
        [
            tool("hotkey", keys=["ctrl", "s"]),  # asked: granted for the run
            tool("hotkey", keys=["super", "r"]),  # asked anyway; "run" is only once
            tool("hotkey", keys=["ctrl", "s"]),  # covered by the grant
            tool("hotkey", keys=["win", "r"]),  # asked again: the user denies
            done(),
        ]
    )
    events = await h.collect(run, planner)
    assert isinstance(events[-1], RunFinished)
    assert events[-1].run.status is RunStatus.COMPLETED
    asked = [(r.args["keys"], r.offer_run_grant) for r in h.gate.requests]
    # the person asked sees the keys as they will be pressed: "super" is pressed as "win"
    assert asked == [(["ctrl", "s"], True), (["win", "r"], False), (["win", "r"], False)]
    assert "system key" in h.gate.requests[1].caution
    assert h.gate.requests[0].caution == ""
    assert pressed(h) == [["ctrl", "s"], ["win", "r"], ["ctrl", "s"]]
    assert h.permissions.task_grants(run.id) == frozenset()  # revoked at the end
    actions = [s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    assert [s.status for s in actions] == [StepStatus.OK] * 3 + [StepStatus.DENIED]


async def test_an_allow_policy_or_a_persistent_grant_does_not_cover_ctrl_alt_t() -> None:
    for setup in ("policy", "persistent"):
        h = make_harness(
            answers=[ApprovalDecision.DENY],
            policies={"hotkey": Policy.ALLOW} if setup == "policy" else None,
        )
        if setup == "persistent":
            h.permissions.grant_persistent("hotkey")
        h.observer.observation = EDITOR
        run = await h.create()
        planner = ScriptedPlanner(
            [tool("hotkey", keys=["ctrl", "alt", "t"]), tool("hotkey", keys=["ctrl", "z"]), done()]
        )
        await h.collect(run, planner)
        assert [r.args["keys"] for r in h.gate.requests] == [["ctrl", "alt", "t"]], setup
        assert pressed(h) == [["ctrl", "z"]], setup


async def test_a_deny_policy_still_denies_a_launcher_combination_without_asking() -> None:
    h = make_harness(policies={"hotkey": Policy.DENY})
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("hotkey", keys=["alt", "f2"]), done()]))
    assert h.gate.requests == []
    assert h.executor.calls == []


async def test_pasting_the_clipboard_asks_every_call_despite_a_run_grant() -> None:
    h = make_harness(answers=[ApprovalDecision.RUN, ApprovalDecision.RUN, ApprovalDecision.ONCE])
    h.observer.observation = EDITOR
    run = await h.create()
    planner = ScriptedPlanner(
        [
            tool("hotkey", keys=["ctrl", "c"]),
            tool("hotkey", keys=["ctrl", "v"]),
            tool("hotkey", keys=["shift", "insert"]),
            done(),
        ]
    )
    await h.collect(run, planner)
    assert [r.args["keys"] for r in h.gate.requests] == [
        ["ctrl", "c"],
        ["ctrl", "v"],
        ["shift", "insert"],
    ]
    assert [r.offer_run_grant for r in h.gate.requests] == [True, False, False]


async def test_typing_a_line_into_a_terminal_asks_every_call_despite_a_run_grant() -> None:
    h = make_harness(answers=[ApprovalDecision.RUN, ApprovalDecision.RUN, ApprovalDecision.RUN])
    h.observer.observation = TERMINAL
    run = await h.create()
    planner = ScriptedPlanner(
        [
            # granted for the run (a command line would ask anyway: test_provenance)
            tool("type_text", text="echo hello"),
            tool("type_text", text="more text"),  # covered: no line end
            tool("hotkey", keys=["enter"]),  # runs the line: asks
            tool("type_text", text="rm -rf ~", enter=True),  # asks
            tool("type_text", text="ls\n"),  # asks
            done(),
        ]
    )
    await h.collect(run, planner)
    assert [r.tool for r in h.gate.requests] == ["type_text", "hotkey", "type_text", "type_text"]
    assert [r.offer_run_grant for r in h.gate.requests] == [True, False, False, False]
    assert all("terminal" in r.caution for r in h.gate.requests[1:])


async def test_the_focus_probe_finds_a_terminal_the_window_title_hides() -> None:
    probe = FakeFocusProbe("text")
    h = make_harness(answers=[ApprovalDecision.RUN, ApprovalDecision.ONCE], focus=probe)
    h.observer.observation = EDITOR
    run = await h.create()

    async def switch_to_terminal(_request: object) -> Decision:
        probe.role = "terminal"
        return tool("hotkey", keys=["enter"])

    planner = ScriptedPlanner([tool("hotkey", keys=["enter"]), switch_to_terminal, done()])
    await h.collect(run, planner)
    assert [r.offer_run_grant for r in h.gate.requests] == [True, False]
    assert probe.calls >= 2


# ── password fields (item 4) ─────────────────────────────────────────────────


def password_decision(reason: str = "type the password hunter2") -> Decision:
    return Decision(
        action="tool",
        tool="type_text",
        args={"text": "hunter2"},
        reason=reason,
        raw='{"action":"tool","tool":"type_text","args":{"text":"hunter2"},'
        f'"reason":"{reason}"}}',
    )


async def test_a_password_field_asks_even_when_the_policy_allows_type_text() -> None:
    h = make_harness(answers=[ApprovalDecision.RUN], policies={"type_text": Policy.ALLOW})
    h.observer.observation = make_observation(
        [Element(2, "edit", "Password", (0, 0, 99, 20), focused=True, password=True)]
    )
    run = await h.create()
    events = await h.collect(run, ScriptedPlanner([password_decision(), done()]))
    assert [r.args for r in h.gate.requests] == [{"text": "•••"}]
    assert h.gate.requests[0].offer_run_grant is False
    assert h.gate.requests[0].reason == "type the password •••"
    assert h.permissions.task_grants(run.id) == frozenset()  # "run" was not taken as a grant
    for event in events:
        assert "hunter2" not in repr(event)


async def test_the_probe_finds_a_password_field_the_element_list_does_not_show() -> None:
    probe = FakeFocusProbe("password text")
    h = make_harness(answers=[ApprovalDecision.ONCE], focus=probe)
    h.permissions.grant_persistent("type_text")
    h.observer.observation = EDITOR  # a window list only: no controls
    run = await h.create()
    events = await h.collect(run, ScriptedPlanner([password_decision(), done()]))
    assert isinstance(events[-1], RunFinished)
    assert events[-1].run.stop_reason is StopReason.DONE
    assert [r.caution for r in h.gate.requests] == ["typing into a password field"]
    assert [getattr(args, "text", None) for _, args in h.executor.calls] == ["hunter2"]
    for step in await h.repo.list_steps(run.id):
        assert "hunter2" not in repr(step.to_json()), step


async def test_text_whose_field_cannot_be_known_is_stored_redacted_without_asking() -> None:
    # the probe hangs (a stuck accessibility bus): its deadline passes, the role is unknown
    probe = FakeFocusProbe(hang=True)
    h = make_harness(focus=probe, focus_timeout_s=0.01)
    h.permissions.grant_persistent("type_text")
    h.observer.observation = EDITOR
    run = await h.create()
    events = await h.collect(run, ScriptedPlanner([password_decision("log in"), done()]))
    assert isinstance(events[-1], RunFinished)
    assert events[-1].run.stop_reason is StopReason.DONE
    assert h.gate.requests == []  # not known to be a password field: the grant holds
    stored = await h.repo.list_steps(run.id)
    typed = [s for s in stored if s.tool == "type_text"]
    assert [(s.kind, s.args) for s in typed] == [
        (StepKind.DECIDE, {"text": "•••"}),
        (StepKind.ACTION, {"text": "•••"}),
    ]
    assert "hunter2" not in (typed[0].raw_output or "")
    assert "•••" in (typed[0].raw_output or "")
    finished = [e for e in events if isinstance(e, StepFinished | ApprovalRequested)]
    assert all("hunter2" not in repr(e) for e in finished)


async def test_text_into_a_known_plain_field_is_stored_as_typed() -> None:
    h = make_harness(focus=FakeFocusProbe("text"))
    h.permissions.grant_persistent("type_text")
    h.observer.observation = EDITOR
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("type_text", text="hello"), done()]))
    typed = [s for s in await h.repo.list_steps(run.id) if s.tool == "type_text"]
    assert [s.args for s in typed] == [{"text": "hello"}, {"text": "hello"}]


# ── sensitive targets (issue #12) ────────────────────────────────────────────


async def test_a_sensitive_target_asks_every_time_with_the_target_marked() -> None:
    shop = make_observation(
        [
            Element(1, "button", "Add to cart", (100, 100, 100, 30)),
            Element(2, "button", "Pay now", (300, 100, 100, 30)),
        ]
    )
    h = make_harness(
        answers=[ApprovalDecision.RUN, ApprovalDecision.RUN, ApprovalDecision.DENY],
        policies={"invoke": Policy.ALLOW},
    )
    h.observer.observation = shop
    run = await h.create(allowed_tools=("click", "invoke"))
    planner = ScriptedPlanner(
        [
            tool("click", element=1),  # granted for the run
            tool("click", x=350, y=110),  # on "Pay now": asks anyway, "run" counts once
            tool("invoke", element=2),  # allowed by policy: asks anyway, denied
            done(),
        ]
    )
    await h.collect(run, planner)
    assert [(r.tool, r.target, r.offer_run_grant) for r in h.gate.requests] == [
        ("click", (150, 115), True),
        ("click", (350, 110), False),
        ("invoke", (350, 115), False),
    ]
    assert h.gate.requests[1].caution == 'the target button "Pay now" is sensitive ("pay")'
    assert len(h.executor.calls) == 2


async def test_the_sensitive_list_comes_from_the_services() -> None:
    h = make_harness(answers=[ApprovalDecision.RUN], sensitive_targets=("open",))
    h.observer.observation = make_observation([Element(1, "button", "Open", (0, 0, 50, 20))])
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("click", element=1)] * 2, then=done()))
    assert len(h.gate.requests) == 2


async def test_the_focus_is_asked_again_at_action_time() -> None:
    """A password field that took the focus after the decision (a login dialog popped up):
    the call asks, and nothing of the action row or its events shows the text."""

    class MovingFocus(FakeFocusProbe):
        async def focused_role(self) -> str | None:
            self.calls += 1
            return "text" if self.calls == 1 else "password text"

    probe = MovingFocus()
    h = make_harness(answers=[ApprovalDecision.ONCE], focus=probe)
    h.permissions.grant_persistent("type_text")
    h.observer.observation = EDITOR
    run = await h.create()
    events = await h.collect(run, ScriptedPlanner([tool("type_text", text="hunter2"), done()]))
    assert [r.caution for r in h.gate.requests] == ["typing into a password field"]
    action_events = [
        e
        for e in events
        if isinstance(e, StepFinished | StepStarted) and e.step.kind is StepKind.ACTION
    ]
    assert action_events and all(e.step.args == {"text": "•••"} for e in action_events)


# ── the validated arguments are judged (issue #15 item 1) ─────────────────────


async def test_the_gate_judges_a_line_end_spelled_as_a_string_or_a_number() -> None:
    """pydantic reads "true" and 1 as enter=True: the executor presses Enter, so the gate asks."""
    h = make_harness(
        answers=[ApprovalDecision.DENY] * 3,
        policies={"type_text": Policy.ALLOW},
        focus=FakeFocusProbe("text"),  # a known plain field: the text is stored as typed
    )
    h.observer.observation = TERMINAL
    run = await h.create(max_failures=5)
    planner = ScriptedPlanner(
        [
            tool("type_text", text="rm -rf ~", enter="true"),
            tool("type_text", text="rm -rf ~", enter=1),
            tool("type_text", text="rm -rf ~", enter="yes"),
            done(),
        ]
    )
    await h.collect(run, planner)
    assert [r.args for r in h.gate.requests] == [{"text": "rm -rf ~", "enter": True}] * 3
    assert all("terminal" in r.caution for r in h.gate.requests)
    assert h.executor.calls == []
    stored = [s.args for s in await h.repo.list_steps(run.id) if s.tool == "type_text"]
    assert stored == [{"text": "rm -rf ~", "enter": True}] * 6  # decide and action rows


async def test_the_gate_judges_an_element_or_point_spelled_as_strings() -> None:
    form = make_observation(
        [
            Element(1, "window", "Account — Browser", (0, 0, 1280, 720), focused=True),
            Element(2, "button", "Delete account", (100, 100, 120, 30)),
            Element(3, "edit", "Password", (100, 200, 120, 30), password=True),
        ]
    )
    h = make_harness(
        answers=[ApprovalDecision.DENY] * 4,
        policies={"click": Policy.ALLOW, "set_value": Policy.ALLOW},
    )
    h.observer.observation = form
    run = await h.create(max_failures=5, allowed_tools=("click", "set_value"))
    planner = ScriptedPlanner(
        [
            tool("click", element="2"),
            tool("click", x="150", y="120"),
            tool("click", x=150.0, y=110),
            tool("set_value", element="3", value="hunter2"),
            done(),
        ]
    )
    events = await h.collect(run, planner)
    assert [r.args for r in h.gate.requests] == [
        {"element": 2},
        {"x": 150, "y": 120},
        {"x": 150, "y": 110},
        {"element": 3, "value": "•••"},
    ]
    assert [r.caution for r in h.gate.requests][:3] == [
        'the target button "Delete account" is sensitive ("delete")'
    ] * 3
    assert h.gate.requests[3].caution == "typing into a password field"
    assert h.executor.calls == []
    assert all("hunter2" not in repr(event) for event in events)
    for step in await h.repo.list_steps(run.id):
        assert "hunter2" not in repr(step.to_json()), step


async def test_a_point_spelled_as_strings_is_grounded_judged_and_clicked_as_numbers() -> None:
    shop = make_observation([Element(2, "button", "Pay now", (600, 500, 100, 30))])
    h = make_harness(answers=[ApprovalDecision.DENY], policies={"click": Policy.ALLOW})
    h.observer.observation = shop
    run = await h.create(allowed_tools=("click",))
    found = Grounding(point=(650, 515), first=(150, 115), refined=True, summary="refined")
    grounder = ScriptedGrounder([found])
    planner = ScriptedPlanner(
        [tool("click", x="150", y="115", target="the Pay now button"), done()], grounder=grounder
    )
    await h.collect(run, planner)
    assert [r.point for r in grounder.requests] == [(150, 115)]
    assert [(r.args["x"], r.args["y"], r.caution) for r in h.gate.requests] == [
        (650, 515, 'the target button "Pay now" is sensitive ("pay")')
    ]
    assert h.executor.calls == []


# ── the person asked sees what will be typed (issue #15 item 11) ─────────────


async def test_the_person_asked_sees_the_text_a_field_nobody_can_identify_will_get() -> None:
    """No AT-SPI answer (an X11 session without a D-Bus session bus): the text is stored
    hidden, but the question shows it as it will be typed — nobody approves blind."""
    h = make_harness(
        answers=[ApprovalDecision.ONCE], focus=FakeFocusProbe(hang=True), focus_timeout_s=0.01
    )
    h.observer.observation = EDITOR
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("type_text", text="rm -rf ~/src"), done()]))
    [asked] = h.gate.requests
    assert asked.args == {"text": "•••"}
    assert asked.to_show == {"text": "rm -rf ~/src"}
    assert asked.to_json()["shown_args"] == {"text": "rm -rf ~/src"}
    assert asked.secret == ""
    for step in await h.repo.list_steps(run.id):
        assert "rm -rf" not in repr(step.to_json()), step


async def test_a_known_password_fields_text_is_only_behind_the_show_toggle() -> None:
    h = make_harness(answers=[ApprovalDecision.ONCE])
    h.observer.observation = make_observation(
        [Element(2, "edit", "Password", (0, 0, 99, 20), focused=True, password=True)]
    )
    run = await h.create()
    events = await h.collect(run, ScriptedPlanner([password_decision(), done()]))
    [asked] = h.gate.requests
    assert asked.to_show == {"text": "•••"}
    assert asked.secret == "hunter2"
    assert asked.revealed_args == {"text": "hunter2"}
    assert "hunter2" not in json.dumps(asked.to_json())
    assert all("hunter2" not in repr(event) for event in events)


# ── the focus while the person was asked (red team: time of check, time of use) ──


class FocusAfterTheAnswer(FakeFocusProbe):
    """The focus as the gate finds it before the question (`before`), and as it is once the
    person has answered (`after`): they clicked into another window meanwhile."""

    def __init__(self, before: str, after: str) -> None:
        super().__init__(before)
        self.after = after
        self.asked: list[ApprovalRequest] = []  # the gate's requests: answered once there is one

    async def focused_role(self) -> str | None:
        self.calls += 1
        return self.after if self.asked else self.role


async def test_a_line_approved_for_an_editor_is_not_typed_into_a_terminal_focused_meanwhile() -> (
    None
):
    probe = FocusAfterTheAnswer("text", "terminal")
    h = make_harness(answers=[ApprovalDecision.ONCE], focus=probe)
    probe.asked = h.gate.requests
    h.observer.observation = EDITOR
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("type_text", text="ls -la ~", enter=True), done()]))

    [asked] = h.gate.requests
    assert asked.caution == ""  # asked as an ordinary call into an editor
    assert h.executor.calls == []  # the focus is a terminal now: nothing typed
    steps = await h.repo.list_steps(run.id)
    [action] = [s for s in steps if s.kind is StepKind.ACTION]
    assert action.status is StepStatus.SKIPPED
    assert "focus moved while you were asked" in (action.error or "")
    assert "terminal" in (action.error or "")


async def test_plain_text_approved_is_not_typed_into_a_password_field_focused_meanwhile() -> None:
    probe = FocusAfterTheAnswer("text", "password text")
    h = make_harness(answers=[ApprovalDecision.ONCE], focus=probe)
    probe.asked = h.gate.requests
    h.observer.observation = EDITOR
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("type_text", text="my notes"), done()]))

    assert len(h.gate.requests) == 1
    assert h.executor.calls == []


async def test_a_focus_that_stayed_where_it_was_asked_runs_the_approved_call() -> None:
    probe = FocusAfterTheAnswer("text", "text")
    h = make_harness(answers=[ApprovalDecision.ONCE], focus=probe)
    probe.asked = h.gate.requests
    h.observer.observation = EDITOR
    run = await h.create()
    await h.collect(run, ScriptedPlanner([tool("type_text", text="hello", enter=True), done()]))

    assert [name for name, _ in h.executor.calls] == ["type_text"]
