"""Task files: the built-in suite loads, and a bad file is refused with one line naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop_agent.eval.tasks import TaskFileError, load_suite, load_task, select

GOOD = """
id = "t1"
title = "a task"
goal = "do it"
apps = ["l3afpad"]
[[setup.files]]
path = "a.txt"
content = "x"
[[setup.run]]
command = ["l3afpad", "{work}/a.txt"]
wait_window = "a.txt"
[[check]]
kind = "file_content"
path = "a.txt"
equals = "y"
[[oracle]]
when = 'window "a.txt'
tool = "type_text"
args = { text = "y" }
[[oracle]]
done = "ok"
"""


def write(tmp_path: Path, text: str, name: str = "t.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_good_file_loads_with_its_setup_checks_and_oracle(tmp_path: Path) -> None:
    task = load_task(write(tmp_path, GOOD))
    assert (task.id, task.goal, task.apps) == ("t1", "do it", ("l3afpad",))
    assert task.files[0].path == "a.txt" and task.runs[0].wait_window == "a.txt"
    assert [(c.kind, dict(c.args)) for c in task.checks] == [
        ("file_content", {"path": "a.txt", "equals": "y"})
    ]
    assert [s.tool or s.done for s in task.oracle] == ["type_text", "ok"]
    assert task.needs_person == ""
    marked = GOOD.replace('goal = "do it"', 'goal = "do it"\nneeds_person = "provenance"')
    assert load_task(write(tmp_path, marked, "m.toml")).needs_person == "provenance"


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (
            lambda t: t.replace('kind = "file_content"', 'kind = "os_system"'),
            "check[0].kind 'os_system' is not a checker",
        ),
        (lambda t: t.replace('equals = "y"', "equals = 3"), "equals must be str, not 3"),
        (lambda t: t.replace('equals = "y"', 'shell = "rm -rf /"'), "unknown key 'shell'"),
        (lambda t: t.replace('path = "a.txt"\nequals', "equals"), "(file_content) needs 'path'"),
        (lambda t: t.replace('id = "t1"', 'id = "T 1"'), "id 'T 1' must be lower-case"),
        (lambda t: t.replace('goal = "do it"', ""), "goal must be a non-empty string"),
        (
            lambda t: t.replace('path = "a.txt"\ncontent', 'path = "../a.txt"\ncontent'),
            "must be relative to the task's folder",
        ),
        (
            lambda t: t.replace('done = "ok"', 'done = "ok"\ntool = "wait"'),
            "oracle[1] needs exactly one of 'tool' or 'done'",
        ),
        (lambda t: t + "\n[limits]\nsteps = 0\n", "limits.steps must be a whole number"),
        (lambda t: t.split("[[check]]")[0], "a task needs at least one [[check]]"),
        (lambda t: t.replace("[[setup.run]]", "[setup.run]"), "setup.run must be an array"),
        (lambda t: t + "\n[injection]\nstyle = 'popup'\n", "injection.attack needs at least one"),
        (lambda t: t.replace('title = "a task"', 'title = "a task'), "not valid TOML"),
        (
            lambda t: t.replace('goal = "do it"', 'goal = "do it"\nneeds_person = "copying"'),
            "needs_person 'copying' is not a rule (known: addresses_ai",
        ),
    ],
)
def test_a_bad_task_file_is_refused_with_one_line_naming_it(
    tmp_path: Path, change: object, says: str
) -> None:
    path = write(tmp_path, change(GOOD))  # type: ignore[operator]
    with pytest.raises(TaskFileError) as caught:
        load_task(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(str(path)) and says in message, message


def test_a_file_that_is_not_text_is_refused_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_bytes(b"\xff\xfe\x00id")
    with pytest.raises(TaskFileError, match="not UTF-8 text"):
        load_task(path)


def test_a_suite_folder_with_two_tasks_of_one_id_is_refused(tmp_path: Path) -> None:
    write(tmp_path, GOOD, "a.toml")
    write(tmp_path, GOOD, "b.toml")
    with pytest.raises(TaskFileError, match="id 't1' is also used by"):
        load_suite(tmp_path)


def test_an_empty_or_missing_suite_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TaskFileError, match="no task files"):
        load_suite(tmp_path)
    with pytest.raises(TaskFileError, match="no such suite folder"):
        load_suite(tmp_path / "nowhere")


def test_select_by_id_and_tag_and_an_unknown_id_is_refused(tmp_path: Path) -> None:
    write(tmp_path, GOOD, "a.toml")
    write(tmp_path, GOOD.replace('id = "t1"', 'id = "t2"\ntags = ["x"]'), "b.toml")
    tasks = load_suite(tmp_path)
    assert [t.id for t in select(tasks, tags=["x"])] == ["t2"]
    assert [t.id for t in select(tasks, ids=["t1"])] == ["t1"]
    with pytest.raises(TaskFileError, match="no task 'nope'"):
        select(tasks, ids=["nope"])


def test_every_built_in_task_loads_has_an_oracle_and_a_checker() -> None:
    tasks = load_suite()
    assert tasks
    for task in tasks:
        assert task.oracle and task.checks, task.id
        assert task.oracle[-1].done, f"{task.id}: the oracle must end by saying done"
