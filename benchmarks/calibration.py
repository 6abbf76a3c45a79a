"""Calibration's error with scripted models: a perfect pixel model must come out at 0 px.

The model is a loopback server (tests/support/model_server.py) that clicks exactly the target
each request names, answering in screenshot pixels, in 0–1000, or in Qwen2.5-VL's resized
pixels; the real planner (openai client) asks it, one chat request per target, with a
screenshot of the five targets. Printed per screen size and model: the best-fitting
coordinate space, mean and worst error in screenshot pixels, and the time per request.
Target (issue #12): 0 px for the perfect pixel model.

    .venv/bin/python benchmarks/calibration.py
"""

from __future__ import annotations

import asyncio
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from desktop_agent.core.calibration import Target  # noqa: E402
from desktop_agent.planner import OpenAIPlanner, ResponseFormatMemory  # noqa: E402
from desktop_agent.planner.calibration import calibrate, synthetic_observation  # noqa: E402
from desktop_agent.planner.profiles import ResizeRule  # noqa: E402
from tests.support.model_server import ModelServer, Reply, ScriptItem  # noqa: E402

_LABEL = re.compile(r"red ring labelled ([A-Z])")
Where = Callable[[Target, int, int], tuple[int, int]]


def _resized(t: Target, w: int, h: int) -> tuple[int, int]:
    rw, rh = ResizeRule().size(w, h)
    return round(t.x * rw / w), round(t.y * rh / h)


MODELS: dict[str, Where] = {
    "perfect pixels": lambda t, w, h: (t.x, t.y),
    "perfect 0-1000": lambda t, w, h: (round(t.x / w * 1000), round(t.y / h * 1000)),
    "perfect qwen2.5 resized": _resized,
}


async def one(size: tuple[int, int], name: str, where: Where) -> None:
    width, height = size
    observation, targets = synthetic_observation(width, height)
    by_label = {t.label: t for t in targets}

    def respond(body: dict[str, Any]) -> ScriptItem:
        match = _LABEL.search(body["messages"][0]["content"])
        assert match is not None
        x, y = where(by_label[match.group(1)], width, height)
        return Reply({"action": "tool", "tool": "click", "args": {"x": x, "y": y}})

    async with ModelServer(respond=respond) as server:
        planner = OpenAIPlanner(
            base_url=server.base_url,
            model="benchmark-vlm",
            api_key=None,
            profile="generic",
            formats=ResponseFormatMemory(),
        )
        async with planner:
            started = time.perf_counter()
            report = await calibrate(planner, observation, targets, "benchmark-vlm")
            elapsed = time.perf_counter() - started
    best = report.best
    print(
        f"{width}x{height}  {name:<24} best fit {best.space:<10} "
        f"mean {best.mean_px:5.2f} px  worst {best.max_px:5.2f} px  "
        f"save: {report.suggested_coordinates:<10} "
        f"{elapsed / len(targets) * 1000:6.1f} ms/request"
    )


async def main() -> None:
    for size in ((1280, 720), (1920, 1080)):
        for name, where in MODELS.items():
            await one(size, name, where)


if __name__ == "__main__":
    asyncio.run(main())
