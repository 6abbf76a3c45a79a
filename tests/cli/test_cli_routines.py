"""`desktop-agent routine …`: save a run, list, export/import, schedule; bad input is one line."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from desktop_agent.cli import EXIT_REFUSED
from desktop_agent.core.models import (
    Effect,
    Element,
    RunStatus,
    StepKind,
    StepStatus,
    StepView,
    TaskSpec,
    utcnow,
)
from desktop_agent.core.routine import REDACTED, RoutineError, Schedule
from desktop_agent.core.targets import element_ref
from desktop_agent.desktop.schedule import (
    SystemdUnits,
    command_line,
    schtasks_xml,
    systemd_units,
)
from desktop_agent.launch import main
from desktop_agent.store import SqliteRunRepository
from tests.fakes import make_observation

pytestmark = pytest.mark.usefixtures("isolated_home")


SCREEN = make_observation(
    [
        Element(1, "window", "Untitled - L3afpad", (0, 0, 800, 600), focused=True),
        Element(2, "text", "", (0, 60, 800, 540), focused=True),
    ]
)
LOGIN = make_observation(
    [
        Element(1, "window", "Log in", (0, 0, 400, 300), focused=True),
        Element(2, "password text", "Password", (10, 60, 200, 24), focused=True, password=True),
    ]
)


def taught_run(home: Path, *, password: bool = False, launch: bool = False) -> str:
    """A completed run in the store of `home`: type a line, save, type the path, enter."""

    async def make() -> str:
        repo = SqliteRunRepository.open(home)
        try:
            run = await repo.create_run(TaskSpec(goal="write a note", allowed_tools=("type_text",)))
            actions: list[tuple[str, dict[str, object], object]] = [
                ("type_text", {"text": "hello"}, SCREEN),
                ("hotkey", {"keys": ["ctrl", "s"]}, SCREEN),
                ("type_text", {"text": "/tmp/note.txt"}, SCREEN),
            ]
            if password:
                actions.append(("type_text", {"text": REDACTED}, LOGIN))
            if launch:
                actions.insert(0, ("launch_app", {"command": "l3afpad"}, SCREEN))
            for turn, (tool, args, screen) in enumerate(actions, start=1):
                ref = element_ref(tool, args, screen)  # type: ignore[arg-type]
                seen = StepView(run.id, 2 * turn - 1, turn, StepKind.OBSERVE, StepStatus.OK,
                                utcnow(), tool="screen_snapshot")  # fmt: skip
                await repo.save_step(seen)
                await repo.save_step(StepView(run.id, 2 * turn, turn, StepKind.ACTION,
                                              StepStatus.OK, utcnow(), tool=tool, args=args,
                                              element=ref, effect=Effect.CHANGED))  # fmt: skip
            await repo.save_run(run.with_(status=RunStatus.COMPLETED))
            return run.id
        finally:
            repo.close()

    return asyncio.run(make())


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_a_run_saved_as_a_routine_is_listed_exported_and_imported_back(
    isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = taught_run(isolated_home)
    saved = main(["routine", "save", run_id, "note", "--param", "text=1", "--param", "path=3",
                  "--grant", "type_text,hotkey"])  # fmt: skip
    assert saved == 0, capsys.readouterr().err
    assert "saved routine note: 3 steps; parameters: text='hello', path='/tmp/note.txt'" in (
        capsys.readouterr().out
    )

    assert main(["routine", "list", "--json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert [p["name"] for p in listed["params"]] == ["text", "path"]
    assert listed["grants"] == ["type_text", "hotkey"]
    assert listed["steps"][0]["element"]["role"] == "text"

    exported = tmp_path / "note.json"
    assert main(["routine", "export", "note", str(exported)]) == 0
    text = exported.read_text()
    assert json.loads(text)["format"] == "desktop-agent-routine" and "\n  " in text
    assert main(["routine", "import", str(exported), "--name", "note-copy"]) == 0
    capsys.readouterr()
    assert main(["routine", "list", "--json"]) == 0
    copy = {r["name"]: r for r in json.loads(capsys.readouterr().out)}["note-copy"]
    assert copy["steps"] == listed["steps"] and copy["params"] == listed["params"]
    assert copy["grants"] == []  # grants are never taken from a file


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("not json at all", "not JSON (line 1: Expecting value)"),
        ('{"format": "desktop-agent-routine", "version": 1, "name": "x", "goal": "g", '
         '"steps": [{"tool": "teleport", "args": {}}]}', "step 1: unknown tool 'teleport'"),
        ('{"format": "desktop-agent-routine", "version": 1, "name": "x", "goal": "g", '
         '"steps": [{"tool": "click", "args": {"x": "left"}}]}',
         "step 1: invalid arguments for click"),
        ('{"format": "desktop-agent-routine", "version": 2}', "routine file version 2 is not 1"),
    ],
)  # fmt: skip
def test_a_malformed_routine_file_is_rejected_with_one_line(
    tmp_path: Path, content: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)

    assert main(["routine", "import", str(path)]) == EXIT_REFUSED

    line = one_line(capsys)
    assert line.startswith("desktop-agent: ") and says in line
    assert main(["routine", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_saving_a_turn_that_typed_nothing_is_refused_with_one_line(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = taught_run(isolated_home)
    assert main(["routine", "save", run_id, "note", "--param", "text=2"]) == EXIT_REFUSED
    assert "parameter text: turn 2 typed no text" in one_line(capsys)
    assert main(["routine", "save", "nope", "note"]) == EXIT_REFUSED
    assert "no run 'nope'" in one_line(capsys)


def test_a_scheduled_run_that_would_ask_fails_at_start_listing_what_it_would_ask(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = taught_run(isolated_home, password=True, launch=True)
    assert main(["routine", "save", run_id, "login", "--grant", "type_text,hotkey"]) == 0
    store_schedule(isolated_home, "login", Schedule("09:00", False))
    capsys.readouterr()

    assert main(["routine", "run", "login", "--scheduled"]) == EXIT_REFUSED

    line = one_line(capsys)
    assert line.startswith("desktop-agent: routine login would ask, and nobody is there")
    assert "password: a text that is never saved (asked at each run)" in line
    assert 'step 1 launch_app {"command": "l3afpad"}' in line
    assert "step 5 type_text" in line and "typing into a password field" in line
    assert "step 2" not in line  # granted, and not a call that asks every time


def test_a_scheduled_run_given_a_value_its_step_cannot_take_is_refused_with_one_line(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = taught_run(isolated_home)
    assert main(["routine", "save", run_id, "note", "--param", "text=1",
                 "--grant", "type_text,hotkey"]) == 0  # fmt: skip
    store_schedule(isolated_home, "note", Schedule("09:00", False))
    capsys.readouterr()

    assert main(["routine", "run", "note", "--scheduled", "--set", "text="]) == EXIT_REFUSED

    assert one_line(capsys) == (
        "desktop-agent: routine note: step 1: invalid arguments for type_text: text: String "
        "should have at least 1 character"
    )
    assert asyncio.run(_run_ids(isolated_home)) == [run_id]  # no routine run recorded


def store_schedule(home: Path, name: str, when: Schedule | None) -> None:
    """The store's schedule of routine `name`, set with no OS timer touched."""

    async def update() -> None:
        repo = SqliteRunRepository.open(home)
        try:
            await repo.update_routine(name, schedule=when)
        finally:
            repo.close()

    asyncio.run(update())


async def _run_ids(home: Path) -> list[str]:
    repo = SqliteRunRepository.open(home)
    try:
        return [run.id for run in await repo.list_runs()]
    finally:
        repo.close()


def test_schedule_writes_a_systemd_timer_and_service_and_unschedule_removes_them(
    isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = taught_run(isolated_home)
    assert main(["routine", "save", run_id, "note"]) == 0

    main(["routine", "schedule", "note", "--at", "9:05", "--weekdays"])  # no user bus here

    units = tmp_path / "config" / "systemd" / "user"
    timer = (units / "desktop-agent-routine-note.timer").read_text()
    service = (units / "desktop-agent-routine-note.service").read_text()
    assert "OnCalendar=Mon..Fri *-*-* 09:05:00" in timer
    assert '"routine" "run" "note" "--scheduled"' in service
    capsys.readouterr()
    assert main(["routine", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["schedule"] == {"at": "09:05", "weekdays": True}

    assert main(["routine", "unschedule", "note"]) == 0
    assert not list(units.iterdir())
    capsys.readouterr()
    assert main(["routine", "schedule", "note", "--at", "25:00"]) == EXIT_REFUSED
    assert "--at '25:00': give a time of day as HH:MM" in one_line(capsys)


def scheduled_note(home: Path, capsys: pytest.CaptureFixture[str], *more: str) -> Path:
    """Routine `note` saved (`more`: save's extra arguments) and scheduled; its units' dir."""
    assert main(["routine", "save", taught_run(home), "note", *more]) == 0
    main(["routine", "schedule", "note", "--at", "09:00"])  # no user bus here: files only
    units = home.parent / "config" / "systemd" / "user"
    assert sorted(p.name for p in units.iterdir()) == [
        "desktop-agent-routine-note.service", "desktop-agent-routine-note.timer"
    ]  # fmt: skip
    capsys.readouterr()
    return units


@pytest.mark.parametrize("how", ["import", "save"])
def test_replacing_a_scheduled_routine_removes_its_timer_with_its_schedule(
    isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    units = scheduled_note(isolated_home, capsys)
    if how == "import":
        other = tmp_path / "other.json"
        assert main(["routine", "export", "note", str(other)]) == 0
        replaced = main(["routine", "import", str(other), "--name", "note", "--replace"])
    else:
        replaced = main(["routine", "save", taught_run(isolated_home), "note", "--replace"])

    assert replaced == 0
    assert "the routine it replaced was scheduled: its timer is removed" in capsys.readouterr().out
    assert list(units.iterdir()) == []
    assert main(["routine", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["schedule"] is None


@pytest.mark.parametrize("command", ["unschedule", "delete"])
def test_unschedule_and_delete_remove_a_timer_the_store_forgot(
    isolated_home: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    units = scheduled_note(isolated_home, capsys)
    store_schedule(isolated_home, "note", None)  # as a replace on old main left it

    assert main(["routine", command, "note"]) == 0

    assert list(units.iterdir()) == []
    assert "removed " in capsys.readouterr().out


@pytest.mark.parametrize(("command", "code"), [("unschedule", 0), ("delete", EXIT_REFUSED)])
def test_the_timer_of_a_name_no_routine_carries_is_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, code: int
) -> None:
    units = tmp_path / "config" / "systemd" / "user"
    units.mkdir(parents=True)
    for suffix in (".timer", ".service"):  # left by a routine deleted on old main
        (units / f"desktop-agent-routine-note{suffix}").write_text("[Unit]\n")

    assert main(["routine", command, "note"]) == code

    assert list(units.iterdir()) == []


def test_a_scheduled_run_of_a_routine_with_no_schedule_refuses_with_one_line(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = taught_run(isolated_home)
    assert main(["routine", "save", run_id, "note", "--grant", "type_text,hotkey"]) == 0
    capsys.readouterr()

    assert main(["routine", "run", "note", "--scheduled"]) == EXIT_REFUSED

    assert one_line(capsys) == (
        "desktop-agent: routine note is not scheduled, so no timer should start it: remove the "
        "one that did with `desktop-agent routine unschedule note`"
    )
    assert asyncio.run(_run_ids(isolated_home)) == [run_id]  # no routine run recorded


def verify(units: SystemdUnits, tmp_path: Path) -> None:
    """`systemd-analyze verify --user` passes the units, written to `tmp_path`."""
    for name, text in ((units.service_name, units.service), (units.timer_name, units.timer)):
        (tmp_path / name).write_text(text)
    runtime = tmp_path / "run"  # `verify --user` looks its runtime dir up
    runtime.mkdir(mode=0o700)
    done = subprocess.run(
        ["systemd-analyze", "verify", "--user", str(tmp_path / units.timer_name),
         str(tmp_path / units.service_name)],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze")
def test_the_systemd_units_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    units = systemd_units(
        "note", Schedule("09:00", weekdays=True), tmp_path / "data 100%",
        env={"DISPLAY": ":7", "PATH": "/usr/bin"},
    )  # fmt: skip
    verify(units, tmp_path)
    assert 'Environment="DISPLAY=:7"' in units.service and "data 100%%" in units.service


def exec_start_argv(service: str) -> list[str]:
    """The argv systemd gives the program for the service's ExecStart line, by the rules of
    systemd.service(5) "Command lines": double-quoted words with C escapes, `%%` a `%`
    (specifiers) and `$$` a `$` (variable expansion, done after unquoting)."""
    line = next(row for row in service.splitlines() if row.startswith("ExecStart="))
    words = re.findall(r'"((?:[^"\\]|\\.)*)"', line.removeprefix("ExecStart="))
    unescaped = [re.sub(r"\\(.)", r"\1", word).replace("%%", "%") for word in words]
    assert all("$" not in word.replace("$$", "") for word in unescaped)  # no `$` expanded
    return [word.replace("$$", "$") for word in unescaped]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze")
def test_a_dollar_in_a_unit_line_reaches_the_program_as_it_is(tmp_path: Path) -> None:
    data_dir = tmp_path / "data $HOME ${USER} 100%"
    units = systemd_units("note", Schedule("09:00", False), data_dir,
                          env={"DISPLAY": ":7", "XAUTHORITY": "/tmp/$x"})  # fmt: skip
    verify(units, tmp_path)
    assert exec_start_argv(units.service) == command_line("note", data_dir)
    # Environment= expands no variable (systemd.exec(5)): its `$` stays one
    assert 'Environment="XAUTHORITY=/tmp/$x"' in units.service


@pytest.mark.parametrize(
    "bad", ["a\nExecStartPre=/bin/sh -c id", "tab\there", "bell\x07", "del\x7f"]
)
def test_a_control_character_in_a_unit_or_task_is_refused_with_one_line(
    tmp_path: Path, bad: str
) -> None:
    for make in (
        lambda: systemd_units("note", Schedule("09:00", False), tmp_path / bad, env={}),
        lambda: systemd_units("note", Schedule("09:00", False), tmp_path, env={"DISPLAY": bad}),
        lambda: schtasks_xml("note", Schedule("09:00", False), tmp_path / bad),
    ):
        with pytest.raises(RoutineError, match="holds a control character") as raised:
            make()
        assert "\n" not in str(raised.value)


def test_a_percent_sign_in_a_tasks_command_line_is_refused(tmp_path: Path) -> None:
    # Task Scheduler expands %VAR% in an Exec's arguments, with no escape: "%APPDATA%\x"
    # would start the routine on another data dir
    with pytest.raises(RoutineError, match="Task Scheduler would read as an environment"):
        schtasks_xml("note", Schedule("09:00", False), tmp_path / "%APPDATA%")


def test_scheduling_from_a_data_dir_with_a_control_character_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home\nExecStartPre=evil"
    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(home))
    run_id = taught_run(home)
    assert main(["routine", "save", run_id, "note"]) == 0
    capsys.readouterr()

    assert main(["routine", "schedule", "note", "--at", "09:00"]) == EXIT_REFUSED

    assert "holds a control character ('\\n')" in one_line(capsys)
    assert not (tmp_path / "config" / "systemd" / "user").exists()
    assert main(["routine", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["schedule"] is None


def test_the_task_scheduler_xml_starts_the_routine_daily_or_on_weekdays(tmp_path: Path) -> None:
    ns = {"t": "http://schemas.microsoft.com/windows/2004/02/mit/task"}
    for weekdays in (False, True):
        xml = schtasks_xml("note", Schedule("09:00", weekdays), tmp_path / "a & b")
        root = ET.fromstring(xml.split("\n", 1)[1])  # the UTF-16 declaration is for the file
        trigger = root.find("t:Triggers/t:CalendarTrigger", ns)
        assert trigger is not None
        assert trigger.findtext("t:StartBoundary", namespaces=ns) == "2000-01-01T09:00:00"
        days = trigger.find("t:ScheduleByWeek/t:DaysOfWeek", ns)
        if weekdays:
            assert days is not None and [d.tag.split("}")[1] for d in days] == [
                "Monday", "Tuesday", "Wednesday", "Thursday", "Friday"
            ]  # fmt: skip
        else:
            assert trigger.find("t:ScheduleByDay/t:DaysInterval", ns) is not None
        arguments = root.findtext("t:Actions/t:Exec/t:Arguments", namespaces=ns) or ""
        assert arguments.endswith('"' + str(tmp_path / "a & b") + '" routine run note --scheduled')
        assert root.findtext("t:Principals/t:Principal/t:LogonType", namespaces=ns) == (
            "InteractiveToken"
        )
