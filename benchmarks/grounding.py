"""Grounding: do clicks land? Hit rate and error for off / zoom / grounder, per coordinate space.

Starts its own Xvfb at 1920x1080 (tests/support/xdisplay.py) and paints one window: a grey,
busy canvas with 40 small targets (16–24 px squares, each its own colour, some at the
screen's edges) and no element list. The real observer captures it (1280 wide, JPEG, as
shipped). A loopback model server that *sees* answers every request: it finds the named
colour in the image it was sent (Pillow: the pixels within a tolerance of the colour, eroded
to the thickest blob, its centre), adds a Gaussian error of --sigma px (default 6) in the pixels
of its own input (the image as sent; the smart_resize of it for resized-pixel models), and
answers in its profile's space and format — a planner answer (our JSON click with a target)
or a grounding answer ({"x", "y"}, or Qwen's computer_use tool call).

For each of the pixel (generic), resized-pixel (qwen2.5-vl) and 0–1000 (qwen3-vl) profiles
and each grounding (off; zoom; grounder: a separate model of the same kind, then its zoom;
grounder without zoom), every target is asked for once through the real OpenAIPlanner and
its ModelGrounder (the zoom's crop captured anew at the screen's resolution, as the loop
lends it); the final point is mapped to the screen as the executor maps it. Printed:
hit rate (the point inside the target's square) and mean / p90 error in screen pixels, and
the requests per click. Then the cost of set-of-mark in observe time (the 40 targets, and
150 elements, as the element list).

    .venv/bin/python benchmarks/grounding.py [--sigma 6] [--seed 19] [--runs 30]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import functools
import io
import json
import math
import random
import re
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.observe import paint  # noqa: E402
from tests.support.xdisplay import start_xsession, use_xsession  # noqa: E402

WIDTH, HEIGHT = 1920, 1080
TARGETS = 40
#: how close a pixel must be to the target's colour on every channel (JPEG, scaling)
TOLERANCE = 40
PROFILES = {"pixels": "generic", "resized pixels": "qwen2.5-vl", "0-1000": "qwen3-vl"}
MODES = ("off", "zoom", "grounder", "grounder, no zoom")
_HEX = re.compile(r"#([0-9a-f]{6})")


@dataclass(frozen=True, slots=True)
class Target:
    left: int
    top: int
    size: int
    colour: tuple[int, int, int]

    @property
    def hex(self) -> str:
        return "#" + "".join(f"{c:02x}" for c in self.colour)

    @property
    def centre(self) -> tuple[float, float]:
        return self.left + (self.size - 1) / 2, self.top + (self.size - 1) / 2

    def hit(self, x: int, y: int) -> bool:
        return self.left <= x < self.left + self.size and self.top <= y < self.top + self.size


def canvas(seed: int) -> tuple[Any, list[Target]]:
    """The 1920x1080 picture: grey clutter (no saturated colour) and the targets on it."""
    from PIL import Image, ImageDraw

    rng = random.Random(seed)
    image = Image.linear_gradient("L").resize((WIDTH, HEIGHT)).convert("RGB")
    draw = ImageDraw.Draw(image)
    for _ in range(30):  # grey windows with text: something to look past
        x, y = rng.randrange(WIDTH - 200), rng.randrange(HEIGHT - 150)
        w, h = rng.randrange(200, 600), rng.randrange(120, 400)
        grey = rng.randrange(90, 230)
        draw.rectangle((x, y, x + w, y + h), fill=(grey,) * 3, outline=(0, 0, 0))
        for line in range(y + 8, y + h - 12, 16):
            draw.text((x + 8, line), f"Lorem ipsum {rng.random():.5f}", fill=(30, 30, 30))
    # saturated colours 85 apart on some channel (none grey, dark or pastel, which the
    # blurred edge of another square or a grey window can look like after scaling and JPEG)
    levels = (0, 85, 170, 255)
    palette = [
        (r, g, b)
        for r in levels
        for g in levels
        for b in levels
        if max(r, g, b) >= 170 and min(r, g, b) <= 85
    ]
    rng.shuffle(palette)
    targets: list[Target] = []
    while len(targets) < TARGETS:
        size = rng.randrange(16, 25)
        # a few hug the screen's edges: the crop must move inside there
        edge = len(targets) % 8 == 0
        left = rng.choice((0, WIDTH - size)) if edge else rng.randrange(WIDTH - size)
        top = rng.randrange(HEIGHT - size) if edge else rng.randrange(HEIGHT - size)
        box = (left - 30, top - 30, left + size + 30, top + size + 30)
        if any(
            box[0] < t.left + t.size
            and t.left < box[2]
            and box[1] < t.top + t.size
            and t.top < box[3]
            for t in targets
        ):
            continue
        target = Target(left, top, size, palette[len(targets)])
        draw.rectangle((left, top, left + size - 1, top + size - 1), fill=target.colour)
        targets.append(target)
    return image, targets


# ── the model that sees ──────────────────────────────────────────────────────


def _image_of(body: dict[str, Any]) -> Any:
    from PIL import Image

    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, list):
            for part in content:
                if part.get("type") == "image_url":
                    data = part["image_url"]["url"].split(",", 1)[1]
                    return Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB")
    raise ValueError("no image in the request")


def _text_of(body: dict[str, Any]) -> str:
    parts = []
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            parts.append(content)
        else:
            parts.extend(part.get("text", "") for part in content)
    return "\n".join(parts)


def find_colour(image: Any, colour: tuple[int, int, int]) -> tuple[float, float] | None:
    """The centre of the thickest blob of `colour` (within TOLERANCE): the pixels are eroded
    until one more step would leave none, so the thin rings a neighbour's blurred edge leaves
    (scaling, JPEG, a magnified crop) go first and the solid square is what remains."""
    from PIL import Image, ImageChops, ImageFilter, ImageOps

    difference = ImageChops.difference(image, Image.new("RGB", image.size, colour))
    red, green, blue = difference.split()
    worst = ImageChops.lighter(red, ImageChops.lighter(green, blue))
    full = worst.point(lambda v: 255 if v <= TOLERANCE else 0)
    found = full.getbbox()
    if found is None:
        return None
    # only the part with matches is eroded, with a border of nothing around it: a square at
    # the image's edge erodes from every side too
    mask = ImageOps.expand(full.crop(found), 1, fill=0)
    box = mask.getbbox()
    assert box is not None
    for _ in range(64):
        thinner = mask.filter(ImageFilter.MinFilter(3))
        inner = thinner.getbbox()
        if inner is None:
            break
        mask, box = thinner, inner
    # erosion shrinks a square alike on every side: its centre stays where it was
    return (
        found[0] + (box[0] + box[2] - 1) / 2 - 1,
        found[1] + (box[1] + box[3] - 1) / 2 - 1,
    )


class SeeingModel:
    """Answers a request by looking at its image, in `profile`'s space, with its error."""

    def __init__(self, profile: Any, sigma: float, rng: random.Random) -> None:
        self.profile = profile
        self.sigma = sigma
        self.rng = rng

    def __call__(self, body: dict[str, Any]) -> Any:
        from tests.support.model_server import Reply

        text = _text_of(body)
        match = _HEX.search(text)
        image = _image_of(body)
        found = (
            find_colour(image, tuple(int(match.group(1)[i : i + 2], 16) for i in (0, 2, 4)))
            if match
            else None
        )
        planner = "You operate a computer's desktop" in text
        if found is None:
            return Reply(
                "I cannot see it." if not planner else {"action": "fail", "reason": "not seen"}
            )
        x, y = self._answer(found, image.size)
        if planner:
            return Reply(
                {
                    "action": "tool",
                    "tool": "click",
                    "args": {"x": x, "y": y, "target": f"the {match.group(0)} square"},  # type: ignore[union-attr]
                    "reason": "the square",
                }
            )
        if self.profile.point_format == "qwen":
            call = {
                "name": "computer_use",
                "arguments": {"action": "left_click", "coordinate": [x, y]},
            }
            return Reply(f"<tool_call>\n{json.dumps(call)}\n</tool_call>")
        return Reply(json.dumps({"x": x, "y": y}))

    def _answer(self, found: tuple[float, float], size: tuple[int, int]) -> tuple[int, int]:
        """The point with the model's error, in its coordinates of an image of `size`."""
        width, height = size
        profile = self.profile
        # the error is in pixels of the model's own input
        input_w, input_h = (
            profile.resize.size(width, height) if profile.coordinates == "resized" else size
        )
        fx = (found[0] + 0.5) * input_w / width + self.rng.gauss(0, self.sigma)
        fy = (found[1] + 0.5) * input_h / height + self.rng.gauss(0, self.sigma)
        model_w, model_h = profile.model_size(width, height)
        x = min(
            max(0.0, fx * model_w / input_w - (0 if profile.coordinates == "normalized" else 0.5)),
            model_w,
        )
        y = min(
            max(0.0, fy * model_h / input_h - (0 if profile.coordinates == "normalized" else 0.5)),
            model_h,
        )
        return round(x), round(y)


# ── one configuration ────────────────────────────────────────────────────────


@dataclass
class Score:
    hits: int = 0
    errors: list[float] | None = None
    requests: int = 0

    def line(self, label: str, total: int) -> str:
        errors = sorted(self.errors or [])
        p90 = errors[min(len(errors) - 1, int(len(errors) * 0.9))] if errors else float("nan")
        return (
            f"  {label:<18} hits {self.hits:>2}/{total} ({100 * self.hits / total:5.1f} %)   "
            f"error mean {statistics.fmean(errors):5.1f} px, p90 {p90:5.1f} px   "
            f"requests/click {self.requests / total:.1f}"
        )


async def score(
    observer: Any,
    observation: Any,
    targets: list[Target],
    profile_name: str,
    mode: str,
    sigma: float,
    seed: int,
) -> Score:
    from desktop_agent.core.builtin_tools import BUILTIN_TOOLS
    from desktop_agent.core.ports import DecideRequest, GroundRequest
    from desktop_agent.desktop.geometry import point_to_screen
    from desktop_agent.planner import OpenAIPlanner, ResponseFormatMemory
    from desktop_agent.planner.profiles import profile_named
    from tests.support.model_server import ModelServer

    profile = profile_named(profile_name)
    rng = random.Random(f"{seed}-{profile_name}-{mode}")
    click = tuple(spec for spec in BUILTIN_TOOLS if spec.name == "click")
    result = Score(errors=[])
    async with (
        ModelServer(respond=SeeingModel(profile, sigma, rng)) as server,
        ModelServer(respond=SeeingModel(profile, sigma, rng)) as grounder_server,
    ):
        grounder = None
        grounding = {"off": "off", "zoom": "zoom"}.get(mode, "grounder")
        if grounding == "grounder":
            grounder = OpenAIPlanner(
                base_url=grounder_server.base_url, model="bench-grounder", api_key=None,
                profile=profile_name, formats=ResponseFormatMemory(),
            )  # fmt: skip
        planner = OpenAIPlanner(
            base_url=server.base_url, model="bench-planner", api_key=None, profile=profile_name,
            formats=ResponseFormatMemory(), grounding=grounding, grounder=grounder,
            grounder_zoom=mode != "grounder, no zoom",
        )  # fmt: skip
        async with planner:
            for turn, target in enumerate(targets, 1):
                request = DecideRequest(
                    goal=f"Click the square of colour {target.hex}.",
                    run_id="bench",
                    turn=turn,
                    steps=(),
                    observation=observation,
                    tools=click,
                )
                decision = await planner.decide(request)
                point = (decision.args["x"], decision.args["y"])
                if planner.grounder is not None:
                    grounded = await planner.grounder.ground(
                        GroundRequest(
                            "click",
                            decision.args["target"],
                            point,
                            observation,
                            # as the loop hands it: the crop captured at the screen's resolution
                            functools.partial(observer.region, observation),
                        )
                    )
                    point = grounded.point
                screen = point_to_screen(*point, observation.mapping)
                result.hits += target.hit(*screen)
                cx, cy = target.centre
                result.errors.append(math.hypot(screen[0] - cx, screen[1] - cy))  # type: ignore[union-attr]
    result.requests = len(server.requests) + len(grounder_server.requests)
    return result


async def set_of_mark_cost(targets: list[Target], runs: int) -> list[str]:
    """observe() median with and without the marks drawn, for 40 and 150 listed elements."""
    from desktop_agent.desktop.inventory.base import RawElement
    from desktop_agent.desktop.observer import DesktopObserver
    from tests.unit.desktop.fakes import FakeBackend

    rng = random.Random(5)
    many = [
        RawElement(
            "button", f"b{i}", (rng.randrange(WIDTH - 200), rng.randrange(HEIGHT - 40), 120, 30)
        )
        for i in range(150)
    ]
    few = [RawElement("button", t.hex, (t.left, t.top, t.size, t.size)) for t in targets]
    lines = []
    for label, elements in (("40 elements", few), ("150 elements", many)):
        observers = [
            DesktopObserver(backend=FakeBackend(list(elements)), set_of_mark=marks)
            for marks in (False, True)
        ]
        times: list[list[float]] = [[], []]
        try:
            for _ in range(runs + 1):  # interleaved, so a busy moment hits both alike
                for which, observer in enumerate(observers):
                    started = time.perf_counter()
                    await observer.observe()
                    times[which].append((time.perf_counter() - started) * 1000)
        finally:
            for observer in observers:
                observer.close()
        medians = [statistics.median(series[1:]) for series in times]
        lines.append(
            f"  {label:<13} observe median {medians[0]:5.1f} ms without marks, "
            f"{medians[1]:5.1f} ms with (+{medians[1] - medians[0]:.1f} ms)"
        )
    return lines


async def main_async(args: argparse.Namespace, display: str) -> None:
    from desktop_agent.desktop.observer import DesktopObserver

    image, targets = canvas(args.seed)
    connection = paint(display, image)
    observer = DesktopObserver(inventory=False)
    try:
        await run_all(args, observer, targets)
    finally:
        observer.close()
    print("set-of-mark, cost in observe time (capture 1280 wide, JPEG):")
    for line in await set_of_mark_cost(targets, args.runs):
        print(line)
    connection.close()


async def run_all(args: argparse.Namespace, observer: Any, targets: list[Target]) -> None:
    from PIL import Image

    observation = await observer.observe()
    # the zoom's crops come from the screen itself: say at which size (a failure is loud)
    region = Image.open(io.BytesIO(await observer.region(observation, (0, 0, 320, 180))))
    print(f"zoom crops of 320x180 screenshot px are captured at {region.width}x{region.height}")
    print(
        f"{TARGETS} targets of 16-24 px on a {WIDTH}x{HEIGHT} canvas (no element list), "
        f"captured at {observation.width}x{observation.height}; model error sigma = "
        f"{args.sigma:g} px at its input size"
    )
    for space, profile in PROFILES.items():
        print(f"{space} ({profile}):")
        for mode in MODES:
            result = await score(
                observer, observation, targets, profile, mode, args.sigma, args.seed
            )
            print(result.line(mode, TARGETS), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sigma", type=float, default=6.0)
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    session = start_xsession(WIDTH, HEIGHT, atspi=False)
    try:
        use_xsession(session)
        asyncio.run(main_async(args, session.display))
    finally:
        session.close()


if __name__ == "__main__":
    main()
