"""`desktop-agent doctor --calibrate` on an X desktop: the real window, capture and CLI.

The model is the scripted loopback server, answering in 0–1000 of the screenshot it is sent;
the calibration must find that, print the report, and Save must write it to settings.toml.
"""

from __future__ import annotations

import base64
import contextlib
import io
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from desktop_agent.core.calibration import targets_for
from tests.support.app import APP, ROOT, AppProcess, spawn_app
from tests.support.model_server import Hang, ModelServer, Reply, ScriptItem, serve_in_thread
from tests.support.xdisplay import XSession, start_xsession

pytestmark = [pytest.mark.gui, pytest.mark.desktop]

_LABEL = re.compile(r"red ring labelled ([A-Z])")
SCREEN = (1920, 1080)  # captured at the default 1280 px wide: a 1.5× downscale


def normalized_model(body: dict[str, Any]) -> ScriptItem:
    parts = body["messages"][-1]["content"]
    url = next(p["image_url"]["url"] for p in parts if p["type"] == "image_url")
    width, height = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).size
    match = _LABEL.search(body["messages"][0]["content"])
    assert match is not None
    # where a full-screen window's ring lands in the downscaled screenshot
    screen = next(t for t in targets_for(*SCREEN) if t.label == match.group(1))
    x = round(screen.x * width / SCREEN[0] / width * 1000)
    y = round(screen.y * height / SCREEN[1] / height * 1000)
    return Reply({"action": "tool", "tool": "click", "args": {"x": x, "y": y}})


@contextlib.contextmanager
def calibrating(
    tmp_path: Path, model: ModelServer, extra_env: dict[str, str] | None = None
) -> Iterator[tuple[XSession, ModelServer, AppProcess, Callable[[], str]]]:
    """`doctor --calibrate` against `model` on a desk of its own: the desk, the model's
    server, the app and what the app printed so far; all ended when the block is left."""
    session = start_xsession(*SCREEN, atspi=False)
    out_path = tmp_path / "stdout.txt"
    try:
        with serve_in_thread(model) as server:
            args = ("doctor", "--calibrate", "--base-url", server.base_url, "--model", "some-vlm")
            with (
                out_path.open("w") as out,
                spawn_app(tmp_path, *args, session=session, stdout=out,
                          extra_env=extra_env) as cli,
            ):  # fmt: skip
                yield session, server, cli, out_path.read_text
    finally:
        session.close()


def test_doctor_calibrate_finds_a_0_to_1000_model_and_save_writes_it(tmp_path: Path) -> None:
    model = ModelServer(respond=normalized_model)
    with calibrating(tmp_path, model) as (session, server, cli, said):
        cli.wait_for(lambda: "best fit: normalized" in said(), "the calibration report",
                     timeout=60)  # fmt: skip
        session.xdotool("key", "alt+s")
        cli.wait_for(lambda: "saved model_coordinates" in said(), "Save", timeout=10)
        session.xdotool("key", "Escape")
        assert cli.wait_exit(timeout=15) == 0
    assert len(server.requests) == 5
    report = said()
    assert "read as normalized mean error" in report
    lines = [line for line in report.splitlines() if " px off as normalized" in line]
    assert len(lines) == 5
    for line in lines:
        assert float(line.rsplit("→ ", 1)[1].split(" px")[0]) <= 2.0, line
    assert 'model_coordinates = "normalized"' in (tmp_path / "settings.toml").read_text()


def test_doctor_calibrate_is_stopped_by_stop_all_from_another_process(tmp_path: Path) -> None:
    """The model thinks about the first ring; `desktop-agent stop-all` (another process)
    reaches the calibration through the doctor's local API: the request is cancelled, none
    follows, the window says so; a calibration is not a run ("stopped 0 run(s)"); exit 2."""
    with calibrating(tmp_path, ModelServer(script=[Hang()])) as (session, server, cli, said):
        cli.wait_for(lambda: server.requests, "the first model request", timeout=60)
        stopped = subprocess.run(
            [*APP, "stop-all", "--data-dir", str(tmp_path)],
            cwd=ROOT, capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        assert (stopped.returncode, stopped.stdout) == (0, "stopped 0 run(s)\n")
        cli.wait_for(lambda: "Calibration stopped" in said(),
                     "the window saying it stopped", timeout=10)  # fmt: skip
        session.xdotool("key", "Escape")
        assert cli.wait_exit(timeout=15) == 2
    assert len(server.requests) == 1


def test_doctor_calibrate_speaks_the_command_lines_language(tmp_path: Path) -> None:
    # the window's own texts through Qt's translators, the command line's through its own
    chinese = {"DESKTOP_AGENT_LANGUAGE": "zh_CN"}
    model = ModelServer(respond=normalized_model)
    with calibrating(tmp_path, model, extra_env=chinese) as (session, _, cli, said):
        cli.wait_for(lambda: "在窗口中按“保存”以保留结果" in said(),
                     "the calibration report", timeout=60)  # fmt: skip
        found = session.xdotool("search", "--name", "Desktop Agent — 校准")
        assert found.split(), "no window titled in Chinese"
        session.xdotool("key", "alt+s")  # 保存(&S)
        cli.wait_for(lambda: "已在 " in said(), "Save", timeout=10)
        session.xdotool("key", "Escape")
        assert cli.wait_exit(timeout=15) == 0
    assert 'model_coordinates = "normalized"' in (tmp_path / "settings.toml").read_text()
