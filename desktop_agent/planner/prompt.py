"""The request the model sees: system prompt, compact step history, screenshot and inventory."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Sequence
from itertools import groupby
from typing import TYPE_CHECKING, Any

from desktop_agent.core.models import Observation, ScreenLayout, StepKind, StepStatus, StepView
from desktop_agent.core.ports import DecideRequest
from desktop_agent.core.tools import ToolSpec
from desktop_agent.planner.screen_text import (
    SCREEN_TEXT_RULE,
    fenced,
    inventory_lines,
    screen_text_block,
)

if TYPE_CHECKING:
    from desktop_agent.planner.profiles import ModelSpace

#: the last turns shown one line each; older ones are folded into one summary line
FULL_TURNS = 8
_ARGS_CHARS = 160
_TEXT_CHARS = 200
#: transport errors start so (see client.py); they are not the model's fault
TRANSPORT_PREFIX = "model server"

_PIXEL_RULE = "Coordinates are pixels of the screenshot you are shown (0,0 is its top-left corner)."
_RULES = f"""\
Rules:
- Choose exactly one action per turn. You will see the screen again after it.
- {_PIXEL_RULE}
  Instead of x and y you may give "element": the id of an element in the list.
- When you click, move or drag by x and y, name what you aim at in "target" among the
  args, e.g. "target": "the Save button in the dialog": the point is then looked for again.
- Answer "done" only when the screenshot visibly shows that the goal is reached.
- Answer "fail" when the goal cannot be reached (say why in "reason").
- {SCREEN_TEXT_RULE}
- If an action failed, look at the screen and try another way; do not repeat it blindly.
- A small panel in a corner of the screen showing the goal, the current step and a Stop
  button ("Desktop Agent — acting") is your own status panel: ignore it and never act on
  it. The areas of the image your own windows cover are named each turn when known."""

_FORMAT = """\
Answer with one JSON object and nothing else, in one of these forms:
{"action": "tool", "tool": "<tool name>", "args": {<arguments>}, "reason": "<why>"}
{"action": "done", "message": "<what was achieved>", "reason": "<what on screen shows it>"}
{"action": "fail", "reason": "<why the goal cannot be reached>"}"""


def compact_schema(schema: Any) -> Any:
    """A pydantic JSON schema without titles and without the `| None` noise of optional fields."""
    if isinstance(schema, list):
        return [compact_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" or (key == "default" and value is None):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: compact_schema(sub) for name, sub in value.items()}
        elif key == "anyOf" and isinstance(value, list):
            options = [option for option in value if option != {"type": "null"}]
            if len(options) == 1:
                out.update(compact_schema(options[0]))
            else:
                out[key] = compact_schema(options)
        else:
            out[key] = compact_schema(value)
    return out


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def tools_text(tools: Sequence[ToolSpec]) -> str:
    """One paragraph per tool: name, description and its argument schema (from pydantic)."""
    lines = []
    for spec in tools:
        schema = compact_schema(spec.json_schema())
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        args = _dumps(properties) if properties else "{} (no arguments)"
        lines.append(f"- {spec.name}: {spec.description}\n  args: {args}")
        if required:
            lines.append(f"  required: {', '.join(required)}")
    return "\n".join(lines)


def system_prompt(goal: str, tools: Sequence[ToolSpec], coordinates: str | None = None) -> str:
    """The run's system message; `coordinates` (from the model's profile) replace the pixels."""
    rules = _RULES
    if coordinates is not None:
        rules = rules.replace(_PIXEL_RULE, f"Coordinates are {coordinates} of the image.")
    return (
        "You operate a computer's desktop for its user, one action at a time, to reach a goal.\n"
        "Each turn you are shown the screen as an image, a list of UI elements, and the steps "
        "taken so far.\n\n"
        f"Goal: {goal}\n\n"
        f"Tools you may use (only these):\n{tools_text(tools)}\n\n"
        f"{_FORMAT}\n\n{rules}"
    )


def decision_schema(tools: Sequence[ToolSpec]) -> dict[str, Any]:
    """The JSON schema of an answer, for `response_format`; arguments are checked afterwards."""
    names = [spec.name for spec in tools]
    return {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["tool", "done", "fail"]},
            "tool": {"type": "string", "enum": names} if names else {"type": "string"},
            "args": {"type": "object"},
            "reason": {"type": "string"},
            "message": {"type": "string"},
        },
        "required": ["action", "reason"],
        "additionalProperties": False,
    }


# ── history ──────────────────────────────────────────────────────────────────


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _turn_line(index: int, rows: Sequence[StepView]) -> str:
    by_kind = {row.kind: row for row in rows}
    observe = by_kind.get(StepKind.OBSERVE)
    decide = by_kind.get(StepKind.DECIDE)
    action = by_kind.get(StepKind.ACTION)
    if observe is not None and observe.status is StepStatus.FAILED:
        error = _clip(observe.error or "", _TEXT_CHARS)
        return f"{index}. the screen could not be observed: {error}"
    if decide is None:
        return f"{index}. (no decision)"
    if decide.status is not StepStatus.OK:
        error = _clip(decide.error or "no answer", _TEXT_CHARS)
        if error.startswith(TRANSPORT_PREFIX):
            return f"{index}. no answer from the model: {error}"
        return f"{index}. your answer was not valid: {error}"
    tool = decide.tool or "?"
    args = _clip(_dumps(decide.args), _ARGS_CHARS) if decide.args else "{}"
    if action is None:
        return f"{index}. {tool} {args} → not run"
    if action.status is StepStatus.OK:
        outcome = f"ok: {action.summary}" if action.summary else "ok"
    else:
        outcome = f"{action.status.value}: {action.error or action.summary}"
    return f"{index}. {tool} {args} → {_clip(outcome, _TEXT_CHARS)}"


def _fold(turns: Sequence[tuple[int, Sequence[StepView]]]) -> str:
    """Older turns as one line: how often each tool ran and how it went."""
    counts: dict[str, list[int]] = {}
    invalid = unobserved = 0
    for _, rows in turns:
        by_kind = {row.kind: row for row in rows}
        decide = by_kind.get(StepKind.DECIDE)
        action = by_kind.get(StepKind.ACTION)
        observe = by_kind.get(StepKind.OBSERVE)
        if observe is not None and observe.status is StepStatus.FAILED:
            unobserved += 1
        elif decide is None or decide.status is not StepStatus.OK:
            invalid += 1
        elif action is not None:
            ok_failed = counts.setdefault(decide.tool or "?", [0, 0])
            ok_failed[0 if action.status is StepStatus.OK else 1] += 1
    parts = [f"{tool} ×{ok + bad} ({ok} ok, {bad} not)" for tool, (ok, bad) in counts.items()]
    if invalid:
        parts.append(f"{invalid} without a valid answer")
    if unobserved:
        parts.append(f"{unobserved} without a screenshot")
    first, last = turns[0][0], turns[-1][0]
    return f"turns {first}–{last}, summarized: " + ("; ".join(parts) or "nothing ran")


def _turns(steps: Iterable[StepView], before: int) -> list[tuple[int, list[StepView]]]:
    ordered = sorted((step for step in steps if step.index < before), key=lambda s: s.seq)
    return [(index, list(rows)) for index, rows in groupby(ordered, key=lambda s: s.index)]


def history_text(steps: Sequence[StepView], turn: int, full_turns: int = FULL_TURNS) -> str:
    """The turns before `turn`: the last `full_turns` one line each, older ones folded."""
    turns = _turns(steps, turn)
    if not turns:
        return "Steps so far: none, this is the first turn."
    older, recent = turns[:-full_turns], turns[-full_turns:]
    lines = [_fold(older)] if older else []
    lines.extend(_turn_line(index, rows) for index, rows in recent)
    # Results quote names read from the screen ("clicked button 'OK'"), and arguments and
    # errors echo the model's earlier output: fenced and marked as data like the element
    # list (its own label, so the element list stays the one "text" block).
    return fenced("Steps so far (turn. tool args → result)", "history", lines)


def answer_fault(error: str, then: str = "") -> str:
    """The last answer's fault for the next prompt, fenced as data like the history: it
    quotes the model's own output (the text it could not read, a tool name, a value), which
    may echo the screen's; then what to do (`then`, ours)."""
    fault = fenced("Your last answer could not be used", "error", [_clip(error, 400)])
    return f"{fault}\n{then}" if then else fault


def last_answer_error(steps: Sequence[StepView], turn: int) -> str | None:
    """The error of the previous turn's answer when the model gave an unusable one."""
    for step in reversed(steps):
        if step.index >= turn:
            continue
        if step.index < turn - 1:
            return None
        if step.kind is StepKind.DECIDE and step.status is StepStatus.FAILED:
            error = step.error or ""
            return None if error.startswith(TRANSPORT_PREFIX) else error
    return None


# ── the observation ──────────────────────────────────────────────────────────


def inventory_text(observation: Observation) -> str:
    """The element list, cut to a bound, each element on its own line with no fence in it."""
    return "\n".join(inventory_lines(observation))


def observation_text(
    observation: Observation, space: ModelSpace | None = None, *, can_focus: bool = True
) -> str:
    """The screen of now in words; `space`: the model's coordinates (None: the screenshot's
    pixels)."""
    coordinates = None if space is None or space.identity else space.text
    head = (
        f"The image is the screen now, {observation.width}x{observation.height} pixels; "
        "coordinates are pixels of this image."
    )
    if coordinates is not None:
        # the model's own coordinate space (its profile): the element boxes stay screenshot pixels
        head = (
            f"The image is the screen now; give coordinates as {coordinates}. The element "
            f"list's boxes are {observation.width}x{observation.height} screenshot pixels, not "
            "these coordinates: to act on a listed element, give its id."
        )
    if (note := monitors_note(observation, can_focus=can_focus)) is not None:
        head += "\n" + note
    if (own := own_windows_note(observation, space)) is not None:
        head += "\n" + own
    block = screen_text_block(observation)
    if block is None:
        return head + "\nNo UI element list is available this turn: use coordinates."
    if observation.marked:
        head += (
            "\nEach listed element's box is drawn on the image with its id beside it: to act "
            'on one you see there, give "element": that id.'
        )
    return f"{head}\n{block}"


def own_windows_note(observation: Observation, space: ModelSpace | None) -> str | None:
    """The areas of the image the agent's own windows cover (its status panel, its main
    window): not part of the task. Boxes only, the app's own numbers (core/own_windows.py
    refuses input there), in the coordinates the model points in (`space`; None: the
    screenshot's pixels), so each lies where the model sees it; None when the desktop
    tells none. Every backend says it each turn beside the screenshot."""
    boxes = [window.box for window in observation.own_windows]
    if not boxes:
        return None
    if space is not None:
        boxes = [space.box(box) for box in boxes]
    areas = "; ".join(f"{left},{top} {width}x{height}" for left, top, width, height in boxes)
    return (
        "These areas of the image (left,top widthxheight, in the coordinates you point in) "
        "are the agent's own windows, such as its status panel with the Stop button, not part "
        f"of the task: ignore them and never act on them: {areas}."
    )


def monitors_note(observation: Observation, *, can_focus: bool = True) -> str | None:
    """`monitors_text` of the observation's layout, None on one monitor (nothing is said)."""
    layout = observation.layout
    if layout is None or not layout.several:
        return None
    return monitors_text(layout, can_focus=can_focus)


def monitors_news(observation: Observation, told: str | None) -> str | None:
    """What a conversation that keeps what it was told (a native computer tool's) hears of
    the monitors this turn: the note (`monitors_note`, for a model without focus_window)
    when it is not `told`, the note it last heard (None: one monitor, or not yet); a line
    that the others are gone when it was told of several and the desktop has one now (else
    the last note would stand); None when nothing changed."""
    note = monitors_note(observation, can_focus=False)
    if note is not None:
        return None if note == told else note
    if told is None:
        return None
    layout = observation.layout
    if layout is None:
        return "The monitors named before are not known now: the image is the screen."
    return (
        f"Now one monitor: the image shows the whole desktop ({layout.shown.width}x"
        f"{layout.shown.height}); the other monitors named before are gone."
    )


def monitors_text(layout: ScreenLayout, *, can_focus: bool = True) -> str:
    """Which monitor the image shows, its size and place, and the others (the app's own
    numbers: nothing read from the screen). `can_focus`: the model has focus_window (a
    native computer tool has not: it is told only that the others cannot be clicked)."""
    count = len(layout.monitors)
    others = "; ".join(m.describe() for m in layout.monitors if m.number != layout.shown.number)
    if layout.shown.number == 0:
        return (
            f"The image shows all {count} monitors of the desktop as one "
            f"({layout.shown.width}x{layout.shown.height} desktop pixels): {others}."
        )
    return (
        f"The image shows {layout.shown.describe()}: one of the desktop's {count} monitors "
        f"(sizes and places in desktop pixels). The others: {others}. "
        + (
            "Elements there are listed apart and cannot be clicked from this image: "
            "focus_window one of their windows and the next image shows that monitor."
            if can_focus
            else "What is there cannot be clicked from this image."
        )
    )


def image_url(observation: Observation) -> str:
    """The screenshot as a base64 data URL (never a link)."""
    return f"data:{observation.mime};base64,{base64.b64encode(observation.image).decode('ascii')}"


def user_text(request: DecideRequest, space: ModelSpace | None = None) -> str:
    parts = [f"Goal: {request.goal}", history_text(request.steps, request.turn)]
    error = last_answer_error(request.steps, request.turn)
    if error:
        parts.append(
            answer_fault(error, "Answer with exactly one JSON object in the format described.")
        )
    can_focus = any(spec.name == "focus_window" for spec in request.tools)
    parts.append(observation_text(request.observation, space, can_focus=can_focus))
    parts.append(f"Turn {request.turn}: choose the next action. Answer with one JSON object.")
    return "\n\n".join(parts)


def build_messages(
    request: DecideRequest, *, image_url_: str | None = None, space: ModelSpace | None = None
) -> list[dict[str, Any]]:
    """The chat messages of one decision request.

    The model's profile may send a scaled image (`image_url_`) and have its own coordinate
    space (`space`; its words, e.g. "x and y from 0 to 1000, …", only where it is not the
    screenshot's pixels); without them: the observer's image, screenshot pixels.
    """
    url = image_url_ if image_url_ is not None else image_url(request.observation)
    # screenshot pixels need no words: the prompt names a space only when it differs
    coordinates = None if space is None or space.identity else space.text
    return [
        {"role": "system", "content": system_prompt(request.goal, request.tools, coordinates)},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": user_text(request, space)},
                {"type": "image_url", "image_url": {"url": url}},
            ],
        },
    ]


# ── what the models' own prompts share (planner/backends/) ────────────────────


def progress_parts(request: DecideRequest, space: ModelSpace, then: str = "") -> list[str]:
    """The history, the last answer's fault (and `then`, what to do about it), which monitor
    the image shows (several only), the areas of the agent's own windows in the model's
    coordinates (`space`) and the element list, for a model's own prompt."""
    parts = [history_text(request.steps, request.turn)]
    error = last_answer_error(request.steps, request.turn)
    if error:
        parts.append(answer_fault(error, then))
    can_focus = any(spec.name == "focus_window" for spec in request.tools)
    if (note := monitors_note(request.observation, can_focus=can_focus)) is not None:
        parts.append(note)
    if (own := own_windows_note(request.observation, space)) is not None:
        parts.append(own)
    if (block := screen_text_block(request.observation)) is not None:
        parts.append(block)
    return parts


def text_and_image(system: str, text: str, url: str) -> list[dict[str, Any]]:
    """A system message, and one user message of `text` and the screenshot at `url`."""
    return [
        {"role": "system", "content": system},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": text},
                {"type": "image_url", "image_url": {"url": url}},
            ],
        },
    ]
