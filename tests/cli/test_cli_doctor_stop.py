"""`doctor` asks the model servers (its model, then the servers on this machine); a stop while it
asks — `desktop-agent stop-all` from another process, Ctrl+C — gives up the request in flight,
nothing is asked after, and doctor ends stopped (exit 2). The real `desktop-agent doctor`
process, a real loopback model server that holds the request the test catches in flight."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from desktop_agent.cli.exits import EXIT_STOPPED
from tests.gui.fake_agent import until
from tests.support.model_server import ModelServer

ROOT = Path(__file__).resolve().parents[2]
MODEL = "some-vlm"


@pytest.fixture
async def server() -> AsyncIterator[ModelServer]:
    async with ModelServer(models=(MODEL,), ollama={MODEL: ["completion", "vision"]}) as made:
        made.hold("/v1/models")
        yield made
        made.release()


def environment(home: Path, server: ModelServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DESKTOP_AGENT_")}
    env.pop("DISPLAY", None)  # the desktop's checks say "no display" at once
    return {
        **env,
        "DESKTOP_AGENT_HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "DESKTOP_AGENT_PROBE_PORTS": str(server.port),  # the look for servers asks it too
    }


async def desktop_agent(env: dict[str, str], *words: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "desktop_agent",
        *words,
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def stop_all_elsewhere(env: dict[str, str], doctor: asyncio.subprocess.Process) -> None:
    stop_all = await desktop_agent(env, "stop-all")
    out, err = await asyncio.wait_for(stop_all.communicate(), 60)
    assert stop_all.returncode == 0, err


async def ctrl_c(env: dict[str, str], doctor: asyncio.subprocess.Process) -> None:
    doctor.send_signal(signal.SIGINT)


@pytest.mark.parametrize("stop", [stop_all_elsewhere, ctrl_c], ids=["stop-all", "sigint"])
async def test_a_stop_while_doctor_asks_the_model_server_ends_it_with_nothing_asked_after(
    tmp_path: Path, server: ModelServer, stop: object
) -> None:
    env = environment(tmp_path / "home", server)
    doctor = await desktop_agent(env, "doctor", "--base-url", server.base_url, "--model", MODEL)
    try:
        await until(lambda: server.heard, 60, "doctor's model check")
        asked = len(server.heard)
        await stop(env, doctor)  # type: ignore[operator]
        out, err = await asyncio.wait_for(doctor.communicate(), 30)
    finally:
        if doctor.returncode is None:
            doctor.kill()
            await doctor.wait()
    await until(lambda: server.gone, 10, "the request in flight given up")
    server.release()
    assert doctor.returncode == EXIT_STOPPED, (out, err)
    assert "stopped" in err.decode()
    assert server.heard[asked:] == []
    assert server.gone == ["/v1/models"]
