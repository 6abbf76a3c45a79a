"""`desktop-agent mcp` as an MCP client meets it: the SDK's own client over stdio against the
real server process, on the test desktop, with a real l3afpad."""

from __future__ import annotations

import base64
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.context import ClientRequestContext

from desktop_agent.core.builtin_tools import BUILTIN_TOOLS
from tests.e2e.conftest import Cli
from tests.support.model_server import ModelServer
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
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "desktop_agent", "mcp", "--data-dir", str(cli.data_dir)],
        env=cli.env(env),
        cwd=ROOT,
    )
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
        ["xprop", "-id", _xdotool(xsession, "getactivewindow"), "WM_CLASS"],
        env=xsession.child_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.rpartition(",")[2].strip().strip('"').lower()


def _xdotool(xsession: XSession, *args: str) -> str:
    done = subprocess.run(
        ["xdotool", *args], env=xsession.child_env(), capture_output=True, text=True, check=False
    )
    return done.stdout.strip()


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
        assert listed[name].description.startswith(specs[name].description)


async def test_screenshot_returns_the_image_and_the_element_list_of_a_real_l3afpad(
    cli: Cli, l3afpad: Any
) -> None:
    async with mcp_client(cli) as client:
        result = await client.call_tool("screenshot", {})

    assert not result.is_error, text_of(result)
    images = [part for part in result.content if isinstance(part, types.ImageContent)]
    assert len(images) == 1
    assert base64.b64decode(images[0].data)[:3] in (b"\xff\xd8\xff", b"\x89PN")
    elements = text_of(result)
    assert "L3afpad" in elements  # the editor's window, in the planner's line format
    assert elements.splitlines()[0].startswith("[")


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
    _xdotool(xsession, "key", "--clearmodifiers", "ctrl+a", "ctrl+c")

    def copied() -> str | None:
        text = _xdotool_out(xsession, ["xclip", "-selection", "clipboard", "-o"])
        return None if text == "<nothing copied>" else text

    return str(wait_until(copied, timeout=2, what="a copy of the editor's text"))


def _xdotool_out(xsession: XSession, argv: list[str]) -> str:
    done = subprocess.run(argv, env=xsession.child_env(), capture_output=True, text=True)
    return done.stdout


def editor_is_empty(xsession: XSession) -> bool:
    try:
        editor_text(xsession)
    except TimeoutError:
        return True  # ctrl+a ctrl+c of an empty document copies nothing
    return False


async def test_type_text_asks_the_client_and_types_into_l3afpad_when_allowed(
    cli: Cli, l3afpad: Any, xsession: XSession
) -> None:
    asked = Asked(answers=["once"])
    async with mcp_client(cli, asked) as client:
        result = await client.call_tool("type_text", {"text": "hello from mcp"})

    assert not result.is_error, text_of(result)
    assert len(asked.questions) == 1 and "type_text" in asked.questions[0]
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


async def test_launch_app_asks_every_time_even_after_allow_for_this_session(
    cli: Cli, l3afpad: Any, xsession: XSession
) -> None:
    asked = Asked(answers=["session", "once", "once"])
    async with mcp_client(cli, asked) as client:
        first = await client.call_tool("type_text", {"text": "a"})
        second = await client.call_tool("type_text", {"text": "b"})  # the session's grant
        launches = [
            await client.call_tool("launch_app", {"command": "sleep 60"}) for _ in range(2)
        ]

    assert not first.is_error and not second.is_error
    assert [q.split()[6] for q in asked.questions] == ["type_text", "launch_app", "launch_app"]
    assert all(not launch.is_error for launch in launches), [text_of(x) for x in launches]
    assert "session" not in asked.questions[1]  # a dangerous tool offers no session grant
    assert editor_text(xsession) == "ab"
