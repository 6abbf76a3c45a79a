"""Vision: setting → Ollama /api/show → LM Studio model type → name patterns → refused; cached."""

from __future__ import annotations

import pytest

from desktop_agent.core.errors import ModelUnreachable
from desktop_agent.core.models import VisionSetting
from desktop_agent.planner import VisionCache, VisionVerdict, check_reachable, resolve_vision
from desktop_agent.planner.capabilities import (
    name_suggests_vision,
    server_root,
    vision_refusal,
)
from tests.support.model_server import ModelServer
from tests.unit.planner.conftest import closed_port


async def _refusal(base_url: str, model: str, setting: VisionSetting, cache: VisionCache) -> str:
    """The one line a run is refused with (as the model check's refusal): the model cannot see."""
    verdict = await resolve_vision(
        base_url=base_url, model=model, api_key=None, setting=setting, cache=cache
    )
    assert not verdict.can_see
    return vision_refusal(model, base_url, verdict)


async def _resolve(
    server: ModelServer, model: str, cache: VisionCache, setting: VisionSetting = "auto"
) -> VisionVerdict:
    return await resolve_vision(
        base_url=server.base_url,
        model=model,
        api_key=None,
        setting=setting,
        cache=cache,
    )


@pytest.fixture
def cache() -> VisionCache:
    return VisionCache()


async def test_setting_yes_and_no_decide_without_asking_any_server(cache: VisionCache) -> None:
    async with ModelServer(ollama={"text-only": ["completion"]}) as server:
        yes = await _resolve(server, "text-only", cache, "yes")
        no = await _resolve(server, "qwen2.5vl", cache, "no")
    assert (yes.can_see, yes.source) == (True, "setting")
    assert (no.can_see, no.source) == (False, "setting")
    assert server.show_requests == [] and server.lmstudio_requests == 0


async def test_ollama_listing_vision_can_see(cache: VisionCache) -> None:
    async with ModelServer(ollama={"my-model": ["completion", "vision"]}) as server:
        verdict = await _resolve(server, "my-model", cache)
    assert verdict.can_see and verdict.source == "ollama"
    assert verdict.detail == "Ollama lists its capabilities: completion, vision"
    assert server.show_requests == [{"model": "my-model", "name": "my-model"}]
    assert server.requests == []  # never a chat completion


async def test_ollama_without_vision_is_final_even_for_a_vision_like_name(
    cache: VisionCache,
) -> None:
    async with ModelServer(ollama={"llava-text": ["completion", "tools"]}) as server:
        refusal = await _refusal(server.base_url, "llava-text", "auto", cache)
    assert refusal == (
        f"model 'llava-text' at {server.base_url} cannot see screenshots (Ollama lists its "
        "capabilities: completion, tools); choose a vision model such as qwen2.5vl, or if it "
        'can see, run with --vision yes or set vision = "yes" in the settings'
    )
    assert server.lmstudio_requests == 0
    assert server.requests == []


async def test_lm_studio_type_vlm_can_see_and_llm_cannot(cache: VisionCache) -> None:
    models = [{"id": "qwen2-vl-7b-instruct", "type": "vlm"}, {"id": "mistral-7b", "type": "llm"}]
    async with ModelServer(lmstudio=models) as server:
        vlm = await _resolve(server, "qwen2-vl-7b-instruct", cache)
        llm = await _resolve(server, "mistral-7b", cache)
    assert (vlm.can_see, vlm.source) == (True, "lmstudio")
    assert (llm.can_see, llm.source) == (False, "lmstudio")
    assert llm.detail == "LM Studio lists it as type 'llm'"
    assert len(server.show_requests) == 2  # asked Ollama first, which did not answer


async def test_name_pattern_decides_when_no_server_says(cache: VisionCache) -> None:
    async with ModelServer() as server:
        verdict = await _resolve(server, "gpt-4o-mini", cache)
    assert (verdict.can_see, verdict.source) == (True, "name")
    assert len(server.show_requests) == 1 and server.lmstudio_requests == 1


async def test_ollama_not_knowing_the_model_falls_through(cache: VisionCache) -> None:
    async with ModelServer(ollama={"other": ["vision"]}) as server:
        verdict = await _resolve(server, "llama3.2-vision", cache)
    assert verdict.source == "name"


async def test_unknown_model_is_refused_naming_it_and_the_fix(cache: VisionCache) -> None:
    async with ModelServer() as server:
        message = await _refusal(server.base_url, "mystery-7b", "auto", cache)
    assert message.startswith(
        f"cannot tell whether model 'mystery-7b' at {server.base_url} can see screenshots"
    )
    assert message.endswith('run with --vision yes or set vision = "yes" in the settings')
    assert "\n" not in message


async def test_setting_no_refuses_a_vision_model(cache: VisionCache) -> None:
    refusal = await _refusal("http://127.0.0.1:9/v1", "qwen2.5vl", "no", cache)
    assert 'is marked as unable to see screenshots (vision = "no")' in refusal


async def test_verdicts_are_cached_per_base_url_and_model(cache: VisionCache) -> None:
    async with ModelServer(ollama={"a": ["vision"], "b": ["completion"]}) as server:
        first = await _resolve(server, "a", cache)
        again = await _resolve(server, "a", cache)
        other = await _resolve(server, "b", cache)
    assert first == again and first.can_see and not other.can_see
    assert [body["model"] for body in server.show_requests] == ["a", "b"]


async def test_unreachable_server_falls_back_to_the_name(cache: VisionCache) -> None:
    base_url = f"http://127.0.0.1:{closed_port()}/v1"
    verdict = await resolve_vision(
        base_url=base_url, model="qwen2.5vl", api_key=None, setting="auto", cache=cache
    )
    assert (verdict.can_see, verdict.source) == (True, "name")


def test_server_root_drops_the_trailing_v1() -> None:
    assert server_root("http://localhost:11434/v1") == "http://localhost:11434"
    assert server_root("http://localhost:11434/v1/") == "http://localhost:11434"
    assert server_root("http://host/ollama/v1") == "http://host/ollama"
    assert server_root("http://host:8080") == "http://host:8080"


@pytest.mark.parametrize(
    "name",
    [
        "qwen2.5vl",
        "qwen2.5vl:7b",
        "Qwen/Qwen2.5-VL-7B-Instruct",
        "qwen2-vl-7b-instruct",
        "llava:13b",
        "gpt-4o",
        "gpt-4.1-mini",
        "claude-3-5-sonnet",
        "gemini-2.0-flash",
        "pixtral-12b",
        "minicpm-v",
        "llama3.2-vision:11b",
        "OpenGVLab/InternVL2-8B",
        "gemma3:12b",
    ],
)
def test_known_vision_names_match(name: str) -> None:
    assert name_suggests_vision(name)


@pytest.mark.parametrize("name", ["llama3.1:8b", "mistral-7b-instruct", "qwen2.5:7b", "phi3"])
def test_text_model_names_do_not_match(name: str) -> None:
    assert not name_suggests_vision(name)


async def test_check_reachable_passes_when_the_server_answers() -> None:
    async with ModelServer() as server:
        await check_reachable(server.base_url, None)
    assert server.models_requests == 1
    assert server.requests == []


async def test_check_reachable_names_the_url_and_the_reason() -> None:
    base_url = f"http://127.0.0.1:{closed_port()}/v1"
    with pytest.raises(ModelUnreachable) as caught:
        await check_reachable(base_url, None, timeout_s=2)
    assert str(caught.value) == f"model server at {base_url} is not reachable: connection refused"


async def test_a_64_mb_capability_answer_is_not_read_whole(cache: VisionCache) -> None:
    from aiohttp import web

    size = 64 * 1024 * 1024
    sent = 0

    async def huge(request: web.Request) -> web.StreamResponse:
        # chunked (no Content-Length): only counting the bytes can stop it
        nonlocal sent
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        block = b" " * (1024 * 1024)
        while sent < size:
            await response.write(block)
            sent += len(block)
        await response.write(b'{"capabilities": ["completion", "vision"]}')
        return response

    app = web.Application()
    app.router.add_post("/api/show", huge)
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        verdict = await resolve_vision(
            base_url=f"http://127.0.0.1:{port}/v1",
            model="mystery",
            api_key=None,
            setting="auto",
            cache=cache,
        )
    finally:
        await runner.cleanup()
    assert verdict.source != "ollama", "a body over the cap is no answer"
    assert sent < size // 2, f"{sent:,} bytes were read"
