"""`desktop-agent eval` on private desks: the oracle passes the built-in tasks, doing nothing
passes none, and the gullible planner's attacks are counted; the desk checkers read real apps.

By default a slice of the suite runs (one task per app, `smoke` tag); `EVAL_ALL=1` runs every
built-in task (the slower tier, README "Tests").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from desktop_agent.eval.checkers import Desk, run_check
from desktop_agent.eval.desk import XSession, wait_until
from desktop_agent.eval.tasks import load_suite
from tests.support.model_server import Hang, ModelServer

ROOT = Path(__file__).resolve().parents[2]
SUITE = load_suite()
TASKS = [t for t in SUITE if os.environ.get("EVAL_ALL") == "1" or "smoke" in t.tags]
BENIGN = [t.id for t in TASKS if t.injection is None]
INJECTIONS = [t.id for t in TASKS if t.injection is not None]


def run_eval(tmp_path: Path, *args: str, timeout: float = 600) -> tuple[int, list[dict[str, Any]]]:
    done = subprocess.run(
        [sys.executable, "-m", "desktop_agent", "eval", "--json", "--jobs", "2",
         "--data-dir", str(tmp_path / "data"), *args],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert rows and rows[-1]["type"] == "summary", done.stderr
    return done.returncode, rows[:-1]


def by_task(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {row["task"]: row for row in rows}


@pytest.mark.timeout(1500)
def test_the_oracle_passes_every_task_and_doing_nothing_passes_none(tmp_path: Path) -> None:
    ids = ",".join(BENIGN)
    code, rows = run_eval(tmp_path / "oracle", "--planner", "oracle", "--tasks", ids)
    found = by_task(rows)
    assert {task: row["status"] for task, row in found.items()} == dict.fromkeys(
        BENIGN, "passed"
    ), [
        (row["task"], row["reason"], row["failed_step"])
        for row in rows
        if row["status"] != "passed"
    ]
    assert code == 0
    code, rows = run_eval(tmp_path / "nothing", "--planner", "do-nothing", "--tasks", ids)
    assert {row["task"]: row["status"] for row in rows} == dict.fromkeys(BENIGN, "failed")
    assert code == 1


@pytest.mark.skipif(not INJECTIONS, reason="no injection case in this slice")
@pytest.mark.timeout(1500)
def test_the_gullible_planner_makes_every_attack_count_when_the_gate_lets_it_through(
    tmp_path: Path,
) -> None:
    ids = ",".join(INJECTIONS)
    # the attacks' tools named: the gate lets every call through, as a careless user would
    _, rows = run_eval(
        tmp_path / "gullible", "--planner", "gullible", "--tasks", ids,
        "--allow-dangerous", "launch_app,click,type_text,hotkey",
    )  # fmt: skip
    # every attack is counted, unless the gate's injection guard (issue 31) still stopped it:
    # then it denied a call (a do-nothing planner is neither)
    outcome = {row["task"]: bool(row["attack"]) or row["denied"] > 0 for row in rows}
    assert outcome == dict.fromkeys(INJECTIONS, True), rows
    _, rows = run_eval(tmp_path / "oracle", "--planner", "oracle", "--tasks", ids)
    assert {row["task"]: row["attack"] for row in rows} == dict.fromkeys(INJECTIONS, False)
    # each benign goal is solvable: the oracle passes it, unless the injection guard (issue 31)
    # denied one of its calls because of the attack on the screen — the benign cost that the
    # report's benign success rate shows per policy
    solved = {row["task"]: row["status"] == "passed" or row["denied"] > 0 for row in rows}
    assert solved == dict.fromkeys(INJECTIONS, True), rows


def test_a_copy_between_windows_ends_as_needs_person_under_approve_all_and_else_fails(
    tmp_path: Path,
) -> None:
    """cross-web-to-editor types a code read on a page into a note: the provenance question
    only a person answers. Under --approve all the oracle passes it by stopping there
    (`needs_person`, a pass of the suite); the same task whose goal gives the code never asks
    that question, so it fails though its file is right."""
    code, [row] = run_eval(
        tmp_path / "copy", "--planner", "oracle", "--tasks", "cross-web-to-editor"
    )
    assert (row["status"], row["person_rules"], row["stop_reason"]) == (
        "needs_person",
        ["provenance"],
        "user_stop",
    ), row
    assert row["reason"] == "stopped at the question only a person answers (provenance)"
    assert code == 0
    suite = tmp_path / "suite"
    suite.mkdir()
    source = next(t.source for t in SUITE if t.id == "cross-web-to-editor")
    told = source.read_text(encoding="utf-8").replace(
        "Write the order code shown", "Write the order code ZX-4471 shown"
    )
    (suite / "told.toml").write_text(told, encoding="utf-8")
    code, [row] = run_eval(tmp_path / "told", "--planner", "oracle", "--suite", str(suite))
    assert [check["passed"] for check in row["checks"]] == [True], row
    assert (row["status"], row["person_rules"]) == ("failed", None)
    assert row["reason"] == (
        "the run ended without the question only a person answers (provenance)"
    )
    assert code == 1


@pytest.mark.parametrize(("jobs", "says"), [("2", "--jobs 1"), ("1", "a terminal to answer on")])
def test_approve_ask_is_refused_with_several_jobs_or_without_a_terminal(
    tmp_path: Path, jobs: str, says: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "desktop_agent", "eval", "--planner", "oracle", "--approve",
         "ask", "--jobs", jobs, "--data-dir", str(tmp_path / "data")],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 3
    assert done.stderr == f"desktop-agent: eval --approve ask needs {says}\n"


@pytest.mark.timeout(300)
def test_with_approve_ask_the_person_at_the_terminal_answers_and_the_copy_passes(
    tmp_path: Path,
) -> None:
    """`eval --approve ask`: each question of the run on its private desk is asked on the
    eval's terminal (a pty here) and the answer typed there is the run's; allowed, the copy
    of cross-web-to-editor is made and its check passes."""
    import select

    from desktop_agent.cli.gate import MIN_ANSWER_S

    user, terminal = os.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "desktop_agent", "eval", "--json", "--planner", "oracle",
         "--tasks", "cross-web-to-editor", "--approve", "ask", "--data-dir",
         str(tmp_path / "data")],
        cwd=ROOT, stdin=terminal, stdout=subprocess.PIPE, stderr=terminal,
    )  # fmt: skip
    shown = b""
    answered = 0
    try:
        while process.poll() is None:
            ready, _, _ = select.select([user], [], [], 0.2)
            if ready:
                shown += os.read(user, 65536)
            if shown.count(b"(denies in ") > answered:
                # the gate takes no answer sooner than MIN_ANSWER_S after its question
                time.sleep(MIN_ANSWER_S + 0.2)
                os.write(user, b"o\n")
                answered += 1
    finally:
        if process.poll() is None:
            process.kill()
        out, _ = process.communicate(timeout=30)
        os.close(user)
        os.close(terminal)
    rows = [json.loads(line) for line in out.decode().splitlines() if line.strip()]
    [row] = [r for r in rows if r["type"] == "task"]
    assert b"the text to type was read on the screen" in shown, shown.decode(errors="replace")
    assert (row["status"], row["person_rules"]) == ("passed", ["provenance"]), row
    assert row["questions"] == answered >= 3 and row["denied"] == 0
    assert process.returncode == 0


def test_a_task_whose_program_is_missing_is_setup_failed_with_the_apt_line(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "t.toml").write_text(
        'id = "needs-app"\ntitle = "t"\ngoal = "g"\napps = ["no-such-app-7"]\n'
        '[[check]]\nkind = "file_exists"\npath = "x"\n[[oracle]]\ndone = "ok"\n'
    )
    _, [row] = run_eval(tmp_path, "--planner", "oracle", "--suite", str(suite))
    assert row["status"] == "setup_failed"
    assert row["reason"] == "no-such-app-7 is not installed (apt-get install no-such-app-7)"


def test_a_bad_task_file_refuses_the_eval_with_one_line(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "t.toml").write_text('id = "x"\n[[check]]\nkind = "exec"\n')
    done = subprocess.run(
        [sys.executable, "-m", "desktop_agent", "eval", "--planner", "oracle", "--suite",
         str(suite), "--data-dir", str(tmp_path / "data")],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 3
    assert done.stderr.count("\n") == 1 and "t.toml" in done.stderr, done.stderr


def test_the_desk_checkers_read_the_window_title_the_element_text_and_the_clipboard(
    xsession: XSession, tmp_path: Path
) -> None:
    desk = Desk(tmp_path, xsession.child_env(), xsession.display)
    editor = xsession.spawn(["l3afpad", str(tmp_path / "checked.txt")])
    try:
        wait_until(
            lambda: run_check(desk, "window_title", {"contains": "checked.txt"}).passed,
            timeout=20,
            what="the editor's window",
        )
        assert not run_check(
            desk, "window_title", {"contains": "checked.txt", "absent": True}
        ).passed
        xsession.xdotool("type", "--delay", "5", "typed words")
        element = {"window": "checked.txt", "role": "text", "equals": "typed words"}
        wait_until(lambda: run_check(desk, "element_text", element).passed, timeout=20,
                   what="the typed text in the accessibility tree")  # fmt: skip
        assert not run_check(desk, "element_text", {**element, "equals": "other"}).passed
        subprocess.run(
            ["xclip", "-selection", "clipboard", "-loops", "1"],
            input="copied", text=True, env=desk.env, check=True, timeout=10,
        )  # fmt: skip
        assert run_check(desk, "clipboard", {"equals": "copied"}).passed
        assert not run_check(desk, "clipboard", {"equals": "other"}).passed
    finally:
        xsession.stop(editor)


def two_tasks(tmp_path: Path, task: str, task_id: str) -> Path:
    """A suite of `task` (a.toml, its id `task_id`) and a copy of it whose id is
    `<task_id>-too` (b.toml), run in that order."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "a.toml").write_text(task)
    (suite / "b.toml").write_text(task.replace(f'id = "{task_id}"', f'id = "{task_id}-too"'))
    return suite


WAITING_TASK = """id = "waits"
title = "a task whose oracle waits for a window that never comes"
goal = "wait"
[limits]
steps = 200
seconds = 120
[[check]]
kind = "file_exists"
path = "never"
[[oracle]]
when = "a window that never comes"
done = "never"
"""


@pytest.mark.parametrize("how", ["stop-all", "SIGTERM"])
def test_a_stop_all_or_a_signal_ends_the_whole_eval_and_its_run(tmp_path: Path, how: str) -> None:
    suite = two_tasks(tmp_path, WAITING_TASK, "waits")
    data, keep = tmp_path / "data", tmp_path / "keep"
    process = subprocess.Popen(
        [sys.executable, "-m", "desktop_agent", "eval", "--json", "--planner", "oracle",
         "--suite", str(suite), "--keep", str(keep), "--data-dir", str(data)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        # the first task's run is under way: its history holds a run
        wait_until(lambda: list(keep.glob("*/waits/.agent/runs/*/*.jpg")), timeout=60,
                   what="the first task's run to have observed the screen")  # fmt: skip
        if how == "stop-all":
            subprocess.run(
                [sys.executable, "-m", "desktop_agent", "stop-all", "--data-dir", str(data)],
                cwd=ROOT, capture_output=True, timeout=30, check=True,
            )  # fmt: skip
        else:
            process.terminate()
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 2, err
    rows = by_task(
        [json.loads(line) for line in out.splitlines() if '"task"' in line][: -0 or None]
    )
    assert rows["waits"]["run_status"] == "stopped"
    assert rows["waits"]["stop_reason"] == "user_stop"
    assert rows["waits-too"]["status"] == "stopped"  # never started


def test_the_persons_stop_hotkey_ends_the_whole_eval_mid_model_request(
    xsession: XSession, model: Callable[..., ModelServer], tmp_path: Path
) -> None:
    """The eval's runs are on private desks (X servers of their own), where the person's keys
    never arrive: the eval hears the stop hotkey on the person's display (here `xsession`) and
    ends its run in the middle of its model request, and the tasks not started."""
    server = model(script=[Hang()])
    suite = two_tasks(tmp_path, WAITING_TASK, "waits")
    data, keep = tmp_path / "data", tmp_path / "keep"
    process = subprocess.Popen(
        [sys.executable, "-m", "desktop_agent", "eval", "--json", "--base-url", server.base_url,
         "--model", "qwen2.5vl", "--vision", "yes", "--suite", str(suite), "--keep", str(keep),
         "--data-dir", str(data)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=xsession.child_env({"DESKTOP_AGENT_HOME": str(data)}),
    )  # fmt: skip
    log = data / "desktop-agent.log"
    try:
        wait_until(lambda: server.requests or process.poll() is not None, timeout=60,
                   what="the first task's model request")  # fmt: skip
        assert process.poll() is None, process.communicate()
        assert "eval: the stop hotkey ctrl+alt+esc is on" in log.read_text()
        subprocess.run(["xdotool", "key", "ctrl+alt+Escape"], env=xsession.child_env(),
                       check=True, timeout=10)  # fmt: skip
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 2, err
    rows = by_task([json.loads(line) for line in out.splitlines() if '"task"' in line])
    assert (rows["waits"]["run_status"], rows["waits"]["stop_reason"]) == ("stopped", "user_stop")
    assert rows["waits-too"]["status"] == "stopped"  # never started
    assert len(server.requests) == 1  # no model request after the stop
    run_data = str(keep / "000" / "waits" / ".agent")

    def cli(*words: str) -> list[Any]:
        done = subprocess.run(
            [sys.executable, "-m", "desktop_agent", *words, "--json", "--data-dir", run_data],
            cwd=ROOT, capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]

    [[run]] = cli("runs")
    steps = [e["step"] for e in cli("show", run["id"]) if e["type"] == "step_finished"]
    # the screen looked at, the model asked, its answer never acted on: no input after the stop
    assert steps[-1]["status"] == "skipped"
    assert [s["kind"] for s in steps] == ["observe", "decide"]


QUICK_TASK = """id = "quick"
title = "a task that is over at once"
goal = "nothing"
[[check]]
kind = "file_exists"
path = "never"
[[oracle]]
done = "done"
"""


def test_an_eval_whose_reader_is_gone_stops_quietly_after_the_task_under_way(
    tmp_path: Path,
) -> None:
    """`eval --json | head -0`: the first task's line meets a closed pipe; the eval ends as
    if stopped (the next task never starts), writes its --report, and says nothing."""
    suite = two_tasks(tmp_path, QUICK_TASK, "quick")
    keep, report = tmp_path / "keep", tmp_path / "report.json"
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "desktop_agent", "eval", "--json", "--planner", "do-nothing",
             "--suite", str(suite), "--keep", str(keep), "--report", str(report),
             "--data-dir", str(tmp_path / "data")],
            cwd=ROOT, stdout=write, stderr=subprocess.PIPE, text=True, timeout=300, check=False,
        )  # fmt: skip
    finally:
        os.close(write)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 2
    rows = by_task([json.loads(line) for line in report.read_text().splitlines()][:-1])
    assert (rows["quick"]["status"], rows["quick-too"]["status"]) == ("failed", "stopped")
    assert not (keep / "001").exists()  # the second task was never set up


def test_desk_here_never_runs_without_an_explicit_yes(tmp_path: Path) -> None:
    keep = tmp_path / "keep"
    done = subprocess.run(
        [sys.executable, "-m", "desktop_agent", "eval", "--desk", "here", "--planner", "oracle",
         "--tasks", BENIGN[0], "--keep", str(keep), "--data-dir", str(tmp_path / "data")],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 3
    assert done.stderr == (
        "desktop-agent: --desk here needs an explicit yes (type yes, or --yes)\n"
    )
    assert not keep.exists()  # nothing was set up, nothing ran
