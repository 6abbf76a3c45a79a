"""A first run on the command line: `doctor` ends with the model servers on this machine and the
exact options to use one (or the ways to get one); `run` against a server that is not there
says, in its one line, which servers do answer here. The probe ports are free loopback ports
(DESKTOP_AGENT_PROBE_PORTS), with servers that answer like Ollama, LM Studio and a plain
OpenAI-compatible server."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from desktop_agent.cli import EXIT_REFUSED
from desktop_agent.launch import main
from tests.support.model_server import ModelServer, serve_in_thread


@pytest.fixture(autouse=True)
def home(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-reach-a-probe")
    return isolated_home


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[ModelServer, ...]]:
    """Ollama, LM Studio and a plain server on free ports, which are the ports probed."""
    made = (
        ModelServer(
            ollama={"llama3.2:3b": ["completion"], "qwen2.5vl:7b": ["completion", "vision"]},
            models=("llama3.2:3b", "qwen2.5vl:7b"),
        ),
        ModelServer(lmstudio=[{"id": "qwen2-vl-7b-instruct", "type": "vlm"}]),
        ModelServer(models=("mistral-7b-instruct",)),
    )
    with ExitStack() as stack:
        for server in made:
            stack.enter_context(serve_in_thread(server))
        ports = [_closed_port(), *(server.port for server in made)]
        monkeypatch.setenv("DESKTOP_AGENT_PROBE_PORTS", ",".join(map(str, ports)))
        yield made


def test_doctor_ends_with_the_servers_found_and_the_exact_options(
    servers: tuple[ModelServer, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    ollama, lmstudio, plain = servers
    main(["doctor"])
    out = capsys.readouterr().out
    tail = out[out.index("model servers on this machine") :].splitlines()
    assert tail[1] == f"  Ollama at {ollama.base_url}: 2 chat model(s)"
    assert tail[2].split() == ["qwen2.5vl:7b", "sees", "profile", "qwen2.5-vl-ollama"]
    assert tail[3].split() == ["llama3.2:3b", "no", "vision", "profile", "generic"]
    assert tail[4] == f"  LM Studio at {lmstudio.base_url}: 1 chat model(s)"
    assert tail[6] == f"  OpenAI-compatible server at {plain.base_url}: 1 chat model(s)"
    assert tail[7].split() == ["mistral-7b-instruct", "vision", "unknown", "profile", "generic"]
    assert tail[-1] == (
        f'use it: desktop-agent run "GOAL" --base-url {ollama.base_url} --model qwen2.5vl:7b'
    )
    for server in servers:
        assert all(authorization is None for _, _, authorization in server.heard)


def test_doctor_with_no_server_says_the_ways_to_get_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ports = [_closed_port(), _closed_port()]
    monkeypatch.setenv("DESKTOP_AGENT_PROBE_PORTS", ",".join(map(str, ports)))
    assert main(["doctor"]) == 1  # the model check fails: nothing answers
    out = capsys.readouterr().out
    tail = out[out.index("no model server answers on this machine") :].splitlines()
    assert tail[0] == f"no model server answers on this machine (ports {ports[0]}, {ports[1]})"
    assert tail[1] == "ways to get one:"
    assert "      ollama pull qwen2.5vl" in tail
    assert "      lms server start" in tail
    assert "      --base-url https://api.openai.com/v1 --model gpt-4.1-mini" in tail


def test_run_against_a_server_that_is_not_there_names_the_servers_that_are(
    servers: tuple[ModelServer, ...], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ollama, lmstudio, plain = servers
    gone = f"http://127.0.0.1:{_closed_port()}/v1"
    code = main(["run", "open the editor", "--base-url", gone, "--data-dir", str(tmp_path)])
    assert code == EXIT_REFUSED
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert err.strip() == (
        f"desktop-agent: model server at {gone} is not reachable: connection refused; "
        f"found Ollama at {ollama.base_url} (qwen2.5vl:7b sees); LM Studio at "
        f"{lmstudio.base_url} (qwen2-vl-7b-instruct sees); OpenAI-compatible server at "
        f"{plain.base_url} (no model that sees); use it with: --base-url {ollama.base_url} "
        "--model qwen2.5vl:7b"
    )
    assert main(["runs", "--json", "--data-dir", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out) == [], "a refused run is still forgotten"
    for server in servers:
        assert all(authorization is None for _, _, authorization in server.heard)
        assert not server.requests, "no chat request"


def test_run_with_no_server_anywhere_says_how_to_get_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    port = _closed_port()
    monkeypatch.setenv("DESKTOP_AGENT_PROBE_PORTS", str(port))
    gone = f"http://127.0.0.1:{_closed_port()}/v1"
    assert main(["run", "x", "--base-url", gone, "--data-dir", str(tmp_path)]) == EXIT_REFUSED
    err = capsys.readouterr().err.strip()
    assert err == (
        f"desktop-agent: model server at {gone} is not reachable: connection refused; "
        f"no model server answers on this machine (ports {port}); start one, e.g. "
        "`ollama serve` then `ollama pull qwen2.5vl` (see the README)"
    )
