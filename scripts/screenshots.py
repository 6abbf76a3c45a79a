"""Take README's pictures of the app on a private X desktop (Xvfb + openbox), from a real run.

    .venv/bin/python scripts/screenshots.py [--out docs/images]

It starts Xvfb + openbox and the l3afpad editor, then runs the real app's main window
(with the real store, screen capture, element inventory and input) on a goal whose
model answers are scripted: click into the editor, type a line (which asks for an
approval), done. It writes:

- main-window-run.png  the main window during the run (timeline, a step's screenshot)
- approval-dialog.png  the approval dialog asking to type
- replay.png           the finished run replayed from the history
- routines-list.png    the run saved as a routine, in the window's Routines list

`--language zh_CN` takes them in Chinese (the app's translators installed), each name with
`-zh_CN` before `.png`; needs a Chinese font (fonts-wqy-microhei, scripts/bootstrap).

The pictures are widget renderings on the Xvfb display (no window decorations), so they
come out the same on any machine with the same fonts. Needs: Xvfb, openbox, l3afpad.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GOAL = "Open the editor, write a greeting, and leave it on screen"
TEXT = "Hello from Desktop Agent!"
SIZE = (1360, 820)
MODEL = "qwen2.5vl"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "images"))
    parser.add_argument("--language", default="en", help="en or zh_CN")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    out = Path(args.out)
    if args.child:
        return child(out, args.language)
    missing = [name for name in ("Xvfb", "openbox", "l3afpad", "xdotool") if not shutil.which(name)]
    if missing:
        print(f"screenshots: missing {', '.join(missing)}; run scripts/bootstrap", file=sys.stderr)
        return 1
    from tests.support.xdisplay import start_xsession, wait_until

    out.mkdir(parents=True, exist_ok=True)
    session = start_xsession(1440, 900, atspi=True)
    try:
        paint_desktop(session.display)
        editor = session.spawn(["l3afpad"])
        env = session.child_env()
        wait_until(
            lambda: subprocess.run(
                ["xdotool", "search", "--onlyvisible", "--class", "l3afpad"],
                env=env,
                capture_output=True,
                check=False,
            ).stdout.strip(),
            timeout=10,
            what="the editor window",
        )
        subprocess.run(
            [
                "xdotool",
                "search",
                "--onlyvisible",
                "--class",
                "l3afpad",
                "windowsize",
                "%@",
                "880",
                "540",
                "windowmove",
                "%@",
                "240",
                "150",
            ],
            env=env,
            check=True,
        )
        done = subprocess.run(
            [sys.executable, __file__, "--child", "--out", str(out), "--language", args.language],
            env=session.child_env({"QT_QPA_PLATFORM": "xcb"}),
            cwd=ROOT,
            timeout=120,
            check=False,
        )
        session.stop(editor)
    finally:
        session.close()
    if done.returncode == 0:
        for name in ("main-window-run", "approval-dialog", "replay", "routines-list"):
            print(out / picture(name, args.language))
    return done.returncode


def paint_desktop(display_name: str) -> None:
    """A calm blue desktop instead of Xvfb's black root window."""
    from Xlib import display

    connection = display.Display(display_name)
    try:
        screen = connection.screen()
        color = screen.default_colormap.alloc_color(0x3A00, 0x6E00, 0xA500).pixel
        screen.root.change_attributes(background_pixel=color)
        screen.root.clear_area(0, 0, 0, 0)
        connection.sync()
    finally:
        connection.close()


# ── the part that runs on the X desktop ─────────────────────────────────────


def picture(name: str, language: str) -> str:
    return f"{name}.png" if language == "en" else f"{name}-{language}.png"


def child(out: Path, language: str) -> int:
    import qasync
    from PySide6.QtWidgets import QApplication

    from desktop_agent.ui.i18n import install

    app = QApplication(["desktop-agent"])
    install(app, language)
    app.setApplicationName("desktop-agent")
    app.setQuitOnLastWindowClosed(False)
    with (
        tempfile.TemporaryDirectory(prefix="screenshots-") as tmp,
        asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner,
    ):
        return runner.run(take_pictures(out, Path(tmp), language))


async def take_pictures(out: Path, data_dir: Path, language: str = "en") -> int:
    from desktop_agent.agent import Agent
    from desktop_agent.app import DesktopApp
    from desktop_agent.core.models import Policy
    from desktop_agent.host.engine import Engine
    from desktop_agent.host.host import Host
    from desktop_agent.settings import Settings
    from desktop_agent.ui.approval import ApprovalDialog
    from desktop_agent.ui.engine_client import EngineClient
    from desktop_agent.ui.main_window import MainWindow
    from tests.fakes import ScriptedPlanner, done, tool
    from tests.gui.fake_agent import until
    from tests.support.model_server import ModelServer

    os.environ["DESKTOP_AGENT_HOME"] = str(data_dir)
    # a model server that says it can see, so the vision check runs as with Ollama;
    # the model's answers themselves are scripted in-process
    server = await ModelServer(ollama={MODEL: ["completion", "vision"]}, models=[MODEL]).start()
    settings = Settings(
        base_url=server.base_url,
        model=MODEL,
        policies={"click": Policy.ALLOW, "type_text": Policy.ASK},
        minimize_while_acting=True,
    )
    script = [
        click_into_editor,
        type_greeting,
        tool("wait", seconds=0.5, reason="Let the editor show the text before checking."),
        done("The greeting is in the editor."),
    ]
    engine = Engine().start()
    agent = await engine.run(
        Agent.open(data_dir, settings, planner_factory=lambda run: ScriptedPlanner(list(script)))
    )
    window = MainWindow()
    window.resize(*SIZE)
    window.show()
    desktop = DesktopApp(window, EngineClient(engine, Host(agent)), quit_app=lambda: None)
    await until(lambda: not window._tasks, timeout=10)
    assert window.panel.vision_label.property("vision") == "yes"
    window.panel.goal_edit.setPlainText(GOAL)
    window.panel.start_button.click()

    dialog = await until(lambda: window.findChild(ApprovalDialog), timeout=30, what="approval")
    await until(lambda: dialog.isVisible(), timeout=5)
    model = window.timeline_model
    rows = model.rowCount()
    window.timeline.selectRow(2)  # turn 1's click, with its target marked
    await thumbnails_loaded(window, rows)
    await until(lambda: window.detail.screenshot.image is not None, timeout=10, what="detail")
    await settle()
    save(window.grab(), out / picture("main-window-run", language))
    save(dialog.grab(), out / picture("approval-dialog", language))
    await until(dialog.once_button.isEnabled, timeout=5, what="the Allow button awake")
    dialog.once_button.click()

    await until(lambda: window.run is not None and window.run.status.is_terminal, timeout=30)
    run_id = window.run.id if window.run else ""
    await until(lambda: not window.isMinimized(), timeout=10, what="the window back")
    window.on_run_selected(run_id)
    assert window.worker is not None
    await window.worker.wait()  # the replay
    replayed = model.rowCount()
    window.timeline.selectRow(replayed - 2)  # the last observation: the greeting on screen
    await thumbnails_loaded(window, replayed)
    await until(lambda: window.detail.screenshot.image is not None, timeout=10)
    await settle()
    save(window.grab(), out / picture("replay", language))

    # the run saved as a routine (its typed greeting a parameter), in the Routines list
    from desktop_agent.host import routines as service

    typed = [s.index for s in await engine.run(agent.repo.list_steps(run_id))
             if s.kind.value == "action" and s.tool == "type_text"]  # fmt: skip
    await engine.run(service.save_from_run(agent.repo, agent.registry, run_id, "greet-in-editor",
                                           {"greeting": typed}, grants=["click"]))  # fmt: skip
    await desktop.routines.refresh()
    window.routines.show_note("Saved routine greet-in-editor (3 steps).")
    await settle()
    save(window.grab(), out / picture("routines-list", language))
    await desktop.close()
    await server.close()
    return 0


async def click_into_editor(request: Any) -> Any:
    from tests.fakes import tool

    observation = request.observation
    box = editor_box(observation)
    x, y = box[0] + box[2] // 2, box[1] + box[3] // 2
    return tool("click", x=x, y=y, reason="The editor's text area is empty; put the cursor there.")


async def type_greeting(request: Any) -> Any:
    from tests.fakes import tool

    return tool("type_text", text=TEXT, reason="The cursor is in the editor; write the greeting.")


def editor_box(observation: Any) -> tuple[int, int, int, int]:
    """The editor window's box in screenshot pixels (from the inventory, else xdotool)."""
    for element in observation.elements:
        if "l3afpad" in element.name.lower() or "untitled" in element.name.lower():
            return element.box
    geometry = subprocess.run(
        ["xdotool", "search", "--onlyvisible", "--class", "l3afpad", "getwindowgeometry", "%@"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    position = geometry.split("Position: ")[1].split()[0]
    size = geometry.split("Geometry: ")[1].split()[0]
    left, top = (int(v) for v in position.split(","))
    width, height = (int(v) for v in size.split("x"))
    x0, y0 = observation.mapping.to_image(left, top)
    x1, y1 = observation.mapping.to_image(left + width, top + height)
    return x0, y0, x1 - x0, y1 - y0


async def thumbnails_loaded(window: Any, rows: int) -> None:
    from desktop_agent.ui.timeline import TimelineModel
    from tests.gui.fake_agent import until

    model = window.timeline_model

    def loaded() -> bool:
        cells = [model.index(row, TimelineModel.SCREEN) for row in range(rows)]
        wanted = [
            c for c in cells if (s := model.step_at(c.row())) and (s.thumbnail or s.screenshot)
        ]
        return all(c.data(1) is not None for c in wanted)

    await until(loaded, timeout=10, what="the thumbnails")


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0.05)


def save(pixmap: Any, path: Path) -> None:
    if not pixmap.save(str(path), "PNG"):
        raise RuntimeError(f"could not write {path}")


if __name__ == "__main__":
    sys.exit(main())
