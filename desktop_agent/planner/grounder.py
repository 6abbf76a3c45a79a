"""ModelGrounder: the core's Grounder port on OpenAI-compatible servers (zoom, or a grounder).

- zoom: the planner's own model is asked again, only "where is <target>?", on a crop around
  its point (planner/grounding.py), and the answer is mapped back to screenshot pixels.
- grounder: a separate grounding model turns the target into a point on the whole
  screenshot in its own format and space, then (unless told not to) zooms around it the
  same way, asking the grounder again.

A bad, missing or outside answer, or a request that fails, keeps the point it started from
and says so; only a stop (cancellation) goes through.
"""

from __future__ import annotations

import asyncio
import io
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from desktop_agent.core.errors import PlannerError
from desktop_agent.core.models import Grounding, Observation, TokenUsage
from desktop_agent.core.ports import GroundRequest
from desktop_agent.planner.grounding import Crop, crop_around, parse_point, point_messages
from desktop_agent.planner.images import data_url, shown_image
from desktop_agent.planner.profiles import GroundingMode, ModelProfile, to_screenshot

log = logging.getLogger(__name__)


class TextModel(Protocol):
    """What grounding asks of a model (the planner's own to zoom, or the grounder's):
    client.py's OpenAIPlanner, which builds the grounder, so this file does not import it."""

    model: str
    profile: ModelProfile

    async def complete_text(self, messages: list[dict[str, Any]]) -> TextAnswer: ...


class TextAnswer(Protocol):
    """What grounding reads of a plain completion (client.py's Completion)."""

    @property
    def text(self) -> str: ...

    @property
    def usage(self) -> TokenUsage | None: ...


#: the estimate of a request the server reports no usage for: one token per 28×28 patch of
#: the image (Qwen2.5-VL's rule, as core/budget.py), text at 4 characters a token
_PATCH_PX = 28
_CHARS_PER_TOKEN = 4


@dataclass(frozen=True, slots=True)
class _Answer:
    text: str
    usage: TokenUsage
    estimated: bool
    latency_ms: float


@dataclass
class _Tally:
    """The tokens and time of a grounding's requests (one or two)."""

    prompt: int = 0
    completion: int = 0
    estimated: bool = False
    latency_ms: float = 0.0
    raw: str = ""
    #: the model asked (one per grounding: the planner's to zoom, else the grounder's)
    model: str = ""

    def add(self, answer: _Answer, model: str) -> None:
        self.model = model
        self.prompt += answer.usage.prompt_tokens or 0
        self.completion += answer.usage.completion_tokens or 0
        self.estimated = self.estimated or answer.estimated
        self.latency_ms = round(self.latency_ms + answer.latency_ms, 3)
        self.raw = f"{self.raw}\n---\n{answer.text}" if self.raw else answer.text

    def grounding(self, **fields: Any) -> Grounding:
        asked = self.raw != ""
        return Grounding(
            usage=TokenUsage(self.prompt, self.completion) if asked else None,
            tokens_estimated=self.estimated,
            model=self.model,
            latency_ms=self.latency_ms if asked else None,
            raw=self.raw,
            **fields,
        )


def _crop_image(observation: Observation, crop: Crop) -> bytes:
    """The crop cut from the observation's own image, scaled to the size it is sent at."""
    from PIL import Image  # lazily: only a grounding needs it

    with Image.open(io.BytesIO(observation.image)) as image:
        region = image.convert("RGB").crop(
            (crop.left, crop.top, crop.left + crop.width, crop.top + crop.height)
        )
    return _sent(region, crop)


def _region_image(data: bytes, crop: Crop) -> bytes:
    """A region captured at the screen's resolution, scaled to the size it is sent at."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        return _sent(image.convert("RGB"), crop)


def _sent(region: Any, crop: Crop) -> bytes:
    from PIL import Image

    region = region.resize((crop.sent_width, crop.sent_height), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    region.save(out, format="JPEG", quality=90)
    return out.getvalue()


def _text_chars(messages: list[dict[str, Any]]) -> int:
    total = 0
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            total += len(content)
        else:
            total += sum(len(part.get("text", "")) for part in content)
    return total


class ModelGrounder:
    """Refines a coordinate call's point: `mode` "zoom" asks `zoom_with` (the planner's model)
    on a crop; "grounder" asks `locate_with` on the whole screenshot, then on a crop unless
    `zoom` is False."""

    def __init__(
        self,
        *,
        mode: GroundingMode,
        zoom_with: TextModel | None = None,
        locate_with: TextModel | None = None,
        zoom: bool = True,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        if mode == "grounder" and locate_with is None:
            raise ValueError("grounding by a grounder needs the grounding model")
        if mode == "zoom" and zoom_with is None:
            raise ValueError("zoom needs the model to ask")
        self.mode = mode
        self.zoom_with = zoom_with
        self.locate_with = locate_with
        self.zoom = zoom
        self._clock = clock

    async def ground(self, request: GroundRequest) -> Grounding:
        observation = request.observation
        tally = _Tally()
        first = request.point
        zoomer = self.zoom_with
        if self.mode == "grounder":
            assert self.locate_with is not None
            located = await self._locate(self.locate_with, request, tally)
            if isinstance(located, Grounding):
                return located
            first = located
            zoomer = self.locate_with if self.zoom else None
            if zoomer is None:
                return tally.grounding(
                    point=first,
                    first=request.point,
                    refined=True,
                    summary=f"{_who(self.locate_with)} found it at {_xy(first)} "
                    f"(the planner said {_xy(request.point)})",
                )
        assert zoomer is not None
        crop = crop_around(first, observation.width, observation.height, zoomer.profile)
        image = await self._crop(request, crop)
        url = data_url("image/jpeg", image)
        messages = point_messages(
            zoomer.profile, request.target, url, crop.sent_width, crop.sent_height
        )
        place = f"{crop.width}x{crop.height} crop at {crop.left},{crop.top}"
        point = await self._point(
            zoomer,
            messages,
            (crop.sent_width, crop.sent_height),
            lambda x, y: crop.to_screenshot(zoomer.profile, x, y),
            tally,
            answer=f"the answer on the {place}",
        )
        if isinstance(point, str):
            summary, point, refined = f"kept the first point {_xy(first)}: {point}", first, False
        else:
            summary, refined = f"refined {_xy(first)} → {_xy(point)} on a {place}", True
        return tally.grounding(
            point=point, first=first, refined=refined, crop=crop.box, image=image, summary=summary
        )

    async def _crop(self, request: GroundRequest, crop: Crop) -> bytes:
        """The crop as sent: captured anew at the screen's resolution where the observer can
        (the detail the downscaled screenshot lost), else cut from the observation."""
        if request.region is not None:
            try:
                data = await request.region(crop.box)
                return await asyncio.to_thread(_region_image, data, crop)
            except Exception:  # noqa: BLE001 - a capture that fails: the screenshot's pixels do
                log.warning(
                    "the zoom's region capture failed; cropping the screenshot", exc_info=True
                )
        return await asyncio.to_thread(_crop_image, request.observation, crop)

    async def _locate(
        self, grounder: TextModel, request: GroundRequest, tally: _Tally
    ) -> tuple[int, int] | Grounding:
        """The grounder's point on the whole screenshot, or the Grounding that keeps the
        planner's point (the grounder failed)."""
        width, height = request.observation.width, request.observation.height
        shown = await shown_image(request.observation, grounder.profile)
        messages = point_messages(
            grounder.profile, request.target, shown.url, shown.width, shown.height
        )
        point = await self._point(
            grounder,
            messages,
            (shown.width, shown.height),
            lambda x, y: to_screenshot(grounder.profile, x, y, width, height),
            tally,
            answer=f"the answer of {_who(grounder)}",
        )
        if isinstance(point, str):
            return tally.grounding(
                point=request.point,
                first=request.point,
                refined=False,
                summary=f"kept the planner's point {_xy(request.point)}: {point}",
            )
        return point

    async def _point(
        self,
        model: TextModel,
        messages: list[dict[str, Any]],
        sent: tuple[int, int],
        to_point: Callable[[float, float], tuple[int, int]],
        tally: _Tally,
        *,
        answer: str,
    ) -> tuple[int, int] | str:
        """`model`'s point in screenshot pixels (`to_point` maps its answer there), or why
        there is none: the request failed, or `answer` was not usable."""
        try:
            asked = await self._ask(model, messages, *sent)
        except PlannerError as error:
            return str(error)
        tally.add(asked, model.model)
        try:
            return to_point(*parse_point(asked.text))
        except PlannerError as error:
            return f"{answer} was not usable: {error}"

    async def _ask(
        self, model: TextModel, messages: list[dict[str, Any]], width: int, height: int
    ) -> _Answer:
        started = self._clock()
        completion = await model.complete_text(messages)
        latency_ms = round((self._clock() - started) * 1000, 3)
        usage = completion.usage
        if usage and usage.prompt_tokens is not None and usage.completion_tokens is not None:
            return _Answer(completion.text, usage, False, latency_ms)
        patches = math.ceil(width / _PATCH_PX) * math.ceil(height / _PATCH_PX)
        estimate = TokenUsage(
            prompt_tokens=patches + _text_chars(messages) // _CHARS_PER_TOKEN,
            completion_tokens=max(1, len(completion.text) // _CHARS_PER_TOKEN),
        )
        return _Answer(completion.text, estimate, True, latency_ms)


def _xy(point: tuple[int, int]) -> str:
    return f"{point[0]},{point[1]}"


def _who(model: TextModel) -> str:
    return f"the grounder {model.model}"
