"""Can the model see, and does its server answer? Checked before a run, never by a chat request."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from desktop_agent.core.errors import ModelNotListed, ModelUnreachable
from desktop_agent.core.text import one_line

if TYPE_CHECKING:
    import aiohttp

    from desktop_agent.core.models import VisionSetting

_T = TypeVar("_T")

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 5.0
#: a capability answer (a model list, Ollama's /api/show) is KBs; bigger is not one
MAX_PROBE_BYTES = 4 * 1024 * 1024
#: a body up to this size is parsed on the loop (~1 ms); a bigger one on a thread (~10 ms for
#: 256 KB of small objects), in turns of PARSE_TURN objects (`_parse_in_turns`)
PARSE_ON_LOOP_BYTES = 32 * 1024
PARSE_TURN = 64

#: names of models known to take images (matched anywhere in the name, case-insensitive)
VISION_NAME_PATTERNS: tuple[str, ...] = (
    r"qwen[\d.]*-?vl",
    r"qvq",
    r"llava",
    r"gpt-4o",
    r"gpt-4\.1",
    r"gpt-4-turbo",
    r"gpt-4-vision",
    r"gpt-5",
    r"claude-3",
    r"claude-(sonnet|opus|haiku)-4",
    r"gemini",
    r"gemma-?3",
    r"pixtral",
    r"minicpm-?v",
    r"llama-?3\.2-vision",
    r"llama-?4",
    r"internvl",
    r"moondream",
    r"mistral-small-?3\.[12]",
    r"glm-?4(\.\d)?v",
    r"ui-tars",
    r"smolvlm",
    r"idefics",
    r"molmo",
    r"vision",
    r"(^|[-_:/.])vl([-_:/.]|$)",
)
_VISION_NAME = re.compile("|".join(VISION_NAME_PATTERNS), re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class VisionVerdict:
    """Whether the model can see, who said so (setting, ollama, lmstudio, name, unknown), why."""

    can_see: bool
    source: str
    detail: str


class VisionCache:
    """Verdicts per (base URL, model); one is shared by the process unless a test passes its own."""

    def __init__(self) -> None:
        self._verdicts: dict[tuple[str, str], VisionVerdict] = {}

    def get(self, base_url: str, model: str) -> VisionVerdict | None:
        return self._verdicts.get((base_url.rstrip("/"), model))

    def put(self, base_url: str, model: str, verdict: VisionVerdict) -> None:
        self._verdicts[(base_url.rstrip("/"), model)] = verdict

    def clear(self) -> None:
        self._verdicts.clear()


SHARED_VISION_CACHE = VisionCache()


def server_root(base_url: str) -> str:
    """The base URL without its trailing /v1: where Ollama's and LM Studio's own APIs live."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def name_suggests_vision(model: str) -> bool:
    return _VISION_NAME.search(model) is not None


async def key_check(base_url: str, api_key: str | None, timeout_s: float = 5) -> str:
    """ "" when the server at `base_url` takes `api_key` (GET /models, the cheapest request of
    an OpenAI-style API: no tokens), else why not, in one line."""
    import aiohttp

    if not api_key:
        return f"no API key is set for {base_url}"
    try:
        status = await _get_models(base_url, api_key, timeout_s, _status)
    except (TimeoutError, aiohttp.ClientError) as error:
        why = one_line(error) or type(error).__name__
        return f"the key could not be checked at {base_url}: {why}"
    if status in (401, 403):
        return f"{base_url} refused the API key ({status})"
    if status >= 400:
        return f"{base_url} answered {status} to GET /models with the key"
    return ""


async def _status(response: aiohttp.ClientResponse) -> int:
    return response.status


async def _get_models(
    base_url: str,
    api_key: str | None,
    timeout_s: float,
    read: Callable[[aiohttp.ClientResponse], Awaitable[_T]],
) -> _T:
    """GET `base_url`/models with the key, its answer read by `read` (aiohttp's errors raise)."""
    import aiohttp

    url = f"{base_url.rstrip('/')}/models"
    async with (
        aiohttp.ClientSession() as session,
        session.get(
            url, headers=_headers(api_key), timeout=aiohttp.ClientTimeout(total=timeout_s)
        ) as response,
    ):
        log.debug("%s answered %s", url, response.status)
        return await read(response)


def _headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


async def json_answer(
    http: aiohttp.ClientSession,
    method: str,
    url: str,
    api_key: str | None = None,
    body: Any = None,
    *,
    timeout_s: float = PROBE_TIMEOUT_S,
) -> Any:
    """The JSON body of a 200 answer, or None (any failure means: this server cannot tell).

    Redirects are not followed: a question about this server is answered by this server.
    """
    import aiohttp

    try:
        async with http.request(
            method,
            url,
            json=body,
            headers=_headers(api_key),
            allow_redirects=False,
            timeout=aiohttp.ClientTimeout(total=max(0.001, timeout_s)),
        ) as response:
            return await json_of_ok(response)
    except (aiohttp.ClientError, TimeoutError, ValueError) as error:
        log.debug("probe %s %s: %s", method, url, type(error).__name__)
        return None


async def json_of_ok(response: aiohttp.ClientResponse) -> Any:
    """The JSON of a 200 answer of at most MAX_PROBE_BYTES; None for another status or a
    bigger body. ValueError when it is not JSON, or nests too deep for the parser (its
    RecursionError would pass every caller's `except ValueError`)."""
    if response.status != 200:
        return None
    body = await read_capped(response, MAX_PROBE_BYTES)
    return None if body is None else await parse_json(body)


async def parse_json(body: bytes) -> Any:
    """`body` as JSON, parsed off the loop when it is not small (a model list of a few MB
    takes tens of ms; the loop delivers the stop); ValueError when it is not JSON, or nests
    too deep for the parser (its RecursionError would pass every `except ValueError`)."""
    import asyncio

    try:
        if len(body) <= PARSE_ON_LOOP_BYTES:
            return json.loads(body)
        return await asyncio.to_thread(_parse_in_turns, body)
    except RecursionError:
        raise ValueError("JSON nested too deep") from None


def _parse_in_turns(body: bytes) -> Any:
    """json.loads, letting the GIL go every PARSE_TURN objects: the C scanner holds it from
    one Python call to the next, and the loop waits for it to deliver a stop."""
    import time

    parsed = 0

    def turn(value: dict[str, Any]) -> dict[str, Any]:
        nonlocal parsed
        parsed += 1
        if parsed % PARSE_TURN == 0:
            time.sleep(0)  # gives the GIL to a thread that waits for it
        return value

    return json.loads(body, object_hook=turn)


async def read_capped(response: aiohttp.ClientResponse, cap: int) -> bytes | None:
    """The body of `response`, or None when it is more than `cap` bytes (read no further:
    aiohttp's `json()` / `read()` would hold a body of any size whole)."""
    length = response.content_length
    if length is not None and length > cap:
        return None
    chunks = []
    size = 0
    async for chunk in response.content.iter_chunked(65536):
        size += len(chunk)
        if size > cap:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


async def _ask_ollama(
    http: aiohttp.ClientSession, root: str, model: str, api_key: str | None
) -> VisionVerdict | None:
    data = await json_answer(
        http, "POST", f"{root}/api/show", api_key, {"model": model, "name": model}
    )
    return ollama_verdict(data)


def ollama_verdict(data: Any) -> VisionVerdict | None:
    """What Ollama's /api/show answer says of vision (None: it does not say)."""
    if not isinstance(data, dict):
        return None
    capabilities = data.get("capabilities")
    if isinstance(capabilities, list):
        listed = ", ".join(str(item) for item in capabilities) or "none"
        return VisionVerdict(
            "vision" in capabilities, "ollama", f"Ollama lists its capabilities: {listed}"
        )
    families = (data.get("details") or {}).get("families") or []
    if data.get("projector_info") or any(f in ("clip", "mllama") for f in families):
        return VisionVerdict(True, "ollama", "Ollama shows an image projector for it")
    return None


async def _ask_lmstudio(
    http: aiohttp.ClientSession, root: str, model: str, api_key: str | None
) -> VisionVerdict | None:
    data = await json_answer(http, "GET", f"{root}/api/v0/models", api_key)
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    for entry in entries:
        if isinstance(entry, dict) and str(entry.get("id", "")).lower() == model.lower():
            return lmstudio_verdict(entry)
    return None


def lmstudio_verdict(entry: dict[str, Any]) -> VisionVerdict:
    """What an entry of LM Studio's model list says of vision (its type: vlm, llm, ...)."""
    kind = str(entry.get("type", ""))
    return VisionVerdict(kind == "vlm", "lmstudio", f"LM Studio lists it as type {kind!r}")


async def _ask_servers(
    http: aiohttp.ClientSession, base_url: str, model: str, api_key: str | None
) -> VisionVerdict | None:
    root = server_root(base_url)
    return await _ask_ollama(http, root, model, api_key) or await _ask_lmstudio(
        http, root, model, api_key
    )


async def resolve_vision(
    *,
    base_url: str,
    model: str,
    api_key: str | None,
    setting: VisionSetting,
    http: aiohttp.ClientSession | None = None,
    cache: VisionCache | None = None,
) -> VisionVerdict:
    """Can `model` see? The setting, then Ollama, then LM Studio, then the model's name.

    A server that answers is final (no fall-through to names); without any answer and
    without a known name the verdict is a refusal. Never sends a chat completion.
    """
    if setting == "yes":
        return VisionVerdict(True, "setting", "marked vision-capable in the settings")
    if setting == "no":
        return VisionVerdict(False, "setting", "marked as not vision-capable in the settings")
    cache = cache if cache is not None else SHARED_VISION_CACHE
    cached = cache.get(base_url, model)
    if cached is not None:
        return cached
    if http is None:
        import aiohttp

        async with aiohttp.ClientSession() as session:
            verdict = await _ask_servers(session, base_url, model, api_key)
    else:
        verdict = await _ask_servers(http, base_url, model, api_key)
    if verdict is None and name_suggests_vision(model):
        verdict = VisionVerdict(True, "name", f"{model!r} is a known vision model name")
    if verdict is None:
        # Not cached: a server that was down may answer next time.
        return VisionVerdict(
            False,
            "unknown",
            "the server does not say whether it can see, and its name is not a known vision model",
        )
    cache.put(base_url, model, verdict)
    return verdict


def vision_refusal(model: str, base_url: str, verdict: VisionVerdict) -> str:
    """The one-line reason a run is refused, naming how to mark the model vision-capable."""
    fix = 'if it can see, run with --vision yes or set vision = "yes" in the settings'
    if verdict.source == "setting":
        return (
            f"model {model!r} at {base_url} is marked as unable to see screenshots "
            f'(vision = "no"); choose a vision model or set vision to "auto" or "yes"'
        )
    if verdict.source == "unknown":
        return (
            f"cannot tell whether model {model!r} at {base_url} can see screenshots: "
            f"{verdict.detail}; {fix}"
        )
    return (
        f"model {model!r} at {base_url} cannot see screenshots ({verdict.detail}); "
        f"choose a vision model such as qwen2.5vl, or {fix}"
    )


async def check_reachable(
    base_url: str, api_key: str | None, timeout_s: float = 5
) -> list[str] | None:
    """ModelUnreachable unless the server at `base_url` answers HTTP (any status) in time.

    Returns the model ids it lists at /models, or None when it lists none (another status,
    not a model list).
    """
    import aiohttp

    try:
        return await _get_models(base_url, api_key, timeout_s, _listed_ids)
    except TimeoutError:
        reason = f"no answer within {timeout_s:g} s"
    except aiohttp.InvalidURL:
        reason = "not a valid URL"
    except aiohttp.ClientConnectorError as error:
        reason = _connector_reason(error)
    except aiohttp.ClientError as error:
        reason = " ".join(str(error).split()) or type(error).__name__
    raise ModelUnreachable(f"model server at {base_url} is not reachable: {reason}")


async def _listed_ids(response: aiohttp.ClientResponse) -> list[str] | None:
    """The ids of an OpenAI model list answer, else None (the server answered: reachable)."""
    import aiohttp

    try:
        data = await json_of_ok(response)
    except (aiohttp.ClientError, TimeoutError, ValueError):
        return None
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    return [str(e["id"]) for e in entries if isinstance(e, dict) and e.get("id")]


def model_listed(model: str, listed: list[str]) -> bool:
    """Whether `model` is among the ids a server lists: case aside, Gemini's "models/"
    prefix aside, and Ollama's "name" being "name:latest"."""

    def bare(name: str) -> str:
        return name.strip().lower().removeprefix("models/")

    names = {bare(name) for name in listed}
    wanted = bare(model)
    return wanted in names or (":" not in wanted and f"{wanted}:latest" in names)


def ensure_listed(model: str, base_url: str, listed: list[str] | None) -> None:
    """ModelNotListed when the server lists its models and `model` is not among them."""
    if listed is None or model_listed(model, listed):
        return
    shown = ", ".join(listed[:5]) + (f" and {len(listed) - 5} more" if len(listed) > 5 else "")
    raise ModelNotListed(
        f"model {model!r} is not among the models of the server at {base_url} "
        f"(it lists: {shown or 'none'})"
    )


def _connector_reason(error: Any) -> str:
    os_error = getattr(error, "os_error", None)
    if isinstance(os_error, ConnectionRefusedError):
        return "connection refused"
    text = getattr(os_error, "strerror", None) or str(os_error or error)
    return " ".join(str(text).split())
