"""Find the model servers on this machine: the usual loopback ports, probed at once, briefly.

Each port is asked, at the same time, what Ollama (`/api/tags`), LM Studio (`/api/v0/models`)
and any OpenAI-compatible server (`/v1/models`) answer; the first shape that fits names the
server, and its chat models are listed with what is known of their vision (the rules of
`capabilities.py`: Ollama's `/api/show` capabilities, LM Studio's model type, llama.cpp's
`/props` modalities, else the known vision model names) and the profile their name picks.

Nothing leaves the machine: the host is 127.0.0.1 and nothing else, no proxy from the
environment is used, redirects are not followed, and no API key (no header at all) is
sent. A port where nothing listens answers at once (connection refused); one that takes
the connection but not the question is given up at the deadline.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from desktop_agent.core.errors import ModelUnreachable
from desktop_agent.core.model_servers import (
    DEFAULT_PORT_NUMBERS,
    DEFAULT_PORTS,
    Discovery,
    FoundModel,
    FoundServer,
    ServerPort,
)
from desktop_agent.planner.capabilities import (
    json_answer,
    lmstudio_verdict,
    name_suggests_vision,
    ollama_verdict,
)
from desktop_agent.planner.profiles import resolve_profile

if TYPE_CHECKING:
    import aiohttp

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
#: the whole look ends by then, whatever a port does (an answer of a running server on
#: loopback takes milliseconds; a model list of Ollama with /api/show per model, tens)
DEADLINE_S = 1.5


_KNOWN = {entry.port: entry for entry in DEFAULT_PORTS}


def server_ports(ports: Sequence[int]) -> tuple[ServerPort, ...]:
    """The ports in order, each once, named when it is a usual one."""
    seen: dict[int, ServerPort] = {}
    for port in ports:
        if port not in seen:
            seen[port] = _KNOWN.get(port, ServerPort(port))
    return tuple(seen.values())


async def discover(
    ports: Sequence[int] = DEFAULT_PORT_NUMBERS, *, deadline_s: float = DEADLINE_S
) -> Discovery:
    """Every model server answering on `ports` of 127.0.0.1, within `deadline_s`."""
    import aiohttp

    started = time.perf_counter()
    probes = server_ports(ports)
    until = asyncio.get_running_loop().time() + deadline_s
    # trust_env=False: no HTTP(S)_PROXY from the environment — the question stays on loopback
    async with aiohttp.ClientSession(trust_env=False) as http:
        asker = _Asker(http, until)
        found = await asyncio.gather(*(asker.probe(entry) for entry in probes))
    servers = tuple(server for server in found if server is not None)
    elapsed = time.perf_counter() - started
    log.info(
        "model servers on ports %s: %s (%.0f ms)",
        ",".join(str(entry.port) for entry in probes),
        ", ".join(f"{s.label} at {s.address}" for s in servers) or "none",
        elapsed * 1000,
    )
    return Discovery(servers, tuple(entry.port for entry in probes), elapsed)


async def with_servers_found(
    error: ModelUnreachable, ports: Sequence[int] = DEFAULT_PORT_NUMBERS
) -> ModelUnreachable:
    """`error` again, its line ending with what does answer on this machine (`found` set)."""
    found = await discover(ports)
    return ModelUnreachable(f"{error}; {found.summary()}", found)


class _Asker:
    """The questions to one port's server, all ending by `until` (the loop's clock)."""

    def __init__(self, http: aiohttp.ClientSession, until: float) -> None:
        self._http = http
        self._until = until

    def _left(self) -> float:
        return max(0.0, self._until - asyncio.get_running_loop().time())

    async def probe(self, entry: ServerPort) -> FoundServer | None:
        try:
            return await asyncio.wait_for(self._identify(entry), self._left())
        except TimeoutError:
            log.debug("port %d: no answer within the deadline", entry.port)
            return None

    async def _identify(self, entry: ServerPort) -> FoundServer | None:
        root = f"http://{LOOPBACK}:{entry.port}"
        tags, lmstudio, listing = await asyncio.gather(
            self._json("GET", f"{root}/api/tags"),
            self._json("GET", f"{root}/api/v0/models"),
            self._json("GET", f"{root}/v1/models"),
        )
        base_url = f"{root}/v1"
        if isinstance(tags, dict) and isinstance(tags.get("models"), list):
            models = await self._ollama_models(root, tags["models"])
            return FoundServer("ollama", "Ollama", base_url, models)
        typed = [entry for entry in _entries(lmstudio) if "type" in entry]
        if typed:
            return FoundServer("lmstudio", "LM Studio", base_url, _typed_models(typed))
        listed = _entries(listing)
        if not listed and not _is_model_list(listing):
            return None
        if any("type" in item for item in listed):  # an LM Studio-like list on /v1/models
            return FoundServer("lmstudio", "LM Studio", base_url, _typed_models(listed))
        owner = str(listed[0].get("owned_by", "")).lower() if listed else ""
        if owner == "llamacpp":
            modalities = await self._json("GET", f"{root}/props")
            return FoundServer(
                "llamacpp", "llama.cpp server", base_url, _llamacpp_models(listed, modalities)
            )
        kind, label = ("vllm", "vLLM") if owner == "vllm" else ("openai", entry.label)
        return FoundServer(kind, label, base_url, _named_models(listed))

    async def _ollama_models(self, root: str, listed: list[Any]) -> tuple[FoundModel, ...]:
        names = [
            str(item.get("name") or item.get("model"))
            for item in listed
            if isinstance(item, dict) and (item.get("name") or item.get("model"))
        ]
        shows = [
            asyncio.ensure_future(self._json("POST", f"{root}/api/show", {"model": name}))
            for name in names
        ]
        if shows:
            # what has not answered by the deadline is judged by its name
            await asyncio.wait(shows, timeout=max(0.0, self._left() - 0.05))
        models = []
        for name, show in zip(names, shows, strict=True):
            data = show.result() if show.done() and not show.cancelled() else None
            show.cancel()
            capabilities = data.get("capabilities") if isinstance(data, dict) else None
            if isinstance(capabilities, list) and "completion" not in capabilities:
                continue  # an embedding model: it cannot chat
            verdict = ollama_verdict(data)
            if verdict is None:
                models.append(_by_name(name))
            else:
                models.append(_model(name, verdict.can_see, "ollama", verdict.detail))
        return _ordered(models)

    async def _json(self, method: str, url: str, body: Any = None) -> Any:
        """The JSON of a 200 answer, else None; no key, by the deadline."""
        return await json_answer(self._http, method, url, None, body, timeout_s=self._left())


def _entries(data: Any) -> list[dict[str, Any]]:
    """The entries of an OpenAI-style list answer ({"data": [{"id": ...}, ...]})."""
    if not _is_model_list(data):
        return []
    return [item for item in data["data"] if isinstance(item, dict) and item.get("id")]


def _is_model_list(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("data"), list)


def _typed_models(entries: list[dict[str, Any]]) -> tuple[FoundModel, ...]:
    models = []
    for entry in entries:
        if str(entry.get("type", "")).startswith("embedding"):
            continue
        verdict = lmstudio_verdict(entry)
        models.append(_model(str(entry["id"]), verdict.can_see, "lmstudio", verdict.detail))
    return _ordered(models)


def _llamacpp_models(entries: list[dict[str, Any]], props: Any) -> tuple[FoundModel, ...]:
    """llama.cpp serves one model; its /props says whether a vision projector is loaded."""
    modalities = props.get("modalities") if isinstance(props, dict) else None
    vision = modalities.get("vision") if isinstance(modalities, dict) else None
    if not isinstance(vision, bool):
        return _named_models(entries)
    detail = (
        "llama.cpp has a vision projector loaded"
        if vision
        else "llama.cpp has no vision projector loaded (--mmproj)"
    )
    return _ordered([_model(str(e["id"]), vision, "llamacpp", detail) for e in entries])


def _named_models(entries: list[dict[str, Any]]) -> tuple[FoundModel, ...]:
    return _ordered([_by_name(str(entry["id"])) for entry in entries])


def _by_name(name: str) -> FoundModel:
    if name_suggests_vision(name):
        return _model(name, True, "name", f"{name!r} is a known vision model name")
    return _model(name, None, "unknown", "the server does not say, and the name is not known")


def _model(name: str, can_see: bool | None, source: str, detail: str) -> FoundModel:
    return FoundModel(name, can_see, source, detail, resolve_profile(name).name)


def _ordered(models: list[FoundModel]) -> tuple[FoundModel, ...]:
    """Those that see first, then the unknown, then the rest; by name within each."""
    rank = {True: 0, None: 1, False: 2}
    return tuple(sorted(models, key=lambda m: (rank[m.can_see], m.name.lower())))
