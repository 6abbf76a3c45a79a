"""SIGKILL a real run at several points: the store stays sound and keeps every acknowledged step."""

from __future__ import annotations

import asyncio
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from desktop_agent.core.models import RunStatus, StepStatus, StopReason, TaskSpec
from desktop_agent.store import SqliteRunRepository

ROOT = Path(__file__).parents[2]
LINE_TIMEOUT_S = 30.0  # a guard against a hung worker, never a pacing device

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")


class Worker:
    """The worker process and a thread that hands its stdout lines over a queue."""

    def __init__(self, data_dir: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.crash.worker", str(data_dir)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put("")  # end of output

    def next_line(self) -> str:
        try:
            line = self.lines.get(timeout=LINE_TIMEOUT_S)
        except queue.Empty:
            self.kill()
            pytest.fail(f"the worker wrote nothing for {LINE_TIMEOUT_S} s")
        if not line:
            assert self.process.stderr is not None
            pytest.fail(f"the worker ended early: {self.process.stderr.read()}")
        return line

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)
        for stream in (self.process.stdout, self.process.stderr):
            if stream:
                stream.close()


@pytest.mark.parametrize("kill_after_acks", [1, 5, 17, 40])
def test_sigkill_keeps_the_store_sound_and_every_acknowledged_step(
    tmp_path: Path, kill_after_acks: int
) -> None:
    worker = Worker(tmp_path)
    try:
        first = worker.next_line()
        assert first.startswith("run "), first
        run_id = first.split()[1]
        acked: dict[int, StepStatus] = {}  # seq -> the last status acknowledged for it
        for _ in range(kill_after_acks):
            kind, seq, status = worker.next_line().split()
            assert kind == "ack"
            acked[int(seq)] = StepStatus(status)
    finally:
        worker.kill()
    assert worker.process.returncode == -signal.SIGKILL

    with sqlite3.connect(tmp_path / "history.db") as con:
        assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]

    with SqliteRunRepository.open(tmp_path) as store:
        assert store.recovered == (run_id,)
        assert store.integrity_check_sync() == "ok"
        run = store.get_run_sync(run_id)
        assert run is not None
        assert (run.status, run.stop_reason) == (RunStatus.INTERRUPTED, StopReason.CRASH)
        stored = {step.seq: step.status for step in store.list_steps_sync(run_id)}

    assert set(acked) <= set(stored)
    for number, status in acked.items():
        if status is StepStatus.RUNNING:
            # its final write may have landed after the last acknowledgement
            assert stored[number] is not StepStatus.RUNNING
        else:
            assert stored[number] is status
    assert StepStatus.RUNNING not in stored.values()
    assert sorted(stored) == list(range(1, len(stored) + 1))


async def test_a_second_process_shares_the_store_with_a_live_run(tmp_path: Path) -> None:
    worker = Worker(tmp_path)
    try:
        run_id = (await asyncio.to_thread(worker.next_line)).split()[1]
        await asyncio.to_thread(worker.next_line)  # the first step row is stored
        with SqliteRunRepository.open(tmp_path) as store:
            assert store.recovered == ()  # the worker lives: its run is not ours to end
            live = await store.get_run(run_id)
            assert live is not None and live.status is RunStatus.RUNNING
            # Both processes write at once; WAL and the busy timeout make them take turns.
            for n in range(30):
                run = await store.create_run(TaskSpec(f"alongside {n}"))
                await store.save_run(
                    run.with_(status=RunStatus.COMPLETED, stop_reason=StopReason.DONE)
                )
                await asyncio.to_thread(worker.next_line)
    finally:
        worker.kill()

    with SqliteRunRepository.open(tmp_path) as store:
        assert store.recovered == (run_id,)
        assert len(await store.list_runs(status=RunStatus.COMPLETED)) == 30
        assert store.integrity_check_sync() == "ok"
