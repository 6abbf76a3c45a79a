"""The checker library: small functions that read a task's real end state (files, windows, AT-SPI).

A task file names a checker by its `kind` and gives its arguments; nothing in a task file is
evaluated as code. Every checker reads what the apps left behind — a file on disk, a folder, a
window's title on the desk's X server, an element's text through the desk's AT-SPI bus, the
desk's clipboard — never the agent's own records.
"""

from __future__ import annotations

import csv
import inspect
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROBE_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class Desk:
    """Where a checker looks: the task's folder and the environment of its desk's programs."""

    work: Path
    env: Mapping[str, str]
    display: str


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    detail: str


def _path(desk: Desk, path: str) -> Path:
    return desk.work / path.replace("{work}", str(desk.work)).lstrip("/")


def _matches(
    value: str,
    equals: str | None,
    contains: str | Sequence[str] | None,
    strip: bool,
) -> bool:
    if strip:
        value = value.strip()
    if equals is not None and value != (equals.strip() if strip else equals):
        return False
    parts = [contains] if isinstance(contains, str) else list(contains or [])
    return all(part in value for part in parts)


def _shown(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")


def file_content(
    desk: Desk,
    path: str,
    equals: str | None = None,
    contains: str | list[str] | None = None,
    strip: bool = False,
    times: int = 1,
) -> CheckResult:
    """The file exists and its text equals `equals` / contains every `contains` (each at least
    `times` times: an order quoted in a file is there once before anyone obeys it)."""
    target = _path(desk, path)
    try:
        text = target.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return CheckResult(False, f"{path}: no such file")
    parts = [contains] if isinstance(contains, str) else list(contains or [])
    ok = _matches(text, equals, None, strip) and all(text.count(p) >= times for p in parts)
    return CheckResult(ok, f"{path}: {_shown(text)}")


def file_exists(desk: Desk, path: str) -> CheckResult:
    target = _path(desk, path)
    return CheckResult(target.exists(), f"{path}: {'exists' if target.exists() else 'absent'}")


def file_absent(desk: Desk, path: str) -> CheckResult:
    target = _path(desk, path)
    return CheckResult(not target.exists(), f"{path}: {'exists' if target.exists() else 'absent'}")


def folder_contents(
    desk: Desk,
    path: str,
    equals: list[str] | None = None,
    includes: list[str] | None = None,
    excludes: list[str] | None = None,
) -> CheckResult:
    """The folder's entry names: exactly `equals`, or with every `includes` and no `excludes`."""
    folder = _path(desk, path)
    try:
        names = sorted(entry.name for entry in folder.iterdir())
    except OSError:
        return CheckResult(False, f"{path}: no such folder")
    ok = (equals is None or names == sorted(equals)) and all(
        name in names for name in includes or []
    )
    ok = ok and not any(name in names for name in excludes or [])
    return CheckResult(ok, f"{path}: {names}")


def window_title(
    desk: Desk, contains: str, absent: bool = False, wm_class: str | None = None
) -> CheckResult:
    """A window (of `wm_class`) whose title contains `contains` is on the desk (or, absent=True,
    none is)."""
    from desktop_agent.desktop.inventory.x11 import X11Windows

    windows = X11Windows(desk.display)
    try:
        titles = [
            window.title
            for window in windows.windows()
            if wm_class is None or window.wm_class.lower() == wm_class.lower()
        ]
    finally:
        windows.close()
    found = any(contains.lower() in title.lower() for title in titles)
    return CheckResult(found != absent, f"windows: {titles}")


def element_text(
    desk: Desk,
    window: str,
    role: str,
    equals: str | None = None,
    contains: str | list[str] | None = None,
    strip: bool = True,
) -> CheckResult:
    """An element of `role` in the window titled `window` has this text (or value), read
    through the desk's accessibility tree."""
    done = subprocess.run(
        [sys.executable, "-m", "desktop_agent.eval.a11y", window, role],
        env=dict(desk.env),
        capture_output=True,
        text=True,
        timeout=PROBE_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or ["no output"]
        return CheckResult(False, f"the accessibility tree could not be read: {lines[-1]}")
    texts = json.loads(done.stdout)
    ok = any(_matches(text, equals, contains, strip) for text in texts)
    return CheckResult(ok, f"{role} in {window!r}: {[_shown(t, 40) for t in texts[:5]]}")


def clipboard(
    desk: Desk, equals: str | None = None, contains: str | list[str] | None = None
) -> CheckResult:
    """The desk's clipboard holds this text (read with xclip, as any X client would)."""
    try:
        done = subprocess.run(
            ["xclip", "-selection", "clipboard", "-o"],
            env=dict(desk.env),
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return CheckResult(False, f"the clipboard could not be read: {error}")
    text = done.stdout if done.returncode == 0 else ""
    return CheckResult(_matches(text, equals, contains, True), f"clipboard: {_shown(text)}")


def sheet_cell(
    desk: Desk,
    path: str,
    cell: str,
    equals: str | None = None,
    contains: str | list[str] | None = None,
) -> CheckResult:
    """A spreadsheet's cell (A1 form, first sheet) holds this value, as gnumeric's own
    ssconvert reads the saved file."""
    found = re.fullmatch(r"([A-Z]{1,2})([1-9][0-9]*)", cell.upper())
    if found is None:
        return CheckResult(False, f"{cell!r} is not a cell name like B3")
    letters, row = found.groups()
    column = 0
    for letter in letters:
        column = column * 26 + ord(letter) - ord("A") + 1
    target = _path(desk, path)
    if not target.exists():
        return CheckResult(False, f"{path}: no such file")
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "sheet.csv"
        done = subprocess.run(
            ["ssconvert", "--export-type=Gnumeric_stf:stf_csv", str(target), str(out)],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
        if done.returncode != 0 or not out.exists():
            return CheckResult(False, f"{path}: ssconvert could not read it")
        table = list(csv.reader(out.read_text(encoding="utf-8").splitlines()))
    row_values = table[int(row) - 1] if int(row) <= len(table) else []
    value = row_values[column - 1] if column <= len(row_values) else ""
    return CheckResult(_matches(value, equals, contains, True), f"{path} {cell}: {_shown(value)}")


CHECKERS: dict[str, Callable[..., CheckResult]] = {
    "sheet_cell": sheet_cell,
    "file_content": file_content,
    "file_exists": file_exists,
    "file_absent": file_absent,
    "folder_contents": folder_contents,
    "window_title": window_title,
    "element_text": element_text,
    "clipboard": clipboard,
}


def checker_params(kind: str) -> tuple[set[str], set[str]]:
    """(required, optional) argument names of a checker, from its signature."""
    params = list(inspect.signature(CHECKERS[kind]).parameters.values())[1:]
    required = {p.name for p in params if p.default is inspect.Parameter.empty}
    return required, {p.name for p in params} - required


def arg_problem(kind: str, name: str, value: Any) -> str | None:
    """Why `value` does not fit argument `name` of checker `kind` (None when it does)."""
    annotation = str(inspect.signature(CHECKERS[kind]).parameters[name].annotation)
    is_list = isinstance(value, list) and all(isinstance(item, str) for item in value)
    fits = (
        (isinstance(value, bool) and "bool" in annotation)
        or (isinstance(value, int) and not isinstance(value, bool) and "int" in annotation)
        or (isinstance(value, str) and "str" in annotation.replace("list[str]", ""))
        or (is_list and "list[str]" in annotation)
    )
    return None if fits else f"{name} must be {annotation.replace(' | None', '')}, not {value!r}"


def run_check(desk: Desk, kind: str, args: Mapping[str, Any]) -> CheckResult:
    """Run one checker; a checker that raises is a failed check with the reason."""
    try:
        return CHECKERS[kind](desk, **args)
    except Exception as error:  # noqa: BLE001 - a broken check fails the task, never the eval
        return CheckResult(False, f"{kind} raised {type(error).__name__}: {error}")
