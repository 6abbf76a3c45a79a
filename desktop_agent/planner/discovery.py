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

Any local process may answer on a probed port, so an answer is held to what a model server
says, and nothing in it may stall the loop that also delivers the stop (DESIGN §7): a body
of at most MAX_BODY_BYTES, parsed off the loop when it is not small
(`capabilities.parse_json`); at most MAX_MODELS models per server (the first listed, judged
in turns); a name of at most MAX_NAME_CHARS with no control, bidi or blank-looking character
(`core.text.visible`: any other is not a name a person could tell apart, or pick); at most
MAX_SHOWS `/api/show` questions, SHOW_CONCURRENCY at a time (the models beyond are judged
by their name).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Iterable, Iterator, Sequence
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
from desktop_agent.core.text import visible
from desktop_agent.planner.capabilities import (
    lmstudio_verdict,
    name_suggests_vision,
    ollama_verdict,
    parse_json,
    read_capped,
)
from desktop_agent.planner.profiles import resolve_profile

if TYPE_CHECKING:
    import aiohttp

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
#: the whole look ends by then, whatever a port does (an answer of a running server on
#: loopback takes milliseconds; a model list of Ollama with /api/show per model, tens)
DEADLINE_S = 1.5
#: the models of one server that are considered (Ollama users keep tens; more is not a list
#: a person picks from)
MAX_MODELS = 256
#: a longer "name" is not a model's (Ollama's longest are tens of characters)
MAX_NAME_CHARS = 200
#: /api/show questions per server, and how many at once
MAX_SHOWS = 32
SHOW_CONCURRENCY = 4
#: an answer of discovery: Ollama's list of MAX_MODELS models with their details is ~100 KB;
#: a bigger one is no answer (a list of 60,000 names is ~900 KB)
MAX_BODY_BYTES = 256 * 1024
#: models judged between two chances for the loop to deliver a stop
JUDGE_TURN = 16


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
            models = await _judged(_typed_models(typed))
            return FoundServer("lmstudio", "LM Studio", base_url, models)
        listed = _entries(listing)
        if not listed and not _is_model_list(listing):
            return None
        if any("type" in item for item in listed):  # an LM Studio-like list on /v1/models
            models = await _judged(_typed_models(listed))
            return FoundServer("lmstudio", "LM Studio", base_url, models)
        owner = str(listed[0].get("owned_by", "")).lower() if listed else ""
        if owner == "llamacpp":
            modalities = await self._json("GET", f"{root}/props")
            models = await _judged(_llamacpp_models(listed, modalities))
            return FoundServer("llamacpp", "llama.cpp server", base_url, models)
        kind, label = ("vllm", "vLLM") if owner == "vllm" else ("openai", entry.label)
        return FoundServer(kind, label, base_url, await _judged(_named_models(listed)))

    async def _ollama_models(self, root: str, listed: list[Any]) -> tuple[FoundModel, ...]:
        names = _names(
            item.get("name") or item.get("model")
            for item in listed[:MAX_MODELS]
            if isinstance(item, dict)
        )
        slots = asyncio.Semaphore(SHOW_CONCURRENCY)

        async def show(name: str) -> Any:
            async with slots:
                return await self._json("POST", f"{root}/api/show", {"model": name})

        shows = [asyncio.ensure_future(show(name)) for name in names[:MAX_SHOWS]]
        if shows:
            # what has not answered by the deadline is judged by its name
            await asyncio.wait(shows, timeout=max(0.0, self._left() - 0.05))
        answers = []
        for asked in shows:
            done = asked.done() and not asked.cancelled()
            answers.append(asked.result() if done else None)
            asked.cancel()
        return await _judged(_ollama_found(names, answers))

    async def _json(self, method: str, url: str, body: Any = None) -> Any:
        """The JSON of a 200 answer of at most MAX_BODY_BYTES, else None (any failure: this
        port cannot tell); no key, no redirect, by the deadline."""
        import aiohttp

        try:
            async with self._http.request(
                method,
                url,
                json=body,
                allow_redirects=False,
                timeout=aiohttp.ClientTimeout(total=max(0.001, self._left())),
            ) as response:
                if response.status != 200:
                    return None
                read = await read_capped(response, MAX_BODY_BYTES)
            return None if read is None else await parse_json(read)
        except (aiohttp.ClientError, TimeoutError, ValueError) as error:
            log.debug("probe %s %s: %s", method, url, type(error).__name__)
            return None


async def _judged(models: Iterator[FoundModel | None]) -> tuple[FoundModel, ...]:
    """The models judged in turns of JUDGE_TURN (a profile by name is ~50 µs), the loop
    free between them to deliver a stop; None is a model that is not listed."""
    judged = []
    for index, model in enumerate(models, start=1):
        if model is not None:
            judged.append(model)
        if index % JUDGE_TURN == 0:
            await asyncio.sleep(0)
    return _ordered(judged)


def _names(values: Iterable[Any]) -> list[str]:
    """Of the first MAX_MODELS values, those that can be model names, each once: a string of
    at most MAX_NAME_CHARS that shows as it is (no control, bidi or blank-looking character)."""
    names: dict[str, None] = {}
    for value in itertools.islice(values, MAX_MODELS):
        if (
            isinstance(value, str)
            and value.strip()
            and len(value) <= MAX_NAME_CHARS
            and visible(value) == value
        ):
            names[value] = None
    return list(names)


def _ollama_found(names: list[str], answers: list[Any]) -> Iterator[FoundModel | None]:
    """The chat models of an Ollama by its /api/show `answers` (None: none, or not asked),
    in the order of `names`."""
    for name, data in itertools.zip_longest(names, answers):
        capabilities = data.get("capabilities") if isinstance(data, dict) else None
        if isinstance(capabilities, list) and "completion" not in capabilities:
            yield None  # an embedding model: it cannot chat
            continue
        verdict = ollama_verdict(data)
        if verdict is None:
            yield _by_name(name)
        else:
            yield _model(name, verdict.can_see, "ollama", verdict.detail)


def _entries(data: Any) -> list[dict[str, Any]]:
    """The entries of an OpenAI-style list answer ({"data": [{"id": ...}, ...]}): the first
    MAX_MODELS whose id can be a model's name (`_names`)."""
    if not _is_model_list(data):
        return []
    items = [item for item in data["data"][:MAX_MODELS] if isinstance(item, dict)]
    named = {name: None for name in _names(item.get("id") for item in items)}
    entries = []
    for item in items:
        if item.get("id") in named:
            named.pop(item["id"])
            entries.append(item)
    return entries


def _is_model_list(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("data"), list)


def _typed_models(entries: list[dict[str, Any]]) -> Iterator[FoundModel | None]:
    for entry in entries:
        if str(entry.get("type", "")).startswith("embedding"):
            yield None
            continue
        verdict = lmstudio_verdict(entry)
        yield _model(str(entry["id"]), verdict.can_see, "lmstudio", verdict.detail)


def _llamacpp_models(entries: list[dict[str, Any]], props: Any) -> Iterator[FoundModel | None]:
    """llama.cpp serves one model; its /props says whether a vision projector is loaded."""
    modalities = props.get("modalities") if isinstance(props, dict) else None
    vision = modalities.get("vision") if isinstance(modalities, dict) else None
    if not isinstance(vision, bool):
        yield from _named_models(entries)
        return
    detail = (
        "llama.cpp has a vision projector loaded"
        if vision
        else "llama.cpp has no vision projector loaded (--mmproj)"
    )
    for entry in entries:
        yield _model(str(entry["id"]), vision, "llamacpp", detail)


def _named_models(entries: list[dict[str, Any]]) -> Iterator[FoundModel | None]:
    for entry in entries:
        yield _by_name(str(entry["id"]))


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
