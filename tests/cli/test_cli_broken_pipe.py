"""A command whose output's reader is gone (`desktop-agent runs | head -1`) ends quietly: no
BrokenPipeError traceback, no "Exception ignored" at exit, exit 2 (what it did was cut short)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop_agent.cli import EXIT_STOPPED

ROOT = Path(__file__).resolve().parents[2]


def with_reader_gone(*words: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`desktop-agent WORDS` with a stdout whose read end is already closed: its first write
    fails with EPIPE (Python ignores SIGPIPE), deterministically, as under `| head -0`."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [sys.executable, "-m", "desktop_agent", *words],
            cwd=ROOT, env=env, stdout=write, stderr=subprocess.PIPE, text=True, timeout=120,
            check=False,
        )  # fmt: skip
    finally:
        os.close(write)


@pytest.mark.parametrize(
    "words",
    [
        ["runs"],
        ["runs", "--json"],
        ["stop-all"],  # __main__'s short way
        ["stop-all", "--data-dir", "{home}/other"],  # the full command (a new data dir)
        ["routine", "list"],
        ["doctor"],
        ["eval", "--compare", "{report}", "{report}"],
    ],
    ids=" ".join,
)
def test_a_command_whose_reader_is_gone_ends_quietly(
    words: list[str], isolated_home: Path, tmp_path: Path
) -> None:
    report = tmp_path / "r.json"
    report.write_text(json.dumps({"type": "task", "task": "t", "status": "passed", "steps": 1}))
    words = [w.format(home=isolated_home, report=report) for w in words]
    done = with_reader_gone(*words, env=dict(os.environ))
    assert done.stderr == ""
    assert done.returncode == EXIT_STOPPED
