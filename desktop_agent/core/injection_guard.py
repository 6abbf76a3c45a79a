"""The injection guard: what the gate asks about because of text on the screen (issue 31).

One per run (core/loop.py). While the observation an input action acts on shows text that
looks like orders to an AI (core/injection.py), the action asks, under any policy and grant,
and only a person answers (`ApprovalRequest.suspicious_text`). Each action is judged on the
screen it acts on, so once the text is gone from it nothing more asks. With the setting
`injection_guard = off` nothing here asks and nothing is marked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from desktop_agent.core.injection import scan
from desktop_agent.core.models import Observation, SafetyCheck, SuspiciousText

#: OpenAI's computer tool's safety check for instructions it saw on the screen
PROVIDER_INJECTION_CODES = frozenset({"malicious_instructions"})
PROVIDER_WHERE = "on the screen, as the model's provider reports it (its safety check)"


@dataclass(frozen=True, slots=True)
class GuardVerdict:
    """Why an action asks because of the screen ("" when it does not), and the texts."""

    caution: str = ""
    notes: tuple[SuspiciousText, ...] = ()


class InjectionGuard:
    """Judges one run's input actions against the text on the screen they act on."""

    def __init__(self, *, on: bool = True) -> None:
        self.on = on
        #: the last observation scanned and what was found on it
        self._seen: tuple[Observation, tuple[SuspiciousText, ...]] | None = None

    def notes(self, observation: Observation) -> tuple[SuspiciousText, ...]:
        """The texts of `observation` that look like orders to an AI (none when off)."""
        if not self.on:
            return ()
        if self._seen is not None and self._seen[0] is observation:
            return self._seen[1]
        found = scan(observation)
        self._seen = (observation, found)
        return found

    def judge(
        self, tool: str, values: Mapping[str, Any], observation: Observation, *, input_: bool
    ) -> GuardVerdict:
        """Whether the call `tool(values)` on `observation` asks because of the screen;
        `input_`: the tool sends input (it is not safe)."""
        if not self.on or not input_:
            return GuardVerdict()
        found = self.notes(observation)
        if not found:
            return GuardVerdict()
        return GuardVerdict(caution(found), found)


def caution(found: tuple[SuspiciousText, ...]) -> str:
    """The question's reason: the first text quoted, where it is, and how many more."""
    first = found[0]
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return (
        f'the screen shows text that looks like orders to an AI ({first.rule}): "{first.text}" '
        f"— {first.where}{more}; only the goal gives orders"
    )


def provider_notes(check: SafetyCheck) -> tuple[SuspiciousText, ...]:
    """The provider's safety check as a suspicious-text note, when it is about instructions
    seen on the screen (OpenAI's `malicious_instructions`)."""
    if check.code not in PROVIDER_INJECTION_CODES:
        return ()
    return (SuspiciousText(text=check.message, where=PROVIDER_WHERE, rule=check.code),)
