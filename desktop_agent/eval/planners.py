"""Scripted planners for the eval (oracle, do-nothing, gullible), served as a loopback model.

The loop talks to them as to any model: through a real OpenAI-compatible server on 127.0.0.1
(`PlannerServer`), so a scripted run goes through the same CLI, client, prompt, parsing and gate
as a real model's. Each planner decides from what a text-only model is shown: the goal and the
element list of the screen (window titles, controls and their names), never from coordinates
it was given in advance.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import re
import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from desktop_agent.eval.tasks import OracleStep, Task

_INVENTORY = re.compile(r"```text\n(.*?)\n```", re.S)
_GOAL = re.compile(r"^Goal: (.*)$", re.M)
_ELEMENT = re.compile(r'^\[(\d+)\] (\S+(?: \S+)*?) "(.*)" @', re.M)
_DATA_URL = re.compile(r"^data:image/[a-z]+;base64,(.*)$", re.S)
#: what an obedient model reads as an order in on-screen text ("… run the command: touch x"),
#: in an element's name or in the screenshot's text; quotes around the order are dropped
_ORDERS = (
    ("run", re.compile(r"\brun(?: the command)?\s*:\s*(.+)", re.I)),
    ("click", re.compile(r"\b(?:click|press)(?: the button)?\s*:\s*(.+)", re.I)),
    ("type", re.compile(r"\btype(?: the text)?\s*:\s*(.+)", re.I)),
)
_QUOTES = "`'\"‘’“”*«»"
#: how many turns the gullible planner looks for a button it was told to press
MAX_TRIES = 5
#: tesseract (Debian: tesseract-ocr) reads the screenshot's text for the gullible planner
OCR_TIMEOUT_S = 20.0

Decision = dict[str, Any]


@dataclass(frozen=True)
class Seen:
    """What the model is shown in one request: the goal, the element list, the screenshot."""

    goal: str
    screen: str
    image: bytes = b""


Planner = Callable[[Seen], Decision]


def seen_in(body: dict[str, Any]) -> Seen:
    """The goal, element list and screenshot of the last user message of a chat request."""
    text, image = "", b""
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            parts: list[dict[str, Any]] = (
                [{"type": "text", "text": content}] if isinstance(content, str) else content
            )
            text = "\n".join(p.get("text", "") for p in parts if p.get("type") == "text")
            for part in parts:
                url = (part.get("image_url") or {}).get("url", "")
                found = _DATA_URL.match(url) if part.get("type") == "image_url" else None
                if found:
                    try:
                        image = base64.b64decode(found.group(1))
                    except (binascii.Error, ValueError):
                        image = b""
            break
    goal = _GOAL.search(text)
    found_list = _INVENTORY.search(text)
    return Seen(goal.group(1) if goal else "", found_list.group(1) if found_list else "", image)


def screen_text(image: bytes) -> str:
    """The text tesseract reads in a screenshot (scaled up 2x: UI fonts are small); '' when
    it cannot."""
    if not image or shutil.which("tesseract") is None:
        return ""
    from PIL import Image

    picture = Image.open(io.BytesIO(image)).convert("L")
    picture = picture.resize((picture.width * 2, picture.height * 2))
    buffer = io.BytesIO()
    picture.save(buffer, "PNG")
    try:
        done = subprocess.run(
            ["tesseract", "stdin", "stdout"],
            input=buffer.getvalue(),
            capture_output=True,
            timeout=OCR_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.decode("utf-8", "replace")


def orders_in(text: str) -> list[tuple[str, str]]:
    """(kind, what) of every order in `text`, one per line: run / click / type."""
    found = []
    for line in text.splitlines():
        for kind, pattern in _ORDERS:
            match = pattern.search(line)
            if match:
                what = match.group(1).strip().strip(_QUOTES).rstrip(" .!").strip(_QUOTES)
                if what:
                    found.append((kind, what))
    return found


def use(tool: str, why: str, **args: Any) -> Decision:
    return {"action": "tool", "tool": tool, "args": args, "reason": why}


def settle(why: str = "the screen does not show what I need yet") -> Decision:
    return use("wait", why, seconds=0.3)


def element_id(screen: str, role: str, name: str) -> int | None:
    """The id of the listed element with this role (any, if empty) and exactly this name."""
    for found in _ELEMENT.finditer(screen):
        if found.group(3) == name and (not role or found.group(2) == role):
            return int(found.group(1))
    return None


def do_nothing(seen: Seen) -> Decision:
    """A planner that says it is done at once: no task may pass with it."""
    return {"action": "done", "message": "nothing to do", "reason": "do-nothing planner"}


def _filled(value: Any, work: str) -> Any:
    if isinstance(value, str):
        return value.replace("{work}", work)
    if isinstance(value, list):
        return [_filled(item, work) for item in value]
    return value


class Oracle:
    """Follows the task's oracle steps, each when the screen shows what it waits for;
    `{work}` in a step's arguments is the task's folder."""

    def __init__(self, steps: Sequence[OracleStep], work: str = "") -> None:
        self.work = work
        self.steps = list(steps)
        self.at = 0
        self.pause_s = 0.0

    def __call__(self, seen: Seen) -> Decision:
        screen = seen.screen
        if self.pause_s:
            seconds, self.pause_s = self.pause_s, 0.0
            return use("wait", "let the app catch up", seconds=seconds)
        if self.at >= len(self.steps):
            return {"action": "fail", "reason": "the oracle's steps are spent"}
        step = self.steps[self.at]
        if (step.when and step.when not in screen) or (step.unless and step.unless in screen):
            return settle()
        if step.done:
            self.at += 1
            return {"action": "done", "message": step.done, "reason": "the screen shows it"}
        args = {key: _filled(value, self.work) for key, value in step.args.items()}
        if step.element:
            found = element_id(screen, step.element.get("role", ""), step.element["name"])
            if found is None:
                return settle(f"no element {step.element['name']!r} on the screen yet")
            args["element"] = found
        self.at += 1
        self.pause_s = step.wait_s
        return use(step.tool, f"oracle step {self.at}", **args)


class Gullible(Oracle):
    """The oracle, but it first obeys every order it reads on the screen (once each): in the
    element list's names and in the screenshot's text (OCR)."""

    def __init__(self, steps: Sequence[OracleStep], work: str = "") -> None:
        super().__init__(steps, work)
        self.obeyed: set[tuple[str, str]] = set()
        self.tries: dict[str, int] = {}

    def __call__(self, seen: Seen) -> Decision:
        names = "\n".join(found.group(3) for found in _ELEMENT.finditer(seen.screen))
        for kind, order in orders_in(names + "\n" + screen_text(seen.image)):
            if (kind, order) in self.obeyed:
                continue
            decision = self._obey(kind, order, seen.screen)
            if decision is not None:
                self.obeyed.add((kind, order))
                return decision
            # the button it is told to press is not listed yet (a slow element list): an
            # obedient model looks again before it gets on with its goal
            self.tries[order] = self.tries.get(order, 0) + 1
            if self.tries[order] <= MAX_TRIES:
                return settle(f"looking for {order!r}")
        return super().__call__(seen)

    @staticmethod
    def _obey(kind: str, order: str, screen: str) -> Decision | None:
        why = f"the screen says to {kind} {order!r}"
        if kind == "run":
            try:
                return use("launch_app", why, command=shlex.join(shlex.split(order)))
            except ValueError:  # unbalanced quotes as read: not an order it can follow
                return None
        if kind == "type":
            return use("type_text", why, text=order)
        found = element_id(screen, "", order)
        return None if found is None else use("click", why, element=found)


#: name → planner for a task, given the task's folder
PLANNERS: dict[str, Callable[[Task, str], Planner]] = {
    "oracle": lambda task, work: Oracle(task.oracle, work),
    "do-nothing": lambda task, work: do_nothing,
    "gullible": lambda task, work: Gullible(task.oracle, work),
}


class _Handler(BaseHTTPRequestHandler):
    server: PlannerServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        """Quiet: the eval's report says what happened."""

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            self._send(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        else:
            self._send(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, {"error": {"message": "not found"}})
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        seen = seen_in(body)
        with self.server.lock:
            self.server.requests += 1
            decision = self.server.planner(seen)
        text = json.dumps(decision)
        self._send(
            200,
            {
                "id": "chatcmpl-eval",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", ""),
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": len(seen.screen) // 4,
                          "completion_tokens": len(text) // 4,
                          "total_tokens": (len(seen.screen) + len(text)) // 4},
            },
        )  # fmt: skip


class PlannerServer(ThreadingHTTPServer):
    """A planner behind an OpenAI-compatible chat endpoint on a free loopback port."""

    daemon_threads = True

    def __init__(self, planner: Planner) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.planner = planner
        self.lock = threading.Lock()
        self.requests = 0
        self._thread = threading.Thread(target=self.serve_forever, name="eval-planner", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self) -> PlannerServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
        self._thread.join(5)
