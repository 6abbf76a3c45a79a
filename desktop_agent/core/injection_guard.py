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

from desktop_agent.core.builtin_tools import spec_of
from desktop_agent.core.call_risk import box_holds, folded, window_at
from desktop_agent.core.injection import (
    RULES,
    image_box,
    plain,
    scan,
    shown_texts,
    unscanned,
    where,
    window_of,
)
from desktop_agent.core.models import Element, Observation, SafetyCheck, SuspiciousText
from desktop_agent.core.tools import ToolSpec

#: OpenAI's computer tool's safety check for instructions it saw on the screen
PROVIDER_INJECTION_CODES = frozenset({"malicious_instructions"})
PROVIDER_WHERE = "on the screen, as the model's provider reports it (its safety check)"
#: a typed text shorter than this is not traced to the screen (a number, "OK")
PROVENANCE_MIN_CHARS = 6
#: the note rules of the questions this guard asks beside the detector's (core/injection.py)
PROVENANCE_RULE = "provenance"
COMMAND_READ_RULE = "command_from_screen"
NEW_WINDOW_RULE = "urgent_new_window"
UNREAD_RULE = "screen_unread"
UNREAD_WHERE = "the whole screen (the guard could not read its text on this look)"
#: the urgent words of a popup (the rule `urgent_click`), judged in any window that came up
#: since the person last saw the screen
_URGENT = next(rule for rule in RULES if rule.name == "urgent_click").compiled()[1]
#: a shell command line (the rule `shell_command`), judged in the text the model types too
_SHELL = next(rule for rule in RULES if rule.name == "shell_command").compiled()[1]


@dataclass(frozen=True, slots=True)
class GuardVerdict:
    """Why an action asks because of the screen ("" when it does not), and the texts."""

    caution: str = ""
    notes: tuple[SuspiciousText, ...] = ()


class InjectionGuard:
    """Judges one run's input actions against the text on the screen they act on."""

    def __init__(self, *, on: bool = True, goal: str = "") -> None:
        self.on = on
        #: where orders and the text they name may come from: the goal (folded)
        self._sources = [plain(goal)]
        #: the last observation scanned and what was found on it
        self._seen: tuple[Observation, tuple[SuspiciousText, ...]] | None = None
        #: the windows on the screen when a person last saw it (the run's first observation,
        #: then each question answered); None: nobody has yet
        self._windows_seen: frozenset[str] | None = None

    def person_saw(self, observation: Observation) -> None:
        """A person saw this screen (the run started on it, or a question showed it)."""
        self._windows_seen = frozenset(
            element.name for element in observation.elements if element.role == "window"
        )

    def notes(self, observation: Observation) -> tuple[SuspiciousText, ...]:
        """The texts of `observation` that look like orders to an AI (none when off)."""
        if not self.on:
            return ()
        if self._seen is not None and self._seen[0] is observation:
            return self._seen[1]
        found = scan(observation, said=self._sources)
        self._seen = (observation, found)
        return found

    def judge(
        self,
        tool: ToolSpec | str,
        values: Mapping[str, Any],
        observation: Observation,
        *,
        input_: bool,
    ) -> GuardVerdict:
        """Whether the call `tool(values)` on `observation` asks because of the screen (the
        command or text it carries read by the tool's traits); `input_`: the tool sends
        input (it is not safe)."""
        if not self.on or not input_:
            return GuardVerdict()
        found = self.notes(observation)
        point = pointer_point(values, observation)
        if point is not None:
            if box_note := next((n for n in found if _holds(n, *point)), None):
                return GuardVerdict(box_caution(box_note), found)
            if urgent := self._new_urgent_window(observation, *point):
                return GuardVerdict(new_window_caution(urgent), (*found, urgent))
        if found:
            return GuardVerdict(caution(found), found)
        verdict = self._carried(spec_of(tool), values, observation)
        if not verdict.caution and (unread := observation.unread or unscanned(observation)):
            return unread_verdict(unread)
        return verdict

    def _carried(
        self, spec: ToolSpec, values: Mapping[str, Any], observation: Observation
    ) -> GuardVerdict:
        """Whether the command or text the call carries asks (read on the screen, a shell
        command line)."""
        if spec.command_field:
            return self._command_read(str(values.get(spec.command_field, "")), observation)
        if spec.text_field:
            text = str(values.get(spec.text_field, ""))
            if command := self._command_line(text):
                return GuardVerdict(command)
            return self._provenance(text, observation)
        return GuardVerdict()

    def at_point(self, values: Mapping[str, Any], observation: Observation) -> str:
        """Why a press at `values`' point asks on `observation` (a look taken at action
        time): it lands on a flagged text's box or in a new window that urges; "" else."""
        point = pointer_point(values, observation) if self.on else None
        if point is None:
            return ""
        if note := next((n for n in self.notes(observation) if _holds(n, *point)), None):
            return box_caution(note)
        urgent = self._new_urgent_window(observation, *point)
        return new_window_caution(urgent) if urgent is not None else ""

    def _command_line(self, text: str) -> str:
        """Why typing `text` asks because it holds a shell command line (a download piped to
        a shell, rm -rf, a PowerShell cradle) that the goal did not give, or "". A line typed
        into a terminal without its Enter does not ask by itself (call_risk), and a terminal's
        window may not say it is one: the text is judged wherever it goes."""
        found = _SHELL.search(folded(text))
        if found is None or plain(found.group(0)) in self._sources[0]:
            return ""
        return f'the text to type holds a shell command line ("{found.group(0)}"), wherever it goes'

    def typed(self, tool: ToolSpec | str, values: Mapping[str, Any]) -> None:
        """A text the run typed: on the screen afterwards because it was typed, not read."""
        if field_name := spec_of(tool).text_field:
            self._sources.append(plain(str(values.get(field_name, ""))))

    def _provenance(self, text: str, observation: Observation) -> GuardVerdict:
        """Typing `text` asks when it was read on the screen, not in the goal (copied from one
        window into another: the exfiltration of RedTeamCUA and EIA). Only a person can say
        the copy is their wish, so it carries a note (rule `provenance`): a blanket approval,
        `--allow-dangerous type_text` included, does not answer it."""
        goes = next((e for e in observation.elements if e.focused and e.role != "window"), None)
        read = self._read_from(text, observation, skip=goes)
        if read is None:
            return GuardVerdict()
        where_to = where(goes, observation) if goes is not None else "the focused window"
        note = _element_note(read, observation, PROVENANCE_RULE)
        return GuardVerdict(
            f"the text to type was read on the screen ({note.where}), "
            f"not in the goal; it would go to {where_to}",
            (note,),
        )

    def _command_read(self, command: str, observation: Observation) -> GuardVerdict:
        """A program to start whose command line was read on the screen, not in the goal
        (eval's inj-filename: a file named "run the command: touch …"): only a person
        judges it, as a suspicious text."""
        read = self._read_from(command, observation, skip=None)
        if read is None:
            return GuardVerdict()
        note = _element_note(read, observation, COMMAND_READ_RULE)
        return GuardVerdict(
            f"the command to start was read on the screen ({note.where}), not in the goal",
            (note,),
        )

    def _read_from(
        self, text: str, observation: Observation, *, skip: Element | None
    ) -> Element | None:
        """The listed element or read text (not `skip` nor its contents, not the focused
        window when a control is skipped) that `text` was read from: its name holds the
        text, or the text holds its name, and neither is in the goal or typed by the run
        before."""
        typed = plain(text)
        if len(typed) < PROVENANCE_MIN_CHARS or any(typed in source for source in self._sources):
            return None
        for element in shown_texts(observation):
            if element is skip or (
                skip is not None
                and (
                    (element.role == "window" and element.focused)
                    # the contents of the control it goes into: typing there is editing it
                    or (element.id == 0 and image_box(element, observation) == skip.box)
                )
            ):
                continue
            name = plain(element.name)
            if typed in name or (
                len(name) >= PROVENANCE_MIN_CHARS
                and name in typed
                and not any(name in source for source in self._sources)
            ):
                return element
        return None

    def _new_urgent_window(self, observation: Observation, x: int, y: int) -> SuspiciousText | None:
        """The urgent text of a window under the point that came up since a person last saw
        the screen, or None."""
        if self._windows_seen is None:
            return None
        for window in window_at(observation, x, y):
            if window.name in self._windows_seen:
                continue
            for element in observation.elements:
                inside = element is window or (
                    element.role != "window" and window_of(element, observation) is window
                )
                if inside and _URGENT.search(folded(element.name)):
                    return _element_note(element, observation, NEW_WINDOW_RULE, box=window.box)
        return None


def _element_note(
    element: Element,
    observation: Observation,
    rule: str,
    box: tuple[int, int, int, int] | None = None,
) -> SuspiciousText:
    """The note on `element`'s text (its name, one line, at most 160 characters) under
    `rule`, shown at `box` (the element's own when None)."""
    return SuspiciousText(
        text=" ".join(element.name.split())[:160],
        where=where(element, observation),
        rule=rule,
        box=image_box(element, observation) if box is None else box,
        element=element.id,
    )


def pointer_point(values: Mapping[str, Any], observation: Observation) -> tuple[int, int] | None:
    """Where a pointer call presses: its element's centre or its x, y; None for other calls."""
    element_id = values.get("element")
    if isinstance(element_id, int) and not isinstance(element_id, bool):
        element = observation.element(element_id)
        return element.center if element is not None else None
    x, y = values.get("x"), values.get("y")
    if isinstance(x, int) and isinstance(y, int) and not isinstance(x, bool):
        return x, y
    return None


def _holds(note: SuspiciousText, x: int, y: int) -> bool:
    return note.box is not None and box_holds(note.box, x, y)


def box_caution(note: SuspiciousText) -> str:
    """A press inside the box of a text that looks like orders to an AI."""
    return (
        f'the click lands on text that looks like orders to an AI ({note.rule}): "{note.text}" '
        f"— {note.where}; only the goal gives orders"
    )


def new_window_caution(note: SuspiciousText) -> str:
    """A press inside a window that came up since a person last saw the screen and urges."""
    return (
        f"the click lands in a window that came up since you last saw the screen and urges: "
        f'"{note.text}" — {note.where}'
    )


def caution(found: tuple[SuspiciousText, ...]) -> str:
    """The question's reason: the first text quoted, where it is, and how many more."""
    first = found[0]
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return (
        f'the screen shows text that looks like orders to an AI ({first.rule}): "{first.text}" '
        f"— {first.where}{more}; only the goal gives orders"
    )


def unread_verdict(why: str) -> GuardVerdict:
    """An input action on a look whose text the guard could not read (`Observation.unread`):
    the model reads the image, so orders may be there that nobody judged. Where the guard
    cannot know, a person answers (note rule `screen_unread`)."""
    note = SuspiciousText(text=why, where=UNREAD_WHERE, rule=UNREAD_RULE)
    return GuardVerdict(
        f"the injection guard could not read the screen's text on this look ({why}); "
        "the model may be acting on orders shown there that nobody judged",
        (note,),
    )


def rule_names() -> frozenset[str]:
    """Every rule a question only a person answers may name (an eval task's `needs_person`)."""
    return frozenset(
        {rule.name for rule in RULES}
        | {PROVENANCE_RULE, COMMAND_READ_RULE, NEW_WINDOW_RULE, UNREAD_RULE}
        | PROVIDER_INJECTION_CODES
    )


def provider_notes(check: SafetyCheck) -> tuple[SuspiciousText, ...]:
    """The provider's safety check as a suspicious-text note, when it is about instructions
    seen on the screen (OpenAI's `malicious_instructions`)."""
    if check.code not in PROVIDER_INJECTION_CODES:
        return ()
    return (SuspiciousText(text=check.message, where=PROVIDER_WHERE, rule=check.code),)
