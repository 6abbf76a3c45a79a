"""ToolSpec and ToolRegistry: every tool's name, argument model and risk, validated in one place."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from desktop_agent.core.errors import InvalidArguments, ToolNotAllowed, UnknownTool
from desktop_agent.core.models import Risk

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
