"""Scheduling a routine with the OS, not a daemon of ours: a systemd user timer + service
on Linux, a Task Scheduler entry (schtasks XML) on Windows.

What runs is `desktop-agent routine run NAME --scheduled`: it refuses to start, listing
what it would ask, unless every step is allowed or granted (nobody is there to answer).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from desktop_agent.core.routine import RoutineError, Schedule
from desktop_agent.desktop.launch import program_env, start_program

TIME_PATTERN = re.compile(r"([01]?\d|2[0-3]):([0-5]\d)")
UNIT_PREFIX = "desktop-agent-routine-"
TASK_FOLDER = "desktop-agent"
#: the environment a graphical session gives its programs, that a timer's service lacks
SESSION_VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS",
                     "DESKTOP_AGENT_HOME")  # fmt: skip


def parse_time(text: str) -> str:
    """HH:MM (24 h), zero-padded; RoutineError otherwise."""
    found = TIME_PATTERN.fullmatch(text.strip())
    if not found:
        raise RoutineError(f"--at {text!r}: give a time of day as HH:MM, e.g. 09:00")
    return f"{int(found.group(1)):02d}:{found.group(2)}"


#: the Windows bundle's console twin of the windowed exe (packaging/desktop-agent.spec)
CONSOLE_EXE = "desktop-agent-cli.exe"
WINDOWED_EXE = "desktop-agent.exe"


def command_line(name: str, data_dir: Path) -> list[str]:
    """The program and arguments the scheduler starts. From the Windows bundle that is the
    windowed exe even when the routine was scheduled from the console one: a task started
    from desktop-agent-cli.exe flashes a console window over the user's desktop (the
    windowed exe runs the sub-commands too, its output in the log)."""
    if not getattr(sys, "frozen", False):
        return [sys.executable, "-m", "desktop_agent", *_run_arguments(name, data_dir)]
    program = sys.executable
    if sys.platform == "win32" and Path(program).name.lower() == CONSOLE_EXE:
        windowed = Path(program).with_name(WINDOWED_EXE)
        if windowed.is_file():
            program = str(windowed)
    return [program, *_run_arguments(name, data_dir)]


def _run_arguments(name: str, data_dir: Path) -> list[str]:
    return ["--data-dir", str(data_dir), "routine", "run", name, "--scheduled"]


# ── systemd (Linux) ──────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class SystemdUnits:
    service_name: str
    service: str
    timer_name: str
    timer: str


def systemd_units(
    name: str, schedule: Schedule, data_dir: Path, env: dict[str, str] | None = None
) -> SystemdUnits:
    """The service that runs the routine once and the timer that starts it."""
    env = dict(os.environ) if env is None else env
    unit = f"{UNIT_PREFIX}{name}"
    days = "Mon..Fri " if schedule.weekdays else ""
    environment = "".join(
        f"Environment={_systemd_quote(f'{key}={env[key]}')}\n"
        for key in SESSION_VARIABLES
        if env.get(key)
    )
    # ExecStart expands $VAR and ${VAR} (systemd.service(5), "Command lines"): `$$` is a `$`
    exec_start = " ".join(
        _systemd_quote(part).replace("$", "$$") for part in command_line(name, data_dir)
    )
    service = (
        "[Unit]\n"
        f"Description=desktop-agent routine {name}\n\n"
        "[Service]\n"
        "Type=oneshot\n"
        f"{environment}"
        f"ExecStart={exec_start}\n"
    )
    timer = (
        "[Unit]\n"
        f"Description=Start desktop-agent routine {name} at {schedule.at}"
        f"{' on weekdays' if schedule.weekdays else ' every day'}\n\n"
        "[Timer]\n"
        f"OnCalendar={days}*-*-* {schedule.at}:00\n"
        f"Unit={unit}.service\n\n"
        "[Install]\n"
        "WantedBy=timers.target\n"
    )
    return SystemdUnits(f"{unit}.service", service, f"{unit}.timer", timer)


def _systemd_quote(word: str) -> str:
    """One ExecStart/Environment word: quoted, with `\\`, `"` escaped and `%` (a specifier)
    doubled, so a path with spaces or a percent sign reaches the program as it is; a control
    character (a newline would start a directive of its own) is refused."""
    refuse_control(word)
    escaped = word.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    return f'"{escaped}"'


def refuse_control(word: str) -> str:
    """`word` if it has no control character; RoutineError (one line) naming it otherwise.
    A unit line or an XML element cannot carry one as it is (systemd.service(5): "control
    characters are not allowed"; XML 1.0 forbids most of C0)."""
    found = next((c for c in word if unicodedata.category(c) == "Cc"), None)
    if found is not None:
        raise RoutineError(
            f"cannot schedule: {word!r} holds a control character ({found!r}), which the "
            "OS scheduler's file cannot carry as it is"
        )
    return word


def systemd_user_dir(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    config = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "systemd" / "user"


def install_systemd(units: SystemdUnits, directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for file_name, text in ((units.service_name, units.service), (units.timer_name, units.timer)):
        path = directory / file_name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def remove_systemd(name: str, directory: Path) -> list[Path]:
    removed = []
    for suffix in (".timer", ".service"):
        path = directory / f"{UNIT_PREFIX}{name}{suffix}"
        if path.exists():
            path.unlink()
            removed.append(path)
    return removed


def systemctl(*args: str) -> str:
    """Run `systemctl --user ARGS`; "" when it worked, else why not (one line)."""
    try:
        done = subprocess.run(
            ["systemctl", "--user", *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            env=program_env(),
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"systemctl --user {' '.join(args)}: {error}"
    if done.returncode != 0:
        why = " ".join((done.stderr or done.stdout).split()) or f"exit {done.returncode}"
        return f"systemctl --user {' '.join(args)}: {why}"
    return ""


# ── Task Scheduler (Windows) ─────────────────────────────────────────────────


def task_name(name: str) -> str:
    return f"\\{TASK_FOLDER}\\routine {name}"


def schtasks_xml(name: str, schedule: Schedule, data_dir: Path) -> str:
    """A Task Scheduler task (schema 1.2) that starts the routine in the user's session."""
    program, *arguments = (_task_word(part) for part in command_line(name, data_dir))
    if schedule.weekdays:
        days = "".join(f"<{day}/>" for day in ("Monday", "Tuesday", "Wednesday", "Thursday",
                                               "Friday"))  # fmt: skip
        when = (
            "<ScheduleByWeek><WeeksInterval>1</WeeksInterval>"
            f"<DaysOfWeek>{days}</DaysOfWeek></ScheduleByWeek>"
        )
    else:
        when = "<ScheduleByDay><DaysInterval>1</DaysInterval></ScheduleByDay>"
    return (
        '<?xml version="1.0" encoding="UTF-16"?>\n'
        '<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">\n'
        "  <RegistrationInfo>\n"
        f"    <Description>desktop-agent routine {escape(name)}</Description>\n"
        "  </RegistrationInfo>\n"
        "  <Triggers>\n"
        "    <CalendarTrigger>\n"
        f"      <StartBoundary>2000-01-01T{schedule.at}:00</StartBoundary>\n"
        "      <Enabled>true</Enabled>\n"
        f"      {when}\n"
        "    </CalendarTrigger>\n"
        "  </Triggers>\n"
        "  <Principals>\n"
        '    <Principal id="Author">\n'
        "      <LogonType>InteractiveToken</LogonType>\n"
        "      <RunLevel>LeastPrivilege</RunLevel>\n"
        "    </Principal>\n"
        "  </Principals>\n"
        "  <Settings>\n"
        "    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>\n"
        "    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>\n"
        "    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>\n"
        "    <ExecutionTimeLimit>PT1H</ExecutionTimeLimit>\n"
        "    <Enabled>true</Enabled>\n"
        "  </Settings>\n"
        '  <Actions Context="Author">\n'
        "    <Exec>\n"
        f"      <Command>{escape(program)}</Command>\n"
        f"      <Arguments>{escape(subprocess.list2cmdline(arguments))}</Arguments>\n"
        "    </Exec>\n"
        "  </Actions>\n"
        "</Task>\n"
    )


def _task_word(word: str) -> str:
    """One word of the task's command line; RoutineError (one line) for a control character
    or a `%`: the task engine expands `%VAR%` in an Exec's Path and Arguments (Microsoft's
    ExecAction object, Remarks) and has no escape for it."""
    refuse_control(word)
    if "%" in word:
        raise RoutineError(
            f"cannot schedule: {word!r} holds a '%', which Task Scheduler would read as an "
            "environment variable"
        )
    return word


def schtasks(*args: str) -> str:
    """Run `schtasks ARGS`; "" when it worked, else why not (one line). Started as every
    Windows program of ours is (launch.start_program: the system's DLLs, not the bundle's)."""
    try:
        process = start_program(
            ["schtasks", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=program_env(),
        )
    except OSError as error:
        return f"schtasks: {error}"
    try:
        stdout, stderr = process.communicate(timeout=30)
    except subprocess.TimeoutExpired as error:
        process.kill()
        process.communicate()
        return f"schtasks: {error}"
    if process.returncode != 0:
        return "schtasks: " + (" ".join((stderr or stdout).split()) or "failed")
    return ""


# ── the two together ─────────────────────────────────────────────────────────


def check(name: str, schedule: Schedule, data_dir: Path) -> None:
    """RoutineError (one line) if this schedule's OS file cannot be written (a control
    character in the data dir's path or the session's environment), before anything is."""
    if sys.platform == "win32":
        schtasks_xml(name, schedule, data_dir)
    else:
        systemd_units(name, schedule, data_dir)


def install(name: str, schedule: Schedule, data_dir: Path) -> tuple[list[Path], str]:
    """Write and register the OS schedule; (files written, a problem registering or "")."""
    if sys.platform == "win32":
        xml_path = data_dir / "routines" / f"{name}.task.xml"
        xml_path.parent.mkdir(parents=True, exist_ok=True)
        xml_path.write_text(schtasks_xml(name, schedule, data_dir), encoding="utf-16")
        return [xml_path], schtasks("/Create", "/TN", task_name(name), "/XML", str(xml_path), "/F")
    units = systemd_units(name, schedule, data_dir)
    written = install_systemd(units, systemd_user_dir())
    problem = systemctl("daemon-reload") or systemctl("enable", "--now", units.timer_name)
    return written, problem


def uninstall(name: str, data_dir: Path) -> tuple[list[Path], str]:
    """Unregister and remove the OS schedule of routine `name`, whatever the store says of it
    (a timer the store forgot keeps firing for whatever routine carries the name); (files
    removed, a problem or ""). Nothing there is no problem."""
    if sys.platform == "win32":
        # /Query first: /Delete of a task that is not there is an error, not "nothing to do"
        there = not schtasks("/Query", "/TN", task_name(name))
        problem = schtasks("/Delete", "/TN", task_name(name), "/F") if there else ""
        xml_path = data_dir / "routines" / f"{name}.task.xml"
        removed = [xml_path] if xml_path.exists() else []
        xml_path.unlink(missing_ok=True)
        return removed, problem
    directory = systemd_user_dir()
    if not any((directory / f"{UNIT_PREFIX}{name}{s}").exists() for s in (".timer", ".service")):
        return [], ""
    problem = systemctl("disable", "--now", f"{UNIT_PREFIX}{name}.timer")
    removed = remove_systemd(name, directory)
    return removed, systemctl("daemon-reload") or problem
