"""Anthropic's computer use on the Messages API: each tool_use action a gated step.

`beta.messages.create` with the `computer` tool: `computer_20251124` (beta
`computer-use-2025-11-24`, `enable_zoom`) for the models Anthropic documents it for and any
newer one, `computer_20250124` (beta `computer-use-2025-01-24`) for the older ones. Shapes
from the anthropic SDK (2.17, anthropic/types/beta/): beta_tool_computer_use_20250124.py and
_20251124.py (`display_width_px`, `display_height_px`, `enable_zoom`, `cache_control`),
beta_message.py (`content`, `stop_reason` incl. "refusal", `usage` as beta_usage.py),
beta_tool_use_block.py (`id`, `name`, `input`), beta_tool_result_block_param.py
(`tool_use_id`, `content` of text and image blocks, `is_error`); the actions are
planner/anthropic_actions.py's.

The conversation is kept here (the API keeps none): each turn answers every tool_use of the
last message with a tool_result — what its step did, or why it did not run — and the last
one carries the screenshot of now. A `zoom` is answered with our own crop of the screen at
full resolution and asked on at once (no step: no input, no approval); a message of
screenshots only is a wait of 0 s (the next turn's screenshot answers it). The system
prompt and the tool are cached (`cache_control`).
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from desktop_agent.core.errors import PlannerError, PlannerTransportError
from desktop_agent.core.models import Decision, Observation, StepKind, StepStatus, TokenUsage
from desktop_agent.core.ports import DecideRequest
from desktop_agent.planner.anthropic_actions import Parsed, parse_action
from desktop_agent.planner.backends import Backend, ChatFormat, chat_format
from desktop_agent.planner.client import Fail, OpenAIPlanner, Retry, retry_after_s
from desktop_agent.planner.grammars import checked, snippet
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
    from anthropic import AsyncAnthropic

#: Anthropic's own API: "auto" picks this backend for `claude-*` there
ANTHROPIC_URL = "https://api.anthropic.com"


@dataclass(frozen=True, slots=True)
class ToolVersion:
    tool: str
    beta: str
    zoom: bool


NEW_TOOL = ToolVersion("computer_20251124", "computer-use-2025-11-24", zoom=True)
OLD_TOOL = ToolVersion("computer_20250124", "computer-use-2025-01-24", zoom=False)
#: the models Anthropic documents computer_20250124 for (Claude Sonnet 4.5, Haiku 4.5, Opus
#: 4.1, Sonnet 4, Opus 4, Sonnet 3.7); every other claude model gets the newer tool
_OLD_TOOL_MODELS = (
    "claude-sonnet-4-5*", "claude-haiku-4-5*", "claude-opus-4-1*", "claude-sonnet-4-0*",
    "claude-sonnet-4-2025*", "claude-opus-4-0*", "claude-opus-4-2025*", "claude-3-7-sonnet*",
    "claude-3-5-sonnet*",
)  # fmt: skip
#: zooms answered within one turn before the model must act
MAX_ZOOMS = 3
#: the most recent screenshots kept in the conversation (older ones become a word): the
#: reference loop keeps a few to bound the request's size
KEPT_IMAGES = 3

NO_KEY = (
    "no Anthropic API key for {url}: store it in the keyring entry 'anthropic' of service "
    "desktop-agent (Settings) or set ANTHROPIC_API_KEY"
)
NOT_ZOOMED = "not done: a zoom is answered when a message holds zooms only, before any action"
SYSTEM = (
    "You operate the user's desktop through the computer tool to carry out their task. "
    f"{SCREEN_TEXT_RULE} Here the goal is the user's task. A small panel showing the task and "
    "a Stop button ('Desktop Agent — acting') is the user's own status panel: leave it alone. "
    "Every action is checked and may be refused or asked about; a refused action's result "
    "says why. When the task is done, stop calling the tool and say in one sentence what was "
    "achieved; when it cannot be done, say why."
)


def tool_version(model: str) -> ToolVersion:
    name = model.strip().lower().rsplit("/", 1)[-1]
    return OLD_TOOL if any(fnmatchcase(name, p) for p in _OLD_TOOL_MODELS) else NEW_TOOL


def computer_tool(version: ToolVersion, width: int, height: int) -> dict[str, Any]:
    tool: dict[str, Any] = {
        "type": version.tool,
        "name": "computer",
        "display_width_px": width,
        "display_height_px": height,
        "cache_control": {"type": "ephemeral"},
    }
    if version.zoom:
        tool["enable_zoom"] = True
    return tool


def _image(url: str) -> dict[str, Any]:
    """A data URL → an Anthropic base64 image block."""
    head, _, data = url.partition(",")
    media = head.removeprefix("data:").split(";")[0] or "image/jpeg"
    return {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}


@dataclass(frozen=True, slots=True)
class _Use:
    """A tool_use of the last message and how its tool_result will be had: from the steps
    `steps` of the turn (their order among the turn's action rows), or said already
    (`content`: a zoom's crop, a screenshot's "the screen now", why it could not run)."""

    id: str
    steps: range = range(0)
    content: tuple[dict[str, Any], ...] = ()
    error: bool = False
    cursor: bool = False


def usage_of(data: dict[str, Any]) -> TokenUsage | None:
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return None
    given = sum(
        value
        for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        if isinstance(value := usage.get(key), int)
    )
    made = usage.get("output_tokens")
    return TokenUsage(
        prompt_tokens=given, completion_tokens=made if isinstance(made, int) else None
    )


def message_from_json(data: Any) -> dict[str, Any]:
    """A Messages body (beta_message.py's BetaMessage) → itself; TypeError when it is none."""
    if not isinstance(data, dict) or not isinstance(data.get("content"), list):
        raise TypeError("the body is not a message with a content list")
    return data


class AnthropicPlanner(OpenAIPlanner):
    """The Planner port on Anthropic's computer use (Messages API). Limits, the response cap
    and the retry budget are OpenAIPlanner's; the transport is the anthropic SDK's."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.version = tool_version(self.model)
        self._anthropic: AsyncAnthropic | None = None
        self._messages: list[dict[str, Any]] = []
        self._uses: list[_Use] = []
        self._turn = 0
        #: where this conversation last put the pointer (the model's pixels)
        self._pointer: tuple[int, int] | None = None
        #: the monitors the conversation was last told of (None: one monitor, or not yet)
        self._monitors_told: str | None = None

    def _chat_format(self) -> ChatFormat:
        return chat_format("chat_json")  # never spoken: the turns go to the Messages API

    def _make_grounder(self, grounding: str, zoom: bool) -> None:
        return None  # the model points on the image it was sent; it zooms by itself

    # ── one turn ─────────────────────────────────────────────────────────────

    async def decide(self, request: DecideRequest) -> Decision:
        observation = request.observation
        image = await shown_image(observation, self.profile)
        size = (image.width, image.height)
        content = self._turn_content(request, _image(image.url), size)
        started = self._clock()
        usage = TokenUsage(prompt_tokens=0, completion_tokens=0)
        for _zoom in range(MAX_ZOOMS + 1):
            messages = [*self._messages, {"role": "user", "content": content}]
            answer = await self._ask(self.request_body(messages, size))
            usage = _added(usage, usage_of(answer))
            # the turn is answered: what the next one builds on
            self._messages = _kept_images(messages)
            self._turn = request.turn
            self._monitors_told = monitors_note(observation, can_focus=False)
            blocks = [block for block in answer["content"] if isinstance(block, dict)]
            if blocks:
                self._messages.append({"role": "assistant", "content": blocks})
            self._uses = []
            decision, zooms = self._read(answer, blocks, request, size)
            if decision is not None:
                latency_ms = round((self._clock() - started) * 1000, 3)
                return replace(decision, usage=usage, latency_ms=latency_ms)
            content = await self._zoomed(zooms, request, size)
        raise PlannerError(f"the model zoomed {MAX_ZOOMS + 1} times in one turn without acting")

    def request_body(self, messages: list[dict[str, Any]], size: tuple[int, int]) -> dict[str, Any]:
        """The body of one `beta.messages.create` (what the benchmark measures)."""
        return {
            "model": self.model,
            "max_tokens": self.profile.max_output_tokens,
            "system": [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}],
            "tools": [computer_tool(self.version, *size)],
            "messages": messages,
            "betas": [self.version.beta],
        }

    def _turn_content(
        self, request: DecideRequest, image: dict[str, Any], size: tuple[int, int]
    ) -> list[dict[str, Any]]:
        """This turn's user content: the last message's tool_uses answered (the screenshot in
        the last result), or the task, or the screen of now."""
        # the computer tool's display is one size, no monitor: the conversation is told in
        # words which monitor the screenshot is, when that changes (it keeps what it was told)
        note = monitors_news(request.observation, self._monitors_told)
        notes = [{"type": "text", "text": note}] if note is not None else []
        # the agent's own windows, each turn, in the pixels of the display the tool declares
        observation = request.observation
        space = model_space(self.profile, observation.width, observation.height)
        if (own := own_windows_note(observation, space)) is not None:
            notes.append({"type": "text", "text": own})
        if not self._messages:
            return [{"type": "text", "text": f"The task: {request.goal}"}, *notes, image]
        if not self._uses:
            text = f"Turn {request.turn}: the screenshot is the screen now; go on with the task."
            return [{"type": "text", "text": text}, *notes, image]
        rows = [
            step
            for step in request.steps
            if step.index == self._turn and step.kind is StepKind.ACTION
        ]
        scale = (size[0] / request.observation.width, size[1] / request.observation.height)
        results = []
        for number, use in enumerate(self._uses, 1):
            parts, error = list(use.content), use.error
            if not parts:
                said, error = _said(use, rows, scale)
                parts = [{"type": "text", "text": said}]
            if number == len(self._uses):
                parts.extend([*notes, image])
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": use.id,
                "content": parts,
            }
            if error:
                result["is_error"] = True
            results.append(result)
        return results

    def _read(
        self,
        answer: dict[str, Any],
        blocks: list[dict[str, Any]],
        request: DecideRequest,
        size: tuple[int, int],
    ) -> tuple[Decision | None, list[tuple[str, tuple[int, int, int, int]]]]:
        """The message → the turn's Decision; or None and the zooms to answer at once."""
        said = " ".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text").strip()
        uses = [b for b in blocks if b.get("type") == "tool_use"]
        if answer.get("stop_reason") == "refusal":
            details = answer.get("stop_details") or {}
            why = said or str(details.get("category") or "no reason given")
            raise PlannerError(f"the model refused: {snippet(why, 200)}", raw=why)
        if not uses:
            if not said:
                raise PlannerError(
                    f"{TRANSPORT_PREFIX} at {self.base_url} sent no tool_use and no text",
                    raw=json.dumps(blocks)[:2000],
                )
            return Decision(action="done", message=said, reason=said, raw=said), []
        raw = json.dumps(uses, ensure_ascii=False)
        decisions: list[Decision] = []
        zooms: list[tuple[str, tuple[int, int, int, int]]] = []
        pointer = self._pointer
        try:
            for use in uses:
                parsed = self._parse(use, request, size, pointer, said, raw)
                pointer = parsed.pointer
                span = range(len(decisions), len(decisions) + len(parsed.decisions))
                decisions.extend(parsed.decisions)
                if parsed.zoom is not None:
                    zooms.append((str(use.get("id", "")), parsed.zoom))
                    self._uses.append(_Use(str(use.get("id", ""))))  # content once zoomed
                elif not parsed.decisions:
                    now = {"type": "text", "text": "the screenshot is the screen now"}
                    self._uses.append(_Use(str(use.get("id", "")), content=(now,)))
                else:
                    cursor = use.get("input", {}).get("action") == "cursor_position"
                    self._uses.append(_Use(str(use.get("id", "")), span, cursor=cursor))
        except PlannerError as error:
            # every tool_use is answered all the same next turn, saying why nothing ran
            why = f"not run: {error}. Nothing of this message was done."
            self._uses = [
                _Use(str(u.get("id", "")), content=({"type": "text", "text": why},), error=True)
                for u in uses
            ]
            raise
        self._pointer = pointer
        if zooms and not decisions:
            return None, zooms
        if zooms:
            # a zoom beside actions would show the screen before them: not done
            not_done = {"type": "text", "text": NOT_ZOOMED}
            self._uses = [
                replace(use, content=(not_done,), error=True)
                if not use.content and not use.steps
                else use
                for use in self._uses
            ]
        if not decisions:
            decisions = [checked("wait", {"seconds": 0}, request.tools, said, raw)]
        width, height = request.observation.width, request.observation.height
        mapped = [decision_to_screenshot(d, self.profile, width, height) for d in decisions]
        first, *rest = mapped
        return replace(first, reason=said, raw=raw, batch=tuple(rest)), []

    def _parse(
        self,
        use: dict[str, Any],
        request: DecideRequest,
        size: tuple[int, int],
        pointer: tuple[int, int] | None,
        said: str,
        raw: str,
    ) -> Parsed:
        name = use.get("name")
        action = use.get("input")
        if (
            name != "computer"
            and use.get("toolset_name") == "computer"
            and isinstance(action, dict)
        ):
            action = {**action, "action": name}  # the toolset form: the member's own name
        elif name != "computer":
            raise PlannerError(f"the model called an unknown tool {snippet(str(name))}", raw=raw)
        return parse_action(action, request.tools, size, pointer, said, raw)

    async def _zoomed(
        self,
        zooms: list[tuple[str, tuple[int, int, int, int]]],
        request: DecideRequest,
        size: tuple[int, int],
    ) -> list[dict[str, Any]]:
        """The zooms of a message of zooms only, answered with crops (the turn goes on)."""
        crops = {use_id: await self._crop(region, request, size) for use_id, region in zooms}
        results = []
        for use in self._uses:
            parts = list(use.content) or [
                {"type": "text", "text": "the zoomed region at the screen's own resolution"},
                crops[use.id],
            ]
            results.append({"type": "tool_result", "tool_use_id": use.id, "content": parts})
        self._uses = []
        return results

    async def _crop(
        self, region: tuple[int, int, int, int], request: DecideRequest, size: tuple[int, int]
    ) -> dict[str, Any]:
        """`region` (the model's pixels) of the screen, captured anew at full resolution when
        the observer can (DecideRequest.region), else cut from the observation."""
        observation = request.observation
        sx, sy = observation.width / size[0], observation.height / size[1]
        x0, y0, x1, y1 = region
        box = (round(x0 * sx), round(y0 * sy), max(1, round((x1 - x0) * sx)),
               max(1, round((y1 - y0) * sy)))  # fmt: skip
        if request.region is not None:
            data = await request.region(box)
        else:
            data = await asyncio.to_thread(_cut, observation, box)
        media = "image/png" if data.startswith(b"\x89PNG") else "image/jpeg"
        import base64

        encoded = base64.b64encode(data).decode("ascii")
        return {"type": "image", "source": {"type": "base64", "media_type": media, "data": encoded}}

    # ── transport ────────────────────────────────────────────────────────────

    async def aclose(self) -> None:
        if self._anthropic is not None:
            await self._anthropic.close()
            self._anthropic = None
        await super().aclose()

    def _messages_client(self) -> AsyncAnthropic:
        if self._anthropic is None:
            if not self._api_key:
                # the SDK would send "Bearer " and httpx refuse it (LocalProtocolError): an
                # error that names nothing the user can fix
                raise PlannerTransportError(NO_KEY.format(url=self.base_url))
            import anthropic

            self._anthropic = anthropic.AsyncAnthropic(
                api_key=self._api_key or "",
                base_url=self.base_url,
                # retried here, by the one budget every planner has (OpenAIPlanner's)
                max_retries=0,
                timeout=anthropic.Timeout(self.read_timeout_s, connect=self.connect_timeout_s),
            )
        return self._anthropic

    async def _ask(self, body: dict[str, Any]) -> dict[str, Any]:
        """One `beta.messages.create`, with the retries, backoff and deadline of a turn."""
        import anthropic

        at = f"{TRANSPORT_PREFIX} at {self.base_url}"
        client = self._messages_client()
        attempt, waited = 0, 0.0
        while True:
            attempt += 1
            try:
                async with asyncio.timeout(self.response_deadline_s):
                    opened = client.beta.messages.with_streaming_response.create(**body)
                    return await self.read_json(opened, message_from_json)
            except TimeoutError:
                raise PlannerTransportError(
                    f"{at} did not finish its answer within {self.response_deadline_s:g} s"
                ) from None
            except anthropic.AnthropicError as error:
                outcome = self._anthropic_outcome(error, at)
            if isinstance(outcome, Fail):
                raise outcome.error from None
            delay = self._retry_delay(at, outcome, attempt, waited)
            await self._sleep(delay)
            waited += delay

    def _anthropic_outcome(self, error: Exception, at: str) -> Retry | Fail:
        """What to do about one failed request, by the SDK's error class."""
        import anthropic

        def fail(why: str) -> Fail:
            return Fail(PlannerTransportError(f"{at} {why}"))

        if isinstance(error, anthropic.APIStatusError):
            status = error.status_code
            message = _error_message(error)
            after = retry_after_s(error.response.headers)
            if status == 529:
                return Retry(f"is overloaded (529): {message}", after)
            if status == 429 or status >= 500:
                return Retry(f"answered {status}: {message}", after)
            if status in (401, 403):
                return fail(f"refused the API key ({status}): {message}")
            if status == 404:
                return fail(f"does not know model {self.model!r} (404): {message}")
            return fail(f"rejected the request ({status}): {message}")
        if isinstance(error, anthropic.APITimeoutError):
            return fail(f"did not answer within {self.read_timeout_s:g} s")
        if isinstance(error, anthropic.APIConnectionError):
            return Retry(f"could not be reached ({type(error.__cause__).__name__})")
        return Fail(PlannerTransportError(f"{at} gave an unusable answer: {error}"))


def _error_message(error: Any) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict) and inner.get("message"):
            return " ".join(str(inner["message"]).split())[:300]
    return " ".join(str(getattr(error, "message", error)).split())[:300]


def _added(total: TokenUsage, more: TokenUsage | None) -> TokenUsage:
    if more is None:
        return total
    return TokenUsage(
        prompt_tokens=(total.prompt_tokens or 0) + (more.prompt_tokens or 0),
        completion_tokens=(total.completion_tokens or 0) + (more.completion_tokens or 0),
    )


def _said(use: _Use, rows: Sequence[Any], scale: tuple[float, float]) -> tuple[str, bool]:
    """A tool_use's result from its steps' rows: what they did (screen text fenced), or why
    not; (text, is_error)."""
    mine = [rows[k] for k in use.steps if k < len(rows)]
    if len(mine) < len(use.steps):
        return "not run: the turn ended before this action (an earlier one did not run)", True
    lines, error = [], False
    for step in mine:
        if step.status is StepStatus.OK:
            if use.cursor and step.target is not None:
                x, y = round(step.target[0] * scale[0]), round(step.target[1] * scale[1])
                lines.append(f"X={x},Y={y}")
            else:
                lines.append(step.summary or "done")
        else:
            error = True
            lines.append(f"{step.status.value}: {step.error or step.status.value}")
    return fenced("What the action did", "result", lines), error


def _kept_images(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation with only its last KEPT_IMAGES images; older ones become a word."""
    seen = 0
    kept: list[dict[str, Any]] = []
    for message in reversed(messages):
        content = message.get("content")
        if not isinstance(content, list):
            kept.append(message)
            continue
        parts = []
        for part in reversed(content):
            if isinstance(part, dict) and part.get("type") == "tool_result":
                inner = []
                for item in reversed(part.get("content") or []):
                    if isinstance(item, dict) and item.get("type") == "image":
                        seen += 1
                        if seen > KEPT_IMAGES:
                            item = {"type": "text", "text": "(an older screenshot, left out)"}
                    inner.append(item)
                part = {**part, "content": inner[::-1]}
            elif isinstance(part, dict) and part.get("type") == "image":
                seen += 1
                if seen > KEPT_IMAGES:
                    part = {"type": "text", "text": "(an older screenshot, left out)"}
            parts.append(part)
        kept.append({**message, "content": parts[::-1]})
    return kept[::-1]


def _cut(observation: Observation, box: tuple[int, int, int, int]) -> bytes:
    from PIL import Image

    left, top, width, height = box
    with Image.open(io.BytesIO(observation.image)) as image:
        crop = image.convert("RGB").crop((left, top, left + width, top + height))
    out = io.BytesIO()
    crop.save(out, format="PNG")
    return out.getvalue()


async def check_key(base_url: str, api_key: str | None, timeout_s: float = 10.0) -> str:
    """`doctor`'s cheap request: the model list (GET /v1/models, one entry) with the key;
    "" when the key is taken, else why not in one line."""
    if not api_key:
        return NO_KEY.format(url=base_url)
    import anthropic

    client = anthropic.AsyncAnthropic(api_key=api_key, base_url=base_url, max_retries=0,
                                      timeout=timeout_s)  # fmt: skip
    try:
        await client.models.list(limit=1)
    except anthropic.APIStatusError as error:
        if error.status_code in (401, 403):
            return f"{base_url} refused the key ({error.status_code}): {_error_message(error)}"
        return f"{base_url} answered {error.status_code}: {_error_message(error)}"
    except anthropic.AnthropicError as error:
        return f"{base_url} could not be asked: {type(error).__name__}"
    finally:
        await client.close()
    return ""


BACKEND = Backend(
    name="anthropic_computer",
    protocol=(
        "Anthropic Messages API, computer use: computer_20251124 (beta computer-use-2025-11-24, "
        "zoom) or computer_20250124 (beta computer-use-2025-01-24) for the older models"
    ),
    planner_class="desktop_agent.planner.backends.anthropic_computer:AnthropicPlanner",
    own_key=("anthropic", "ANTHROPIC_API_KEY", ANTHROPIC_URL),
    key_check="desktop_agent.planner.backends.anthropic_computer:check_key",
    tool_of=lambda model: f"{tool_version(model).tool} (beta {tool_version(model).beta})",
)
