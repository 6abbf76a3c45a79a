"""The eval's progress: a bar drawn again in place on a terminal, plain lines elsewhere, and
no task or app text acting on the terminal."""

from __future__ import annotations

import io

import pytest

from desktop_agent.eval.progress import Progress, fit
from desktop_agent.eval.runner import TaskResult

ESC = "\x1b"


@pytest.fixture(autouse=True)
def _eighty_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")  # shutil.get_terminal_size reads it first


def test_on_a_terminal_one_status_line_shows_done_passed_failed_and_the_tasks_under_way() -> None:
    out = io.StringIO()
    bar = Progress(out, 3, terminal=True)
    bar.started("editor-append")
    bar.started("sheet-sum")
    assert bar.status() == (
        "[....................] 0/3 (0 passed, 0 failed) — now editor-append, sheet-sum"
    )
    bar.finished(TaskResult("editor-append", "passed"))
    bar.finished(TaskResult("sheet-sum", "failed", reason="cell B3 is 4, not 5"))
    bar.started("calc-add")
    assert bar.status() == "[#############.......] 2/3 (1 passed, 1 failed) — now calc-add"
    bar.finished(TaskResult("calc-add", "setup_failed", reason="galculator is not installed"))
    bar.close()

    # each draw starts with a carriage return and an erase: the status line is drawn in place
    # and the finished tasks' lines stay above it
    screen = [part.removeprefix("\x1b[K") for part in out.getvalue().split("\r")]
    assert [line for line in screen if line.endswith("\n")] == [
        "[#######.............] 1/3 editor-append: passed\n",
        "[#############.......] 2/3 sheet-sum: failed — cell B3 is 4, not 5\n",
        "[####################] 3/3 calc-add: setup_failed — galculator is not installed\n",
    ]
    assert screen[-2] == "[####################] 3/3 (1 passed, 1 failed, 1 setup failed)"
    assert screen[-1] == ""  # closed: what follows starts on a clean line


def test_without_a_terminal_each_finished_task_is_one_plain_line() -> None:
    out = io.StringIO()
    bar = Progress(out, 2, terminal=False)
    bar.started("a")
    bar.finished(TaskResult("a", "passed"))
    bar.started("b")
    bar.finished(TaskResult("b", "stopped", reason="the eval was stopped"))
    bar.close()
    assert out.getvalue() == (
        "[##########..........] 1/2 a: passed\n"
        "[####################] 2/2 b: stopped — the eval was stopped\n"
    )


@pytest.mark.parametrize("terminal", [True, False])
def test_text_from_a_task_or_an_app_never_acts_on_the_terminal(terminal: bool) -> None:
    out = io.StringIO()
    bar = Progress(out, 1, terminal=terminal)
    # a checker's detail quotes a file's content: a clear-screen and a colour, a line of its own
    reason = "file holds '\x1b[2J\x1b[31mPASSED\r\nall good\u202e'"
    bar.started("t")
    bar.finished(TaskResult("t", "failed", reason=reason))
    bar.close()
    shown = out.getvalue()
    assert "\x1b[2J" not in shown and "\x1b[31m" not in shown and "\u202e" not in shown
    assert "\\x1b[2J\\x1b[31mPASSED all good\\u202e" in shown
    if terminal:  # only our own redraw sequence reaches it
        assert shown.count(ESC) == shown.count("\r\x1b[K")
    else:
        assert ESC not in shown and "\r" not in shown


def test_a_status_line_is_cut_to_the_terminals_width_so_it_never_wraps() -> None:
    out = io.StringIO()
    bar = Progress(out, 40, terminal=True)
    for number in range(12):
        bar.started(f"a-rather-long-task-name-{number}")
    drawn = out.getvalue().split("\r\x1b[K")[-1]
    assert len(drawn) == 79 and drawn.endswith("…")
    # wide characters take two cells
    assert fit("表" * 50, 20) == "表" * 9 + "…"
    assert fit("short", 20) == "short"
