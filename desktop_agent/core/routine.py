"""Routines: the action steps of a successful run, saved to run again without the model.

A routine keeps each step's tool, its validated arguments and the identity of what it
acted on (core/targets.py); typed texts may be named parameters, with the run's text as
their default. A text that went into a password field was never stored (the loop keeps
`•••`): it becomes a secret parameter, asked when the routine runs and never saved.
The JSON file form (`routine_to_file` / `routine_from_file`) is what export writes and
import reads; grants and schedules are this machine's and never travel in it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from desktop_agent.core.call_risk import TEXT_TOOLS
from desktop_agent.core.errors import DesktopAgentError
from desktop_agent.core.models import (
    Effect,
    ElementRef,
    RunStatus,
    RunView,
    StepKind,
    StepStatus,
    StepView,
    utcnow,
)

FILE_FORMAT = "desktop-agent-routine"
FILE_VERSION = 1
REDACTED = "•••"
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
PARAM_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,39}")
#: the observation and waiting are the loop's own: a routine replays the actions only
_NOT_REPLAYED = frozenset({"screen_snapshot"})


class RoutineError(DesktopAgentError):
    """A routine that cannot be made, read or bound: the message is one line for the user."""


class RoutineNotFound(RoutineError):
    """No routine has that name."""


@dataclass(frozen=True, slots=True)
class RoutineStep:
    """One action to do again: the tool, its validated arguments, what it acted on, and
    what it did to the screen when it was taught (for the effect check)."""

    tool: str
    args: dict[str, Any]
    element: ElementRef | None = None
    effect: Effect | None = None
    summary: str = ""
    #: the turn of the run it was taught in, and that turn's screenshot (data dir relative)
    turn: int = 0
    screenshot: str | None = None

    def describe(self) -> str:
        """One line for a person and for the model's plan."""
        shown = {k: v for k, v in self.args.items() if k not in ("element",)}
        text = f"{self.tool} {json.dumps(shown, ensure_ascii=False)}" if shown else self.tool
        ref = self.element
        if ref is None:
            return text
        if ref.how == "window":
            return f'{text} in window "{ref.window}"'
        where = f' in "{ref.window}"' if ref.window else ""
        return f'{text} on {ref.role} "{ref.name}"{where}'


@dataclass(frozen=True, slots=True)
class RoutineParam:
    """A typed text the user may change at each run: the text of `steps` (1-based)."""

    name: str
    steps: tuple[int, ...]
    #: None for a secret (a password field's text): asked at each run, never saved
    default: str | None = None
    secret: bool = False


@dataclass(frozen=True, slots=True)
class Schedule:
    """When the OS starts the routine: every day (or Monday to Friday) at `at` (HH:MM)."""

    at: str
    weekdays: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"at": self.at, "weekdays": self.weekdays}


@dataclass(frozen=True, slots=True)
class Routine:
    name: str
    goal: str
    steps: tuple[RoutineStep, ...]
    params: tuple[RoutineParam, ...] = ()
    #: tools allowed without asking in this routine's runs (the user's, never imported)
    grants: tuple[str, ...] = ()
    source_run: str | None = None
    created_at: datetime = field(default_factory=utcnow)
    schedule: Schedule | None = None

    def with_(self, **changes: Any) -> Routine:
        return replace(self, **changes)

    def param(self, name: str) -> RoutineParam | None:
        return next((p for p in self.params if p.name == name), None)

    def bind(self, values: Mapping[str, str]) -> tuple[RoutineStep, ...]:
        """The steps with each parameter's text in place; RoutineError for an unknown name
        or a secret without a value."""
        unknown = sorted(set(values) - {p.name for p in self.params})
        if unknown:
            known = ", ".join(p.name for p in self.params) or "none"
            raise RoutineError(
                f"routine {self.name!r} has no parameter {', '.join(unknown)} (it has: {known})"
            )
        steps = list(self.steps)
        for param in self.params:
            value = values.get(param.name, param.default)
            if value is None:
                raise RoutineError(
                    f"routine {self.name!r} needs a value for {param.name} "
                    "(typed into a password field: asked at each run, never saved)"
                )
            for number in param.steps:
                step = steps[number - 1]
                steps[number - 1] = replace(step, args={**step.args, TEXT_TOOLS[step.tool]: value})
        return tuple(steps)

    def secrets(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params if p.secret)


def check_name(name: str, what: str = "routine name") -> str:
    if not NAME_PATTERN.fullmatch(name):
        raise RoutineError(
            f"{what} {name!r}: use 1-64 letters, digits, '.', '_' or '-' (starting with a "
            "letter or digit)"
        )
    return name


def routine_from_run(
    run: RunView,
    steps: Sequence[StepView],
    name: str,
    params: Mapping[str, Sequence[int]] = {},  # noqa: B006 - read only
    *,
    grants: Iterable[str] = (),
) -> Routine:
    """The routine of a completed run: its action steps that ran ok, in order.

    `params` names typed texts by the turn numbers `show RUN_ID` lists (a name may take
    several turns: one text typed in two places). A text the store kept hidden becomes a
    secret parameter even when not named: `password` for a password field's, `hidden` for
    one typed where the focused field was not known (stored hidden to be safe).
    """
    check_name(name)
    if run.status is not RunStatus.COMPLETED:
        raise RoutineError(
            f"run {run.id} {run.status.value}: only a completed run can be saved as a routine"
        )
    done = [
        s
        for s in steps
        if s.kind is StepKind.ACTION
        and s.status is StepStatus.OK
        and s.tool
        and s.tool not in _NOT_REPLAYED
    ]
    if not done:
        raise RoutineError(f"run {run.id} has no action that ran ok: nothing to save")
    by_turn = {s.index: number for number, s in enumerate(done, start=1)}
    routine_steps = tuple(
        RoutineStep(
            tool=s.tool or "",
            args=dict(s.args),
            element=s.element,
            effect=s.effect,
            summary=s.summary,
            turn=s.index,
            screenshot=_decided_on(steps, s),
        )
        for s in done
    )
    made: list[RoutineParam] = []
    named_steps: set[int] = set()
    for param_name, turns in params.items():
        if not PARAM_PATTERN.fullmatch(param_name):
            raise RoutineError(
                f"parameter name {param_name!r}: use letters, digits, '_' or '-' "
                "(starting with a letter)"
            )
        numbers = []
        for turn in turns:
            number = by_turn.get(turn)
            if number is None or routine_steps[number - 1].tool not in TEXT_TOOLS:
                typed = ", ".join(str(s.turn) for s in routine_steps if s.tool in TEXT_TOOLS)
                raise RoutineError(
                    f"parameter {param_name}: turn {turn} typed no text in run {run.id} "
                    f"(turns that did: {typed or 'none'})"
                )
            numbers.append(number)
        named_steps.update(numbers)
        first = routine_steps[numbers[0] - 1]
        text = first.args.get(TEXT_TOOLS[first.tool])
        secret = text == REDACTED
        made.append(RoutineParam(param_name, tuple(numbers), None if secret else str(text), secret))
    for number, step in enumerate(routine_steps, start=1):
        hidden = step.args.get(TEXT_TOOLS.get(step.tool, "")) == REDACTED
        if number not in named_steps and hidden:
            # a password field's, or one typed where nobody could tell the field: not stored
            stem = "password" if step.element is not None and step.element.password else "hidden"
            made.append(RoutineParam(_free_name(made, stem), (number,), None, secret=True))
    return Routine(
        name=name,
        goal=run.goal,
        steps=routine_steps,
        params=tuple(made),
        grants=tuple(grants),
        source_run=run.id,
    )


def _free_name(params: Sequence[RoutineParam], stem: str) -> str:
    taken = {p.name for p in params}
    return next(n for n in (stem, *(f"{stem}{i}" for i in range(2, 999))) if n not in taken)


def _decided_on(steps: Sequence[StepView], action: StepView) -> str | None:
    """The screenshot of the observation the action was decided on (its turn's)."""
    return next(
        (s.screenshot for s in steps if s.index == action.index and s.kind is StepKind.OBSERVE),
        None,
    )


# ── the file form ────────────────────────────────────────────────────────────


def routine_to_file(routine: Routine, *, local: bool = False) -> dict[str, Any]:
    """The JSON of an exported routine (readable: one key a line when dumped with indent).
    `local` adds what only makes sense in this data dir (the steps' screenshots): the store's
    form."""
    return {
        "format": FILE_FORMAT,
        "version": FILE_VERSION,
        "name": routine.name,
        "goal": routine.goal,
        "created_at": routine.created_at.isoformat(),
        "source_run": routine.source_run,
        "params": [
            {"name": p.name, "steps": list(p.steps), "default": p.default, "secret": p.secret}
            for p in routine.params
        ],
        "steps": [
            {
                "tool": s.tool,
                "args": s.args,
                "element": s.element.to_json() if s.element else None,
                "effect": s.effect.value if s.effect else None,
                "summary": s.summary,
                "turn": s.turn,
                **({"screenshot": s.screenshot} if local else {}),
            }
            for s in routine.steps
        ],
    }


def routine_from_file(
    data: Any, *, source: str = "the routine file", local: bool = False
) -> Routine:
    """The routine of an exported file's JSON; RoutineError naming the first thing wrong.
    `local`: the store's form (screenshots kept); a file's are ignored."""
    try:
        return _from_file(data, local)
    except RoutineError as error:
        raise RoutineError(f"{source}: {error}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        what = f"missing {error}" if isinstance(error, KeyError) else str(error)
        raise RoutineError(f"{source}: not a routine: {' '.join(what.split())}") from None


def _from_file(data: Any, local: bool) -> Routine:
    if not isinstance(data, dict) or data.get("format") != FILE_FORMAT:
        raise RoutineError(f'not a routine ("format" is not "{FILE_FORMAT}")')
    if data.get("version") != FILE_VERSION:
        raise RoutineError(f"routine file version {data.get('version')!r} is not {FILE_VERSION}")
    steps = []
    for number, item in enumerate(_list(data, "steps"), start=1):
        if not isinstance(item, dict) or not isinstance(item.get("tool"), str):
            raise RoutineError(f"step {number} has no tool")
        args = item.get("args", {})
        if not isinstance(args, dict):
            raise RoutineError(f"step {number}: args is not an object")
        element = item.get("element")
        effect = item.get("effect")
        steps.append(
            RoutineStep(
                tool=item["tool"],
                args=args,
                element=ElementRef.from_json(element) if element is not None else None,
                effect=Effect(effect) if effect is not None else None,
                summary=str(item.get("summary", "")),
                turn=int(item.get("turn", 0)),
                screenshot=item.get("screenshot") if local else None,
            )
        )
    if not steps:
        raise RoutineError("it has no steps")
    params = []
    for item in _list(data, "params"):
        name = item["name"]
        if not isinstance(name, str) or not PARAM_PATTERN.fullmatch(name):
            raise RoutineError(f"bad parameter name {name!r}")
        numbers = tuple(int(n) for n in item["steps"])
        for n in numbers:
            if not 1 <= n <= len(steps) or steps[n - 1].tool not in TEXT_TOOLS:
                raise RoutineError(f"parameter {name}: step {n} types no text")
        secret = bool(item.get("secret", False))
        default = item.get("default")
        if secret:
            default = None  # a secret is never carried, even when a file says one
        elif not isinstance(default, str):
            raise RoutineError(f"parameter {name} has no default text")
        params.append(RoutineParam(name, numbers, default, secret))
    if len({p.name for p in params}) != len(params):
        raise RoutineError("a parameter name is used twice")
    created = data.get("created_at")
    return Routine(
        name=check_name(str(data["name"])),
        goal=str(data["goal"]),
        steps=tuple(steps),
        params=tuple(params),
        source_run=data.get("source_run") if isinstance(data.get("source_run"), str) else None,
        created_at=datetime.fromisoformat(created) if isinstance(created, str) else utcnow(),
    )


def _list(data: dict[str, Any], key: str) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise RoutineError(f'"{key}" is not a list')
    return value


def read_routine_text(text: str, *, source: str) -> Routine:
    """A routine from a file's text; RoutineError (one line) for text that is not one."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise RoutineError(f"{source}: not JSON (line {error.lineno}: {error.msg})") from None
    except RecursionError:
        raise RoutineError(f"{source}: not JSON (nested too deeply)") from None
    return routine_from_file(data, source=source)


def dump_routine_text(routine: Routine) -> str:
    return json.dumps(routine_to_file(routine), ensure_ascii=False, indent=2) + "\n"
