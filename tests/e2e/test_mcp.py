"""`desktop-agent mcp` as an MCP client meets it: the SDK's own client over stdio against the
real server process, on the test desktop, with a real l3afpad."""

from __future__ import annotations

import asyncio
import base64
import socket
import subprocess
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.context import ClientRequestContext

from desktop_agent.core.builtin_tools import BUILTIN_TOOLS
from tests.e2e.conftest import Cli
from tests.support.app import mcp_server
from tests.support.model_server import Hang, ModelServer, Reply
from tests.support.xdisplay import XSession, wait_until

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Asked:
    """The elicitations the client was sent, and what its 'user' answers."""

    answers: list[str]
    questions: list[str] = field(default_factory=list)

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.questions.append(params.message)
        answer = self.answers.pop(0) if self.answers else "deny"
        if answer == "decline":
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={"answer": answer})


@asynccontextmanager
async def mcp_client(
    cli: Cli, asked: Asked | None = None, env: dict[str, str] | None = None
) -> AsyncIterator[Client]:
    """The SDK's client; one that answers questions (`asked`) is let answer the ordinary ones
    (`--client-approves`): never one that asks every time."""
    options = ["--client-approves"] if asked is not None else []
    params = mcp_server(cli.data_dir, cli.env(env), *options)
    async with Client(params, elicitation_callback=asked, read_timeout_seconds=120) as client:
        yield client


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(part.text for part in result.content if isinstance(part, types.TextContent))


@pytest.fixture
def l3afpad(cli: Cli, xsession: XSession) -> Iterator[subprocess.Popen[Any]]:
    process = xsession.spawn(["l3afpad"], extra_env={"DESKTOP_AGENT_E2E": "1"})
    wait_until(lambda: _active_class(xsession) == "l3afpad", timeout=20, what="l3afpad")
    yield process
    xsession.stop(process)


def _active_class(xsession: XSession) -> str:
    done = subprocess.run(
        ["xprop", "-id", xsession.xdotool("getactivewindow", check=False), "WM_CLASS"],
        env=xsession.child_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.rpartition(",")[2].strip().strip('"').lower()


async def test_the_client_lists_the_desktop_and_task_tools_with_the_planners_schemas(
    cli: Cli,
) -> None:
    async with mcp_client(cli) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}

    assert set(listed) == {
        "screenshot", "click", "type_text", "hotkey", "scroll", "launch_app", "focus_window",
        "invoke", "run_task", "list_runs", "get_run", "pause_run", "resume_run", "stop_all",
    }  # fmt: skip
    specs = {spec.name: spec for spec in BUILTIN_TOOLS}
    for name in ("click", "type_text", "hotkey", "scroll", "launch_app", "focus_window", "invoke"):
        assert listed[name].input_schema == specs[name].args_model.model_json_schema()
        description = listed[name].description
        assert description is not None
        assert description.startswith(specs[name].description)


async def test_screenshot_returns_the_image_and_the_element_list_of_a_real_l3afpad(
    cli: Cli, l3afpad: Any
) -> None:
    async with mcp_client(cli) as client:
        # the first inventory of a program that just started may miss the 100 ms budget on
        # a loaded machine (the list is empty then, and the walk goes on): ask again
        for _ in range(20):
            result = await client.call_tool("screenshot", {})
            if "L3afpad" in text_of(result) or result.is_error:
                break

    assert not result.is_error, text_of(result)
    images = [part for part in result.content if isinstance(part, types.ImageContent)]
    assert len(images) == 1
    assert base64.b64decode(images[0].data)[:3] in (b"\xff\xd8\xff", b"\x89PN")
    elements = text_of(result)
    assert "L3afpad" in elements  # the editor's window, in the planner's line format
    # screen text reaches the client fenced as data under the standing rule (issue 31)
    assert elements.startswith("Text read from the screen")
    assert any(line.startswith("[") for line in elements.splitlines())


# ── the gate: approvals through elicitation ──────────────────────────────────


def editor_text(xsession: XSession) -> str:
    """l3afpad's whole text, copied to the clipboard ("" when it holds none)."""
    subprocess.run(
        ["xclip", "-selection", "clipboard", "-i"],
        input="<nothing copied>",
        env=xsession.child_env(),
        text=True,
        check=True,
    )
    xsession.xdotool("key", "--clearmodifiers", "ctrl+a", "ctrl+c", check=False)

    def copied() -> str | None:
        text = _xdotool_out(xsession, ["xclip", "-selection", "clipboard", "-o"])
        return None if text == "<nothing copied>" else text

    # a loaded machine's deadline: the wait ends as soon as the copy is there
    return str(wait_until(copied, timeout=20, what="a copy of the editor's text"))


def _xdotool_out(xsession: XSession, argv: list[str]) -> str:
    done = subprocess.run(argv, env=xsession.child_env(), capture_output=True, text=True)
    return done.stdout


def editor_is_empty(xsession: XSession) -> bool:
    """Whether l3afpad holds no text: a letter typed at its end is then its whole text (a copy
    of an empty document copies nothing, which no wait could tell from a slow copy)."""
    xsession.xdotool("key", "--clearmodifiers", "ctrl+End", check=False)
    xsession.xdotool("type", "--clearmodifiers", "Q", check=False)
    return editor_text(xsession) == "Q"


async def test_type_text_asks_the_client_and_types_into_l3afpad_when_allowed(
    cli: Cli, l3afpad: Any, xsession: XSession
) -> None:
    asked = Asked(answers=["once"])
    async with mcp_client(cli, asked) as client:
        result = await client.call_tool("type_text", {"text": "hello from mcp"})

    assert not result.is_error, text_of(result)
    assert len(asked.questions) == 1 and "Type “hello from mcp”" in asked.questions[0]
    assert editor_text(xsession) == "hello from mcp"


async def test_a_denied_type_text_types_nothing_and_is_an_error_result(
    cli: Cli, l3afpad: Any, xsession: XSession
) -> None:
    asked = Asked(answers=["deny"])
    async with mcp_client(cli, asked) as client:
        result = await client.call_tool("type_text", {"text": "must not appear"})
        listed = await client.call_tool("list_runs", {})

    assert result.is_error
    assert "denied by the user" in text_of(result)
    assert editor_is_empty(xsession)
    # the call is in the history: a run of its own, failed before it acted
    runs = listed.structured_content["runs"]
    assert (runs[0]["goal"], runs[0]["status"]) == ("MCP: type_text", "failed")


def answer_the_dialog_once(xsession: XSession) -> None:
    """The person at this desktop presses "Allow once" (Alt+O) in the dialog the mcp process
    shows; pressed again until the dialog is gone (its Allow wakes 0.5 s after it opens)."""
    title = "Desktop Agent — allow launch_app?"
    window = wait_until(
        lambda: xsession.xdotool("search", "--name", title, check=False).split()[:1],
        timeout=60,
        what="the approval dialog",
    )[0]

    # the app's own window (WM_CLASS desktop-agent): the gate never lets input land on it
    wm_class = _xdotool_out(xsession, ["xprop", "-id", window, "WM_CLASS"])
    assert '"desktop-agent"' in wm_class, wm_class

    def answered() -> bool:
        xsession.xdotool("windowactivate", "--sync", window, check=False)
        xsession.xdotool("key", "--window", window, "alt+o", check=False)
        return not xsession.xdotool("search", "--name", title, check=False)

    wait_until(answered, timeout=30, interval=0.2, what="the dialog answered")


async def test_launch_app_asks_the_person_here_every_time_never_the_client(
    cli: Cli, l3afpad: Any, xsession: XSession
) -> None:
    asked = Asked(answers=["session", "once", "once"])  # accepts whatever it is asked
    async with mcp_client(cli, asked) as client:
        first = await client.call_tool("type_text", {"text": "a"})
        second = await client.call_tool("type_text", {"text": "b"})  # the session's grant
        launches = []
        for _ in range(2):
            call = asyncio.ensure_future(client.call_tool("launch_app", {"command": "sleep 60"}))
            await asyncio.to_thread(answer_the_dialog_once, xsession)
            launches.append(await asyncio.wait_for(call, 60))

    assert not first.is_error and not second.is_error
    # the client answered the ordinary call only: launch_app asked the dialog, twice
    assert [q.split(": ", 1)[1].split("”")[0] for q in asked.questions] == ["Type “a"]
    assert all(not launch.is_error for launch in launches), [text_of(x) for x in launches]
    assert editor_text(xsession) == "ab"


# ── run_task: the whole loop with the agent's own model ──────────────────────


def model_env(server: ModelServer) -> dict[str, str]:
    return {
        "DESKTOP_AGENT_BASE_URL": server.base_url,
        "DESKTOP_AGENT_MODEL": "qwen2.5vl",
        "DESKTOP_AGENT_VISION": "yes",
    }


async def test_run_task_streams_progress_per_step_and_ends_completed(
    cli: Cli, model: Callable[..., ModelServer], l3afpad: Any, xsession: XSession
) -> None:
    server = model(
        script=[
            Reply({"action": "tool", "tool": "type_text", "args": {"text": "hi"}, "reason": "r"}),
            Reply({"action": "done", "message": "typed it", "reason": "r"}),
        ]
    )
    asked = Asked(answers=["once"])
    reports: list[tuple[float, str | None]] = []

    # the parameters named as mcp's ProgressFnT names them (mcp/shared/dispatcher.py)
    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, message))

    async with mcp_client(cli, asked, env=model_env(server)) as client:
        result = await client.call_tool(
            "run_task", {"goal": "type hi", "max_steps": 5}, progress_callback=on_progress
        )

    assert not result.is_error, text_of(result)
    assert result.structured_content["status"] == "completed"
    assert result.structured_content["summary"] == "typed it"
    messages = [message or "" for _, message in reports]
    assert [value for value, _ in reports] == sorted({value for value, _ in reports})
    assert any(m.startswith("turn 1 action type_text") and ": ok" in m for m in messages)
    assert any(m.startswith("turn 2 decide") for m in messages)
    assert editor_text(xsession) == "hi"


def press_the_stop_hotkey(cli: Cli, xsession: XSession) -> None:
    xsession.xdotool("key", "ctrl+alt+Escape", check=False)


def run_stop_all(cli: Cli, xsession: XSession) -> None:
    done = cli.call("stop-all")  # another process, through the instance registry
    assert done.returncode == 0 and done.stdout.strip() == "stopped 1 run(s)", done


@pytest.mark.parametrize("stop", [press_the_stop_hotkey, run_stop_all], ids=["hotkey", "stop-all"])
async def test_a_stop_during_run_task_ends_it_stopped_with_no_more_input(
    cli: Cli,
    model: Callable[..., ModelServer],
    xsession: XSession,
    stop: Callable[[Cli, XSession], None],
) -> None:
    server = model(script=[Hang()])
    async with mcp_client(cli, env=model_env(server)) as client:
        log = cli.data_dir / "desktop-agent.log"
        wait_until(
            lambda: log.exists() and "stop hotkey ctrl+alt+esc is on" in log.read_text(),
            timeout=20,
            what="the hotkey grab",
        )
        call = asyncio.ensure_future(client.call_tool("run_task", {"goal": "wait forever"}))
        await asyncio.to_thread(
            wait_until, lambda: server.requests or call.done(), timeout=30, what="the model request"
        )
        await asyncio.to_thread(stop, cli, xsession)
        result = await asyncio.wait_for(call, timeout=30)
        run = await client.call_tool("get_run", {"run_id": result.structured_content["run_id"]})

    assert result.is_error
    assert text_of(result).startswith("stopped by the user")
    assert (result.structured_content["status"], result.structured_content["stop_reason"]) == (
        "stopped",
        "user_stop",
    )
    assert len(server.requests) == 1  # the model was not asked again
    kinds = [step["kind"] for step in run.structured_content["steps"]]
    assert "action" not in kinds  # no input after the stop


class NeverAnswered(Asked):
    """A client whose user never answers (the question stays open)."""

    def __init__(self) -> None:
        super().__init__(answers=[])
        self.open = asyncio.Event()

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.questions.append(params.message)
        self.open.set()
        await asyncio.Event().wait()
        raise AssertionError("never answered")


async def test_stop_all_while_a_desktop_call_is_asked_ends_it_stopped_and_nothing_is_typed(
    cli: Cli, l3afpad: Any, xsession: XSession
) -> None:
    asked = NeverAnswered()
    async with mcp_client(cli, asked) as client:
        call = asyncio.ensure_future(client.call_tool("type_text", {"text": "never"}))
        await asyncio.wait_for(asked.open.wait(), 30)
        await asyncio.to_thread(run_stop_all, cli, xsession)
        result = await asyncio.wait_for(call, timeout=30)

    assert result.is_error
    assert text_of(result).startswith("stopped by the user: type_text did not finish")
    assert editor_is_empty(xsession)


# ── streamable HTTP: the local API's token and Host / Origin rules ───────────


def test_http_accepts_a_connection_as_soon_as_it_prints_its_address(cli: Cli) -> None:
    # a client reads the line and connects at once: the address must already be served
    process = cli.start("mcp", "--http")
    line = process.stdout.readline()  # type: ignore[union-attr]
    port = int(line.strip().rpartition(":")[2].split("/")[0])
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        pass


async def test_http_needs_the_token_and_a_loopback_host_and_then_serves_the_tools(
    cli: Cli, l3afpad: Any, xsession: XSession
) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    process = cli.start("mcp", "--http", "--client-approves")
    line = await asyncio.to_thread(process.stdout.readline)  # type: ignore[union-attr]
    url = line.strip().rpartition(" ")[2]
    assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), line
    token = (cli.data_dir / "api-token").read_text().strip()
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}

    async with httpx2.AsyncClient() as http:
        no_token = await http.post(url, json=ping)
        foreign_host = await http.post(
            url, json=ping, headers={"Authorization": f"Bearer {token}", "Host": "evil.example"}
        )
        foreign_origin = await http.post(
            url,
            json=ping,
            headers={"Authorization": f"Bearer {token}", "Origin": "http://evil.example"},
        )
    assert no_token.status_code == 401
    assert foreign_host.status_code == 403 and foreign_origin.status_code == 403

    asked = Asked(answers=["once"])
    http_client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    async with (
        http_client,
        Client(
            streamable_http_client(url, http_client=http_client), elicitation_callback=asked
        ) as client,
    ):
        names = {tool.name for tool in (await client.list_tools()).tools}
        typed = await client.call_tool("type_text", {"text": "over http"})
        era = client.protocol_version
    assert {"screenshot", "run_task"} <= names
    # the handshake era, where the client's user can be asked in the middle of the call
    assert era == "2025-11-25"
    assert len(asked.questions) == 1
    assert not typed.is_error and editor_text(xsession) == "over http"


async def test_a_question_nobody_here_answers_is_denied_and_nothing_is_typed(
    cli: Cli, l3afpad: Any, xsession: XSession
) -> None:
    # no app, no --client-approves: the mcp process's own dialog asks, and denies by itself
    async with mcp_client(cli, env={"DESKTOP_AGENT_APPROVAL_TIMEOUT_S": "2"}) as client:
        result = await client.call_tool("type_text", {"text": "must not appear"})

    # the run's own deadline or the dialog's countdown, whichever comes first: a denial
    assert result.is_error and "type_text was not run" in text_of(result), text_of(result)
    assert editor_is_empty(xsession)


def test_sigterm_ends_the_server_while_its_client_keeps_stdin_open(cli: Cli) -> None:
    process = subprocess.Popen(
        cli.command("mcp"),
        cwd=ROOT,
        env=cli.env(),
        stdin=subprocess.PIPE,  # open, and nothing comes: the read must not hold the exit
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    cli.started.append(process)  # type: ignore[arg-type]
    instance = cli.data_dir / "instances" / f"{process.pid}.json"
    wait_until(instance.exists, timeout=30, what="the server's instance file")

    process.terminate()

    assert process.wait(timeout=30) == 0
    assert not instance.exists()
