"""Calibration: ask the model to click targets at known places and find its coordinate space.

No Qt here: the window that shows the targets is ui/calibration.py, the engine side that
takes the screenshot and builds the planner host/calibration.py; where the targets are is
core/calibration.py (the window paints them from there). The flow is

    targets = targets_for(width, height)            # where they are, in screen pixels
    observation = <a screenshot showing them>       # or synthetic_observation(...)
    report = await calibrate(planner, observation, to_image_targets(targets, mapping))
    print("\n".join(report.lines()))

One chat request per target, each with the same screenshot. Each answer is read in every
coordinate space (screenshot pixels, 0–1000, the model's resized pixels); the space with the
smallest mean error fits best, and the report says whether it differs from the profile's.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from desktop_agent.core.builtin_tools import BUILTIN_TOOLS
from desktop_agent.core.calibration import (
    TARGET_RADIUS,
    CalibrationResult,
    Target,
    targets_for,
)
from desktop_agent.core.errors import PlannerError
from desktop_agent.core.models import Decision, Observation
from desktop_agent.core.ports import DecideRequest
from desktop_agent.planner.profiles import (
    AUTO,
    COORDINATE_SPACES,
    CoordinateSpace,
    ModelProfile,
    ResizeRule,
    to_screenshot,
)

_CLICK = next(spec for spec in BUILTIN_TOOLS if spec.name == "click")


class ModelSpacePlanner(Protocol):
    """What calibration needs of a planner: its profile and raw (unconverted) decisions."""

    @property
    def profile(self) -> ModelProfile: ...

    async def decide_in_model_space(self, request: DecideRequest) -> Decision: ...


@dataclass(frozen=True, slots=True)
class Answer:
    """Where the model said a target is, in its own coordinates (None: no usable answer)."""

    target: Target
    point: tuple[float, float] | None
    error: str = ""


@dataclass(frozen=True, slots=True)
class Fit:
    """How far the answers land from the targets when read in one coordinate space.

    `errors_px` has one entry per answer (None: the point falls outside the image there).
    """

    space: CoordinateSpace
    errors: tuple[float | None, ...]

    @property
    def errors_px(self) -> tuple[float, ...]:
        return tuple(error for error in self.errors if error is not None)

    @property
    def outside(self) -> int:
        return sum(1 for error in self.errors if error is None)

    @property
    def rank(self) -> tuple[int, float]:
        """Fewer points outside the image first, then the smaller mean error."""
        return self.outside, self.mean_px

    @property
    def mean_px(self) -> float:
        return sum(self.errors_px) / len(self.errors_px) if self.errors_px else math.inf

    @property
    def max_px(self) -> float:
        return max(self.errors_px, default=math.inf)


@dataclass(frozen=True, slots=True)
class CalibrationReport:
    """The answers, the fit of each coordinate space, and the best one."""

    model: str
    profile: ModelProfile
    width: int
    height: int
    answers: tuple[Answer, ...]
    fits: tuple[Fit, ...]

    @property
    def best(self) -> Fit:
        return min(self.fits, key=lambda fit: fit.rank)

    @property
    def answered(self) -> int:
        return sum(1 for answer in self.answers if answer.point is not None)

    @property
    def suggested_coordinates(self) -> str:
        """What to save as `model_coordinates`: "auto" when the profile already fits best."""
        if not self.answered or self.best.space == self.profile.coordinates:
            return AUTO
        return self.best.space

    def result(self) -> CalibrationResult:
        """The report as plain data for the window and the CLI."""
        suggested = self.suggested_coordinates
        return CalibrationResult(tuple(self.lines()), None if suggested == AUTO else suggested)

    def lines(self) -> list[str]:
        """The report as text, one line each (the CLI prints it, the window shows it)."""
        out = [
            f"model {self.model}, profile {self.profile.name} "
            f"(coordinates: {self.profile.coordinates}), screenshot {self.width}x{self.height}"
        ]
        best = self.best if self.answered else None
        errors = iter(best.errors if best is not None else ())  # one per answered target
        for answer in self.answers:
            target = answer.target
            if answer.point is None or best is None:
                out.append(f"  {target.label} at {target.x},{target.y}: no answer ({answer.error})")
                continue
            x, y = answer.point
            error = next(errors)
            off = "outside the image" if error is None else f"{error:.1f} px off"
            out.append(
                f"  {target.label} at {target.x},{target.y}: model said {x:g},{y:g} "
                f"→ {off} as {best.space}"
            )
        for fit in self.fits:
            mean = "–" if math.isinf(fit.mean_px) else f"{fit.mean_px:.1f} px"
            worst = "–" if math.isinf(fit.max_px) else f"{fit.max_px:.1f} px"
            line = f"  read as {fit.space:<10} mean error {mean}, worst {worst}"
            if fit.outside:
                line += f", {fit.outside} of {len(fit.errors)} outside the image"
            out.append(line)
        if best is None:
            out.append("no target was answered: calibration cannot tell the coordinate space")
        elif self.suggested_coordinates == AUTO:
            out.append(f"best fit: {best.space}, as the profile says; nothing to change")
        else:
            out.append(
                f"best fit: {best.space}, not the profile's {self.profile.coordinates}: "
                f'save model_coordinates = "{best.space}"'
            )
        return out


def space_profile(profile: ModelProfile, space: CoordinateSpace) -> ModelProfile:
    """`profile` read in another coordinate space (Qwen2.5-VL's resize rule when it has none)."""
    return replace(profile, coordinates=space, resize=profile.resize or ResizeRule())


def fit_spaces(
    answers: Sequence[Answer], profile: ModelProfile, width: int, height: int
) -> tuple[Fit, ...]:
    """The error of every answer, in screenshot pixels, for each coordinate space."""
    fits = []
    for space in COORDINATE_SPACES:
        candidate = space_profile(profile, space)
        errors: list[float | None] = []
        for answer in answers:
            if answer.point is None:
                continue
            try:
                x, y = to_screenshot(candidate, *answer.point, width, height)
            except PlannerError:
                errors.append(None)
                continue
            errors.append(math.hypot(x - answer.target.x, y - answer.target.y))
        fits.append(Fit(space, tuple(errors)))
    return tuple(fits)


def goal_for(target: Target) -> str:
    return (
        f"Calibration: click the centre of the red ring labelled {target.label}. "
        "Answer with that one click."
    )


async def calibrate(
    planner: ModelSpacePlanner, observation: Observation, targets: Sequence[Target], model: str
) -> CalibrationReport:
    """Ask for each target (one request each, the same screenshot) and fit the answers.

    `targets` are in screenshot pixels. A transport error ends the calibration (raised); an
    unusable answer is recorded for its target and the others go on.
    """
    shown = observation.with_(elements=())  # only the image: the rings are not UI elements
    answers = []
    for target in targets:
        request = DecideRequest(
            goal=goal_for(target),
            run_id="calibration",
            turn=1,
            steps=(),
            observation=shown,
            tools=(_CLICK,),
        )
        try:
            decision = await planner.decide_in_model_space(request)
        except PlannerError as error:
            if str(error).startswith("model server"):
                raise
            answers.append(Answer(target, None, str(error)))
            continue
        x, y = decision.args.get("x"), decision.args.get("y")
        if decision.tool != "click" or not isinstance(x, int | float):
            answers.append(Answer(target, None, "the answer was not a click at x, y"))
            continue
        assert isinstance(y, int | float)
        answers.append(Answer(target, (float(x), float(y))))
    fits = fit_spaces(answers, planner.profile, observation.width, observation.height)
    return CalibrationReport(
        model=model,
        profile=planner.profile,
        width=observation.width,
        height=observation.height,
        answers=tuple(answers),
        fits=fits,
    )


def synthetic_observation(width: int, height: int) -> tuple[Observation, tuple[Target, ...]]:
    """A screenshot-like JPEG of the targets on a plain background (tests, benchmark, no screen)."""
    from PIL import Image, ImageDraw

    targets = targets_for(width, height)
    image = Image.new("RGB", (width, height), (245, 245, 245))
    draw = ImageDraw.Draw(image)
    for target in targets:
        r = TARGET_RADIUS
        box = (target.x - r, target.y - r, target.x + r, target.y + r)
        draw.ellipse(box, outline=(220, 30, 30), width=6)
        draw.text((target.x + r + 6, target.y - 6), target.label, fill=(20, 20, 20))
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=85)
    observation = Observation(image=out.getvalue(), mime="image/jpeg", width=width, height=height)
    return observation, targets
