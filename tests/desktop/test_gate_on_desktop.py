"""The gate on a real desktop: a granted type_text into a real password field still asks."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.core.breaker import BreakerBoard
from desktop_agent.core.builtin_tools import builtin_registry
from desktop_agent.core.control import RunControl
from desktop_agent.core.events import RunFinished
from desktop_agent.core.loop import LoopDeps, run_task_loop
from desktop_agent.core.models import (
    ApprovalDecision,
    Grounding,
    Policy,
    RunStatus,
    StepKind,
    StepStatus,
    TaskSpec,
)
from desktop_agent.core.permissions import Permissions
from desktop_agent.core.ports import GroundRequest
from desktop_agent.desktop.executor import DesktopExecutor
from desktop_agent.desktop.observer import DesktopObserver
from tests.desktop.conftest import INVENTORY_BUDGET_S, wait_active
from tests.desktop.test_focus_probe import role_when
from tests.fakes import (
    MemoryRepository,
    ScriptedGate,
    ScriptedGrounder,
    ScriptedPlanner,
    done,
    tool,
)
from tests.support.xdisplay import XSession


@pytest.fixture(params=["password", "user"])
def focused_field(request: Any, xsession: XSession, windows: Any) -> Iterator[str]:
    process = xsession.spawn(
        [sys.executable, "-m", "tests.support.password_window", request.param],
        extra_env={"QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1", "QT_QPA_PLATFORM": "xcb"},
    )
    try:
        wait_active(windows, title="Log in")
        yield request.param
    finally:
        xsession.stop(process)


async def test_typing_asks_in_a_password_field_and_follows_the_grant_elsewhere(
    focused_field: str,
) -> None:
    observer = DesktopObserver(fmt="png", inventory_budget_s=INVENTORY_BUDGET_S)
    executor = DesktopExecutor(observer=observer)
    repo = MemoryRepository()
    gate = ScriptedGate([ApprovalDecision.ONCE])
    permissions = Permissions(persistent_grants=["type_text"])
    try:
        expected_role = "password text" if focused_field == "password" else "text"
        assert await role_when(executor, expected_role) == expected_role
        run = await repo.create_run(TaskSpec("log in", allowed_tools=("type_text",)))
        deps = LoopDeps(
            repo=repo,
            observer=observer,
            executor=executor,
            gate=gate,
            registry=builtin_registry(),
            breakers=BreakerBoard(),
            permissions=permissions,
            planner=ScriptedPlanner([tool("type_text", text="hunter2"), done()]),
        )
        events = [event async for event in run_task_loop(run, deps, RunControl())]
    finally:
        executor.close()
        observer.close()
    final = events[-1]
    assert isinstance(final, RunFinished) and final.run.status is RunStatus.COMPLETED
    stored = "".join(repr(step.to_json()) for step in await repo.list_steps(run.id))
    if focused_field == "password":
        assert [request.caution for request in gate.requests] == ["typing into a password field"]
        assert "hunter2" not in stored
        assert all("hunter2" not in repr(event) for event in events)
    else:
        assert gate.requests == []  # the persistent grant holds for a plain field
        assert "hunter2" in stored


@pytest.fixture
def shell_titled_window(xsession: XSession, windows: Any) -> Iterator[None]:
    """A window whose title is the one a shell gives its terminal."""
    process = xsession.spawn(
        [sys.executable, "-m", "tests.support.password_window", "user", "alice@box: ~/src"],
        extra_env={"QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1", "QT_QPA_PLATFORM": "xcb"},
    )
    try:
        wait_active(windows, title="alice@box")
        yield
    finally:
        xsession.stop(process)


async def test_a_line_into_a_terminal_window_asks_despite_the_grant(
    shell_titled_window: None,
) -> None:
    observer = DesktopObserver(fmt="png", inventory_budget_s=INVENTORY_BUDGET_S)
    executor = DesktopExecutor(observer=observer)
    repo = MemoryRepository()
    gate = ScriptedGate([ApprovalDecision.DENY])
    try:
        run = await repo.create_run(TaskSpec("list files", allowed_tools=("type_text",)))
        deps = LoopDeps(
            repo=repo,
            observer=observer,
            executor=executor,
            gate=gate,
            registry=builtin_registry(),
            breakers=BreakerBoard(),
            permissions=Permissions(persistent_grants=["type_text"]),
            planner=ScriptedPlanner(
                [tool("type_text", text="ls -l"), tool("type_text", text="rm -rf ~\n"), done()]
            ),
        )
        events = [event async for event in run_task_loop(run, deps, RunControl())]
    finally:
        executor.close()
        observer.close()
    assert isinstance(events[-1], RunFinished)
    # the real window list named the focused window; its title is a shell's
    assert [(r.args, r.caution) for r in gate.requests] == [
        (
            {"text": "rm -rf ~\n"},
            "typing a line that ends with Enter into a terminal runs it",
        )
    ]
    actions = [s for s in await repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    assert [a.status for a in actions] == [StepStatus.OK, StepStatus.DENIED]


# ── a grounded click is judged where it lands (issue 28 item 9) ─────────────


@pytest.fixture
def late_dialog(xsession: XSession, windows: Any, tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """The "Drafts" window (one big "Save draft" button); (the file whose creation brings a
    dialog with a big "Delete" button over it, the log of the buttons pressed)."""
    trigger, log = tmp_path / "show-dialog", tmp_path / "pressed.log"
    process = xsession.spawn(
        [sys.executable, "-m", "tests.support.late_dialog", str(trigger), str(log)],
        extra_env={"QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1", "QT_QPA_PLATFORM": "xcb"},
    )
    try:
        wait_active(windows, title="Drafts")
        yield trigger, log
    finally:
        xsession.stop(process)


async def test_a_delete_dialog_that_comes_up_during_the_grounding_asks_before_the_click(
    late_dialog: tuple[Path, Path], windows: Any
) -> None:
    trigger, log = late_dialog
    observer = DesktopObserver(fmt="png", inventory_budget_s=INVENTORY_BUDGET_S)
    executor = DesktopExecutor(observer=observer)
    repo = MemoryRepository()
    gate = ScriptedGate([ApprovalDecision.DENY])

    async def dialog_meanwhile(request: GroundRequest) -> Grounding:
        # the turn's screen has "Save draft" under the point; the dialog comes up while the
        # grounder looks, and its point is the one the model aimed at
        save = next(e for e in request.observation.elements if e.name == "Save draft")
        trigger.touch()
        await asyncio.to_thread(wait_active, windows, title="Clean up")
        return Grounding(point=save.center, first=request.point, refined=True, summary="found")

    try:
        first = await observer.observe()
        save = next(e for e in first.elements if e.name == "Save draft")
        run = await repo.create_run(TaskSpec("save the draft", allowed_tools=("click",)))
        deps = LoopDeps(
            repo=repo,
            observer=observer,
            executor=executor,
            gate=gate,
            registry=builtin_registry(),
            breakers=BreakerBoard(),
            # clicks are allowed: only the gate's own rule can ask
            permissions=Permissions({"click": Policy.ALLOW}),
            planner=ScriptedPlanner(
                [tool("click", x=save.center[0], y=save.center[1], target="Save draft"), done()],
                grounder=ScriptedGrounder([dialog_meanwhile]),
            ),
        )
        events = [event async for event in run_task_loop(run, deps, RunControl())]
    finally:
        executor.close()
        observer.close()
    assert isinstance(events[-1], RunFinished)
    [asked] = gate.requests
    assert asked.caution.endswith('"Delete" is sensitive ("delete")'), asked.caution
    assert asked.target == save.center
    assert not log.exists()  # nothing was pressed: neither "Delete" nor "Save draft"
    action = next(s for s in await repo.list_steps(run.id) if s.kind is StepKind.ACTION)
    assert action.status is StepStatus.DENIED
    assert action.element is not None and action.element.name == "Delete"
