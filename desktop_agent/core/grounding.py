"""Grounding: a coordinate call that names its target has its point looked for again before
the gate judges it (the loop's `_ground` keeps its step row, kind ground). The point found is
what the gate assesses, the person asked sees, the store keeps and the executor clicks, on
the screen as it is once the grounding is done (`landing`). Choices: docs/architecture.md
("Grounding")."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from desktop_agent.core.deps import LoopDeps
from desktop_agent.core.errors import StopRequested, describe
from desktop_agent.core.models import Grounding, Observation
from desktop_agent.core.ports import Grounder, GroundRequest, RegionSource, ScreenObserver
from desktop_agent.core.validated_call import Decided

#: why a grounded call asks when the screen it lands on cannot be judged (`landing`)
LANDING_UNSEEN = (
    "what is under the point now is not known: the screen could not be looked at after the "
    "grounding"
)
LANDING_UNLISTED = (
    "what is under the point now is not known: the screen's elements could not be read after "
    "the grounding"
)


def grounder_of(deps: LoopDeps) -> Grounder | None:
    """The deps' grounder, else the planner's as it is now: a routine's player hands its
    clicks to the agent's planner, with the grounding the settings configure."""
    if deps.grounder is not None:
        return deps.grounder
    grounder = getattr(deps.planner, "grounder", None)
    return grounder if isinstance(grounder, Grounder) else None


def request_for(
    decided: Decided, observation: Observation, observer: ScreenObserver
) -> GroundRequest | None:
    """What to ask the grounder of a validated, grounded call with a target and a point;
    None when the call is not one."""
    # the validated call's arguments: "150" is refined (and clicked) as 150
    args = decided.call.values if decided.call is not None else {}
    target, x, y = args.get("target"), args.get("x"), args.get("y")
    if (
        decided.call is None
        or not decided.call.spec.grounded
        or not isinstance(target, str)
        or not target.strip()
        or not (isinstance(x, int) and isinstance(y, int))
        or isinstance(x, bool)
        or isinstance(y, bool)
    ):
        return None
    region = (
        functools.partial(observer.region, observation)
        if isinstance(observer, RegionSource)
        else None
    )
    return GroundRequest(decided.decision.tool or "", target, (x, y), observation, region)


async def refine(
    grounder: Grounder,
    request: GroundRequest,
    outside: Callable[[Callable[[], Awaitable[Grounding]]], Awaitable[Grounding]],
) -> Grounding:
    """The grounder's answer (asked through `outside`, the loop's: stored first, guarded by
    the stop), or the planner's point kept when it fails or lands outside the screenshot."""
    x, y = request.point
    observation = request.observation
    try:
        grounding = await outside(lambda: grounder.ground(request))
    except (StopRequested, asyncio.CancelledError):
        raise
    except Exception as error:  # noqa: BLE001 - grounding is a refinement: keep the point
        grounding = Grounding(
            point=(x, y),
            first=(x, y),
            refined=False,
            summary=f"kept the planner's point {x},{y}: grounding failed: {describe(error)}",
        )
    px, py = grounding.point
    if not (0 <= px < observation.width and 0 <= py < observation.height):
        grounding = replace(
            grounding,
            point=(x, y),
            refined=False,
            summary=f"kept the planner's point {x},{y}: the grounding's point {px},{py} "
            f"is outside the {observation.width}x{observation.height} screenshot",
        )
    return grounding


def asked(request: GroundRequest) -> dict[str, Any]:
    """The ground row's arguments as it starts: the target and the planner's point."""
    x, y = request.point
    return {"target": request.target, "x": x, "y": y}


def stored_args(request: GroundRequest, grounding: Grounding) -> dict[str, Any]:
    """The ground row's arguments once done: the first point and the crop when they differ."""
    stored = asked(request)
    if grounding.first != request.point:
        stored["first"] = list(grounding.first)
    if grounding.crop is not None:
        stored["crop"] = list(grounding.crop)
    return stored


async def landing(
    decided: Decided,
    observation: Observation,
    look: Callable[[], Awaitable[Observation | None]],
) -> tuple[Decided, Observation]:
    """The grounded call and the screen it lands on, looked at once its grounding is done:
    a dialog that came up during those seconds (or the screen the zoom captured afresh)
    is what the sensitive-target, terminal and own-window checks, the stored element and
    the approval's screenshot and mark must judge, not the turn's older observation. Where
    the look fails, or lists no elements where the turn's did, what is under the point is
    not known and the call asks every time."""
    now = await look()
    if now is None:
        return decided.unknown(LANDING_UNSEEN), observation
    if observation.elements and not now.elements:
        return decided.unknown(LANDING_UNLISTED), now
    return decided, now
