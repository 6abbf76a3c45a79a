"""With the desktop app running on the same data dir, an MCP call asks in the app's approval
dialog — not the MCP client — and the dialog's answer is what the call does."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client

from desktop_agent.ui.approval import ApprovalDialog
from tests.fakes import make_agent
from tests.gui.fake_agent import drive, until
from tests.gui.test_app_wiring import build
from tests.support.app import mcp_server
from tests.support.xdisplay import XSession, xsession

__all__ = ["xsession"]

pytestmark = [
    pytest.mark.gui,
    pytest.mark.desktop,
]


class McpCall(threading.Thread):
    """One MCP client (the SDK's, over stdio) calling one tool, on a thread with its own loop:
    the test's loop is the app's (qasync), which must stay free to show the dialog."""

    def __init__(self, env: dict[str, str], data_dir: Path, tool: str, args: dict[str, Any]):
        super().__init__(daemon=True)
        self.params = mcp_server(data_dir, env)
        self.tool, self.args = tool, args
        self.client_asked: list[str] = []
        self.result: types.CallToolResult | None = None
        self.error: BaseException | None = None

    async def elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.client_asked.append(params.message)
        return types.ElicitResult(action="accept", content={"answer": "once"})

    def run(self) -> None:
        async def call() -> None:
            async with Client(self.params, elicitation_callback=self.elicit) as client:
                self.result = await client.call_tool(self.tool, self.args)

        try:
            asyncio.run(call())
        except BaseException as error:  # noqa: BLE001 - reported by the test
            self.error = error


def test_an_mcp_click_asks_in_the_apps_dialog_and_not_the_client(
    qtbot: Any, qloop: Any, tmp_path: Path, xsession: XSession
) -> None:
    harness = build(qtbot, qloop, make_agent(tmp_path))
    env = xsession.child_env({"DESKTOP_AGENT_HOME": str(tmp_path), "PYTHONUNBUFFERED": "1"})
    call = McpCall(env, tmp_path, "click", {"x": 5, "y": 5})

    async def scenario() -> str:
        await harness.client.ask(harness.client.host.serve_api, face="app")  # registers as the app
        call.start()
        dialog = await until(
            lambda: harness.window.findChild(ApprovalDialog), 60, "the app's approval dialog"
        )
        shown = dialog.request
        await until(dialog.once_button.isEnabled, 60, "the dialog's Allow to wake")
        dialog.once_button.click()
        await until(lambda: not call.is_alive(), 60, "the MCP call to end")
        return f"{shown.tool} {shown.args}"

    try:
        shown = drive(qloop, scenario(), timeout=120)
    finally:
        drive(qloop, harness.close())
        call.join(30)

    assert call.error is None, call.error
    assert call.result is not None and not call.result.is_error, call.result
    assert shown.startswith("click {'x': 5, 'y': 5")
    assert call.client_asked == []  # the app's person answered: the client was not asked
