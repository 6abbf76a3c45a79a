"""The built-in tools of DESIGN §3: their argument models and risks (no behaviour here)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from desktop_agent.core.keys import normalize_key
from desktop_agent.core.statuses import Risk
from desktop_agent.core.tools import ToolRegistry, ToolSpec

_NUMBERS: tuple[object, ...] = (int, float, int | None, float | None)


class _Args(BaseModel):
    # built (validator, schema) at their first use, a run's first prompt or call: the 15 models
    # are ~45 ms of CPU, and the app's window can start a run without them (it names the tools)
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_as_number(cls, value: Any, info: ValidationInfo) -> Any:
        # pydantic's lax mode reads true as 1: {"element": true} would act on element 1
        name = info.field_name
        if isinstance(value, bool) and name and cls.model_fields[name].annotation in _NUMBERS:
            raise ValueError(f"expected a number, not {str(value).lower()}")
        return value


class _PointOrElement(_Args):
    x: int | None = Field(default=None, ge=0, description="screenshot pixel x")
    y: int | None = Field(default=None, ge=0, description="screenshot pixel y")
    element: int | None = Field(default=None, ge=0, description="an element id of the inventory")

    @model_validator(mode="after")
    def _point_or_element(self) -> Self:
        has_point = self.x is not None and self.y is not None
        if self.element is None and not has_point:
            raise ValueError("give either x and y, or element")
        if self.element is not None and (self.x is not None or self.y is not None):
            raise ValueError("give either x and y, or element, not both")
        return self


def _target_field() -> Any:
    """What a call by coordinates aims at, in words: the grounding step looks for it."""
    return Field(
        default=None,
        max_length=200,
        description=(
            'with x and y: what is at the point, e.g. "the Save button in the dialog"; '
            "used to refine the point"
        ),
    )


def _blank_is_none(value: Any) -> Any:
    # models often send "" for a field they have nothing for: not a reason to refuse the call
    if isinstance(value, str):
        value = " ".join(value.split())
        return value or None
    return value


def _known_keys(keys: list[str]) -> list[str]:
    return [normalize_key(key) for key in keys]


class _Holding(_Args):
    """A pointer action with keys held down while it acts (shift+click, ctrl+scroll): a
    model API's own argument (OpenAI's `keys`), not offered in our JSON prompt."""

    hold: SkipJsonSchema[list[str]] = Field(default_factory=list, max_length=4)

    _hold = field_validator("hold")(_known_keys)

    @model_serializer(mode="wrap")
    def _no_empty_extras(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # an action with no key held (a drag with no point between) dumps as it did before
        # `hold` (`via`) was there: what is stored, shown, replayed and saved does not change
        dumped: dict[str, Any] = handler(self)
        for name in _NATIVE_EXTRAS:
            if name in dumped and not dumped[name]:
                del dumped[name]
        return dumped


class _Targeted(_PointOrElement, _Holding):
    target: str | None = _target_field()

    _target = field_validator("target", mode="before")(_blank_is_none)


class ScreenSnapshotArgs(_Args):
    pass


class ClickArgs(_Targeted):
    button: Literal["left", "right", "middle"] = "left"
    clicks: int = Field(default=1, ge=1, le=3)


class MoveMouseArgs(_Targeted):
    pass


#: the native APIs' own arguments, left out of a dump when empty
_NATIVE_EXTRAS = ("hold", "via")
#: a point of a drag's path: screenshot pixels
_PathPoint = Annotated[list[Annotated[int, Field(ge=0)]], Field(min_length=2, max_length=2)]


class DragArgs(_Holding):
    x: int = Field(ge=0)
    y: int = Field(ge=0)
    to_x: int = Field(ge=0)
    to_y: int = Field(ge=0)
    #: the points the pointer passes through between the start and the drop, in order (a
    #: native API's whole path, OpenAI's drag `path`; not offered in our JSON prompt)
    via: SkipJsonSchema[list[_PathPoint]] = Field(default_factory=list, max_length=50)
    #: what is dragged (at x, y); the drop point is not refined
    target: str | None = _target_field()

    _target = field_validator("target", mode="before")(_blank_is_none)


class ScrollArgs(_Holding):
    amount: int = Field(ge=-100, le=100, description="positive scrolls up, negative down")
    x: int | None = Field(default=None, ge=0)
    y: int | None = Field(default=None, ge=0)


class TypeTextArgs(_Args):
    text: str = Field(min_length=1, max_length=2000)
    enter: bool = False


class HotkeyArgs(_Args):
    keys: list[str] = Field(min_length=1, max_length=5, description='e.g. ["ctrl", "s"]')

    _keys = field_validator("keys")(_known_keys)


class HoldKeyArgs(HotkeyArgs):
    seconds: float = Field(gt=0, le=10, description="how long the keys stay down")


class MouseButtonArgs(_Args):
    """mouse_down / mouse_up: the left button, pressed or let go at a point."""

    x: int = Field(ge=0, description="screenshot pixel x")
    y: int = Field(ge=0, description="screenshot pixel y")


class CursorPositionArgs(_Args):
    pass


class LaunchAppArgs(_Args):
    command: str = Field(min_length=1, max_length=1000)


class WaitArgs(_Args):
    seconds: float = Field(ge=0, le=30)


class FocusWindowArgs(_Args):
    title: str | None = Field(default=None, min_length=1)
    element: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _title_or_element(self) -> Self:
        if (self.title is None) == (self.element is None):
            raise ValueError("give either title or element")
        return self


class InvokeArgs(_Args):
    element: int = Field(ge=0)


class SetValueArgs(_Args):
    element: int = Field(ge=0)
    value: str = Field(max_length=2000)


#: where a pointer tool's point is, and a drag's start and drop
_POINT = (("x", "y"),)
_DRAG = (("x", "y"), ("to_x", "to_y"))

BUILTIN_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "screen_snapshot",
        "Take a screenshot and list UI elements.",
        ScreenSnapshotArgs,
        Risk.SAFE,
        offered=False,
        passive=True,
        mcp_name="screenshot",
    ),
    ToolSpec(
        "click",
        "Click at a point of the screenshot or on an element.",
        ClickArgs,
        Risk.INPUT,
        points=_POINT,
        element=True,
        presses=True,
        settles=True,
        grounded=True,
        mcp_name="click",
    ),
    ToolSpec(
        "move_mouse",
        "Move the pointer to a point or an element.",
        MoveMouseArgs,
        Risk.INPUT,
        points=_POINT,
        element=True,
        settles=True,
        grounded=True,
    ),
    ToolSpec(
        "drag",
        "Drag with the left button from (x, y) to (to_x, to_y).",
        DragArgs,
        Risk.INPUT,
        points=_DRAG,
        drops=True,
        settles=True,
        grounded=True,
    ),
    ToolSpec(
        "scroll",
        "Scroll the wheel; positive is up. Optionally at a point.",
        ScrollArgs,
        Risk.INPUT,
        points=_POINT,
        settles=True,
        mcp_name="scroll",
    ),
    ToolSpec(
        "type_text",
        "Type text into the focused control; enter=true presses Enter after.",
        TypeTextArgs,
        Risk.INPUT,
        keyboard=True,
        text_field="text",
        settles=True,
        mcp_name="type_text",
    ),
    ToolSpec(
        "hotkey",
        'Press a key combination, e.g. ["ctrl", "s"].',
        HotkeyArgs,
        Risk.INPUT,
        keyboard=True,
        presses_keys=True,
        settles=True,
        mcp_name="hotkey",
    ),
    ToolSpec(
        "hold_key",
        'Hold a key combination down for some seconds, then let it go, e.g. ["shift"], 2.',
        HoldKeyArgs,
        Risk.INPUT,
        keyboard=True,
        presses_keys=True,
        settles=True,
    ),
    ToolSpec(
        "mouse_down",
        "Press and hold the left mouse button at a point (let go by mouse_up, or at the end).",
        MouseButtonArgs,
        Risk.INPUT,
        points=_POINT,
        presses=True,
        settles=True,
    ),
    ToolSpec(
        "mouse_up",
        "Release the left mouse button at a point.",
        MouseButtonArgs,
        Risk.INPUT,
        points=_POINT,
        drops=True,
        settles=True,
    ),
    ToolSpec(
        "cursor_position",
        "Tell where the mouse pointer is, in screenshot pixels.",
        CursorPositionArgs,
        Risk.SAFE,
        passive=True,
        windowless=True,
    ),
    ToolSpec(
        "launch_app",
        'Start a program (no shell), e.g. "l3afpad" or "notepad".',
        LaunchAppArgs,
        Risk.DANGEROUS,
        windowless=True,
        command_field="command",
        mcp_name="launch_app",
    ),
    ToolSpec(
        "wait",
        "Wait a number of seconds (0-30) for the screen to settle.",
        WaitArgs,
        Risk.SAFE,
        passive=True,
        windowless=True,
    ),
    ToolSpec(
        "focus_window",
        "Bring a window to the front by title or element.",
        FocusWindowArgs,
        Risk.INPUT,
        element=True,
        window_field="title",
        settles=True,
        mcp_name="focus_window",
    ),
    ToolSpec(
        "invoke",
        "Press an element through the accessibility API.",
        InvokeArgs,
        Risk.INPUT,
        element=True,
        presses=True,
        settles=True,
        mcp_name="invoke",
    ),
    ToolSpec(
        "set_value",
        "Set an element's text through the accessibility API.",
        SetValueArgs,
        Risk.INPUT,
        element=True,
        text_field="value",
        settles=True,
    ),
)
#: the built-in tools by name: how a tool named in a stored step or by a caller that has
#: only its name (a routine, a test) is known by its traits
BUILTIN_BY_NAME: dict[str, ToolSpec] = {spec.name: spec for spec in BUILTIN_TOOLS}


def spec_of(tool: ToolSpec | str) -> ToolSpec:
    """`tool`'s spec: itself, or the built-in tool of that name; a name no built-in tool has
    gets a spec with no traits (it acts in some window, and nothing is known of it)."""
    if isinstance(tool, ToolSpec):
        return tool
    return BUILTIN_BY_NAME.get(tool) or ToolSpec(tool, "", ScreenSnapshotArgs, Risk.DANGEROUS)


def text_field_of(tool: ToolSpec | str) -> str:
    """The argument whose text `tool` puts into a control, or "" (it types no text)."""
    return spec_of(tool).text_field


def builtin_registry() -> ToolRegistry:
    return ToolRegistry(BUILTIN_TOOLS)
