"""The screenshot as the model is sent it: the observer's bytes, or scaled to its budget."""

from __future__ import annotations

import asyncio
import base64
import io
from dataclasses import dataclass

from desktop_agent.core.models import Observation
from desktop_agent.planner.profiles import ModelProfile, sent_size


@dataclass(frozen=True, slots=True)
class ShownImage:
    """A base64 data URL (never a link) and the pixel size the model sees."""

    url: str
    width: int
    height: int


def data_url(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def _scaled(observation: Observation, width: int, height: int) -> bytes:
    from PIL import Image  # lazily: only profiles with an image budget need it

    with Image.open(io.BytesIO(observation.image)) as image:
        small = image.convert("RGB").resize((width, height), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    small.save(out, format="JPEG", quality=85)
    return out.getvalue()


async def shown_image(observation: Observation, profile: ModelProfile) -> ShownImage:
    """The observation's image, scaled down (in a thread) when it exceeds the profile's budget."""
    width, height = sent_size(profile, observation.width, observation.height)
    if (width, height) == (observation.width, observation.height):
        return ShownImage(data_url(observation.mime, observation.image), width, height)
    data = await asyncio.to_thread(_scaled, observation, width, height)
    return ShownImage(data_url("image/jpeg", data), width, height)
