"""Memory growth over a 1000-turn run: the real loop, store and planner (openai client).

The model is a loopback server answering `wait 0` at once; the observer returns a
1280x720 JPEG of realistic size each turn. Resident memory (VmRSS) is read after a
warm-up of 50 turns and at the end. Target (DESIGN §7): growth <= 50 MB.

    .venv/bin/python benchmarks/memory_growth.py [--turns 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from PIL import Image  # noqa: E402

from desktop_agent.core.breaker import BreakerBoard  # noqa: E402
from desktop_agent.core.builtin_tools import builtin_registry  # noqa: E402
from desktop_agent.core.events import StepFinished  # noqa: E402
from desktop_agent.core.models import Observation, Policy, StepKind, TaskSpec  # noqa: E402
from desktop_agent.core.permissions import Permissions  # noqa: E402
from desktop_agent.core.runner import RunnerServices, TaskRunnerService  # noqa: E402
from desktop_agent.planner import OpenAIPlanner  # noqa: E402
from desktop_agent.store import SqliteRunRepository  # noqa: E402
from tests.fakes import FakeExecutor, ScriptedGate  # noqa: E402
from tests.support.model_server import ModelServer, Reply  # noqa: E402

WAIT_0 = {"action": "tool", "tool": "wait", "args": {"seconds": 0}, "reason": "benchmark"}


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def screenshot() -> Observation:
    image = Image.effect_noise((1280, 720), 40).convert("RGB")
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=80)
    return Observation(image=buffer.getvalue(), mime="image/jpeg", width=1280, height=720)


class Observer:
    def __init__(self) -> None:
        self.observation = screenshot()

    async def observe(self) -> Observation:
        return self.observation


async def main(turns: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = SqliteRunRepository.open(Path(tmp))
        async with ModelServer(then=Reply(WAIT_0)) as server:
            registry = builtin_registry()
            runner = TaskRunnerService(
                RunnerServices(
                    repo=repo,
                    observer=Observer(),
                    executor=FakeExecutor(),
                    gate=ScriptedGate(),
                    registry=registry,
                    breakers=BreakerBoard(),
                    permissions=Permissions({name: Policy.ALLOW for name in registry.names()}),
                )
            )
            run = await runner.create(TaskSpec(goal="memory", max_steps=turns))
            planner = OpenAIPlanner(base_url=server.base_url, model="qwen2.5vl", api_key=None)
            baseline = None
            async for event in runner.start(run, planner):
                if isinstance(event, StepFinished) and event.step.kind is StepKind.ACTION:
                    server.requests.clear()  # the test server keeps every body; we don't count it
                    if event.step.index == 50:
                        baseline = rss_mb()
            final = rss_mb()
        repo.close()
    assert baseline is not None
    print(f"{turns} turns, image {len(Observer().observation.image) // 1024} KB per turn")
    print(
        f"RSS after 50 turns {baseline:.1f} MB, after {turns}: {final:.1f} MB, "
        f"growth {final - baseline:.1f} MB (target <= 50 MB)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000)
    asyncio.run(main(parser.parse_args().turns))
