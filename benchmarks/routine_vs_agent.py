"""The same task as an agent run and as a routine: wall time of each, the ratio, steps checked/s.

The task is the e2e note (tests/e2e/test_routine_run.py): in a fresh l3afpad on Xvfb, click
the text, type a line, ctrl+s, type the path, Enter. The agent run asks a loopback model
(the real openai client) that answers at once, or after a think time like a local VLM's
(`--think 0,2`); the routine is saved once from the first agent run and run with new values
(no model request). Each wall time is run_started → run_finished of the CLI's --json events;
"steps checked/s" is the routine's played steps (precondition found and effect checked)
over its wall time.

    .venv/bin/python benchmarks/routine_vs_agent.py [--think 0,2] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.test_routine_run import NoteModel  # noqa: E402
from tests.support.model_server import ModelServer, Reply, serve_in_thread  # noqa: E402
from tests.support.xdisplay import XSession, start_xsession, wait_until  # noqa: E402


class ThinkingNoteModel(NoteModel):
    def __init__(self, target: Path, line: str, think_s: float) -> None:
        super().__init__(target, line)
        self.think_s = think_s

    def __call__(self, body: dict[str, Any]) -> Reply:
        reply = super().__call__(body)
        return Reply(reply.content, delay_s=self.think_s)


class Bench:
    def __init__(self, session: XSession, data: Path) -> None:
        self.session = session
        self.data = data
        self.editor: subprocess.Popen[bytes] | None = None

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return self.session.child_env({"DESKTOP_AGENT_HOME": str(self.data), **(extra or {})})

    def fresh_editor(self) -> None:
        self.close_editor()
        self.editor = subprocess.Popen(["l3afpad"], env=self.env(), start_new_session=True)

        def shown() -> bool:
            search = ["xdotool", "search", "--onlyvisible", "--class", "l3afpad"]
            out = subprocess.run(search, env=self.env(), capture_output=True, text=True,
                                 check=False)  # fmt: skip
            return bool(out.stdout.split())

        wait_until(shown, timeout=20, what="l3afpad")

    def close_editor(self) -> None:
        if self.editor is not None:
            os.killpg(self.editor.pid, signal.SIGKILL)
            self.editor.wait()
            self.editor = None

    def cli(self, *args: str, env: dict[str, str] | None = None) -> tuple[int, list[Any], str]:
        done = subprocess.run(
            [sys.executable, "-m", "desktop_agent", *args], cwd=ROOT, env=self.env(env),
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        return done.returncode, lines, done.stderr


def wall_s(events: list[dict[str, Any]]) -> float:
    run = events[-1]["run"]
    started = datetime.fromisoformat(run["started_at"])
    return (datetime.fromisoformat(run["finished_at"]) - started).total_seconds()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--think", default="0,2", help="model think times (s), comma-separated")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    session = start_xsession()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            bench = Bench(session, Path(tmp) / "data")
            saved = False
            watching = serve_in_thread(ModelServer())
            watcher = watching.__enter__()
            for think in (float(t) for t in args.think.split(",")):
                agent_s, routine_s, checked = [], [], []
                for round_ in range(args.rounds):
                    target = Path(tmp) / f"agent-{think:g}-{round_}.txt"
                    model = ThinkingNoteModel(target, "agent line", think)
                    with serve_in_thread(ModelServer(respond=model)) as server:
                        bench.fresh_editor()
                        code, events, err = bench.cli(
                            "run", "write a line in the editor and save it", "--base-url",
                            server.base_url, "--model", "qwen2.5vl", "--vision", "yes",
                            "--approve", "all", "--json", "--max-steps", "30",
                        )  # fmt: skip
                        assert code == 0 and target.exists(), err
                        agent_s.append(wall_s(events))
                    if not saved:
                        typed = [e["step"]["index"] for e in events if e["type"] == "step_finished"
                                 and e["step"]["kind"] == "action"
                                 and e["step"]["tool"] == "type_text"]  # fmt: skip
                        code, _, err = bench.cli(
                            "routine", "save", events[-1]["run_id"], "note",
                            "--param", f"text={typed[0]}", "--param", f"path={typed[1]}",
                            "--grant", "click,type_text,hotkey",
                        )  # fmt: skip
                        assert code == 0, err
                        saved = True
                    again = Path(tmp) / f"routine-{think:g}-{round_}.txt"
                    bench.fresh_editor()
                    # the settings' model is a server that counts what it is asked
                    code, events, err = bench.cli(
                        "routine", "run", "note", "--set", "text=routine line",
                        "--set", f"path={again}", "--json", "--approve", "all", "--no-agent",
                        env={"DESKTOP_AGENT_BASE_URL": watcher.base_url},
                    )  # fmt: skip
                    assert code == 0 and again.exists(), (err, events[-1])
                    routine_s.append(wall_s(events))
                    played = [
                        e for e in events
                        if e["type"] == "step_finished" and e["step"]["kind"] == "decide"
                        and (e["step"]["reason"] or "").startswith("routine step")
                    ]  # fmt: skip
                    checked.append(len(played) / routine_s[-1])
                bench.close_editor()
                agent, routine = statistics.median(agent_s), statistics.median(routine_s)
                print(
                    f"model think {think:g} s: agent {agent:.2f} s, routine {routine:.2f} s "
                    f"(medians of {args.rounds}); agent/routine {agent / routine:.1f}x; "
                    f"routine steps checked {statistics.median(checked):.1f}/s; "
                    f"model requests in routine runs: {len(watcher.requests)}",
                    flush=True,
                )
            watching.__exit__(None, None, None)
    finally:
        session.close()


if __name__ == "__main__":
    main()
