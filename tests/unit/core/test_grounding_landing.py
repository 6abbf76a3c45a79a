"""The gate judges a pointer call where it lands: a grounded one on the screen as it is once
the grounding is done, not on the turn's observation the model decided on, and an approved
click or drag on the screen as it is once the person answered (issue 28 item 9)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from desktop_agent.core.gate import SCREEN_CHANGED
from desktop_agent.core.grounding import LANDING_UNLISTED, LANDING_UNSEEN
from desktop_agent.core.models import (
    ApprovalDecision,
    ApprovalRequest,
    Decision,
    Element,
    Grounding,
    Observation,
    Policy,
    StepKind,
    StepStatus,
    StepView,
)
from desktop_agent.core.ports import GroundRequest
from tests.fakes import (
    ScriptedGate,
    ScriptedGrounder,
    ScriptedPlanner,
    done,
    make_observation,
    tool,
)
from tests.unit.core.conftest import Harness, make_harness

BROWSER = Element(1, "window", "Shop — Browser", (0, 0, 1280, 720), focused=True)
#: what the model decided on: a page, "Save draft" where the dialog will come up
PAGE = make_observation(
    [
        BROWSER,
        Element(2, "button", "Add to cart", (100, 100, 100, 30)),
        Element(3, "button", "Save draft", (600, 500, 100, 30)),
    ]
)
#: the same screen once a dialog came up during the grounding: "Delete" over "Save draft"
DIALOG = make_observation(
    [
        BROWSER,
        Element(4, "dialog", "Clean up", (500, 400, 300, 200)),
        Element(5, "button", "Delete", (600, 500, 100, 30)),
    ]
).with_(image=b"\xff\xd8dialog")


def refined(point: tuple[int, int], first: tuple[int, int]) -> Grounding:
    return Grounding(point=point, first=first, refined=True, summary="refined")


def showing(
    h: Harness, screen: Observation, point: tuple[int, int], first: tuple[int, int]
) -> Callable[[GroundRequest], Awaitable[Grounding]]:
    """A grounding during which `screen` comes up (the observer shows it from then on)."""

    async def look(request: GroundRequest) -> Grounding:
        h.observer.observation = screen
        return refined(point, first)

    return look


def steps_of(h: Harness, run_id: str) -> list[StepView]:
    return [step for _, step in sorted(h.repo.steps[run_id].items())]


def action_of(h: Harness, run_id: str) -> StepView:
    return next(s for s in steps_of(h, run_id) if s.kind is StepKind.ACTION)


async def test_a_delete_button_that_came_up_during_the_grounding_asks_and_is_marked() -> None:
    # clicks are allowed by policy: only the gate's own rule can ask
    h = make_harness(answers=[ApprovalDecision.DENY], policies={"click": Policy.ALLOW})
    h.observer.observation = PAGE
    run = await h.create(allowed_tools=("click",))
    grounder = ScriptedGrounder([showing(h, DIALOG, (650, 515), (640, 510))])
    planner = ScriptedPlanner(
        [tool("click", x=640, y=510, target="the Save draft button"), done()], grounder=grounder
    )

    await h.collect(run, planner)

    [asked] = h.gate.requests
    assert asked.caution == 'the target button "Delete" is sensitive ("delete")'
    # the person sees the screen the click lands on, marked where it lands
    assert asked.target == (650, 515)
    assert asked.screenshot == f"runs/{run.id}/0001.landing.jpg"
    assert h.repo.artifacts[asked.screenshot] == b"\xff\xd8dialog"
    assert h.executor.calls == []
    action = action_of(h, run.id)
    assert action.status is StepStatus.DENIED
    # the stored element is what was under the point, for a routine saved from this run
    assert action.element is not None
    assert (action.element.role, action.element.name) == ("button", "Delete")


async def test_a_sensitive_button_gone_during_the_grounding_is_not_asked_about() -> None:
    # the turn's screen had "Delete" under the point; the dialog closed while grounding
    h = make_harness(policies={"click": Policy.ALLOW})
    h.observer.observation = DIALOG
    run = await h.create(allowed_tools=("click",))
    grounder = ScriptedGrounder([showing(h, PAGE, (650, 515), (640, 510))])
    planner = ScriptedPlanner(
        [tool("click", x=640, y=510, target="the Save draft button"), done()], grounder=grounder
    )

    await h.collect(run, planner)

    assert h.gate.requests == []
    [(_, args)] = h.executor.calls
    assert (args.x, args.y) == (650, 515)  # type: ignore[attr-defined]
    element = action_of(h, run.id).element
    assert element is not None and element.name == "Save draft"


async def test_a_drag_whose_drop_point_is_under_a_new_dialogs_delete_button_asks() -> None:
    # the grounding refines the start; the drop point is judged on the screen now too
    h = make_harness(answers=[ApprovalDecision.DENY], policies={"drag": Policy.ALLOW})
    h.observer.observation = PAGE
    run = await h.create(allowed_tools=("drag",))
    grounder = ScriptedGrounder([showing(h, DIALOG, (150, 115), (140, 110))])
    planner = ScriptedPlanner(
        [tool("drag", x=140, y=110, to_x=650, to_y=515, target="the cart"), done()],
        grounder=grounder,
    )

    await h.collect(run, planner)

    assert [request.caution for request in h.gate.requests] == [
        'the target button "Delete" is sensitive ("delete")'
    ]
    assert h.executor.calls == []


async def test_a_pointer_call_onto_an_own_window_come_up_meanwhile_is_refused() -> None:
    # the app's own question window came up where the pointer goes: refused, nobody asked
    own = Element(9, "window", "Desktop Agent — approve?", (500, 400, 300, 200))
    with_own = PAGE.with_(own_windows=(own,), image=b"\xff\xd8own")
    h = make_harness(policies={"move_mouse": Policy.ALLOW, "click": Policy.ALLOW})
    h.observer.observation = PAGE
    run = await h.create(allowed_tools=("move_mouse", "click"))
    grounder = ScriptedGrounder(
        [showing(h, with_own, (650, 515), (640, 510)), showing(h, with_own, (650, 515), (640, 510))]
    )
    planner = ScriptedPlanner(
        [
            tool("move_mouse", x=640, y=510, target="Save draft"),
            tool("click", x=640, y=510, target="Save draft"),
            done(),
        ],
        grounder=grounder,
    )

    await h.collect(run, planner)

    actions = [s for s in steps_of(h, run.id) if s.kind is StepKind.ACTION]
    assert [(s.tool, s.status) for s in actions] == [
        ("move_mouse", StepStatus.DENIED),
        ("click", StepStatus.DENIED),
    ]
    assert all("app's own window" in (s.error or "") for s in actions)
    assert h.gate.requests == [] and h.executor.calls == []


async def test_a_grounded_call_whose_landing_cannot_be_looked_at_asks() -> None:
    h = make_harness(answers=[ApprovalDecision.ONCE], policies={"click": Policy.ALLOW})
    h.observer.observation = PAGE
    run = await h.create(allowed_tools=("click",))

    async def look_then_fail(request: GroundRequest) -> Grounding:
        h.observer.fail_next(1)  # the look after the grounding fails
        return refined(point=(650, 515), first=(640, 510))

    planner = ScriptedPlanner(
        [tool("click", x=640, y=510, target="the Save draft button"), done()],
        grounder=ScriptedGrounder([look_then_fail]),
    )

    await h.collect(run, planner)

    [asked] = h.gate.requests
    assert asked.caution == LANDING_UNSEEN
    assert asked.offer_run_grant is False
    # the screen the person sees is the last one seen: the turn's
    assert asked.screenshot == f"runs/{run.id}/0001.jpg"
    assert len(h.executor.calls) == 1  # answered once: it runs


async def test_a_grounded_call_whose_landing_lists_no_elements_asks() -> None:
    # the inventory failed on the look after the grounding (the turn's had elements)
    h = make_harness(answers=[ApprovalDecision.DENY], policies={"click": Policy.ALLOW})
    h.observer.observation = PAGE
    run = await h.create(allowed_tools=("click",))
    unlisted = make_observation([]).with_(image=b"\xff\xd8unlisted")
    planner = ScriptedPlanner(
        [tool("click", x=640, y=510, target="the Save draft button"), done()],
        grounder=ScriptedGrounder([showing(h, unlisted, (650, 515), (640, 510))]),
    )

    await h.collect(run, planner)

    [asked] = h.gate.requests
    assert asked.caution == LANDING_UNLISTED
    assert h.repo.artifacts[asked.screenshot or ""] == b"\xff\xd8unlisted"
    assert h.executor.calls == []


async def test_no_elements_before_nor_after_the_grounding_is_judged_as_before() -> None:
    # the X11 window list alone lists no controls on either look: nothing was known before
    # the grounding either, and a click by coordinates is judged as it always is there
    h = make_harness(policies={"click": Policy.ALLOW})
    windows_only = make_observation([BROWSER])
    h.observer.observation = windows_only
    run = await h.create(allowed_tools=("click",))
    planner = ScriptedPlanner(
        [tool("click", x=640, y=510, target="the Save draft button"), done()],
        grounder=ScriptedGrounder([refined((650, 515), (640, 510))]),
    )

    await h.collect(run, planner)

    assert h.gate.requests == []
    assert len(h.executor.calls) == 1


# ── and once the person answered: the point is looked at again ───────────────


class ScreenChangesWhileAsked(ScriptedGate):
    """A gate during whose question `screen` comes up (the observer shows it from then on)."""

    def __init__(self, h: Harness, screen: Observation, answer: ApprovalDecision) -> None:
        super().__init__([answer])
        self.h, self.screen = h, screen

    async def request(self, approval: ApprovalRequest) -> ApprovalDecision:
        self.h.observer.observation = self.screen
        return await super().request(approval)


async def asked_while(
    screen_before: Observation, screen_after: Observation, call: Decision
) -> tuple[Harness, StepView]:
    """`call` asked about on `screen_before` and approved once, `screen_after` having come up
    during the question; (the harness, the action's row)."""
    h = make_harness()
    h.runner.services.gate = ScreenChangesWhileAsked(h, screen_after, ApprovalDecision.ONCE)
    h.observer.observation = screen_before
    run = await h.create(allowed_tools=(call.tool or "",))
    await h.collect(run, ScriptedPlanner([call], then=done()))
    return h, action_of(h, run.id)


DELETE_CAUTION = 'the target button "Delete" is sensitive ("delete")'


async def test_a_click_approved_then_a_delete_dialog_came_up_under_it_is_not_done() -> None:
    h, action = await asked_while(PAGE, DIALOG, tool("click", x=650, y=515))

    assert (action.status, action.error) == (
        StepStatus.SKIPPED,
        SCREEN_CHANGED.format(why=DELETE_CAUTION),
    )
    assert h.executor.calls == []


async def test_an_element_click_approved_then_covered_by_a_delete_button_is_not_done() -> None:
    # element 3 ("Save draft") is clicked at its centre, where "Delete" is now
    h, action = await asked_while(PAGE, DIALOG, tool("click", element=3))

    assert action.status is StepStatus.SKIPPED
    assert h.executor.calls == []


async def test_a_drag_approved_then_its_drop_point_under_a_delete_button_is_not_done() -> None:
    h, action = await asked_while(PAGE, DIALOG, tool("drag", x=150, y=115, to_x=650, to_y=515))

    assert (action.status, action.error) == (
        StepStatus.SKIPPED,
        SCREEN_CHANGED.format(why=DELETE_CAUTION),
    )
    assert h.executor.calls == []


async def test_a_sensitive_click_approved_then_another_sensitive_target_there_is_not_done() -> None:
    # the person approved deleting a draft; "Pay now" came up under the point meanwhile
    drafts = make_observation([BROWSER, Element(3, "button", "Delete draft", (600, 500, 100, 30))])
    pay = make_observation([BROWSER, Element(5, "button", "Pay now", (600, 500, 100, 30))])
    h, action = await asked_while(drafts, pay, tool("click", x=650, y=515))

    assert action.status is StepStatus.SKIPPED
    assert action.error == SCREEN_CHANGED.format(
        why='the target button "Pay now" is sensitive ("pay")'
    )
    assert h.executor.calls == []


async def test_a_delete_approved_then_another_delete_came_up_there_is_not_done() -> None:
    # red team: the reason is the same words ("Delete" is sensitive), but not the control the
    # person saw: a dialog that came up where the approved "Delete" of a draft was, with a
    # "Delete" of its own (the account's) even in the same box, would have been clicked
    draft = Element(3, "button", "Delete", (600, 500, 100, 30))
    drafts = make_observation([BROWSER, draft])
    dialog = Element(4, "window", "Delete your account?", (400, 300, 500, 300))
    account = make_observation([BROWSER, dialog, Element(5, "button", "Delete", draft.box)])
    h, action = await asked_while(drafts, account, tool("click", x=650, y=515))
    same, again = await asked_while(drafts, drafts, tool("click", x=650, y=515))

    assert (action.status, action.error) == (
        StepStatus.SKIPPED,
        SCREEN_CHANGED.format(why=DELETE_CAUTION),
    )
    assert h.executor.calls == []
    assert again.status is StepStatus.OK and len(same.executor.calls) == 1


async def test_a_click_approved_on_a_screen_that_stayed_the_same_runs() -> None:
    h, action = await asked_while(PAGE, PAGE, tool("click", x=650, y=515))

    assert action.status is StepStatus.OK
    assert len(h.executor.calls) == 1
