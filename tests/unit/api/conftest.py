"""API test fixtures: a real Agent on a real store, a real ApiServer on loopback, a client."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp
import pytest

from desktop_agent.agent import Agent
from desktop_agent.api.server import ApiServer
from desktop_agent.core.errors import VisionRequired
from desktop_agent.core.models import Decision, Policy, RunView, VisionSetting
from desktop_agent.core.ports import DecideRequest, Planner
from desktop_agent.host import Host
from desktop_agent.settings import Settings
from desktop_agent.store import SqliteRunRepository
from tests.fakes import FakeExecutor, FakeObserver, Script, ScriptedPlanner, done, tool

Frame = tuple[str, dict[str, Any]]


class Planners:
    """The planner factory: each run gets a ScriptedPlanner over the script of its goal."""

    def __init__(self) -> None:
        self.scripts: dict[str, list[Script]] = {}
        self.made: dict[str, ScriptedPlanner] = {}

    def __call__(self, run: RunView) -> Planner:
        script = self.scripts.get(run.goal, [tool("wait", seconds=0), done("all done")])
        planner = ScriptedPlanner(list(script))
        self.made[run.id] = planner
        return planner


class Hang:
    """A planner answer that never comes; tells when it was asked and when it was cancelled."""

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def __call__(self, request: DecideRequest) -> Decision:
        self.asked.set()
        try:
            await asyncio.Event().wait()
        finally:
            self.cancelled.set()
        raise AssertionError("never answered")


class Gate:
    """A planner answer that waits until the test opens the gate."""

    def __init__(self, answer: Decision) -> None:
        self.answer = answer
        self.asked = asyncio.Event()
        self.open = asyncio.Event()

    async def __call__(self, request: DecideRequest) -> Decision:
        self.asked.set()
        await self.open.wait()
        return self.answer


# Never run: mypy reads it (tests/unit/test_fakes_typed.py): each is a planner's answer as a
# ScriptedPlanner takes one (tests/fakes.Script).
if TYPE_CHECKING:
    _hang: Script = Hang()
    _gate: Script = Gate(done())


@dataclass
class ApiAgent(Agent):
    """The real Agent with the model check simulated: vision "no" cannot see (VisionRequired).

    It records the vision setting every start asked for; while `checking` is set, the
    model check waits until the test clears it (a slow model server).
    """

    visions: list[VisionSetting | None] = field(default_factory=list)
    checking: asyncio.Event | None = None
    check_begun: asyncio.Event = field(default_factory=asyncio.Event)

    async def prepare(self, run: RunView, vision: VisionSetting | None = None) -> Planner:
        self.visions.append(vision)
        self.check_begun.set()
        if self.checking is not None:
            await self.checking.wait()
        if (vision or self.settings.vision) == "no":
            raise VisionRequired(
                f"the model {run.model!r} cannot see screenshots; pick a vision model"
            )
        return await super().prepare(run, vision)


def make_agent(data_dir: Path, policies: Mapping[str, Policy] | None = None) -> ApiAgent:
    """An Agent over a real SQLite store in `data_dir`, fake screen and tools, scripted planners."""
    settings = Settings(
        model="fake-vlm",
        base_url="http://127.0.0.1:9/v1",
        policies=dict(policies or {}),
        approval_timeout_s=30,
    )
    return ApiAgent.assemble(
        data_dir,
        settings,
        SqliteRunRepository.open(data_dir),
        observer=FakeObserver(),
        executor=FakeExecutor(),
        planner_factory=Planners(),
        check_model=False,
    )


def planners_of(agent: Agent) -> Planners:
    assert isinstance(agent.planner_factory, Planners)
    return agent.planner_factory


@dataclass
class Api:
    """A client of one ApiServer, sending the right token and Host unless told otherwise."""

    agent: ApiAgent
    server: ApiServer
    session: aiohttp.ClientSession
    token: str

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    @property
    def planners(self) -> Planners:
        return planners_of(self.agent)

    def headers(self, *, auth: bool = True, **extra: str) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.token}"} if auth else {}
        headers.update(extra)
        return headers

    async def call(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        data: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        auth: bool = True,
    ) -> tuple[int, Any]:
        """The status and the decoded JSON answer."""
        send = dict(self.headers(auth=auth))
        send.update(headers or {})
        if body is not None:
            data = json.dumps(body).encode()
        # aiohttp warns about sending more than 1 MiB of raw bytes at once: stream those.
        payload: Any = io.BytesIO(data) if data is not None and len(data) > 1 << 19 else data
        async with self.session.request(
            method, self.base + path, data=payload, headers=send
        ) as response:
            assert response.content_type == "application/json", await response.text()
            return response.status, await response.json()

    async def create(self, goal: str = "do the thing", **fields: Any) -> dict[str, Any]:
        status, run = await self.call("POST", "/api/tasks", body={"goal": goal, **fields})
        assert status == 201, run
        return dict(run)

    def events(self, run_id: str) -> Any:
        """The events request as an async context manager (a response to read frames from)."""
        return self.session.get(f"{self.base}/api/tasks/{run_id}/events", headers=self.headers())

    async def stream(self, run_id: str) -> list[Frame]:
        async with self.events(run_id) as response:
            assert response.status == 200, await response.text()
            return [frame async for frame in frames(response)]


async def frames(response: aiohttp.ClientResponse) -> AsyncIterator[Frame]:
    """The SSE frames of a response as (event, data); checks each frame's shape."""
    event: str | None = None
    data: dict[str, Any] | None = None
    async for raw in response.content:
        line = raw.decode("utf-8").rstrip("\n")
        if line.startswith("event: "):
            assert event is None, f"two event lines: {line!r}"
            event = line.removeprefix("event: ")
        elif line.startswith("data: "):
            assert data is None, f"two data lines: {line!r}"
            data = json.loads(line.removeprefix("data: "))
        elif line == "":
            assert event is not None and data is not None, "a frame without event or data"
            assert data["type"] == event
            yield event, data
            event, data = None, None
        else:
            raise AssertionError(f"unexpected SSE line {line!r}")
    assert event is None and data is None, "the stream ended inside a frame"


async def next_frame(stream: AsyncIterator[Frame], event: str, **match: Any) -> Frame:
    """Read frames until one of type `event` whose data (or its step) has the `match` values."""
    async for frame in stream:
        name, data = frame
        inner = data.get("step") or data.get("approval") or data.get("run") or {}
        if name == event and all(inner.get(k) == v for k, v in match.items()):
            return frame
    raise AssertionError(f"the stream ended before {event} {match}")


async def until(
    condition: Callable[[], bool | Awaitable[bool]], *, within_s: float = 5.0, what: str = ""
) -> None:
    """Wait for a condition that has no event to await (state in another component)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while True:
        result = condition()
        if not isinstance(result, bool):
            result = await result
        if result:
            return
        if loop.time() > deadline:
            raise AssertionError(f"not within {within_s} s: {what or condition}")
        await asyncio.sleep(0.002)


async def open_api(data_dir: Path, session: aiohttp.ClientSession, **kwargs: Any) -> Api:
    agent = make_agent(data_dir, kwargs.pop("policies", None))
    server = ApiServer(Host(agent), **kwargs)
    await server.start()
    from desktop_agent.instances.registry import read_token

    token = read_token(data_dir)
    assert token is not None
    return Api(agent, server, session, token)


async def close_api(api: Api) -> None:
    await api.server.close()
    await api.agent.close()


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client:
        yield client


@pytest.fixture
def policies() -> dict[str, Policy]:
    """Tool policies of the `api` fixture's agent; a test overrides this fixture to ask."""
    return {}


@pytest.fixture
async def api(
    tmp_path: Path, session: aiohttp.ClientSession, policies: dict[str, Policy]
) -> AsyncIterator[Api]:
    client = await open_api(tmp_path, session, policies=policies)
    try:
        yield client
    finally:
        await close_api(client)
