"""The immutable views every layer shares, and (from core/statuses.py, re-exported) the statuses,
kinds and stop reasons they hold."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BeforeValidator

from desktop_agent.core.refs import REDACTED, ElementRef
from desktop_agent.core.statuses import (
    STOP_REASONS,
    ApprovalDecision,
    Effect,
    Policy,
    Risk,
    RunKind,
    RunStatus,
    StepKind,
    StepStatus,
    StopReason,
)

if TYPE_CHECKING:
    from desktop_agent.core.sentences import Phrase

#: the statuses' module's names are the models' too (every layer imports them from here)
__all__ = [
    "ApprovalDecision",
    "ApprovalRequest",
    "Artifact",
    "Decision",
    "Effect",
    "Element",
    "ElementRef",
    "Grounding",
    "MonitorArea",
    "MonitorChoice",
    "Observation",
    "Policy",
    "REDACTED",
    "Risk",
    "RunKind",
    "RunStatus",
    "RunView",
    "STOP_REASONS",
    "ScreenLayout",
    "ScreenMapping",
    "StepKind",
    "StepStatus",
    "StepView",
    "StopReason",
    "SuspiciousText",
    "TaskSpec",
    "TokenUsage",
    "ToolResult",
    "VisionSetting",
    "monitor_of",
    "parse_monitor",
    "utcnow",
]

#: whether the model is sent the screen: asked of the model server (auto), or said by the user
VisionSetting = Literal["auto", "yes", "no"]

#: the key of a run's and a step's JSON (the API, the CLI's --json, MCP's structured results)
#: listing its fields that hold text from the screen or the model: data, never instructions
#: (the JSON's counterpart of the fence planner/screen_text.py puts around screen text)
UNTRUSTED_KEY = "untrusted"


def utcnow() -> datetime:
    return datetime.now(UTC)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """What a run is asked to do and with which model and limits."""

    goal: str
    max_steps: int = 20
    max_failures: int = 3
    allowed_tools: tuple[str, ...] = ()
    model: str = ""
    base_url: str = ""
    kind: RunKind = RunKind.AGENT
    #: the routine's name, for a routine run
    routine: str | None = None
    #: the model profile this run asked for ("" = the settings' choice for their model,
    #: else picked by the model's name; planner/profiles.py)
    model_profile: str = ""
    #: the monitor this run's model is shown ("" = the settings'; else auto, all or a
    #: number as `parse_monitor` reads it)
    monitor: str = ""


@dataclass(frozen=True, slots=True)
class RunView:
    id: str
    goal: str
    status: RunStatus
    stop_reason: StopReason | None
    step_count: int
    max_steps: int
    max_failures: int
    allowed_tools: tuple[str, ...]
    model: str
    base_url: str
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    message: str = ""
    #: model tokens so far (the server's usage; estimated where it gave none) and their cost
    #: by the price table (None: the model has no price)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tokens_estimated: bool = False
    cost: float | None = None
    kind: RunKind = RunKind.AGENT
    #: the routine's name, for a routine run
    routine: str | None = None
    #: the model profile the run asked for ("": the settings' choice, or by the model's name)
    model_profile: str = ""
    #: the monitor the run asked to be shown ("": the settings' choice)
    monitor: str = ""

    @classmethod
    def queued(cls, spec: TaskSpec, run_id: str, created_at: datetime) -> RunView:
        """A run asked for and not started: the view of `spec` (the store's new row, the
        Host's run admitted at the click)."""
        return cls(
            id=run_id,
            goal=spec.goal,
            status=RunStatus.QUEUED,
            stop_reason=None,
            step_count=0,
            max_steps=spec.max_steps,
            max_failures=spec.max_failures,
            allowed_tools=tuple(spec.allowed_tools),
            model=spec.model,
            base_url=spec.base_url,
            created_at=created_at,
            kind=spec.kind,
            routine=spec.routine,
            model_profile=spec.model_profile,
            monitor=spec.monitor,
        )

    def with_(self, **changes: Any) -> RunView:
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "goal": self.goal,
            "status": self.status.value,
            "stop_reason": self.stop_reason.value if self.stop_reason else None,
            "step_count": self.step_count,
            "max_steps": self.max_steps,
            "max_failures": self.max_failures,
            "allowed_tools": list(self.allowed_tools),
            "model": self.model,
            "base_url": self.base_url,
            "created_at": _iso(self.created_at),
            "started_at": _iso(self.started_at),
            "finished_at": _iso(self.finished_at),
            "message": self.message,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "tokens_estimated": self.tokens_estimated,
            "cost": self.cost,
            "kind": self.kind.value,
            "routine": self.routine,
            "model_profile": self.model_profile,
            "monitor": self.monitor,
            UNTRUSTED_KEY: ["message"] if self.message else [],
        }


@dataclass(frozen=True, slots=True)
class TokenUsage:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class SuspiciousText:
    """A text on the screen that looks like orders to an AI (core/injection.py), or the
    model's provider's own warning of one: the step note `suspicious_text`. `text` and `where`
    are the screen's words (data, never markup); `box` and `element` say where it is on the
    observation it was found on (not stored)."""

    text: str
    where: str
    rule: str
    box: tuple[int, int, int, int] | None = field(default=None, compare=False)
    element: int | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, str]:
        return {"text": self.text, "where": self.where, "rule": self.rule}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SuspiciousText:
        return cls(text=str(data["text"]), where=str(data["where"]), rule=str(data["rule"]))


@dataclass(frozen=True, slots=True)
class StepView:
    """One stored step row. `seq` orders the rows of a run; `index` is the turn."""

    run_id: str
    seq: int
    index: int
    kind: StepKind
    status: StepStatus
    started_at: datetime
    tool: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    summary: str = ""
    error: str | None = None
    screenshot: str | None = None
    thumbnail: str | None = None
    finished_at: datetime | None = None
    duration_ms: float | None = None
    reason: str | None = None
    raw_output: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float | None = None
    target: tuple[int, int] | None = None
    #: action rows: what the action did to the screen, known at the next observation
    effect: Effect | None = None
    #: action rows: what the action acted on, to find it again (core/targets.py)
    element: ElementRef | None = None
    #: observe rows: the texts on the screen that look like orders to an AI (the note
    #: `suspicious_text`; empty when the injection guard is off or found none)
    suspicious_text: tuple[SuspiciousText, ...] = ()
    #: action rows: the monitor the action is on when the desktop has several (`monitor_of`:
    #: the one the image shows, under `all` the one holding the point); None on one monitor
    monitor: MonitorArea | None = None

    def with_(self, **changes: Any) -> StepView:
        return replace(self, **changes)

    def short_args(self, width: int = 40) -> str:
        text = json.dumps(self.args, ensure_ascii=False, separators=(",", ":")) if self.args else ""
        return text if len(text) <= width else text[: width - 1] + "…"

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "seq": self.seq,
            "index": self.index,
            "kind": self.kind.value,
            "tool": self.tool,
            "args": self.args,
            "status": self.status.value,
            "summary": self.summary,
            "error": self.error,
            "screenshot": self.screenshot,
            "thumbnail": self.thumbnail,
            "started_at": _iso(self.started_at),
            "finished_at": _iso(self.finished_at),
            "duration_ms": self.duration_ms,
            "reason": self.reason,
            "raw_output": self.raw_output,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_ms": self.latency_ms,
            "target": list(self.target) if self.target else None,
            "effect": self.effect.value if self.effect else None,
            "element": self.element.to_json() if self.element else None,
            "suspicious_text": [note.to_json() for note in self.suspicious_text],
            "monitor": self.monitor.to_json() if self.monitor else None,
            UNTRUSTED_KEY: [name for name in _STEP_OUTSIDE_TEXT if getattr(self, name)],
        }


#: a step's fields that may hold text from outside: the screen's (a summary or an error
#: quotes a window's title or an element's name; the element acted on; the suspicious
#: texts) or the model's (its call's arguments, its reason, its raw answer)
_STEP_OUTSIDE_TEXT = (
    "args",
    "summary",
    "error",
    "reason",
    "raw_output",
    "element",
    "suspicious_text",
)


@dataclass(frozen=True, slots=True)
class Artifact:
    """A file of a run (a screenshot, a thumbnail, a crop): runs/<run id>/<name>."""

    run_id: str
    name: str
    data: bytes


#: what the loop hands to the store: a run's row, a step's row, an artifact file
StoreWrite = RunView | StepView | Artifact


@dataclass(frozen=True, slots=True)
class Element:
    """One UI element of an observation; `box` is (left, top, width, height) in screenshot px."""

    id: int
    role: str
    name: str
    box: tuple[int, int, int, int]
    enabled: bool = True
    focused: bool = False
    password: bool = False
    #: the monitor it is on (1 = primary) when the desktop has several, else 0
    monitor: int = 0

    @property
    def center(self) -> tuple[int, int]:
        left, top, width, height = self.box
        return left + width // 2, top + height // 2

    def line(self) -> str:
        left, top, width, height = self.box
        place = f" on monitor {self.monitor}" if self.monitor else ""
        return f"{self._head()} @ {left},{top} {width}x{height}{place}{self._flags()}"

    def line_relative(self) -> str:
        """The line of an element whose box is relative to its window (no id: never a
        target)."""
        left, top, width, height = self.box
        name = self.name.replace("\n", " ").replace('"', "'")
        return f'{self.role} "{name}" @ {left},{top} {width}x{height} in the window{self._flags()}'

    def line_elsewhere(self) -> str:
        """The line of an element on a monitor the image does not show: no box (there is no
        pixel of the image to give), only where it is."""
        return f"{self._head()} on monitor {self.monitor}{self._flags()}"

    def _head(self) -> str:
        name = self.name.replace("\n", " ").replace('"', "'")
        return f'[{self.id}] {self.role} "{name}"'

    def _flags(self) -> str:
        return "".join(
            f" {flag}"
            for flag, on in (
                ("focused", self.focused),
                ("disabled", not self.enabled),
                ("password", self.password),
            )
            if on
        )


@dataclass(frozen=True, slots=True)
class ScreenMapping:
    """How a screenshot pixel maps back to a physical screen pixel."""

    scale_x: float = 1.0
    scale_y: float = 1.0
    offset_x: int = 0
    offset_y: int = 0

    def to_screen(self, x: float, y: float) -> tuple[int, int]:
        return (
            self.offset_x + round(x * self.scale_x),
            self.offset_y + round(y * self.scale_y),
        )

    def to_image(self, x: float, y: float) -> tuple[int, int]:
        return (
            round((x - self.offset_x) / self.scale_x),
            round((y - self.offset_y) / self.scale_y),
        )


#: which monitor the observation shows: "auto" the one holding the active window (the
#: pointer's when no window is active), "all" every monitor as one image, N monitor N
#: (1 = the primary)
MonitorChoice = str | int
#: the highest monitor number a setting may name
MAX_MONITOR = 16


def parse_monitor(value: object) -> MonitorChoice:
    """A monitor setting as given ("auto", "all", "0" for all, or a number from 1): the
    value the capture takes, or ValueError with a one-line reason."""
    text = str(value).strip().casefold()
    if text in ("auto", "all"):
        return text
    if text == "0":
        return "all"
    if text.isdigit() and 1 <= int(text) <= MAX_MONITOR:
        return int(text)
    raise ValueError(
        f"monitor must be auto, all or a monitor number from 1 (the primary) to "
        f"{MAX_MONITOR}, not {value!r}"
    )


def _monitor_or_none(value: object) -> object:
    # before the type check: true is refused as parse_monitor says, not as two types
    return None if value is None else parse_monitor(value)


#: a request's monitor field (the API's, MCP's): None or a value parse_monitor reads
MonitorField = Annotated[MonitorChoice | None, BeforeValidator(_monitor_or_none)]


@dataclass(frozen=True, slots=True)
class MonitorArea:
    """One monitor of the desktop in physical pixels of the virtual screen (origins may be
    negative: a monitor left of or above the primary); `number` 1 is the primary, 0 all.
    The one type for a monitor: the capture's list (desktop/geometry.py `order_monitors`,
    numbered by place), an observation's layout, a step's and a question's monitor."""

    number: int
    left: int
    top: int
    width: int
    height: int
    primary: bool = False

    @property
    def rect(self) -> tuple[int, int, int, int]:
        return self.left, self.top, self.width, self.height

    @property
    def right(self) -> int:
        return self.left + self.width

    @property
    def bottom(self) -> int:
        return self.top + self.height

    def to_json(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "left": self.left,
            "top": self.top,
            "width": self.width,
            "height": self.height,
            "primary": self.primary,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MonitorArea:
        """The inverse of to_json; KeyError, TypeError or ValueError when it does not fit."""
        numbers = [data[key] for key in ("number", "left", "top", "width", "height")]
        primary = data.get("primary", False)
        if not all(type(n) is int for n in numbers) or type(primary) is not bool:
            raise TypeError(f"a monitor's fields are whole numbers: {data!r}")
        number, left, top, width, height = (int(n) for n in numbers)
        if number < 0 or width < 1 or height < 1:
            raise ValueError(f"not a monitor: {data!r}")
        return cls(number, left, top, width, height, primary=primary)

    def describe(self) -> str:
        """ "monitor 2, 1280x1024 at 0,0" (the primary says so)."""
        primary = " (the primary)" if self.primary else ""
        return (
            f"monitor {self.number}{primary}, {self.width}x{self.height} at {self.left},{self.top}"
        )


@dataclass(frozen=True, slots=True)
class ScreenLayout:
    """The monitors when an observation was made and the one its image shows (`shown`: its
    area; number 0 when the image is all monitors as one)."""

    shown: MonitorArea
    monitors: tuple[MonitorArea, ...]

    @property
    def several(self) -> bool:
        return len(self.monitors) > 1


@dataclass(frozen=True, slots=True)
class Observation:
    """What the model is shown: the encoded screenshot and the element inventory."""

    image: bytes
    mime: str
    width: int
    height: int
    elements: tuple[Element, ...] = ()
    mapping: ScreenMapping = field(default_factory=ScreenMapping)
    thumbnail: bytes | None = None
    inventory_backend: str = ""
    screenshot_path: str | None = None
    #: a small grey image of the screen (the observer's choice of size), for comparing two
    #: observations cheaply (did the last action change anything?); empty when not made
    signature: bytes = b""
    #: the element list's boxes are drawn on the image with their ids (set-of-mark)
    marked: bool = False
    #: the app's own windows (main window, dialogs, tray menu, acting panel): the parts of
    #: them no other listed window covers, in screenshot px. Never shown to the model (they
    #: are not in `elements`); input aimed at them is refused (core/own_windows.py)
    own_windows: tuple[Element, ...] = ()
    #: text read off the screen beside the elements' names — the contents of text and
    #: document controls, labels, the controls of windows other than the active one, and
    #: what OCR reads in windows that have no accessible text (a web view, a notification) —
    #: each an Element with id 0 whose name is the text and whose role says what held it.
    #: Never a target of an action; the injection guard reads it and the prompt fences it
    texts: tuple[Element, ...] = ()
    #: the monitors and the one the image shows; None when the observer does not know them
    layout: ScreenLayout | None = None
    #: elements on monitors the image does not show (their windows first), ids after the
    #: shown ones: listed to the model, never a target of input from this image
    elsewhere: tuple[Element, ...] = ()
    #: the active window's controls where the desktop hides the window's place (Wayland)
    #: and it was not found on the image: id 0, boxes in the window's own px from its
    #: top-left corner, not the image's. Listed to the model, never a target of input
    window_relative: tuple[Element, ...] = ()
    #: the title of the window `window_relative` is relative to
    relative_to: str = ""
    #: why the injection guard's read of the screen's texts failed on this look (the
    #: inventory still busy past the texts' budget, a failed read, a region's OCR failed or
    #: past its timeout, OCR past its budget): the model may see orders the guard did not;
    #: "" when they were read, or when the observer has no such read (the guard off, a
    #: backend without texts, no OCR program)
    unread: str = ""
    #: what identifies each top-level and notification window on the screen at this look
    #: (opaque: X11 ids as text), for `WindowsNowSource`: a window that came up before the
    #: action was sent; empty when the observer cannot tell
    window_ids: frozenset[str] = frozenset()

    def inventory_text(self) -> str:
        return "\n".join(element.line() for element in self.elements)

    def element(self, element_id: int) -> Element | None:
        for element in self.elements:
            if element.id == element_id:
                return element
        return None

    def with_(self, **changes: Any) -> Observation:
        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class SafetyCheck:
    """A question the model's provider asks the person before a turn's actions run (OpenAI's
    `pending_safety_checks`): its id (echoed back only once allowed), code and message, both
    the provider's text (data, never markup)."""

    id: str
    code: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class Decision:
    """The planner's choice for one turn."""

    action: Literal["tool", "done", "fail"]
    tool: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    message: str = ""
    raw: str = ""
    usage: TokenUsage | None = None
    latency_ms: float | None = None
    #: with "fail": the run's stop reason when it is not plain `error` (a routine mismatch)
    stop_reason: StopReason | None = None
    #: with "tool": the turn's further actions, in order (a model's batch, e.g. one OpenAI
    #: computer_call): each observed, gated, executed and stored as its own action step
    batch: tuple[Decision, ...] = ()
    #: asked of the person before any action of the turn runs, whatever the policy or grants
    safety_checks: tuple[SafetyCheck, ...] = ()


@dataclass(frozen=True, slots=True)
class Grounding:
    """Where a coordinate call's target was found: the point to act on, and how it was had.

    `point` is the first point itself when the refinement failed (`refined` False; `summary`
    says why); points and `crop` (left, top, width, height) are screenshot pixels.
    """

    point: tuple[int, int]
    first: tuple[int, int]
    refined: bool
    summary: str
    crop: tuple[int, int, int, int] | None = None
    #: the image the model was asked about (the crop, or the whole screen for a grounder)
    image: bytes | None = None
    mime: str = "image/jpeg"
    raw: str = ""
    #: the grounding requests' tokens, the server's or estimated (then `tokens_estimated`)
    usage: TokenUsage | None = None
    tokens_estimated: bool = False
    #: the model those tokens are priced as ("": the run's own model)
    model: str = ""
    latency_ms: float | None = None


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool did, in one line the model sees next turn."""

    ok: bool
    summary: str = ""
    error: str | None = None
    target: tuple[int, int] | None = None
    #: False for a failure that is not the tool's (errors.NotTheToolsFault: the desktop
    #: changed under it, or the call named what the screen does not have): its circuit
    #: breaker does not count it
    tool_fault: bool = True

    @classmethod
    def success(cls, summary: str, *, target: tuple[int, int] | None = None) -> ToolResult:
        return cls(ok=True, summary=summary, target=target)

    @classmethod
    def failure(cls, error: str, *, tool_fault: bool = True) -> ToolResult:
        return cls(ok=False, error=error, summary=error, tool_fault=tool_fault)


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """A question to the human: may this tool run with these arguments?"""

    id: str
    run_id: str
    index: int
    tool: str
    args: dict[str, Any]
    reason: str
    risk: Risk
    offer_run_grant: bool
    timeout_s: float
    screenshot: str | None = None
    target: tuple[int, int] | None = None
    created_at: datetime = field(default_factory=utcnow)
    #: why this call asks every time and offers no run grant (a launcher key, a password
    #: field, a line into a terminal); "" for an ordinary question
    caution: str = ""
    #: the arguments as the person asked sees them: as they will run, the text shown as it
    #: will be typed unless it goes into a known password field (`args` is what is stored:
    #: text hidden wherever the field is not known to be plain); None: `args`
    shown_args: dict[str, Any] | None = None
    #: the text of a call into a known password field, for the dialog's "Show" toggle only:
    #: never in `to_json` (the API, the CLI's --json), `repr` or a log line
    secret: str = field(default="", repr=False, compare=False)
    #: the model's provider's own question about the turn's actions (never granted, never
    #: answered by the app itself)
    safety_check: SafetyCheck | None = None
    #: the texts on the screen that look like orders to an AI, when they are why it asks
    #: (only a person answers it: an automatic `--approve all` denies it)
    suspicious_text: tuple[SuspiciousText, ...] = ()
    #: what the call acts on, as the loop resolved it before the gate (the step's `element`):
    #: the words of its sentence, never part of the gate's judgement
    element: ElementRef | None = None
    #: the monitor the action is on, when the desktop has several (`monitor_of`): the dialog
    #: opens there and says which; None on one monitor or when it cannot be told
    monitor: MonitorArea | None = None

    @property
    def only_a_person_answers(self) -> bool:
        """Whether only a person at this desktop may allow this call, never a program: a
        call that asks every time (a dangerous tool, a launcher key, a paste, a line into a
        terminal, a password field, a sensitive target: its `caution`, no run grant
        offered), the model's provider's safety check, or the screen's texts that look like
        orders to an AI. An MCP client, `--approve all` and an API client may deny it, never
        allow it (docs/api.md, docs/mcp.md "Whose answer")."""
        return (
            bool(self.caution)
            or self.risk is Risk.DANGEROUS
            or not self.offer_run_grant
            or self.safety_check is not None
            or bool(self.suspicious_text)
        )

    @property
    def sentence(self) -> Phrase:
        """The call in one plain sentence (core/sentences.py), of the arguments as shown."""
        from desktop_agent.core.sentences import sentence

        return sentence(self.tool, self.to_show, self.element)

    @property
    def to_show(self) -> dict[str, Any]:
        """The arguments to show the person asked."""
        return self.args if self.shown_args is None else self.shown_args

    @property
    def revealed_args(self) -> dict[str, Any]:
        """`to_show` with a known password field's text in place of its mark (the dialog's
        "Show" toggle)."""
        if not self.secret:
            return self.to_show
        return {k: self.secret if v == REDACTED else v for k, v in self.to_show.items()}

    @property
    def question(self) -> str:
        """The question in our own words, one line, every part from outside quoted (`quote`:
        a newline in a target's name or the model's reason cannot start a line that reads as
        ours): the MCP client's and the API's text."""
        from desktop_agent.core.text import quote

        # the sentence's outside parts are quoted by it (core/sentences.said)
        text = f"Allow the desktop agent to do this: {self.sentence}?"
        if self.caution:
            text += f" It asks every time: {quote(self.caution)}."
        if self.safety_check is not None:
            check = self.safety_check
            text += (
                f" The model's provider asks (safety check {quote(check.code)}): "
                f"{quote(check.message)}."
            )
        if self.monitor is not None:
            text += f" It is on {self.monitor.describe()}."
        if self.reason:
            text += f" The model's reason: {quote(self.reason)}"
        return text

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": self.id,
            "run_id": self.run_id,
            "index": self.index,
            "tool": self.tool,
            "args": self.args,
            "shown_args": self.to_show,
            "question": self.question,
            "reason": self.reason,
            "risk": self.risk.value,
            "offer_run_grant": self.offer_run_grant,
            "timeout_s": self.timeout_s,
            "screenshot": self.screenshot,
            "target": list(self.target) if self.target else None,
            "created_at": _iso(self.created_at),
            "caution": self.caution,
            "safety_check": self.safety_check.to_json() if self.safety_check else None,
            "suspicious_text": [note.to_json() for note in self.suspicious_text],
            "element": self.element.to_json() if self.element else None,
            "sentence": str(self.sentence),
            "monitor": self.monitor.to_json() if self.monitor else None,
        }
        body[UNTRUSTED_KEY] = [name for name in _APPROVAL_OUTSIDE_TEXT if body[name]]
        return body


#: an approval's fields that may hold text from outside, unquoted: the model's call and
#: reason, the screen's (the caution quotes a title or a text; the element acted on; the
#: suspicious texts) and the provider's safety check; `question` and `sentence` are ours,
#: every outside part in them quoted (`quote`)
_APPROVAL_OUTSIDE_TEXT = (
    "args",
    "shown_args",
    "reason",
    "caution",
    "safety_check",
    "suspicious_text",
    "element",
)


def monitor_of(observation: Observation, target: tuple[int, int] | None) -> MonitorArea | None:
    """The monitor an action on `observation` is on, when the desktop has several: the one
    the image shows, or (the image is all monitors) the one holding `target` (screenshot
    pixels); None on one monitor, without a layout, or all monitors and no target."""
    layout = observation.layout
    if layout is None or not layout.several:
        return None
    if layout.shown.number != 0:
        return layout.shown
    if target is None:
        return None
    x, y = observation.mapping.to_screen(*target)
    for monitor in layout.monitors:
        left, top, width, height = monitor.rect
        if left <= x < left + width and top <= y < top + height:
            return monitor
    return None
