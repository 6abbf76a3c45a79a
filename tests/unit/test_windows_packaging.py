"""The Windows installer and scripts, read as text (they cannot run here): where an install
goes, which Inno Setup builds it, what the uninstaller ends, how the scripts call programs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ISS = (ROOT / "packaging" / "windows" / "desktop-agent.iss").read_text(encoding="utf-8")
BOOTSTRAP = (ROOT / "scripts" / "bootstrap.ps1").read_text(encoding="utf-8")
TEST_PS1 = (ROOT / "scripts" / "test.ps1").read_text(encoding="utf-8")


def section(name: str) -> list[str]:
    """The non-comment lines of an .iss section."""
    match = re.search(rf"^\[{name}\]\n(.*?)(?=^\[|\Z)", ISS, re.MULTILINE | re.DOTALL)
    assert match, f"no [{name}] section"
    return [line for line in match.group(1).splitlines() if line and not line.startswith(";")]


def setting(name: str) -> str:
    (value,) = [line.split("=", 1)[1] for line in section("Setup") if line.startswith(f"{name}=")]
    return value


def test_an_all_users_install_never_lands_in_the_installing_admins_profile() -> None:
    # the dialog offers "for all users": per-user constants would then name the profile of
    # the administrator who elevated, not Program Files and the common Start menu
    assert setting("PrivilegesRequiredOverridesAllowed") == "dialog"
    assert setting("DefaultDirName").startswith("{autopf}\\")
    per_user = re.findall(r"\{(localappdata|userprograms|userdesktop|userpf|userappdata)\}", ISS)
    assert per_user == []
    icons = section("Icons")
    assert all(line.startswith(('Name: "{autoprograms}', 'Name: "{autodesktop}')) for line in icons)


def test_the_script_refuses_an_inno_setup_older_than_x64compatible_needs() -> None:
    assert "ArchitecturesAllowed=x64compatible" in ISS
    guard = re.search(r"^#if Ver < EncodeVer\(6, 3, 0\)\n\s*#error .+\n#endif$", ISS, re.MULTILINE)
    assert guard, "no 6.3 guard"
    assert ISS.index("#if Ver") < ISS.index("[Setup]")


def test_uninstalling_stops_the_runs_then_ends_the_tray_app_and_cli() -> None:
    steps = section("UninstallRun")
    assert "stop-all" in steps[0]
    kills = [line for line in steps if "taskkill.exe" in line]
    ended = [re.search(r"/IM ([^\s\"]+)", line).group(1) for line in kills]  # type: ignore[union-attr]
    assert ended == ["desktop-agent.exe", "desktop-agent-cli.exe"]
    assert all("/F" in line for line in kills)


def test_uninstalling_ends_no_program_the_agent_launched_and_removes_the_scheduled_tasks() -> None:
    # issue 37 item 9: `taskkill /T` ended the whole tree, every program the agent launched
    # with it (we promise never to end them); the routines' tasks outlived the uninstall
    steps = section("UninstallRun")
    assert not [
        line for line in steps if "taskkill" in line and "/T" in line.split("Parameters")[1]
    ]
    [tasks] = [line for line in steps if "Unregister-ScheduledTask" in line]
    assert "-TaskPath '\\desktop-agent\\'" in tasks
    assert "-Confirm:$false" in tasks and "runhidden" in tasks


def test_bootstrap_runs_programs_as_arguments_and_checks_every_exit_code() -> None:
    # a PYTHON path with spaces broke Invoke-Expression; an unchecked pip went unnoticed
    assert "Invoke-Expression" not in BOOTSTRAP
    assert "py -3.11" not in BOOTSTRAP
    calls = [line.strip() for line in BOOTSTRAP.splitlines() if line.strip().startswith("& ")]
    # the only bare calls: inside Invoke-Checked, and the version probe checked right after
    assert calls == [
        "& $Program @Arguments",
        '& py "-$version" -c "pass" *> $null',
        (
            '& $program @prefix -c "import sys; sys.exit(0 if (3, 11) <= sys.version_info '
            '< (3, 15) else 1)"'
        ),
    ]
    assert BOOTSTRAP.count("Invoke-Checked ") >= 4


def test_the_scripts_let_exit_codes_not_stderr_decide_and_pick_a_python_pyside6_supports() -> None:
    # issue 37 item 9: with "Stop", pip's stderr warnings aborted a redirected bootstrap, and
    # `py -3` took the newest Python installed, maybe one PySide6 has no wheels for
    checked = BOOTSTRAP[BOOTSTRAP.index("function Invoke-Checked") :]
    assert checked.index('$ErrorActionPreference = "Continue"') < checked.index("& $Program")
    assert TEST_PS1.index('$ErrorActionPreference = "Continue"') < TEST_PS1.index("-m pytest")
    assert '@("-3")' not in BOOTSTRAP
    assert '$Supported = @("3.14", "3.13", "3.12", "3.11")' in BOOTSTRAP


def test_the_windows_test_run_leaves_out_the_posix_and_desktop_tests() -> None:
    assert '-m "not desktop and not posix"' in TEST_PS1
