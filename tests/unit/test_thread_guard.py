"""The session's thread guard (tests/support/threads.py) fails a run that leaks a thread."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CONFTEST = """
import tests.support.threads as threads
from tests.support.threads import pytest_sessionfinish, pytest_unconfigure

threads.JOIN_GRACE_S = 0.2
"""


def run_session(tmp_path: Path, test_body: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_inner.py").write_text(test_body)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_non_daemon_thread_left_running_fails_the_run_naming_it(tmp_path: Path) -> None:
    result = run_session(
        tmp_path,
        "import threading, time\n"
        "def test_leaks():\n"
        "    threading.Thread(target=time.sleep, args=(2,), name='leaky worker').start()\n",
    )

    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 passed" in result.stdout
    assert "non-daemon threads still running after the tests: leaky worker" in result.stderr


def test_a_run_whose_threads_end_passes(tmp_path: Path) -> None:
    result = run_session(
        tmp_path,
        "import threading\n"
        "def test_joins():\n"
        "    thread = threading.Thread(target=lambda: None, name='tidy worker')\n"
        "    thread.start()\n"
        "    thread.join()\n",
    )

    assert result.returncode == 0, result.stdout + result.stderr
