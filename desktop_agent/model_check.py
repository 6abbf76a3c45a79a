"""The one model check: does the server answer, does it have the model, can the model see.

Every face asks it here — a run before its first turn, the window's model line, the settings
dialog's Test connection, `doctor` — so every one sends the API key by the one rule
(`settings.api_key_for`: the keyring's key only to the saved server, never over plain http
afar) and none sends a chat completion. Outside a run a face asks it through the Host
(`Host.check_model`, `vision_verdict`, `connection_report`), which holds it as it holds a
calibration: every stop gives up its request in flight, and one asked before a stop that
had not begun yet sends nothing (host.py). `verdict_of` and `report_of` say what it found
in the window's and the dialog's words.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

from desktop_agent.core.errors import (
    DesktopAgentError,
    ModelNotListed,
    ModelUnreachable,
    VisionRequired,
)

if TYPE_CHECKING:
    from desktop_agent.core.models import VisionSetting
    from desktop_agent.planner import VisionVerdict
    from desktop_agent.settings import Settings

__all__ = ["ModelCheck", "VisionVerdict", "check_model", "report_of", "verdict_of"]


@dataclass(frozen=True, slots=True)
class ModelCheck:
    """What the check found about `model` at `base_url`.

    Attributes:
        unreachable: the server does not answer (its line names what does answer here).
        not_listed: the server answers but lists its models, and this one is not among them.
        verdict: whether the model can see; None when the server does not answer.
    """

    base_url: str
    model: str
    unreachable: ModelUnreachable | None = None
    not_listed: ModelNotListed | None = None
    verdict: VisionVerdict | None = None

    @property
    def ok(self) -> bool:
        return self.refusal() is None

    def refusal(self, *, listed: bool = True) -> DesktopAgentError | None:
        """Why a run with this model would be refused (None: it would not). `listed=False`
        lets a model the server does not list through (a run tries it anyway)."""
        if self.unreachable is not None:
            return self.unreachable
        if listed and self.not_listed is not None:
            return self.not_listed
        if self.verdict is not None and not self.verdict.can_see:
            from desktop_agent.planner.capabilities import vision_refusal

            return VisionRequired(vision_refusal(self.model, self.base_url, self.verdict))
        return None


async def check_model(
    settings: Settings,
    *,
    base_url: str | None = None,
    model: str | None = None,
    vision: VisionSetting | None = None,
    fresh: bool = False,
    discover: bool = True,
) -> ModelCheck:
    """Check `model` at `base_url` (default: the settings'); `fresh` asks the server again
    instead of the cached vision verdict (the settings dialog's Test connection).
    `discover`: a server that does not answer is told with what does answer on this machine
    (`doctor` lists those itself)."""
    from desktop_agent.planner import VisionCache, check_reachable, resolve_vision
    from desktop_agent.planner.capabilities import ensure_listed
    from desktop_agent.planner.discovery import with_servers_found
    from desktop_agent.settings import api_key_for

    url = base_url or settings.base_url
    name = model or settings.model
    # the keyring: D-Bus, maybe a prompt — off the loop's thread
    api_key = await asyncio.to_thread(api_key_for, url, settings)
    try:
        listed = await check_reachable(url, api_key)
    except ModelUnreachable as error:
        if discover:
            # the way forward: what does answer on this machine (loopback, no key sent)
            error = await with_servers_found(error, settings.probe_ports)
        return ModelCheck(url, name, unreachable=error)
    not_listed = None
    try:
        ensure_listed(name, url, listed)
    except ModelNotListed as error:
        not_listed = error
    verdict = await resolve_vision(
        base_url=url,
        model=name,
        api_key=api_key,
        setting=vision or settings.vision,
        cache=VisionCache() if fresh else None,
    )
    return ModelCheck(url, name, not_listed=not_listed, verdict=verdict)


def verdict_of(checked: ModelCheck) -> VisionVerdict:
    """Whether the model checked can see (the window's model line). Raises the
    ModelUnreachable when its server does not answer, the ModelNotListed when the server does
    not have the model: there is no verdict then."""
    problem = checked.unreachable or checked.not_listed
    if problem is not None:
        raise problem
    assert checked.verdict is not None
    return checked.verdict


def report_of(checked: ModelCheck) -> str:
    """The settings dialog's Test connection, in one line: whether the server answers and
    the model can see. Raises the ModelUnreachable when the server does not answer."""
    if checked.unreachable is not None:
        raise checked.unreachable
    verdict = checked.verdict
    assert verdict is not None
    sees = "can see screenshots" if verdict.can_see else "cannot see screenshots"
    return f"The server answers; {checked.model} {sees} ({verdict.detail})."
