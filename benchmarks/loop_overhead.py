"""Per-turn overhead of the real loop with the real SQLite store: instant model, no-op tool.

    python benchmarks/loop_overhead.py [--turns 500] [--image-kb 136] [--dir PARENT]

Each turn stores 3 step rows twice (running, then final), the run once, and a
screenshot plus a thumbnail file (the screen changes at every turn; a second line for a
still screen, whose image is written once), in two writes handed to the store's thread
(one before the model is asked, one before the tool runs); the model answers `wait 0` at
once and the tool does nothing, so a turn's wall time is the loop's and the store's
overhead. The same run against an in-memory repository shows the store's share. Target:
median and p99 <= 5 ms per turn.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pydantic import BaseModel  # noqa: E402

from desktop_agent.core.breaker import BreakerBoard  # noqa: E402
from desktop_agent.core.builtin_tools import builtin_registry  # noqa: E402
from desktop_agent.core.events import StepStarted  # noqa: E402
from desktop_agent.core.models import (  # noqa: E402
    ApprovalDecision,
    ApprovalRequest,
    Decision,
    Observation,
    Policy,
    StepKind,
    TaskSpec,
    ToolResult,
)
from desktop_agent.core.permissions import Permissions  # noqa: E402
from desktop_agent.core.ports import DecideRequest, RunRepository, ToolContext  # noqa: E402
from desktop_agent.core.runner import RunnerServices, TaskRunnerService  # noqa: E402
from desktop_agent.core.tools import ToolSpec  # noqa: E402
from desktop_agent.store import SqliteRunRepository  # noqa: E402
from tests.fakes import MemoryRepository  # noqa: E402

WAIT = Decision(action="tool", tool="wait", args={"seconds": 0}, reason="bench", raw="{}")


class InstantPlanner:
    async def decide(self, request: DecideRequest) -> Decision:
        return WAIT


class FixedObserver:
    """The same observation each time (a still screen: its image is written once), or with
    `changing` a new image each time (a changed screen: written at every turn)."""

    def __init__(self, image_kb: int, *, changing: bool = False) -> None:
        self.observation = Observation(
            image=b"\xff\xd8" + bytes(image_kb * 1024),
            mime="image/jpeg",
            width=1280,
            height=720,
            thumbnail=b"\xff\xd8" + bytes(8 * 1024),
        )
        self.changing = changing

        # two images taken in turns: each observation's differs from the one before, as the
        # observer's encoding of a changed screen does (made once: no copy on the turn's path)
        other = replace(self.observation, image=self.observation.image[:-1] + b"\x01")
        self._next = [other, self.observation]

    async def observe(self) -> Observation:
        if not self.changing:
            return self.observation
        self._next.reverse()
        return self._next[0]


class NoOpExecutor:
    async def execute(self, spec: ToolSpec, args: BaseModel, context: ToolContext) -> ToolResult:
        return ToolResult.success("ok")


class NeverAsked:
    async def request(self, approval: ApprovalRequest) -> ApprovalDecision:
        raise AssertionError("every tool is allowed")


async def turn_times_ms(
    repo: RunRepository, turns: int, image_kb: int, *, changing: bool = True
) -> list[float]:
    registry = builtin_registry()
    runner = TaskRunnerService(
        RunnerServices(
            repo=repo,
            observer=FixedObserver(image_kb, changing=changing),
            executor=NoOpExecutor(),
            gate=NeverAsked(),
            registry=registry,
            breakers=BreakerBoard(),
            permissions=Permissions({name: Policy.ALLOW for name in registry.names()}),
        )
    )
    run = await runner.create(TaskSpec("benchmark", max_steps=turns))
    starts: list[float] = []
    async for event in runner.start(run, InstantPlanner()):
        if isinstance(event, StepStarted) and event.step.kind is StepKind.OBSERVE:
            starts.append(time.perf_counter())
    starts.append(time.perf_counter())  # the end of the last turn (run stored and finished)
    return [(b - a) * 1000 for a, b in zip(starts, starts[1:], strict=False)]


def summary(name: str, times: list[float]) -> str:
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return (
        f"{name:<22} turns={len(times)}  median={statistics.median(times):.3f} ms  "
        f"p99={p99:.3f} ms  max={ordered[-1]:.3f} ms  mean={statistics.fmean(times):.3f} ms"
    )


async def main(turns: int, image_kb: int, parent: str | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="loop-overhead-", dir=parent) as tmp:
        store = SqliteRunRepository.open(Path(tmp))
        try:
            await turn_times_ms(store, 20, image_kb)  # warm up: imports, first pages, caches
            sqlite_times = await turn_times_ms(store, turns, image_kb)
            still_times = await turn_times_ms(store, turns, image_kb, changing=False)
        finally:
            store.close()
    memory = MemoryRepository()
    await turn_times_ms(memory, 20, image_kb)
    memory_times = await turn_times_ms(memory, turns, image_kb)
    print(
        f"loop overhead per turn, {turns} turns, screenshot {image_kb} KB + thumbnail 8 KB, "
        f"data dir under {parent or tempfile.gettempdir()}"
    )
    print(summary("sqlite store (real)", sqlite_times))
    print(summary("  the screen still", still_times))
    print(summary("memory repository", memory_times))
    median_share = statistics.median(sqlite_times) - statistics.median(memory_times)
    print(f"store share of the median turn: {median_share:.3f} ms (target: median, p99 <= 5 ms)")
    return {"sqlite": sqlite_times, "still": still_times, "memory": memory_times}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--image-kb", type=int, default=136)
    parser.add_argument("--dir", default=None, help="where the temporary data dir is made")
    options = parser.parse_args()
    asyncio.run(main(options.turns, options.image_kb, options.dir))
