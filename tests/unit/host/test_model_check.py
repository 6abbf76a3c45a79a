"""The one model check (model_check.py) against a real loopback server: what it finds,
what a run would be refused for, and the key it sends (the one API-key rule)."""

from __future__ import annotations

import socket

import pytest

from desktop_agent.core.errors import ModelNotListed, ModelUnreachable, VisionRequired
from desktop_agent.model_check import check_model, report_of, verdict_of
from desktop_agent.settings import Settings
from tests.support.model_server import ModelServer


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_a_server_that_does_not_answer_is_the_refusal_and_gives_no_verdict() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    checked = await check_model(Settings(probe_ports=[closed_port()]), base_url=url)
    assert isinstance(checked.unreachable, ModelUnreachable)
    assert checked.verdict is None and not checked.ok
    assert checked.refusal() is checked.unreachable


async def test_a_model_the_server_does_not_list_is_refused_unless_a_run_tries_it() -> None:
    server = await ModelServer(models=("other-model",)).start()
    try:
        checked = await check_model(
            Settings(base_url=server.base_url, model="qwen2.5vl", vision="yes")
        )
    finally:
        await server.close()
    assert isinstance(checked.refusal(), ModelNotListed)
    assert checked.refusal(listed=False) is None  # a run tries it anyway (it can see)


async def test_a_model_that_cannot_see_is_refused_with_the_fix() -> None:
    server = await ModelServer(models=("qwen2.5vl",)).start()
    try:
        checked = await check_model(
            Settings(base_url=server.base_url, model="qwen2.5vl", vision="no")
        )
    finally:
        await server.close()
    refusal = checked.refusal()
    assert isinstance(refusal, VisionRequired) and "vision" in str(refusal)


@pytest.mark.parametrize("saved", [True, False])
async def test_the_key_goes_only_to_the_saved_server(
    saved: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import desktop_agent.settings

    server = await ModelServer(models=("qwen2.5vl",)).start()
    try:
        asked: list[str] = []

        def key_for(base_url: str, settings: Settings) -> str | None:
            asked.append(base_url)
            return "sk-kept" if base_url == settings.base_url else None

        monkeypatch.setattr(desktop_agent.settings, "api_key_for", key_for)
        saved_url = server.base_url if saved else "https://elsewhere.example/v1"
        await check_model(Settings(base_url=saved_url, vision="yes"), base_url=server.base_url)
        sent = [authorization for _, _, authorization in server.heard]
    finally:
        await server.close()
    assert asked == [server.base_url]
    assert sent and all(a == ("Bearer sk-kept" if saved else None) for a in sent)


async def test_the_windows_vision_verdict_raises_what_stands_in_the_way_of_a_verdict() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    with pytest.raises(ModelUnreachable):
        verdict_of(await check_model(Settings(base_url=url, probe_ports=[closed_port()])))
    server = await ModelServer(models=("other-model",)).start()
    try:
        with pytest.raises(ModelNotListed):
            verdict_of(await check_model(Settings(base_url=server.base_url, model="qwen2.5vl")))
        seen = verdict_of(
            await check_model(Settings(base_url=server.base_url, model="other-model", vision="yes"))
        )
    finally:
        await server.close()
    assert seen.can_see


async def test_test_connection_says_in_one_line_that_the_server_answers_and_whether_it_sees() -> (
    None
):
    server = await ModelServer(models=("qwen2.5vl",), ollama={"qwen2.5vl": ["completion"]}).start()
    try:
        settings = Settings(base_url=server.base_url, model="qwen2.5vl")
        line = report_of(await check_model(settings, fresh=True))
    finally:
        await server.close()
    assert line.startswith("The server answers; qwen2.5vl cannot see screenshots (")
    assert "\n" not in line
