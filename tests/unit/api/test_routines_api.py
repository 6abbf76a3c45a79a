"""POST /api/routines/{name}/run: the routine's run streamed as SSE; GET /api/routines."""

from __future__ import annotations

import asyncio

from desktop_agent.core.models import ApprovalDecision, Element, Policy, ToolResult
from desktop_agent.core.routine import REDACTED, Routine, RoutineParam, RoutineStep
from desktop_agent.core.targets import element_ref
from tests.fakes import FakeExecutor, FakeObserver, make_observation
from tests.unit.api.conftest import Api, Frame, frames

SCREEN = make_observation(
    [
        Element(1, "window", "Log in - App", (0, 0, 400, 300), focused=True),
        Element(2, "text", "User", (10, 60, 200, 24), focused=True),
    ]
)
PASSWORD = make_observation(
    [
        Element(1, "window", "Log in - App", (0, 0, 400, 300), focused=True),
        Element(2, "password text", "Password", (10, 90, 200, 24), focused=True, password=True),
    ]
)


class Screens(FakeObserver):
    """The user field first; the password field once a user name was typed."""

    def __init__(self) -> None:
        super().__init__(SCREEN)

    def typed(self) -> None:
        self.observation = PASSWORD


async def save_login(api: Api) -> None:
    ref = element_ref("type_text", {}, SCREEN)
    secret = element_ref("type_text", {}, PASSWORD)
    await api.agent.repo.save_routine(
        Routine(
            "login", "log in",
            (RoutineStep("type_text", {"text": "ann"}, ref), RoutineStep("wait", {"seconds": 0}),
             RoutineStep("type_text", {"text": REDACTED}, secret)),
            (RoutineParam("user", (1,), "ann"), RoutineParam("password", (3,), None, True)),
            grants=("type_text",),
        )
    )  # fmt: skip
    screens = Screens()
    api.agent.runner.services.observer = screens

    async def type_text(args: object, context: object) -> ToolResult:
        screens.typed()
        return ToolResult.success("typed")

    api.agent.runner.services.executor.handlers["type_text"] = type_text  # type: ignore[attr-defined]
    api.agent.permissions.set_policy("wait", Policy.ALLOW)


async def test_a_routine_runs_through_the_api_as_an_sse_stream(api: Api) -> None:
    await save_login(api)
    url = f"{api.base}/api/routines/login/run"
    body = {"params": {"user": "bob", "password": "pw-1"}}

    async with api.session.post(url, json=body, headers=api.headers()) as response:
        assert response.status == 200, await response.text()
        stream = []
        async for frame in frames(response):
            stream.append(frame)
            if frame[0] == "approval_requested":  # the person answers in the app's dialog
                approval = frame[1]["approval"]["id"]
                # (a password field asks every time: an API client may not allow it)
                answer = {"decision": "once"}
                assert (await api.call("POST", f"/api/approvals/{approval}", body=answer))[0] == 403
                assert api.agent.approvals.resolve(approval, ApprovalDecision.ONCE)

    final = stream[-1][1]["run"]
    assert (final["status"], final["kind"], final["routine"]) == ("completed", "routine", "login")
    executor = api.agent.runner.services.executor
    assert isinstance(executor, FakeExecutor)
    typed = [args.model_dump()["text"] for name, args in executor.calls if name == "type_text"]
    assert typed == ["bob", "pw-1"]
    # the password field asked (every time, grant or not) and its text was never stored
    assert [a[1]["approval"]["caution"] for a in stream if a[0] == "approval_requested"] == [
        "typing into a password field"
    ]
    assert "pw-1" not in str(stream) and "pw-1" not in str(await api.call("GET", "/api/tasks"))
    status, listed = await api.call("GET", "/api/routines")
    assert status == 200 and [r["name"] for r in listed] == ["login"]
    assert listed[0]["params"][1] == {"name": "password", "steps": [3], "default": None,
                                      "secret": True}  # fmt: skip


async def test_an_unknown_routine_or_a_missing_secret_is_refused_in_one_line(api: Api) -> None:
    await save_login(api)
    status, answer = await api.call("POST", "/api/routines/nope/run", body={})
    assert (status, answer) == (404, {"error": "no routine named 'nope'"})
    status, answer = await api.call("POST", "/api/routines/login/run", body={})
    assert status == 400 and "needs a value for password" in answer["error"]
    status, answer = await api.call("POST", "/api/routines/login/run", body={"params": {"x": 1}})
    assert status == 400
    assert api.agent.runner.active_ids == ()


async def test_a_stop_all_while_the_routine_is_looked_up_ends_its_run_before_it_acts(
    api: Api,
) -> None:
    await save_login(api)
    reading, release = asyncio.Event(), asyncio.Event()
    real_get = api.agent.repo.get_routine

    async def held(name: str) -> Routine | None:  # the store answers once the test says so
        found = await real_get(name)
        reading.set()
        await release.wait()
        return found

    api.agent.repo.get_routine = held  # type: ignore[method-assign]
    url = f"{api.base}/api/routines/login/run"
    body = {"params": {"user": "bob", "password": "pw-1"}}

    async def start() -> list[Frame]:
        async with api.session.post(url, json=body, headers=api.headers()) as response:
            assert response.status == 200, await response.text()
            return [frame async for frame in frames(response)]

    client = asyncio.ensure_future(start())
    await reading.wait()  # admitted at the request; the routine not read yet
    assert await api.call("POST", "/api/tasks/stop-all") == (200, {"stopped": 1})
    release.set()
    stream = await client

    assert [name for name, _ in stream] == ["run_started", "run_finished"]
    final = stream[-1][1]["run"]
    assert (final["status"], final["stop_reason"], final["routine"]) == (
        "stopped",
        "user_stop",
        "login",
    )
    assert final["message"] == "stopped before it started"
    assert api.agent.runner.services.executor.calls == []  # type: ignore[attr-defined]
    assert api.planners.made == {}
    assert api.agent.runner.active_ids == ()
