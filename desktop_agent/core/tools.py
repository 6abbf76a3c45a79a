"""ToolSpec and ToolRegistry: every tool's name, argument model, risk and traits, in one place.

A tool describes itself: what it acts on (points, an element, the focused control), what it
sends (keys, text) and how the screen takes it are traits of its spec, and every reader (the
gate's call risk, the own-window check, targets, the effect check, the executor, the MCP
list) asks the spec, never a list of names of its own. Adding a tool touches its spec and
its handler; docs/architecture.md ("Tool traits").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from desktop_agent.core.errors import InvalidArguments, ToolNotAllowed, UnknownTool
from desktop_agent.core.statuses import Risk

#: why a run whose allowed tools are an empty list is refused: none is "none", not "every tool"
NO_TOOL_ALLOWED = "no tool is allowed: name at least one (an empty list allows none)"
#: the tool whose policy says whether the screen may leave this process (docs/settings.md)
SCREEN_TOOL = "screen_snapshot"
#: why a run whose model would see the screen is refused while that policy denies it
SCREEN_DENIED = (
    "screen_snapshot is denied by policy: a run's model sees the screen, so no run starts "
    "(set policies.screen_snapshot to allow or ask in the settings)"
)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    args_model: type[BaseModel]
    risk: Risk
    #: tools the loop calls itself (screen_snapshot) are not offered to the model
    offered: bool = True
    # -- traits: what the tool is, as the gate, the effect check, the executor and MCP read it
    #: a pointer tool: the arguments holding the screen points it presses, moves, scrolls or
    #: lets go at, in order (a drag's start, then its drop); an optional point that is not
    #: given acts where the pointer rests
    points: tuple[tuple[str, str], ...] = ()
    #: it acts on an element of the list named by its `element` argument
    element: bool = False
    #: it sends keys to whatever has the focus (the focused control's role is asked for it)
    keyboard: bool = False
    #: the argument whose text goes into a control ("": it types no text)
    text_field: str = ""
    #: it presses the key combination of its `keys` argument
    presses_keys: bool = False
    #: it presses what it acts on (a click, an element's press, a button held down)
    presses: bool = False
    #: it lets go of what it carries at its last point (a drag's drop, a button let go)
    drops: bool = False
    #: the app is given time to repaint after it (it sends input or acts on a control)
    settles: bool = False
    #: a call by coordinates that names its target has its point refined before the gate
    grounded: bool = False
    #: it does not act on the screen: no change after it is expected, never a stuck loop
    passive: bool = False
    #: it acts on no element, point or window (every other tool acts in one)
    windowless: bool = False
    #: the argument naming the window it brings to the front ("": none)
    window_field: str = ""
    #: the argument holding the command line of a program it starts ("": none)
    command_field: str = ""
    #: the name an MCP client calls it by ("": the MCP server does not list it)
    mcp_name: str = ""

    def __post_init__(self) -> None:
        if (self.drops or self.grounded) and not self.points:
            raise ValueError(f"tool {self.name!r}: a dropping or grounded tool has points")
        if self.grounded and self.points[0] != ("x", "y"):
            # the grounding refines (and the call moves to) the point named x, y
            raise ValueError(f"tool {self.name!r}: a grounded tool's first point is x, y")
        named = [name for point in self.points for name in point]
        named += [self.text_field, self.window_field, self.command_field]
        named += ["element"] * self.element + ["keys"] * self.presses_keys
        fields = self.args_model.model_fields
        if missing := [name for name in named if name and name not in fields]:
            # the gate reads these arguments by name: one it cannot find would not be judged
            raise ValueError(
                f"tool {self.name!r}: its traits name {', '.join(missing)}, "
                "which are not among its arguments"
            )

    @property
    def pointer(self) -> bool:
        """It acts at points of the screen."""
        return bool(self.points)

    @property
    def aims(self) -> bool:
        """It acts on an element or at a point (what it acts on is looked up there)."""
        return self.pointer or self.element

    @property
    def judged_at_point(self) -> bool:
        """What it presses or drops on is judged at its point (looked at again once a person
        answered: the screen may have changed under it)."""
        return self.pointer and (self.presses or self.drops)

    def json_schema(self) -> dict[str, Any]:
        return self.args_model.model_json_schema()

    def validate(self, args: Mapping[str, Any]) -> BaseModel:
        """The arguments as they will run (pydantic's conversions applied: "3" → 3,
        "true" → True, key aliases to their names); InvalidArguments saying why not."""
        try:
            return self.args_model.model_validate(dict(args))
        except ValidationError as error:
            raise InvalidArguments(
                f"invalid arguments for {self.name}: {describe_validation_error(error)}"
            ) from None


def describe_validation_error(error: ValidationError) -> str:
    """A pydantic error as one line: `x: Field required; button: Input should be ...`."""
    parts = []
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"]) or "args"
        parts.append(f"{where}: {item['msg']}")
    return "; ".join(parts)


class ToolRegistry:
    """The tools a process knows. Built per composition root: there is no global registry."""

    def __init__(self, specs: Iterable[ToolSpec] = ()) -> None:
        self._specs: dict[str, ToolSpec] = {}
        for spec in specs:
            self.register(spec)

    def register(self, spec: ToolSpec) -> None:
        if spec.name in self._specs:
            raise ValueError(f"tool {spec.name!r} is registered already")
        self._specs[spec.name] = spec

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def names(self) -> tuple[str, ...]:
        return tuple(self._specs)

    def offered_names(self) -> tuple[str, ...]:
        return tuple(name for name, spec in self._specs.items() if spec.offered)

    def get(self, name: str) -> ToolSpec:
        spec = self._specs.get(name)
        if spec is None:
            known = ", ".join(self.offered_names())
            raise UnknownTool(f"unknown tool {name!r}; the tools are: {known}")
        return spec

    def specs(self, names: Iterable[str] | None = None) -> tuple[ToolSpec, ...]:
        if names is None:
            return tuple(self._specs.values())
        return tuple(self.get(name) for name in names)

    def validate(
        self, name: str, args: Mapping[str, Any], allowed: Iterable[str] | None = None
    ) -> tuple[ToolSpec, BaseModel]:
        """The spec and validated arguments; UnknownTool, ToolNotAllowed or InvalidArguments."""
        spec = self.get(name)
        if allowed is not None and name not in set(allowed):
            raise ToolNotAllowed(f"tool {name!r} is not allowed in this run")
        return spec, spec.validate(args)

    def unknown(self, names: Iterable[str]) -> list[str]:
        return [name for name in names if name not in self._specs]
