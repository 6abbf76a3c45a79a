"""1,000 fuzzed request bodies: never a 500, always a one-line JSON error, no traceback logged."""

from __future__ import annotations

import json
import logging
import random
from typing import Any

import pytest

from tests.unit.api.conftest import Api

SEED = 20240501
REQUESTS = 1000
FIELDS = ("goal", "base_url", "model", "max_steps", "max_failures", "allowed_tools", "vision")
TEXTS = [
    "",
    " ",
    "open the editor",
    "é€ß",
    "日本語のテキスト",
    "שלום",
    "😀🚀",
    "e\u0301",
    "\u202etxt",
    "\x00",
    "\x07bell",
    "line\nbreak",
    "\ud800",
    "\udfff lone",
    "\ufeffbom",
    "a" * 5000,
    "http://127.0.0.1:11434/v1",
    "https://[::1]:99999/",
    "javascript:alert(1)",
    "wait",
    "click",
    "launch_app",
    "auto",
    "yes",
    "no",
    "once",
    "run",
    "deny",
    "../../etc/passwd",
    "%00",
    "{}",
]
NUMBERS = [0, 1, -1, 20, 500, 501, 50, 51, 2**31, -(2**63), 10**30, 10**300, 0.5, 1e308, -0.0]


class Fuzzer:
    """Bodies that are wrong in every way we can think of, from a fixed seed."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def text(self) -> str:
        r = self.random
        if r.random() < 0.3:
            return "".join(
                chr(r.choice([r.randrange(0x20, 0x7F), r.randrange(0x80, 0x10FFFF)]))
                for _ in range(r.randrange(0, 40))
            )
        return r.choice(TEXTS)

    def value(self, depth: int = 0) -> Any:
        r = self.random
        kind = r.randrange(8 if depth < 4 else 6)
        if kind == 0:
            return None
        if kind == 1:
            return r.choice([True, False])
        if kind == 2:
            return r.choice(NUMBERS)
        if kind == 3:
            return r.uniform(-1e6, 1e6)
        if kind in (4, 5):
            return self.text()
        if kind == 6:
            return [self.value(depth + 1) for _ in range(r.randrange(0, 4))]
        return {self.key(): self.value(depth + 1) for _ in range(r.randrange(0, 4))}

    def key(self) -> str:
        return self.random.choice([*FIELDS, *FIELDS, "decision", self.text()])

    def near_valid(self) -> dict[str, Any]:
        r = self.random
        body: dict[str, Any] = {"goal": "open the editor"}
        for name in r.sample(FIELDS, r.randrange(0, len(FIELDS))):
            body[name] = r.choice(
                [
                    self.value(),
                    self.text(),
                    r.choice(NUMBERS),
                    ["wait", self.text()],
                    r.choice(["auto", "yes", "no"]),
                    r.randrange(1, 600),
                ]
            )
        return body

    def raw(self) -> bytes:
        r = self.random
        good = json.dumps(self.near_valid()).encode()
        choice = r.randrange(11)
        if choice == 0:
            return r.randbytes(r.randrange(0, 200))
        if choice == 1:
            return good[: r.randrange(0, len(good))]
        if choice == 2:
            cut = r.randrange(0, len(good))
            return good[:cut] + r.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00"]) + good[cut:]
        if choice == 3:
            return r.choice(
                [
                    b"NaN",
                    b"Infinity",
                    b"-Infinity",
                    b'{"goal": NaN}',
                    b'{"goal": "x", "max_steps": -Infinity}',
                ]
            )
        if choice == 4:
            return b'{"goal": "x", "max_steps": ' + b"9" * r.randrange(100, 20000) + b"}"
        if choice == 5:
            depth = r.choice([10, 900, 1000, 5000, 100_000, 400_000])
            opener, closer = r.choice([(b"[", b"]"), (b'{"a":', b"}")])
            inner = opener * depth + b"1" + closer * depth
            return r.choice([inner, b'{"goal": ' + inner + b"}", opener * depth])
        if choice == 6:
            return (
                b'{"goal": "x", "goal": 5, "goal": "'
                + self.text().encode("utf-8", "replace")
                + b'"}'
            )
        if choice == 7:
            return b"\xef\xbb\xbf" + good
        if choice == 8:
            return r.choice([b"", b" ", b"\n", b"{}", b"[]", b"null", b"0", b'""', b"true"])
        if choice == 9:
            return json.dumps(self.text()).encode()
        return good + r.choice([b",", b"}", b" garbage", b"\x00"])

    def body(self) -> bytes:
        r = self.random
        roll = r.random()
        if roll < 0.003:
            return b'{"goal": "' + b"x" * (1024 * 1024 + r.randrange(1, 1000)) + b'"}'
        if roll < 0.35:
            return self.raw()
        if roll < 0.65:
            return json.dumps(self.near_valid()).encode()
        if roll < 0.85:
            return json.dumps({self.key(): self.value() for _ in range(r.randrange(0, 6))}).encode()
        return json.dumps(self.value()).encode()

    def path(self, run_ids: list[str]) -> str:
        r = self.random
        roll = r.random()
        if roll < 0.7:
            return "/api/tasks"
        if roll < 0.8:
            return f"/api/approvals/{r.choice(['a1', 'x', 'run-1', '%F0%9F%98%80', 'a' * 200])}"
        if roll < 0.93:
            target = r.choice([*run_ids[-5:], "nosuchrun", "%00", "..%2f..", "x" * 300])
            return f"/api/tasks/{target}/{r.choice(['pause', 'resume', 'stop'])}"
        return "/api/tasks/stop-all"


async def test_fuzzed_bodies_never_get_a_500_nor_log_a_traceback(
    api: Api, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    fuzzer = Fuzzer(SEED)
    run_ids: list[str] = []
    statuses: dict[int, int] = {}

    for number in range(REQUESTS):
        path = fuzzer.path(run_ids)
        raw = fuzzer.body()
        status, answer = await api.call("POST", path, data=raw)

        statuses[status] = statuses.get(status, 0) + 1
        assert status in (200, 201, 400, 404, 409, 413), (number, path, raw[:200], answer)
        if status == 201:
            run_ids.append(answer["id"])
        elif status >= 400:
            assert set(answer) == {"error"}, answer
            assert isinstance(answer["error"], str) and answer["error"]
            assert "\n" not in answer["error"] and "Traceback" not in answer["error"]

    # The fuzz reached every kind of answer, not only one refusal.
    assert {200, 201, 400, 404, 413} <= set(statuses), statuses
    assert statuses[400] > REQUESTS // 3, statuses
    assert "Traceback" not in caplog.text
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert api.token not in caplog.text
    assert api.agent.runner.active_ids == ()
