"""Shared pieces of the planner tests: a real JPEG observation, requests, a recording sleep."""

from __future__ import annotations

import asyncio
import base64
import io
import socket
from collections.abc import Sequence
from typing import Any

import pytest
from PIL import Image

from desktop_agent.core.builtin_tools import BUILTIN_TOOLS
from desktop_agent.core.models import Element, Observation, StepView
from desktop_agent.core.ports import DecideRequest
from desktop_agent.core.tools import ToolSpec
from desktop_agent.planner import OpenAIPlanner, ResponseFormatMemory
from desktop_agent.planner.profiles import ModelSpace, model_space, profile_named

TOOLS = {spec.name: spec for spec in BUILTIN_TOOLS}
#: what a run allowed in most tests: a subset, so "only these" can be checked
ALLOWED = ("click", "type_text", "wait")


def jpeg_bytes(width: int = 320, height: int = 200) -> bytes:
    image = Image.new("RGB", (width, height), (40, 90, 160))
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=80)
    return out.getvalue()


def make_observation(width: int = 320, height: int = 200) -> Observation:
    return Observation(
        image=jpeg_bytes(width, height),
        mime="image/jpeg",
        width=width,
        height=height,
        elements=(
            Element(12, "button", "Save", (240, 150, 60, 24)),
            Element(13, "edit", "File name", (20, 150, 200, 24), focused=True),
        ),
    )


def pixel_space(width: int = 320, height: int = 200) -> ModelSpace:
    """A model pointing in the screenshot's own pixels (the generic profile's space)."""
    return model_space(profile_named("generic"), width, height)


def tools(*names: str) -> tuple[ToolSpec, ...]:
    return tuple(TOOLS[name] for name in names)


def make_request(
    *,
    goal: str = "save the file",
    turn: int = 1,
    steps: Sequence[StepView] = (),
    allowed: Sequence[str] = ALLOWED,
    observation: Observation | None = None,
) -> DecideRequest:
    return DecideRequest(
        goal=goal,
        run_id="run1",
        turn=turn,
        steps=tuple(steps),
        observation=observation or make_observation(),
        tools=tools(*allowed),
    )


def decoded_image(body: dict[str, Any]) -> Image.Image:
    """The screenshot a chat request carried, decoded from its data URL."""
    parts = body["messages"][-1]["content"]
    url = next(part["image_url"]["url"] for part in parts if part["type"] == "image_url")
    header, data = url.split(",", 1)
    assert header == "data:image/jpeg;base64"
    return Image.open(io.BytesIO(base64.b64decode(data)))


def user_text(body: dict[str, Any]) -> str:
    parts = body["messages"][-1]["content"]
    return "\n".join(part["text"] for part in parts if part["type"] == "text")


class RecordingSleep:
    """An injectable sleep that records each delay and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        await asyncio.sleep(0)


@pytest.fixture
def sleep() -> RecordingSleep:
    return RecordingSleep()


@pytest.fixture
def formats() -> ResponseFormatMemory:
    return ResponseFormatMemory()


def make_planner(
    base_url: str,
    *,
    sleep: Any = None,
    formats: ResponseFormatMemory | None = None,
    **options: Any,
) -> OpenAIPlanner:
    options.setdefault("api_key", None)
    options.setdefault("model", "qwen2.5vl")
    # these tests are about transport and prompt, not the model family: screenshot pixels
    # (test_profiles.py covers each family's profile)
    options.setdefault("profile", "generic")
    return OpenAIPlanner(
        base_url=base_url,
        sleep=sleep or RecordingSleep(),
        formats=formats if formats is not None else ResponseFormatMemory(),
        **options,
    )


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
