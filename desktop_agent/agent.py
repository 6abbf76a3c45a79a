"""Agent: the services one process runs — store, runner, approvals, planners — built in one place.

The Host (host/host.py) holds the process's one Agent; the faces (the window, the CLI, the
API, MCP) get the Host, and none of them builds a store, a planner or a desktop adapter.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from desktop_agent.core.breaker import BreakerBoard
from desktop_agent.core.builtin_tools import builtin_registry
from desktop_agent.core.errors import RefusedToStart
from desktop_agent.core.events import ApprovalRequested, ApprovalResolved, TaskLoopEvent
from desktop_agent.core.models import (
    ApprovalDecision,
    ApprovalRequest,
    Policy,
    Risk,
    RunView,
    VisionSetting,
)
from desktop_agent.core.permissions import ApprovalBroker, Permissions
from desktop_agent.core.ports import PermissionGate, Planner, ScreenObserver, ToolExecutor
from desktop_agent.core.replay import replay_run
from desktop_agent.core.runner import RunnerServices, TaskRunnerService
from desktop_agent.core.tools import SCREEN_DENIED, SCREEN_TOOL, ToolRegistry
from desktop_agent.desktop.takeover import InjectionWindows

if TYPE_CHECKING:
    from desktop_agent.settings import Settings
    from desktop_agent.store import SqliteRunRepository
    from desktop_agent.takeover import UserTakeover

log = logging.getLogger(__name__)

PlannerFactory = Callable[[RunView], Planner]


@dataclass
class Agent:
    """Every service a front end needs.

    Attributes:
        runner: starts, stops, pauses and resumes runs; knows the active ones.
        approvals: the pending approvals; a dialog, a terminal or an API client answers them.
        repo: the run history (the only way to the database).
        injections: when the executor's driver is sending input (the takeover watch reads
            it to tell the agent's input from the user's).
        takeover: pauses the runs when the user takes over, once `watch_user_input` ran.
    """

    data_dir: Path
    settings: Settings
    repo: SqliteRunRepository
    runner: TaskRunnerService
    approvals: ApprovalBroker
    permissions: Permissions
    registry: ToolRegistry
    planner_factory: PlannerFactory | None = None
    #: skip the model-server reachability and vision checks (tests with a fake planner)
    check_model: bool = True
    injections: InjectionWindows = field(default_factory=InjectionWindows)
    takeover: UserTakeover | None = None
    _closers: list[Callable[[], None]] = field(default_factory=list)
    #: the approvals asked here for another process (`ask_here`): its person answers them in
    #: the dialog, never an API client (a program could approve its own call: issue #28)
    _asked_for_others: set[str] = field(default_factory=set)

    @classmethod
    async def open(
        cls,
        data_dir: Path,
        settings: Settings,
        *,
        observer: ScreenObserver | None = None,
        executor: ToolExecutor | None = None,
        gate: PermissionGate | None = None,
        approvals: ApprovalBroker | None = None,
        planner_factory: PlannerFactory | None = None,
        check_model: bool = True,
    ) -> Agent:
        """Open the store (recovering crashed runs) and build the services."""
        from desktop_agent.store import SqliteRunRepository

        # opening migrates and recovers (and may wait on a locked file): not on the loop's thread
        repo = await asyncio.to_thread(SqliteRunRepository.open, data_dir)
        made: list[Any] = []  # what this Agent builds, it closes (their threads end with it)
        # the driver marks its input here; the takeover watch reads the same object
        injections = InjectionWindows()
        if observer is None or executor is None:
            from desktop_agent.desktop import DesktopExecutor, DesktopObserver
            from desktop_agent.desktop.input import InputDriver, PyAutoGuiDriver
            from desktop_agent.desktop.launch import Launcher
            from desktop_agent.desktop.wayland import session_kind, wayland_parts

            driver: InputDriver
            if session_kind() == "wayland":
                # the X11 path would see and act only through XWayland (issue 34)
                seen, driver, desk = wayland_parts(settings, injections)
                made += [desk, seen]  # closed after the executor, the desk last
                observer = observer or seen
            else:
                driver = PyAutoGuiDriver(injections)
                if observer is None:
                    observer = DesktopObserver.from_settings(settings)
                    made.append(observer)
            if executor is None:
                # the executor reaches AT-SPI/UIA objects (invoke, set_value) through the observer
                executor = DesktopExecutor(
                    observer=observer if isinstance(observer, DesktopObserver) else None,
                    driver=driver,
                    # a program the model starts never sees the model's API key
                    launcher=Launcher(hidden_env=(settings.api_key_env,)),
                )
                made.append(executor)
        agent = cls.assemble(
            data_dir,
            settings,
            repo,
            observer=observer,
            executor=executor,
            gate=gate,
            approvals=approvals,
            permissions=Permissions(settings.policies, await repo.list_grants()),
            planner_factory=planner_factory,
            check_model=check_model,
            injections=injections_of(executor) or injections,
        )
        for part in made:
            agent.on_close(part.close)
        return agent

    @classmethod
    def assemble(
        cls,
        data_dir: Path,
        settings: Settings,
        repo: SqliteRunRepository,
        *,
        observer: ScreenObserver,
        executor: ToolExecutor,
        gate: PermissionGate | None = None,
        approvals: ApprovalBroker | None = None,
        permissions: Permissions | None = None,
        planner_factory: PlannerFactory | None = None,
        check_model: bool = True,
        **extra: Any,
    ) -> Self:
        """Build the services around an open store (no I/O); `open` is the usual way in.

        `extra` goes to a subclass's own fields (tests' agents).
        """
        registry = builtin_registry()
        permissions = permissions or Permissions(settings.policies)
        # `approvals`: the broker a gate of the face's own hands questions to (serve's
        # PersonOnlyGate); the gate when none is given
        approvals = ApprovalBroker() if approvals is None else approvals
        runner = TaskRunnerService(
            RunnerServices(
                repo=repo,
                observer=observer,
                executor=executor,
                gate=gate or approvals,
                registry=registry,
                breakers=BreakerBoard(),
                permissions=permissions,
                approval_timeout_s=settings.approval_timeout_s,
                sensitive_targets=tuple(settings.sensitive_targets),
                injection_guard=settings.injection_guard == "on",
                budget=settings.budget(),
            )
        )
        return cls(
            data_dir=data_dir,
            settings=settings,
            repo=repo,
            runner=runner,
            approvals=approvals,
            permissions=permissions,
            registry=registry,
            planner_factory=planner_factory,
            check_model=check_model,
            **extra,
        )

    async def prepare(self, run: RunView, vision: VisionSetting | None = None) -> Planner:
        """The run's planner, once its model server answers and its model can see.

        Raises ModelUnreachable or VisionRequired (both RefusedToStart); RefusedToStart when
        the screen may not leave this process (screen_snapshot's policy is deny): the model
        would see it.
        """
        if self.permissions.policy(SCREEN_TOOL, Risk.SAFE) is Policy.DENY:
            raise RefusedToStart(SCREEN_DENIED)
        await self.ensure_model(run.base_url, run.model, vision)
        if self.planner_factory is not None:
            return self.planner_factory(run)
        from desktop_agent.planner import OpenAIPlanner

        settings = self.settings
        # the profile chosen (or calibrated) in the settings is for the settings' model; a
        # run naming another model gets the one its name picks
        own_model = run.model == settings.model
        grounder = None
        if settings.grounding == "grounder":
            url = settings.grounder_base_url or run.base_url
            grounder = OpenAIPlanner(
                base_url=url,
                model=settings.grounder_model,
                api_key=await self.api_key_for(url),
                read_timeout_s=settings.read_timeout_s,
                profile=settings.grounder_profile,
            )
        from desktop_agent.planner.backends import backend_named, make_planner
        from desktop_agent.planner.profiles import resolve_profile

        # the run's own choice (API, MCP, --model-profile) before the settings'
        profile = run.model_profile or (settings.model_profile if own_model else "auto")
        backend = backend_named(resolve_profile(run.model, profile, base_url=run.base_url).backend)
        # the profile's backend makes it (a chat format → OpenAIPlanner; a native API its own)
        return make_planner(
            base_url=run.base_url,
            model=run.model,
            api_key=await self.api_key_for(run.base_url, backend.own_key),
            read_timeout_s=settings.read_timeout_s,
            profile=profile,
            # a calibration's finding is for the settings' choice, not a profile named per run
            coordinates=(
                settings.model_coordinates if own_model and not run.model_profile else "auto"
            ),
            grounding=settings.grounding,
            grounder=grounder,
            grounder_zoom=settings.grounder_zoom,
            native={"store": settings.openai_store},
        )

    async def api_key_for(
        self, base_url: str, own: tuple[str, str, str] | None = None
    ) -> str | None:
        """The API key that may go to `base_url` (settings.api_key_for: the keyring's only to
        the saved server, never over plain http afar; `own`, a backend's provider key, first);
        read off the loop's thread (the keyring: D-Bus, maybe a prompt)."""
        from desktop_agent.settings import ProviderKey, api_key_for

        key = ProviderKey(*own) if own else None
        return await asyncio.to_thread(api_key_for, base_url, self.settings, os.environ, key)

    async def ensure_model(
        self, base_url: str, model: str, vision: VisionSetting | None = None
    ) -> None:
        """ModelUnreachable or VisionRequired unless the server answers and the model can see
        (model_check.py: the one check, the one API-key rule; no chat completion).
        A model the server does not list is tried anyway."""
        if not self.check_model:
            return
        from desktop_agent.model_check import check_model

        checked = await check_model(self.settings, base_url=base_url, model=model, vision=vision)
        refusal = checked.refusal(listed=False)
        if refusal is not None:
            raise refusal

    def watch_user_input(self) -> UserTakeover | None:
        """From now on the user's own input pauses every active run (the setting
        `pause_on_user_input`); call on the runner's loop. None when the setting is off."""
        if not self.settings.pause_on_user_input:
            return None
        if self.takeover is None:
            from desktop_agent.takeover import UserTakeover

            self.takeover = UserTakeover(self.runner, self.injections)
        self.takeover.attach()
        return self.takeover

    async def ask_here(self, approval: ApprovalRequest) -> ApprovalDecision:
        """Ask this process's person about another process's call (the app's dialog follows
        the runner's events): the answer, or deny when the approval's time runs out. A caller
        that goes away (cancelled) closes the question: `approval_resolved` is told either way.
        Only the dialog allows it (`asked_for_another_process`): the asking process (an MCP
        server) relies on a person here having answered, not a program holding the token.
        """
        self.runner.relay(ApprovalRequested(approval))
        decision, by = ApprovalDecision.DENY, "cancelled"
        self._asked_for_others.add(approval.id)
        try:
            async with asyncio.timeout(approval.timeout_s):
                decision = await self.approvals.request(approval)
            by = "user"
        except TimeoutError:
            by = "timeout"
        finally:
            self._asked_for_others.discard(approval.id)
            self.runner.relay(ApprovalResolved(approval, decision, by))
        return decision

    def asked_for_another_process(self, approval_id: str) -> bool:
        """Whether `approval_id` is another process's question (`ask_here`): only this
        process's dialog may allow it; an API client may only deny it."""
        return approval_id in self._asked_for_others

    def replay(self, run_id: str) -> AsyncGenerator[TaskLoopEvent, None]:
        return replay_run(self.repo, run_id)

    def stop_all(self) -> int:
        return self.runner.stop_all()

    def on_close(self, closer: Callable[[], None]) -> None:
        self._closers.append(closer)

    async def close(self) -> None:
        """Stop every run, then close the desktop adapters and the store (off this loop: the
        store finishes the writes already asked for)."""
        self.runner.stop_all()
        if self.takeover is not None:
            await self.takeover.close()
        await asyncio.to_thread(self._close_parts)

    def _close_parts(self) -> None:
        for closer in reversed(self._closers):
            try:
                closer()
            except Exception:  # noqa: BLE001 - closing must go on
                log.exception("while closing")
        self.repo.close()


def injections_of(executor: ToolExecutor) -> InjectionWindows | None:
    """The injection windows of the executor's input driver, if it marks them."""
    found = getattr(getattr(executor, "driver", None), "injections", None)
    return found if isinstance(found, InjectionWindows) else None
