"""A run that chose its own monitor (API, MCP, `run --monitor`) sees the screen through
desktop/observer.py's `MonitorShown`: the gate must know of that view all it knows of the
observer behind it — a Wayland desktop that cannot show the app's own windows (every pointer
and key call asks), the windows that came up since the look (`WindowsNowSource`)."""

from __future__ import annotations

from desktop_agent.core.models import (
    ApprovalDecision,
    MonitorChoice,
    Observation,
    Policy,
    StepKind,
    StepStatus,
    TaskSpec,
)
from desktop_agent.desktop.observer import DesktopObserver, MonitorShown
from tests.fakes import ScriptedPlanner, done, tool
from tests.unit.core.conftest import make_harness
from tests.unit.core.test_injection_gate import ALLOW_ALL, EDITOR, POPPED, WindowsObserver, _then
from tests.unit.core.test_own_windows import OwnWindowsUnseen


class _Chooser:
    """Makes a fake observer a MonitorChooser whose view is the real `MonitorShown`."""

    async def observe(self, monitor: MonitorChoice | None = None) -> Observation:
        return await super().observe()  # type: ignore[misc, no-any-return]

    def showing(self, monitor: MonitorChoice) -> MonitorShown:
        return MonitorShown(self, monitor)  # type: ignore[arg-type]


class UnseenChooser(_Chooser, OwnWindowsUnseen):
    """A Wayland desktop's observer (sees_own_windows False) that shows a run's monitor."""


class WindowsChooser(_Chooser, WindowsObserver):
    """An X11 observer that says which windows are up now and shows a run's monitor."""


def _on_monitor_2(tools: tuple[str, ...]) -> TaskSpec:
    return TaskSpec(goal="g", allowed_tools=tools, monitor="2", max_failures=5)


async def test_on_wayland_a_run_on_its_own_monitor_still_asks_before_every_input() -> None:
    # the view of one monitor did not say that the desktop hides the app's own windows, so
    # the gate took it for one that sees them: an allowed click and hotkey ran unasked
    h = make_harness(
        answers=[ApprovalDecision.DENY, ApprovalDecision.DENY],
        policies={"click": Policy.ALLOW, "hotkey": Policy.ALLOW},
        observer=UnseenChooser(None),  # type: ignore[arg-type]
    )
    run = await h.runner.create(_on_monitor_2(("click", "hotkey")))
    planner = ScriptedPlanner(
        [tool("click", x=100, y=650), tool("hotkey", keys=["ctrl", "s"]), done()]
    )
    await h.collect(run, planner)

    assert [request.tool for request in h.gate.requests] == ["click", "hotkey"]
    assert all("app's own windows are (Wayland)" in r.caution for r in h.gate.requests)
    assert h.executor.calls == []


async def test_a_run_on_its_own_monitor_still_looks_at_a_window_that_came_up() -> None:
    # the view of one monitor did not read the windows up now, so a popup giving orders that
    # came up while the model thought was never looked at: the allowed key press was sent
    observer = WindowsChooser()
    h = make_harness(answers=[ApprovalDecision.DENY], policies=ALLOW_ALL, observer=observer)
    h.observer.observation = EDITOR
    run = await h.runner.create(_on_monitor_2(("hotkey",)))
    await h.collect(run, ScriptedPlanner([_then(h, POPPED, tool("hotkey", keys=["ctrl", "s"]))]))

    actions = [s for s in await h.repo.list_steps(run.id) if s.kind is StepKind.ACTION]
    assert actions[0].status is StepStatus.SKIPPED
    assert "a window came up before the action was sent" in (actions[0].error or "")
    assert h.executor.calls == []


def test_the_view_of_one_monitor_answers_every_port_its_observer_answers() -> None:
    # a port the view leaves out is a check the gate skips for runs on their own monitor
    ports = {
        name
        for name in vars(DesktopObserver)
        if not name.startswith("_") and name not in ("showing", "from_settings", "close", "native")
    } | {"sees_own_windows"}
    missing = {name for name in ports if not hasattr(MonitorShown, name)}
    assert missing == set()
