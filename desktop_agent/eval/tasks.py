"""Eval tasks as data: one TOML file per task, loaded into a `Task` or a one-line error."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop_agent.core.injection_guard import rule_names
from desktop_agent.eval.checkers import CHECKERS, arg_problem, checker_params

BUILTIN_SUITE = Path(__file__).resolve().parent / "suite"

_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_TOP = {"id", "title", "tags", "apps", "inspired_by", "goal", "limits", "setup", "check", "oracle",
        "injection", "needs_person"}  # fmt: skip
_ORACLE_STEP = {"when", "unless", "tool", "args", "element", "done", "wait_s"}
_RUN = {"command", "wait_window", "delay_s", "wait_exit"}
_FILE = {"path", "content", "mode"}


class TaskFileError(ValueError):
    """A task file that cannot be used; str() is one line naming the file and what is wrong."""


@dataclass(frozen=True)
class Check:
    """One checker call: a name from the checker library and its arguments."""

    kind: str
    args: Mapping[str, Any]


@dataclass(frozen=True)
class SetupFile:
    path: str
    content: str
    mode: int | None = None


@dataclass(frozen=True)
class SetupRun:
    """A program started on the desk; `wait_window` is a title part the setup waits for."""

    command: tuple[str, ...]
    wait_window: str = ""
    delay_s: float = 0.0
    wait_exit: bool = False  # a preparing command (ssconvert, …): wait until it has ended


@dataclass(frozen=True)
class OracleStep:
    """One step of a task's oracle: when `when` is in the element list, do this, then go on."""

    when: str = ""
    unless: str = ""
    tool: str = ""
    args: Mapping[str, Any] = field(default_factory=dict)
    element: Mapping[str, str] = field(default_factory=dict)
    done: str = ""
    wait_s: float = 0.0


@dataclass(frozen=True)
class Injection:
    """An injection case: the attack's side effect (`attack`) the checkers look for."""

    style: str
    attack: tuple[Check, ...]


@dataclass(frozen=True)
class Task:
    id: str
    title: str
    goal: str
    source: Path
    tags: tuple[str, ...] = ()
    apps: tuple[str, ...] = ()
    inspired_by: str = ""
    max_steps: int = 20
    max_seconds: float = 120.0
    files: tuple[SetupFile, ...] = ()
    runs: tuple[SetupRun, ...] = ()
    checks: tuple[Check, ...] = ()
    oracle: tuple[OracleStep, ...] = ()
    injection: Injection | None = None
    #: the rule of the question only a person answers that the task must reach under a
    #: blanket approval (its outcome is then `needs_person`); "" when none
    needs_person: str = ""


def _fail(source: Path, message: str) -> TaskFileError:
    return TaskFileError(f"{source}: {message}")


def _table(source: Path, value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail(source, f"{where} must be a table")
    return value


def _tables(source: Path, value: Any, where: str) -> list[Mapping[str, Any]]:
    if not isinstance(value, list):
        raise _fail(source, f"{where} must be an array of tables ([[{where}]])")
    return [_table(source, item, f"{where}[{n}]") for n, item in enumerate(value)]


def _unknown(source: Path, data: Mapping[str, Any], allowed: Iterable[str], where: str) -> None:
    extra = sorted(set(data) - set(allowed))
    if extra:
        raise _fail(source, f"{where} has unknown key {extra[0]!r}")


def _text(source: Path, data: Mapping[str, Any], key: str, where: str, default: Any = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str) or (default is None and not value.strip()):
        raise _fail(
            source, f"{where}.{key} must be {'a non-empty ' if default is None else 'a '}string"
        )
    return value


def _strings(source: Path, data: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _fail(source, f"{where}.{key} must be a list of non-empty strings")
    return tuple(value)


def _number(source: Path, data: Mapping[str, Any], key: str, where: str, default: float) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise _fail(source, f"{where}.{key} must be a number ≥ 0")
    return float(value)


def _checks(source: Path, value: Any, where: str) -> tuple[Check, ...]:
    checks = []
    for n, data in enumerate(_tables(source, value, where)):
        kind = data.get("kind")
        if kind not in CHECKERS:
            known = ", ".join(sorted(CHECKERS))
            raise _fail(source, f"{where}[{n}].kind {kind!r} is not a checker (known: {known})")
        args = {key: item for key, item in data.items() if key != "kind"}
        required, optional = checker_params(kind)
        _unknown(source, args, required | optional, f"{where}[{n}] ({kind})")
        missing = sorted(required - set(args))
        if missing:
            raise _fail(source, f"{where}[{n}] ({kind}) needs {missing[0]!r}")
        for key, item in args.items():
            problem = arg_problem(kind, key, item)
            if problem:
                raise _fail(source, f"{where}[{n}] ({kind}): {problem}")
        checks.append(Check(kind, args))
    return tuple(checks)


def _oracle(source: Path, value: Any) -> tuple[OracleStep, ...]:
    steps = []
    for n, data in enumerate(_tables(source, value, "oracle")):
        where = f"oracle[{n}]"
        _unknown(source, data, _ORACLE_STEP, where)
        tool = _text(source, data, "tool", where, "")
        done = _text(source, data, "done", where, "")
        if bool(tool) == bool(done):
            raise _fail(source, f"{where} needs exactly one of 'tool' or 'done'")
        element = _table(source, data.get("element", {}), f"{where}.element")
        _unknown(source, element, {"role", "name"}, f"{where}.element")
        steps.append(
            OracleStep(
                when=_text(source, data, "when", where, ""),
                unless=_text(source, data, "unless", where, ""),
                tool=tool,
                args=dict(_table(source, data.get("args", {}), f"{where}.args")),
                element={str(k): str(v) for k, v in element.items()},
                done=done,
                wait_s=_number(source, data, "wait_s", where, 0.0),
            )
        )
    return tuple(steps)


def _setup(source: Path, value: Any) -> tuple[tuple[SetupFile, ...], tuple[SetupRun, ...]]:
    setup = _table(source, value, "setup")
    _unknown(source, setup, {"files", "run"}, "setup")
    files = []
    for n, data in enumerate(_tables(source, setup.get("files", []), "setup.files")):
        where = f"setup.files[{n}]"
        _unknown(source, data, _FILE, where)
        path = _text(source, data, "path", where)
        if Path(path).is_absolute() or ".." in Path(path).parts:
            raise _fail(source, f"{where}.path must be relative to the task's folder: {path!r}")
        mode = data.get("mode")
        if mode is not None and (not isinstance(mode, int) or isinstance(mode, bool)):
            raise _fail(source, f"{where}.mode must be a whole number (0o644)")
        files.append(SetupFile(path, _text(source, data, "content", where, ""), mode))
    runs = []
    for n, data in enumerate(_tables(source, setup.get("run", []), "setup.run")):
        where = f"setup.run[{n}]"
        _unknown(source, data, _RUN, where)
        command = _strings(source, data, "command", where)
        if not command:
            raise _fail(source, f"{where}.command must name a program")
        wait_exit = data.get("wait_exit", False)
        if not isinstance(wait_exit, bool):
            raise _fail(source, f"{where}.wait_exit must be true or false")
        runs.append(
            SetupRun(
                command,
                _text(source, data, "wait_window", where, ""),
                _number(source, data, "delay_s", where, 0.0),
                wait_exit,
            )
        )
    return tuple(files), tuple(runs)


def task_from_toml(source: Path, data: Mapping[str, Any]) -> Task:
    """Check a task file's table and build its Task; TaskFileError (one line) if it is bad."""
    _unknown(source, data, _TOP, "the task")
    task_id = _text(source, data, "id", "task")
    if not _ID.fullmatch(task_id):
        raise _fail(source, f"id {task_id!r} must be lower-case letters, digits, '-' or '_'")
    limits = _table(source, data.get("limits", {}), "limits")
    _unknown(source, limits, {"steps", "seconds"}, "limits")
    steps = limits.get("steps", 20)
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= 200:
        raise _fail(source, "limits.steps must be a whole number from 1 to 200")
    seconds = _number(source, limits, "seconds", "limits", 120.0)
    if "check" not in data:
        raise _fail(source, "a task needs at least one [[check]]")
    checks = _checks(source, data["check"], "check")
    files, runs = _setup(source, data.get("setup", {}))
    injection = None
    if "injection" in data:
        table = _table(source, data["injection"], "injection")
        _unknown(source, table, {"style", "attack"}, "injection")
        attack = _checks(source, table.get("attack", []), "injection.attack")
        if not attack:
            raise _fail(source, "injection.attack needs at least one check of the attack's effect")
        injection = Injection(_text(source, table, "style", "injection"), attack)
    needs_person = _text(source, data, "needs_person", "task", "")
    if needs_person and needs_person not in rule_names():
        known = ", ".join(sorted(rule_names()))
        raise _fail(source, f"needs_person {needs_person!r} is not a rule (known: {known})")
    return Task(
        id=task_id,
        title=_text(source, data, "title", "task"),
        goal=_text(source, data, "goal", "task"),
        source=source,
        tags=_strings(source, data, "tags", "task"),
        apps=_strings(source, data, "apps", "task"),
        inspired_by=_text(source, data, "inspired_by", "task", ""),
        max_steps=steps,
        max_seconds=seconds or 120.0,
        files=files,
        runs=runs,
        checks=checks,
        oracle=_oracle(source, data.get("oracle", [])),
        injection=injection,
        needs_person=needs_person,
    )


def load_task(path: Path) -> Task:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise TaskFileError(f"{path}: cannot read it: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise TaskFileError(f"{path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as error:
        raise TaskFileError(f"{path}: not valid TOML: {error}") from None
    return task_from_toml(path, data)


def load_suite(where: str | Path | None = None) -> list[Task]:
    """The tasks of a suite: the built-in one (None or "builtin") or a directory of *.toml."""
    folder = BUILTIN_SUITE if where in (None, "builtin") else Path(where)
    if not folder.is_dir():
        raise TaskFileError(f"{folder}: no such suite folder (give --suite DIR or builtin)")
    tasks = [load_task(path) for path in sorted(folder.glob("*.toml"))]
    if not tasks:
        raise TaskFileError(f"{folder}: no task files (*.toml) in it")
    seen: dict[str, Path] = {}
    for task in tasks:
        if task.id in seen:
            raise TaskFileError(f"{task.source}: id {task.id!r} is also used by {seen[task.id]}")
        seen[task.id] = task.source
    return tasks


def select(tasks: Sequence[Task], ids: Sequence[str] = (), tags: Sequence[str] = ()) -> list[Task]:
    """The tasks named by id (every id must exist) and carrying every tag asked for."""
    known = {task.id for task in tasks}
    unknown = [task_id for task_id in ids if task_id not in known]
    if unknown:
        raise TaskFileError(f"no task {unknown[0]!r} in the suite")
    return [
        task
        for task in tasks
        if (not ids or task.id in ids) and all(tag in task.tags for tag in tags)
    ]
