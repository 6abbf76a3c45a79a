"""The stored API key goes only to the server the user set it for, never over plain http to
another host: a run (e.g. an API task) naming another base URL asks its model without it."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_agent.agent import Agent, key_may_go_to
from desktop_agent.core.models import TaskSpec
from desktop_agent.settings import Settings
from tests.fakes import FakeExecutor, FakeObserver, make_observation
from tests.support.model_server import ModelServer, Reply

SECRET = "sk-test-only-for-the-configured-server"


@pytest.mark.parametrize(
    ("url", "configured", "allowed"),
    [
        ("http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1", True),
        ("http://localhost:8080/v1/", "http://localhost:8080/v1", True),
        ("https://api.example.com/v1", "https://api.example.com/v1", True),
        ("https://evil.example.com/v1", "https://api.example.com/v1", False),
        ("http://192.168.1.20:8000/v1", "http://192.168.1.20:8000/v1", False),  # plain http
        ("http://127.0.0.1:9999/v1", "http://127.0.0.1:11434/v1", False),  # another port
    ],
)
def test_the_key_may_go_only_to_its_own_server_and_never_over_plain_http_afar(
    url: str, configured: str, allowed: bool
) -> None:
    assert key_may_go_to(url, configured) is allowed


async def test_a_run_naming_another_server_asks_it_without_the_stored_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    answer = Reply({"action": "done", "message": "ok", "reason": "nothing to do"})
    async with (
        ModelServer(script=[answer]) as own,
        ModelServer(script=[answer]) as other,
    ):
        settings = Settings(base_url=own.base_url, model="qwen2.5vl", vision="yes")
        agent = await Agent.open(
            tmp_path, settings, observer=FakeObserver(make_observation()), executor=FakeExecutor()
        )
        try:
            for server in (own, other):
                run = await agent.runner.create(
                    TaskSpec(goal="look", base_url=server.base_url, model="qwen2.5vl")
                )
                final = await agent.runner.run(run, await agent.prepare(run))
                assert final.status.value == "completed", final.message
        finally:
            await agent.close()
    assert own.authorizations == [f"Bearer {SECRET}"]
    assert len(other.authorizations) == 1
    assert SECRET not in str(other.authorizations), "the key went to a server it was not set for"
