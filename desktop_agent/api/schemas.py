"""The API's request bodies and query strings as pydantic models; every failure is one line.

Parsing never raises anything but `BadRequest`: invalid UTF-8, invalid JSON,
JSON nested too deep for the parser, a body that is not an object, unknown
fields, wrong types and out-of-range values all end as a one-line reason that
names the bad field and value.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from desktop_agent.core.models import (
    ApprovalDecision,
    MonitorField,
    RunStatus,
    VisionSetting,
)
from desktop_agent.instances.ask_approval import ID_PATTERN as ID_PATTERN
from desktop_agent.instances.ask_approval import AskApproval as AskApproval
from desktop_agent.planner.profiles import ProfileField

MAX_GOAL_CHARS = 10_000
MAX_MODEL_CHARS = 200
MAX_URL_CHARS = 2_000
MAX_TOOLS = 100
MAX_TOOL_CHARS = 64
#: run and approval ids in paths: what the store and the broker make, nothing else

#: control characters; a goal may hold tabs and line breaks, a name may not
_CONTROL_IN_TEXT = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_CONTROL_OR_SPACE = re.compile(r"[\x00-\x20\x7f]")

M = TypeVar("M", bound=BaseModel)


class BadRequest(ValueError):  # noqa: N818 - named after the HTTP status it becomes
    """A request that does not validate; the message is the one-line reason."""


def _text(value: str, *, field: str, multiline: bool) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{field} is not valid Unicode (an unpaired surrogate)") from None
    if (_CONTROL_IN_TEXT if multiline else _CONTROL).search(value):
        raise ValueError(f"{field} holds a control character")
    return value


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class CreateTask(_Body):
    """POST /api/tasks."""

    goal: str = Field(max_length=MAX_GOAL_CHARS)
    base_url: str | None = Field(default=None, max_length=MAX_URL_CHARS)
    model: str | None = Field(default=None, max_length=MAX_MODEL_CHARS)
    max_steps: int | None = Field(default=None, ge=1, le=500)
    max_failures: int | None = Field(default=None, ge=1, le=50)
    allowed_tools: list[Annotated[str, Field(max_length=MAX_TOOL_CHARS)]] | None = Field(
        default=None, min_length=1, max_length=MAX_TOOLS
    )
    vision: VisionSetting | None = None
    #: planner/profiles.py: "auto" or a profile's name (None: the settings' choice)
    model_profile: ProfileField = Field(default=None, max_length=MAX_MODEL_CHARS)

    #: the monitor the model is shown: "auto", "all" or a number (None: the settings')
    monitor: MonitorField = None

    @field_validator("goal")
    @classmethod
    def _goal(cls, value: str) -> str:
        value = _text(value, field="goal", multiline=True).strip()
        if not value:
            raise ValueError("the goal is empty")
        return value

    @field_validator("model")
    @classmethod
    def _model(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = _text(value, field="model", multiline=False).strip()
        if not value:
            raise ValueError("the model name is empty")
        return value

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, value: str | None) -> str | None:
        return None if value is None else check_base_url(value)

    @field_validator("allowed_tools")
    @classmethod
    def _tools(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        for name in value:
            _text(name, field="a tool name", multiline=False)
        return list(dict.fromkeys(value))


class AnswerApproval(_Body):
    """POST /api/approvals/{id}."""

    decision: Literal["once", "run", "deny"]

    @property
    def answer(self) -> ApprovalDecision:
        return ApprovalDecision(self.decision)


class NoBody(_Body):
    """Routes that take no arguments accept an empty body or `{}`."""


class ListQuery(_Body):
    """GET /api/tasks?limit=&status=."""

    model_config = ConfigDict(strict=False)

    limit: int = Field(default=100, ge=1, le=1000)
    status: RunStatus | None = None


def check_base_url(value: str) -> str:
    """An http(s) URL with a host (and a valid port, if any), without a trailing slash.

    ValueError naming the value if it is not one.
    """
    shown = _short(value)
    if _CONTROL_OR_SPACE.search(value):
        raise ValueError(f"base_url {shown} holds a space or a control character")
    try:
        value.encode("utf-8")
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a port out of range or not a number
    except (UnicodeEncodeError, ValueError):
        raise ValueError(f"base_url {shown} is not a valid URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"base_url {shown} is not an http(s) URL with a host")
    return value.rstrip("/")


def parse_json(raw: bytes) -> Any:
    """Strict JSON (no NaN or Infinity) from UTF-8 bytes (a BOM is skipped); BadRequest if not."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise BadRequest("the body is not UTF-8") from None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise BadRequest("the body is nested too deep") from None
    except ValueError as error:
        raise BadRequest(f"the body is not valid JSON: {_json_reason(error)}") from None


def parse_body(raw: bytes, model: type[M]) -> M:
    """A request body validated against `model`; an empty body counts as `{}`."""
    data = parse_json(raw) if raw.strip() else {}
    if not isinstance(data, dict):
        raise BadRequest(f"the body must be a JSON object, not {_kind(data)}")
    return validate(data, model)


def validate(data: dict[str, Any], model: type[M]) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise BadRequest(describe(error)) from None
    except RecursionError:
        raise BadRequest("the body is nested too deep") from None


def describe(error: ValidationError) -> str:
    """The first few problems of a ValidationError, one line, each naming field and value."""
    problems = []
    for item in error.errors(include_url=False)[:3]:
        where = ".".join(str(part) for part in item["loc"]) or "body"
        kind = item["type"]
        if kind == "extra_forbidden":
            problems.append(f"unknown field {_short(where)}")
        elif kind == "missing":
            problems.append(f"{where} is required")
        elif kind == "value_error":
            problems.append(str(item.get("ctx", {}).get("error", item["msg"])))
        else:
            problems.append(f"{where}: {_lower_first(item['msg'])} (got {_shown(item['input'])})")
    more = len(error.errors()) - len(problems)
    return "; ".join(problems) + (f"; and {more} more" if more > 0 else "")


def _shown(value: object) -> str:
    if value is None or isinstance(value, bool | int | float | str):
        return _short(value)
    return _kind(value)


def _short(value: object, width: int = 60) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**30:
        return "a huge number"
    text = json.dumps(value, ensure_ascii=True) if isinstance(value, str) else repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _kind(value: object) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json_reason(error: ValueError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} (line {error.lineno}, column {error.colno})"
    return str(error).splitlines()[0] if str(error) else type(error).__name__


MAX_PARAMS = 50
MAX_VALUE_CHARS = 2000  # type_text's limit


class RunRoutine(BaseModel):
    """POST /api/routines/{name}/run."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    params: dict[
        Annotated[str, Field(max_length=40)], Annotated[str, Field(max_length=MAX_VALUE_CHARS)]
    ] = Field(default_factory=dict, max_length=MAX_PARAMS)
    #: hand over to the settings' model on a mismatch (false: routine_mismatch)
    handover: bool = True
