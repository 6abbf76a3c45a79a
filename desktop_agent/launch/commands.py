"""The sub-commands the command line hands to another face: `mcp` (mcp/), `eval` (eval/) and
`doctor --calibrate` (its window, ui/calibration.py). They are the top floor's, above the
faces (pyproject's `layers` and `independence` contracts), so cli/ imports no other face; their
texts are the command line's (cli/words.py `tr`, context "CLI"). What a sub-command needs is
imported when it runs: the full stop-all and `--help` import nothing more for this module."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from desktop_agent.cli.console import has_no_console
from desktop_agent.cli.exits import EXIT_REFUSED, EXIT_STOPPED
from desktop_agent.cli.words import spoken, tr

if TYPE_CHECKING:
    from desktop_agent.host import Host
    from desktop_agent.host.host import LocalApi
    from desktop_agent.settings import Settings

T = TypeVar("T")


def eval_grammar(commands: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    """`eval`'s sub-command grammar (eval/cli.py), imported when the whole grammar is built."""
    from desktop_agent.eval.cli import add_parser

    add_parser(commands, parser_class)


def cmd_eval(args: argparse.Namespace, data_dir: Path) -> int:
    """`eval`: the task suite on private desks (eval/cli.py)."""
    from desktop_agent.eval.cli import command

    return command(args, data_dir)


def cmd_doctor(args: argparse.Namespace, data_dir: Path) -> int:
    """`doctor`: with `--calibrate` the calibration window; else the command line's checks."""
    from desktop_agent.cli.commands import COMMANDS, doctor_settings

    if not args.calibrate:
        return COMMANDS["doctor"](args, data_dir)
    api = getattr(args, "local_api", None)
    return calibrate(doctor_settings(args), data_dir, getattr(args, "stop_mark", None), api)


def cmd_mcp(args: argparse.Namespace, data_dir: Path) -> int:
    """`mcp`: the MCP face (mcp/serve.py), serving the local API handed in."""
    import asyncio

    from desktop_agent.cli.commands import settings_for
    from desktop_agent.core.errors import ConfigError
    from desktop_agent.mcp.serve import serve_mcp

    if not args.http and (sys.stdin is None or has_no_console()):
        raise ConfigError(
            tr(
                "mcp over stdio needs the client's pipes, and this program has none (the "
                "windowed exe started without them): start it from the console program "
                "(desktop-agent, or desktop-agent-cli in the installed bundle), or use --http"
            )
        )
    settings = settings_for(args)
    if args.client_approves:
        settings = settings.model_copy(update={"mcp_client_approves": True})
    mark = getattr(args, "stop_mark", None)
    api = getattr(args, "local_api", None)
    return asyncio.run(
        serve_mcp(data_dir, settings, http=args.http, port=args.port, stop_mark=mark, local_api=api)
    )


def calibrate(
    settings: Settings,
    data_dir: Path,
    stop_mark: str | None = None,
    local_api: LocalApi | None = None,
) -> int:
    """`doctor --calibrate`: the calibration window; the report on stdout; Save writes
    `model_coordinates` into the settings file (the file's own values, not this command's
    overrides). The screenshot and the model's requests run on an engine thread, as in the
    app: the window's thread only paints.

    A stop ends it as it ends a run: the process opens a Host on the engine that holds the
    calibration (`Host.hold_calibration`), serves the controls-only local API (face
    "doctor", so `stop-all` and the other instances' stop hotkey reach it) and grabs the stop
    hotkey; a stop-all since the process started (`stop_mark`) stops it too. Stopped: exit 2.
    """
    import asyncio

    from desktop_agent.host.display import display_problem, windows_on_the_accessibility_bus
    from desktop_agent.settings import Settings, load_settings, save_settings, settings_path

    problem = display_problem(os.environ)
    if problem:
        print(f"desktop-agent: {problem}", file=sys.stderr)
        return EXIT_REFUSED
    import qasync
    from PySide6.QtWidgets import QApplication

    from desktop_agent.host.calibration import ScreenCalibration
    from desktop_agent.host.engine import Engine
    from desktop_agent.ui.calibration import calibrate_in_window

    def save(space: str) -> None:
        path = settings_path()
        stored = load_settings(path, env={})
        data = {**stored.model_dump(), "model_coordinates": space}
        written = save_settings(Settings.model_validate(data), path)
        said = tr('saved model_coordinates = "{space}" in {file}', space=space, file=written)
        print(said, flush=True)

    def show(text: str) -> None:
        print(text, flush=True)
        print(tr("press Save in the window to keep its finding; Close or Escape ends"), flush=True)

    existing = QApplication.instance()
    if existing is None:
        # as the app and the approval prompt do: on Wayland the focus probe sees this window
        # as the app's own only on the AT-SPI bus, and Qt reads this before its QApplication
        windows_on_the_accessibility_bus()
    app = existing if isinstance(existing, QApplication) else QApplication(["desktop-agent"])
    if existing is None:
        # the window speaks the command line's language (Qt's translators, the app's children)
        from desktop_agent.ui.i18n import install

        install(app, spoken())
    # the window's close must not stop the loop before the engine has let the capture go
    app.setQuitOnLastWindowClosed(False)
    engine = Engine("desktop-agent-calibration").start()
    calibration = ScreenCalibration(settings)

    async def on_engine(fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        async def call() -> T:  # made on the engine, as EngineClient.ask does
            return await fn(*args)

        return await engine.run(call())

    async def calibrating() -> Any:
        # the Host opened and closed by Host.serving on the engine, as the app's (Engine.hold)
        opening = _calibration_host(data_dir, settings, calibration, stop_mark, local_api)
        held = await engine.hold(opening)
        try:
            return await calibrate_in_window(calibration, on_engine, save=save, on_report=show)
        finally:
            await held.leave()

    try:
        with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
            result = runner.run(calibrating())
    finally:
        engine.close()
    if calibration.stopped and result is None:
        return EXIT_STOPPED
    return 0 if result is not None else 1


@contextlib.asynccontextmanager
async def _calibration_host(
    data_dir: Path,
    settings: Settings,
    calibration: Any,
    stop_mark: str | None,
    local_api: LocalApi | None = None,
) -> AsyncIterator[Host]:
    """The Host of `doctor --calibrate` from its opening to its closing (`Host.serving`),
    holding `calibration` before anything else: every stop-all (its API, another instance's
    hotkey) and its own stop hotkey stop it."""
    from desktop_agent.host import Face, Host

    async with Host.serving(data_dir, settings, stop_mark=stop_mark, local_api=local_api) as host:
        host.hold_calibration(calibration)
        # not the main thread's loop (the engine's): no signals; no run, so no takeover watch
        face = Face("doctor", api_optional=True, signals=False, takeover=False)
        await host.turn_on(face)
        yield host
