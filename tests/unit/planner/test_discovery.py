"""Finding model servers on loopback: Ollama, LM Studio and plain OpenAI-compatible servers on
free ports are found with their models' vision and profile; nothing listening, a server that
never answers, a proxy in the environment and an API key change nothing of that."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from desktop_agent.core.model_servers import (
    DEFAULT_PORT_NUMBERS,
    Discovery,
    FoundModel,
    FoundServer,
    run_options,
)
from desktop_agent.planner.discovery import discover, server_ports
from tests.support.model_server import ModelServer
from tests.unit.planner.conftest import closed_port

OLLAMA_MODELS = {
    "llama3.2:3b": ["completion", "tools"],
    "qwen2.5vl:7b": ["completion", "vision"],
    "nomic-embed-text:latest": ["embedding"],
}
LMSTUDIO_MODELS = [
    {"id": "meta-llama-3.1-8b-instruct", "object": "model", "type": "llm"},
    {"id": "qwen2-vl-7b-instruct", "object": "model", "type": "vlm"},
    {"id": "text-embedding-nomic-embed-text-v1.5", "object": "model", "type": "embeddings"},
]


@pytest.fixture
async def three() -> AsyncIterator[tuple[ModelServer, ModelServer, ModelServer]]:
    """An Ollama, an LM Studio and a plain OpenAI-compatible server, each on a free port."""
    ollama = ModelServer(ollama=OLLAMA_MODELS, models=tuple(OLLAMA_MODELS))
    lmstudio = ModelServer(lmstudio=LMSTUDIO_MODELS, models=("qwen2-vl-7b-instruct",))
    plain = ModelServer(models=("mistral-7b-instruct", "gpt-4o-mini"))
    async with ollama, lmstudio, plain:
        yield ollama, lmstudio, plain


def _model(server: FoundServer, name: str) -> FoundModel:
    return next(model for model in server.models if model.name == name)


async def test_ollama_lmstudio_and_a_plain_server_are_found_with_vision_and_profile(
    three: tuple[ModelServer, ModelServer, ModelServer],
) -> None:
    ollama, lmstudio, plain = three
    nothing = closed_port()
    found = await discover([nothing, ollama.port, lmstudio.port, plain.port])

    assert found.ports == (nothing, ollama.port, lmstudio.port, plain.port)
    assert [(s.kind, s.base_url) for s in found.servers] == [
        ("ollama", ollama.base_url),
        ("lmstudio", lmstudio.base_url),
        ("openai", plain.base_url),
    ]
    on_ollama, on_lmstudio, on_plain = found.servers
    # the embedding models cannot chat: not listed; those that see come first
    assert [m.name for m in on_ollama.models] == ["qwen2.5vl:7b", "llama3.2:3b"]
    seeing = _model(on_ollama, "qwen2.5vl:7b")
    assert (seeing.can_see, seeing.vision_source, seeing.profile) == (
        True,
        "ollama",
        "qwen2.5-vl-ollama",
    )
    blind = _model(on_ollama, "llama3.2:3b")
    assert (blind.can_see, blind.vision_source, blind.profile) == (False, "ollama", "generic")
    assert [m.name for m in on_lmstudio.models] == [
        "qwen2-vl-7b-instruct",
        "meta-llama-3.1-8b-instruct",
    ]
    assert [m.can_see for m in on_lmstudio.models] == [True, False]
    assert on_lmstudio.seeing[0].vision_source == "lmstudio"
    # a plain server says nothing: the name rules judge, and "unknown" is not a yes
    assert [(m.name, m.can_see, m.vision_source) for m in on_plain.models] == [
        ("gpt-4o-mini", True, "name"),
        ("mistral-7b-instruct", None, "unknown"),
    ]
    assert _model(on_plain, "gpt-4o-mini").profile == "openai"
    best = found.best()
    assert best is not None
    assert (best[0].kind, best[1].name) == ("ollama", "qwen2.5vl:7b")


async def test_an_lmstudio_list_with_types_on_v1_models_is_lm_studio() -> None:
    typed = [{"id": "qwen2-vl-7b-instruct", "type": "vlm"}, {"id": "phi-3", "type": "llm"}]

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": typed})

    app = web.Application()
    app.router.add_get("/v1/models", models)
    async with _serving(app) as port:
        found = await discover([port])
    assert [(s.kind, [m.can_see for m in s.models]) for s in found.servers] == [
        ("lmstudio", [True, False])
    ]


async def test_a_llamacpp_server_says_by_its_props_whether_it_can_see() -> None:
    vision = {"value": False}

    async def models(request: web.Request) -> web.Response:
        entry = {"id": "qwen2.5-vl-7b.gguf", "object": "model", "owned_by": "llamacpp"}
        return web.json_response({"object": "list", "data": [entry]})

    async def props(request: web.Request) -> web.Response:
        return web.json_response({"modalities": {"vision": vision["value"], "audio": False}})

    app = web.Application()
    app.router.add_get("/v1/models", models)
    app.router.add_get("/props", props)
    async with _serving(app) as port:
        without = await discover([port])
        vision["value"] = True
        with_projector = await discover([port])
    # the name says vision, but the server says no projector is loaded: final
    assert [(m.can_see, m.vision_source) for m in without.servers[0].models] == [
        (False, "llamacpp")
    ]
    assert without.servers[0].label == "llama.cpp server"
    assert with_projector.servers[0].models[0].can_see is True


async def test_nothing_listening_is_nothing_found_quickly() -> None:
    ports = [closed_port() for _ in range(5)]
    found = await discover(ports)
    assert found.servers == ()
    assert found.best() is None
    assert found.elapsed_s < 1.0  # connection refused at once (the figure: benchmarks/)
    assert found.lines() == [
        f"no model server answers on this machine (ports {', '.join(map(str, ports))})"
    ]


async def test_a_port_that_never_answers_is_given_up_at_the_deadline_and_others_are_found(
    three: tuple[ModelServer, ModelServer, ModelServer],
) -> None:
    ollama, _, _ = three
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # takes connections (the kernel does), never reads or answers
    try:
        loop = asyncio.get_running_loop()
        started = loop.time()
        found = await discover([silent.getsockname()[1], ollama.port], deadline_s=0.4)
        took = loop.time() - started
    finally:
        silent.close()
    assert [s.kind for s in found.servers] == ["ollama"]
    assert 0.35 <= took < 1.5


async def test_no_key_and_no_proxy_reach_a_probe(
    three: tuple[ModelServer, ModelServer, ModelServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    ollama, lmstudio, plain = three
    heard_by_proxy: list[str] = []

    async def proxy(request: web.Request) -> web.Response:
        heard_by_proxy.append(str(request.url))
        return web.Response(status=502)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", proxy)
    async with _serving(app) as proxy_port:
        for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY"):
            monkeypatch.setenv(name, f"http://127.0.0.1:{proxy_port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-must-not-travel")
        found = await discover([ollama.port, lmstudio.port, plain.port])
    assert len(found.servers) == 3
    assert heard_by_proxy == []
    for server in three:
        assert server.heard, "each server was asked"
        assert all(authorization is None for _, _, authorization in server.heard)
        # only reading questions: lists, /api/show, /props — never a chat completion
        assert {path for _, path, _ in server.heard} <= {
            "/api/tags",
            "/api/v0/models",
            "/v1/models",
            "/api/show",
            "/props",
        }


async def test_an_ollama_without_models_is_found_and_the_advice_says_how_to_get_one() -> None:
    async with ModelServer(ollama={}, models=()) as empty:
        found = await discover([empty.port])
    assert [(s.kind, s.models) for s in found.servers] == [("ollama", ())]
    assert found.best() is None
    assert "ollama pull qwen2.5vl" in found.advice()
    assert found.lines()[0] == f"Ollama at {empty.base_url}: no chat model"


def test_the_usual_ports_are_named_once_each() -> None:
    assert DEFAULT_PORT_NUMBERS == (11434, 1234, 8080, 8000, 1337)
    named = server_ports([8080, 11434, 8080, 5000])
    assert [(p.port, p.label) for p in named] == [
        (8080, "llama.cpp server or LocalAI"),
        (11434, "Ollama"),
        (5000, "OpenAI-compatible server"),
    ]


def test_the_advice_names_the_exact_options_and_the_summary_is_one_line() -> None:
    sees = FoundModel("qwen2.5vl:7b", True, "ollama", "", "qwen2.5-vl-ollama")
    blind = FoundModel("llama3.2", False, "ollama", "", "generic")
    server = FoundServer("ollama", "Ollama", "http://127.0.0.1:11434/v1", (sees, blind))
    found = Discovery((server,), (11434,))
    assert run_options(server, sees) == "--base-url http://127.0.0.1:11434/v1 --model qwen2.5vl:7b"
    assert found.advice() == f"use it with: {run_options(server, sees)}"
    assert found.summary() == "found Ollama at http://127.0.0.1:11434/v1 (qwen2.5vl:7b sees)"
    assert found.lines()[1].split() == ["qwen2.5vl:7b", "sees", "profile", "qwen2.5-vl-ollama"]
    assert Discovery((), (11434, 1234)).summary() == (
        "no model server answers on this machine (ports 11434, 1234)"
    )
    blind_only = FoundServer("openai", "vLLM", "http://127.0.0.1:8000/v1", (blind,))
    assert Discovery((blind_only,), (8000,)).summary() == (
        "found vLLM at http://127.0.0.1:8000/v1 (no model that sees)"
    )


async def test_an_unreachable_server_s_error_says_what_answers_instead(
    three: tuple[ModelServer, ModelServer, ModelServer],
) -> None:
    from desktop_agent.core.errors import ModelUnreachable
    from desktop_agent.planner import check_reachable
    from desktop_agent.planner.discovery import with_servers_found

    ollama, lmstudio, _ = three
    gone = f"http://127.0.0.1:{closed_port()}/v1"
    with pytest.raises(ModelUnreachable) as caught:
        await check_reachable(gone, None)
    better = await with_servers_found(caught.value, [closed_port(), lmstudio.port, ollama.port])
    assert str(better) == (
        f"model server at {gone} is not reachable: connection refused; found LM Studio at "
        f"{lmstudio.base_url} (qwen2-vl-7b-instruct sees); Ollama at {ollama.base_url} "
        "(qwen2.5vl:7b sees)"
    )
    assert better.found is not None and better.found.best()[1].name == "qwen2-vl-7b-instruct"


class _serving:  # noqa: N801 - used as a context manager, like a function
    """An aiohttp app on a free loopback port while the block runs; yields the port."""

    def __init__(self, app: web.Application) -> None:
        self._runner = web.AppRunner(app, access_log=None)

    async def __aenter__(self) -> int:
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        return int(self._runner.addresses[0][1])

    async def __aexit__(self, *exc: object) -> None:
        await self._runner.cleanup()


def test_the_probe_ports_setting_takes_a_list_or_the_variable_s_comma_list(tmp_path: Path) -> None:
    from desktop_agent.core.errors import ConfigError
    from desktop_agent.settings import Settings, load_settings

    assert Settings().probe_ports == list(DEFAULT_PORT_NUMBERS)
    missing = tmp_path / "none.toml"
    env = {"DESKTOP_AGENT_PROBE_PORTS": "5000, 11434,5000"}
    assert load_settings(missing, env=env).probe_ports == [5000, 11434]
    with pytest.raises(ConfigError, match=r"probe_ports .*not a port: 70000"):
        load_settings(missing, env={"DESKTOP_AGENT_PROBE_PORTS": "70000"})


def test_the_ways_to_get_a_server_fit_the_platform() -> None:
    from desktop_agent.core.model_servers import ways_to_get_one

    linux = ways_to_get_one("linux")
    assert [way.title.split(" —")[0] for way in linux] == [
        "Ollama",
        "LM Studio",
        "A hosted OpenAI-compatible service",
    ]
    assert linux[0].commands[0] == "curl -fsSL https://ollama.com/install.sh | sh"
    windows = ways_to_get_one("win32")
    assert windows[0].commands == ("ollama pull qwen2.5vl", "ollama pull qwen2.5vl:3b")
    assert "https://ollama.com/download" in windows[0].note
    assert windows[2].commands[0] == "setx OPENAI_API_KEY sk-…"


async def test_the_model_check_reads_the_server_s_model_list() -> None:
    from desktop_agent.core.errors import ModelNotListed
    from desktop_agent.planner import check_reachable
    from desktop_agent.planner.capabilities import ensure_listed, model_listed

    async with ModelServer(models=("llava:7b", "qwen2.5vl:latest")) as server:
        listed = await check_reachable(server.base_url, None)
    assert listed == ["llava:7b", "qwen2.5vl:latest"]
    assert model_listed("qwen2.5vl", listed)  # Ollama: "name" is "name:latest"
    assert model_listed("LLaVA:7b", listed)
    assert not model_listed("llava", listed)  # Ollama would look for llava:latest
    assert model_listed("gemini-2.5-flash", ["models/gemini-2.5-flash"])
    ensure_listed("llava", server.base_url, None)  # a server that lists nothing: no claim
    with pytest.raises(ModelNotListed) as caught:
        ensure_listed("qwen2.5vl:3b", server.base_url, listed)
    assert str(caught.value) == (
        f"model 'qwen2.5vl:3b' is not among the models of the server at {server.base_url} "
        "(it lists: llava:7b, qwen2.5vl:latest)"
    )
