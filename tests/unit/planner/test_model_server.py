"""The scripted model server itself: in a thread and as a process, for end-to-end tests."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tests.support.model_server import (
    Disconnect,
    Hang,
    HttpError,
    ModelServer,
    Reply,
    item_from_json,
    serve_in_thread,
)

REPO = Path(__file__).resolve().parents[3]


def _post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read()), dict(response.headers)
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read()), dict(error.headers)


def test_in_a_thread_it_answers_from_synchronous_code() -> None:
    script = [HttpError(429, "busy", retry_after="1"), Reply({"action": "done"}, usage=(7, 3))]
    with serve_in_thread(ModelServer(script)) as server:
        chat = f"{server.base_url}/chat/completions"
        status, body, headers = _post(chat, {"model": "m", "messages": []})
        assert (status, body["error"]["message"], headers["Retry-After"]) == (429, "busy", "1")
        status, body, _ = _post(chat, {"model": "m", "messages": [], "temperature": 0})
        assert status == 200
        assert json.loads(body["choices"][0]["message"]["content"]) == {"action": "done"}
        assert body["usage"]["prompt_tokens"] == 7
    assert [req.get("temperature") for req in server.requests] == [None, 0]


def test_rejecting_a_response_format_answers_400_without_using_the_script() -> None:
    with serve_in_thread(ModelServer([Reply("x")], reject_formats={"json_schema"})) as server:
        chat = f"{server.base_url}/chat/completions"
        status, body, _ = _post(chat, {"response_format": {"type": "json_schema"}})
        assert status == 400 and "json_schema" in body["error"]["message"]
        assert server.remaining == 1


def test_as_a_process_it_writes_its_port_and_records_requests(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "replies": [{"json": {"action": "done", "message": "ok"}, "usage": [5, 1]}],
                "then": {"status": 500, "message": "no more"},
                "ollama": {"qwen2.5vl": ["completion", "vision"]},
            }
        ),
        encoding="utf-8",
    )
    port_file = tmp_path / "port"
    requests_file = tmp_path / "requests.jsonl"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.support.model_server",
            "--script",
            str(script),
            "--port-file",
            str(port_file),
            "--requests-file",
            str(requests_file),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        assert port_file.read_text(encoding="utf-8") == str(port)
        root = f"http://127.0.0.1:{port}"
        status, body, _ = _post(f"{root}/v1/chat/completions", {"model": "qwen2.5vl"})
        assert status == 200 and body["usage"]["completion_tokens"] == 1
        status, body, _ = _post(f"{root}/v1/chat/completions", {"model": "qwen2.5vl"})
        assert (status, body["error"]["message"]) == (500, "no more")
        status, body, _ = _post(f"{root}/api/show", {"model": "qwen2.5vl"})
        assert body["capabilities"] == ["completion", "vision"]
        lines = requests_file.read_text(encoding="utf-8").splitlines()
        assert [json.loads(line)["model"] for line in lines] == ["qwen2.5vl", "qwen2.5vl"]
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
        if process.stdout is not None:
            process.stdout.close()


def test_script_items_have_a_json_form() -> None:
    assert item_from_json({"hang": True}) == Hang()
    assert item_from_json({"disconnect": True}) == Disconnect()
    assert item_from_json({"status": 429, "retry_after": 2}) == HttpError(429, "server error", "2")
    assert item_from_json({"json": {"a": 1}, "usage": None, "delay_s": 0.5}) == Reply(
        {"a": 1}, usage=None, delay_s=0.5
    )
    assert item_from_json({"content": "hi"}) == Reply("hi", usage=(100, 20))


def test_trickle_oversized_and_refused_parameters_have_a_json_form() -> None:
    from tests.support.model_server import Oversized, Trickle, server_from_script

    assert item_from_json({"trickle": {"content": "x"}, "interval_s": 0.1, "for_s": 2}) == Trickle(
        Reply("x"), 0.1, 2.0
    )
    assert item_from_json({"oversized": {"json": {"a": 1}}, "size": 10, "chunked": True}) == (
        Oversized(Reply({"a": 1}), 10, True)
    )
    server = server_from_script({"reject_params": {"temperature": "no temperature"}})
    assert server.reject_params == {"temperature": "no temperature"}


def test_a_refused_parameter_answers_400_with_its_message() -> None:
    with serve_in_thread(
        ModelServer(then=Reply({"action": "done"}), reject_params={"max_tokens": "use the other"})
    ) as server:
        status, body, _ = _post(f"{server.base_url}/chat/completions", {"max_tokens": 5})
        ok, _, _ = _post(f"{server.base_url}/chat/completions", {"max_completion_tokens": 5})
    assert (status, body["error"]["message"]) == (400, "use the other")
    assert ok == 200
