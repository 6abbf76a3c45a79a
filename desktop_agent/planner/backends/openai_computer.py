"""OpenAI's computer tool on the Responses API: batched actions, chained turns, safety checks.

`responses.create` with the GA tool `{"type": "computer"}` (a `computer_call` holds a batch,
`actions`), or for `computer-use-preview*` the legacy `computer_use_preview` tool
(`display_width`, `display_height`, `environment`; one `action` per call). Shapes from the
openai SDK: openai/types/responses/computer_tool.py, computer_use_preview_tool.py,
response_computer_tool_call.py (`pending_safety_checks`), response_input_param.py
(`ComputerCallOutput`: `call_id`, `output` {`computer_screenshot`, `image_url`},
`acknowledged_safety_checks`). Turns are chained by `previous_response_id`; with `store` off
every item is sent again (reasoning with its encrypted content).

Each turn answers the last call with a `computer_call_output` holding the screenshot of now,
says in a message what of its batch did not run (a denial, a failure, a pause, an unusable
action), and echoes only the safety checks the person allowed (DecideRequest.acknowledged).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from desktop_agent.core.errors import PlannerError
from desktop_agent.core.models import Decision, SafetyCheck, StepKind, StepStatus, TokenUsage
from desktop_agent.core.ports import DecideRequest
from desktop_agent.planner.backends import Backend, ChatFormat, chat_format
from desktop_agent.planner.client import OpenAIPlanner, usage_from_json
from desktop_agent.planner.computer_actions import batch_decision
from desktop_agent.planner.images import shown_image
from desktop_agent.planner.profiles import decision_to_screenshot, model_space
from desktop_agent.planner.prompt import (
    TRANSPORT_PREFIX,
    monitors_news,
    monitors_note,
    own_windows_note,
)
from desktop_agent.planner.screen_text import SCREEN_TEXT_RULE, fenced

if TYPE_CHECKING:
    from openai import AsyncOpenAI

#: the legacy tool's models; every other model gets the GA `computer` tool
PREVIEW_PREFIX = "computer-use-preview"

INSTRUCTIONS = (
    "You operate the user's desktop through the computer tool to carry out their task. "
    f"{SCREEN_TEXT_RULE} Here the goal is the user's task. A small "
    "panel showing the task and a Stop button ('Desktop Agent — acting') is the user's own "
    "status panel: leave it alone. When the task is done, stop calling the tool and say in "
    "one sentence what was achieved; when it cannot be done, say why."
)


def environment() -> str:
    """The legacy tool's `environment` for this machine."""
    if sys.platform == "win32":
        return "windows"
    if sys.platform == "darwin":
        return "mac"
    return "linux"


def computer_tool(model: str, width: int, height: int) -> dict[str, Any]:
    """The tool a request offers: the legacy one for computer-use-preview*, else the GA one."""
    if model.strip().lower().rsplit("/", 1)[-1].startswith(PREVIEW_PREFIX):
        return {
            "type": "computer_use_preview",
            "display_width": width,
            "display_height": height,
            "environment": environment(),
        }
    return {"type": "computer"}


@dataclass(frozen=True, slots=True)
class _Call:
    """The last computer_call, to be answered on the next turn."""

    #: every call of the answer (one, unless the model sent several): each gets an output
    call_ids: tuple[str, ...]
    turn: int
    actions: int
    checks: tuple[SafetyCheck, ...]
    #: why none of it ran ("" when it went to the loop)
    unusable: str = ""


@dataclass(frozen=True, slots=True)
class _Answer:
    """The parts of a Responses answer the planner reads."""

    id: str
    items: list[dict[str, Any]]
    usage: TokenUsage | None


def answer_from_json(data: Any) -> _Answer:
    """A Responses body → its id, output items and usage (TypeError when it is none)."""
    if not isinstance(data, dict) or not isinstance(data.get("output"), list):
        raise TypeError("the body is not a response object with an output list")
    tokens = usage_from_json(data.get("usage"), "input_tokens", "output_tokens")
    items = [item for item in data["output"] if isinstance(item, dict)]
    return _Answer(str(data.get("id", "")), items, tokens)


def _texts(items: Sequence[dict[str, Any]], kind: str) -> list[str]:
    """The texts of the output's messages of part type `kind` (output_text, refusal)."""
    found = []
    for item in items:
        if item.get("type") == "message":
            for part in item.get("content") or []:
                if isinstance(part, dict) and part.get("type") == kind:
                    found.append(str(part.get("text" if kind == "output_text" else kind, "")))
    return [text for text in found if text]


def _reasoning(items: Sequence[dict[str, Any]]) -> str:
    parts = [
        str(summary.get("text", ""))
        for item in items
        if item.get("type") == "reasoning"
        for summary in item.get("summary") or []
        if isinstance(summary, dict)
    ]
    return " ".join(part for part in parts if part)


def _checks(call: dict[str, Any]) -> tuple[SafetyCheck, ...]:
    checks = call.get("pending_safety_checks") or []
    return tuple(
        SafetyCheck(
            id=str(check.get("id", "")),
            code=str(check.get("code") or "unknown"),
            message=str(check.get("message") or ""),
        )
        for check in checks
        if isinstance(check, dict)
    )


def _actions(call: dict[str, Any]) -> list[Any]:
    """The GA tool's batch, or the legacy tool's one action."""
    actions = call.get("actions")
    return actions if isinstance(actions, list) else [call.get("action")]


def batch_report(call: _Call, request: DecideRequest) -> str:
    """What of the last call's batch did not run as asked, in words; "" when all of it ran."""
    if call.unusable:
        return f"Your last computer_call could not be run: {call.unusable}. Nothing of it was done."
    rows = [
        step for step in request.steps if step.index == call.turn and step.kind is StepKind.ACTION
    ]
    lines = []
    for number, step in enumerate(rows, 1):
        if step.status is not StepStatus.OK:
            why = step.error or step.status.value
            lines.append(f"action {number} ({step.tool}) was {step.status.value}: {why}")
    if len(rows) < call.actions and not lines:
        lines.append(f"only {len(rows)} of its {call.actions} actions ran")
    if not lines:
        return ""
    # a step's error quotes the screen ("no window titled …; open windows: …"): data only
    said = fenced("What of your last computer_call did not run", "result", lines)
    return f"{said}\nThe screenshot is the screen now."


class ComputerPlanner(OpenAIPlanner):
    """The Planner port on OpenAI's computer tool (Responses API); transport, retries and
    limits are OpenAIPlanner's. One request per turn; the turn's Decision carries the call's
    further actions (`batch`) and its pending safety checks."""

    def __init__(self, *, store: bool = True, **options: Any) -> None:
        super().__init__(**options)
        #: False: nothing is kept by OpenAI; every item is sent again each turn
        self.store = store
        self._previous_id = ""
        self._items: list[dict[str, Any]] = []
        self._call: _Call | None = None
        #: the monitors the conversation was last told of (None: one monitor, or not yet)
        self._monitors_told: str | None = None

    def _chat_format(self) -> ChatFormat:
        # never spoken: this planner's turns go to the Responses API
        return chat_format("chat_json")

    def _make_grounder(self, grounding: str, zoom: bool) -> None:
        # the model points on the screenshot it was sent, and cannot be asked over chat
        # completions where a crop would go: its points are not refined
        return None

    async def decide(self, request: DecideRequest) -> Decision:
        decision = await self.decide_in_model_space(request)
        width, height = request.observation.width, request.observation.height

        def mapped(one: Decision) -> Decision:
            return decision_to_screenshot(one, self.profile, width, height)

        first = mapped(decision)
        return replace(first, batch=tuple(mapped(later) for later in decision.batch))

    async def decide_in_model_space(self, request: DecideRequest) -> Decision:
        observation = request.observation
        image = await shown_image(observation, self.profile)
        new = self._turn_input(request, image.url)
        body = self.request_body(new, image.width, image.height)
        started = self._clock()
        answer = await self.exchange(lambda _fixes: body, self._read_answer)
        latency_ms = round((self._clock() - started) * 1000, 3)
        # the turn is answered: what the next one builds on
        self._previous_id = answer.id
        self._monitors_told = monitors_note(observation, can_focus=False)
        self._items = [*self._items, *new, *answer.items] if not self.store else []
        self._call = None
        decision = self._decision(answer, request, (image.width, image.height))
        return replace(decision, usage=answer.usage, latency_ms=latency_ms)

    def request_body(self, new: list[dict[str, Any]], width: int, height: int) -> dict[str, Any]:
        """The body of one `responses.create` (what the benchmark measures)."""
        body: dict[str, Any] = {
            "model": self.model,
            "instructions": INSTRUCTIONS,
            "tools": [computer_tool(self.model, width, height)],
            "truncation": "auto",
            "reasoning": {"summary": "concise"},
        }
        if self.store:
            body["input"] = new
            if self._previous_id:
                body["previous_response_id"] = self._previous_id
        else:
            body["input"] = [*self._items, *new]
            body["store"] = False
            body["include"] = ["reasoning.encrypted_content"]
        return body

    def _turn_input(self, request: DecideRequest, image_url: str) -> list[dict[str, Any]]:
        """This turn's new items: the last call answered with the screen, or the task."""
        call = self._call
        image = {"type": "input_image", "image_url": image_url, "detail": "auto"}
        # the computer tool has no field for a monitor: the conversation is told in words
        # which one the screenshot is, when that changes (it keeps what it was told)
        told = monitors_news(request.observation, self._monitors_told)
        # the agent's own windows, each turn, in the pixels of the image the model is sent
        observation = request.observation
        space = model_space(self.profile, observation.width, observation.height)
        said = "\n".join(part for part in (told, own_windows_note(observation, space)) if part)
        if call is None:
            text = (
                f"The task: {request.goal}"
                if not self._previous_id
                else f"Turn {request.turn}: the screenshot is the screen now; go on with the task."
            )
            text += f"\n{said}" if said else ""
            return [{"role": "user", "content": [{"type": "input_text", "text": text}, image]}]
        acknowledged = [
            {"id": check.id, "code": check.code, "message": check.message}
            for check in call.checks
            if check.id in request.acknowledged
        ]
        items: list[dict[str, Any]] = []
        for call_id in call.call_ids:
            output: dict[str, Any] = {
                "type": "computer_call_output",
                "call_id": call_id,
                "output": {"type": "computer_screenshot", "image_url": image_url},
            }
            if acknowledged:
                output["acknowledged_safety_checks"] = acknowledged
            items.append(output)
        report = "\n".join(part for part in (batch_report(call, request), said) if part)
        if report:
            items.append({"role": "user", "content": [{"type": "input_text", "text": report}]})
        return items

    def _decision(self, answer: _Answer, request: DecideRequest, size: tuple[int, int]) -> Decision:
        items = answer.items
        calls = [item for item in items if item.get("type") == "computer_call"]
        said = " ".join(_texts(items, "output_text"))
        reason = " ".join(part for part in (_reasoning(items), said) if part)
        if not calls:
            refusals = _texts(items, "refusal")
            if refusals:
                raise PlannerError(f"the model refused: {refusals[0]}", raw=refusals[0])
            if not said:
                raise PlannerError(
                    f"{TRANSPORT_PREFIX} at {self.base_url} sent no computer call and no message",
                    raw=json.dumps(items)[:2000],
                )
            return Decision(action="done", message=said, reason=reason, raw=said)
        raw = json.dumps(calls if len(calls) > 1 else calls[0], ensure_ascii=False)
        # several calls in one answer run in order, as one batch
        actions = [action for call in calls for action in _actions(call)]
        checks = tuple(check for call in calls for check in _checks(call))
        call_ids = tuple(str(call.get("call_id", "")) for call in calls)
        self._call = _Call(call_ids, request.turn, len(actions), checks)
        try:
            decision = batch_decision(actions, request.tools, size, reason, raw)
        except PlannerError as error:
            # the call is answered all the same on the next turn, saying why nothing ran
            self._call = replace(self._call, unusable=str(error))
            raise
        return replace(decision, safety_checks=checks)

    async def _read_answer(self, client: AsyncOpenAI, kwargs: dict[str, Any]) -> _Answer:
        params = {key: value for key, value in kwargs.items() if key != "model"}
        # the body goes as it is (the extra body wins over the typed parameters); `input` is
        # named because the SDKs before 2.x require it
        opened = client.responses.with_streaming_response.create(
            model=kwargs["model"], input=[], extra_body=params
        )
        return await self.read_json(opened, answer_from_json)


BACKEND = Backend(
    name="openai_computer",
    protocol=(
        "OpenAI Responses API, the computer tool (computer_use_preview for "
        "computer-use-preview*, else the GA computer tool with batched actions)"
    ),
    planner_class="desktop_agent.planner.backends.openai_computer:ComputerPlanner",
    native_options=("store",),
)
