"""Turn overhead end to end: `desktop-agent run` with an instant model and the `wait 0` tool.

Real capture and inventory on Xvfb (1920x1080), the real SQLite store, the real openai
client against a loopback model server that answers at once. A turn is measured between
the start of consecutive observe steps as the CLI's --json events report them. Also the
CPU time the run process spends per turn, all threads (the CPU of a run of --turns minus
that of a 10-turn run, over the difference in turns): on a shared machine it moves far less
than the wall time. Target (issue 22): median <= 25 ms per turn.

    .venv/bin/python benchmarks/cli_turn_overhead.py [--turns 100] [--backend openai_computer]

`--backend openai_computer` runs the same turns through OpenAI's computer tool (profile
openai-computer) against a loopback Responses server whose every call is one `screenshot`
action (our `wait 0`), issue 29's bound: the same 25 ms. `--backend anthropic_computer` the
same through Anthropic's computer use (profile anthropic-computer, the real anthropic client)
against a loopback Messages server whose every message is one `screenshot` tool_use.
`--backend qwen3_vl | gui_owl | mai_ui | ui_venus` the same through an open agent model's own
format (picked by the model's name) against a loopback chat server answering in its syntax:
a wait of 0 s (UI-Venus's `Wait()` is 1 s, subtracted from its turns; the same Hover every
turn would end the run as stuck).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.messages_server import Message, MessagesServer, tool_use  # noqa: E402
from tests.support.model_server import ModelServer, Reply, serve_in_thread  # noqa: E402
from tests.support.responses_server import ResponsesServer, Turn, computer_call  # noqa: E402
from tests.support.xdisplay import start_xsession  # noqa: E402

WAIT_0 = {"action": "tool", "tool": "wait", "args": {"seconds": 0}, "reason": "benchmark"}
_QWEN_WAIT_0 = (
    '<tool_call>\n{"name": "%s", "arguments": {"action": "wait", "time": 0}}\n</tool_call>'
)
#: an open format: (model name, its answer, the seconds its wait takes)
OPEN_FORMATS = {
    "qwen3_vl": ("qwen3-vl:8b", "Thought: t\nAction: a\n" + _QWEN_WAIT_0 % "computer_use", 0.0),
    "gui_owl": ("GUI-Owl-1.5-8B", "Action: a\n" + _QWEN_WAIT_0 % "computer_use", 0.0),
    "mai_ui": ("MAI-UI-8B", "<thinking>t</thinking>" + _QWEN_WAIT_0 % "mobile_use", 0.0),
    "ui_venus": (
        "UI-Venus-1.5-8B",
        "<think>t</think><action>Wait()</action><conclusion>c</conclusion>",
        1.0,
    ),
}


SHORT_TURNS = 10


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument(
        "--backend",
        choices=("chat_json", "openai_computer", "anthropic_computer", *OPEN_FORMATS),
        default="chat_json",
    )
    args = parser.parse_args()
    model, extra, waited_ms = "qwen2.5vl", [], 0.0
    fake: ModelServer = ModelServer(then=Reply(WAIT_0, usage=None))
    if args.backend in OPEN_FORMATS:
        model, answer, waited = OPEN_FORMATS[args.backend]
        waited_ms = waited * 1000
        fake = ModelServer(then=Reply(answer, usage=None))
    if args.backend == "openai_computer":
        model = "computer-use-preview"
        fake = ResponsesServer(
            respond=lambda _body: Turn([computer_call([{"type": "screenshot"}])])
        )
    elif args.backend == "anthropic_computer":
        model, extra = "claude-sonnet-4-5", ["--model-profile", "anthropic-computer"]
        fake = MessagesServer(respond=lambda _body: Message([tool_use("screenshot")]))
    session = start_xsession()
    try:
        with tempfile.TemporaryDirectory() as tmp, serve_in_thread(fake) as server:
            data = Path(tmp)
            env = session.child_env(
                {"DESKTOP_AGENT_HOME": str(data), "ANTHROPIC_API_KEY": "sk-ant-benchmark"}
            )

            def run(turns: int) -> tuple[subprocess.CompletedProcess[str], float, float]:
                command = [
                    sys.executable,
                    "-m",
                    "desktop_agent",
                    "run",
                    "benchmark turns",
                    "--base-url",
                    server.url if extra else server.base_url,
                    "--model",
                    model,
                    *extra,
                    "--vision",
                    "yes",
                    "--approve",
                    "all",
                    "--allow",
                    "wait",
                    "--max-steps",
                    str(turns),
                    "--json",
                    "--data-dir",
                    str(data),
                ]
                cpu_before = _children_cpu()
                began = time.perf_counter()
                result = subprocess.run(
                    command, env=env, cwd=ROOT, capture_output=True, text=True, check=False
                )
                return result, time.perf_counter() - began, _children_cpu() - cpu_before

            _, _, short_cpu = run(SHORT_TURNS)
            result, wall, cpu = run(args.turns)
    finally:
        session.close()
    if result.returncode != 2:
        sys.exit(f"run ended with exit {result.returncode}: {result.stderr.strip()}")
    events = [json.loads(line) for line in result.stdout.splitlines()]
    starts = [
        datetime.fromisoformat(e["step"]["started_at"])
        for e in events
        if e["type"] == "step_finished" and e["step"]["kind"] == "observe"
    ]
    turns = [
        (b - a).total_seconds() * 1000 - waited_ms for a, b in zip(starts, starts[1:], strict=False)
    ]
    by_kind: dict[str, list[float]] = {}
    for event in events:
        if event["type"] == "step_finished":
            by_kind.setdefault(event["step"]["kind"], []).append(event["step"]["duration_ms"])
    turns.sort()
    print(f"turns: {len(turns) + 1} (whole process incl. start-up: {wall:.2f} s)")
    print(
        f"per turn: median {statistics.median(turns):.1f} ms, "
        f"p90 {turns[int(len(turns) * 0.9)]:.1f} ms, max {turns[-1]:.1f} ms (target median <= 25)"
    )
    per_turn_cpu = (cpu - short_cpu) * 1000 / max(1, args.turns - SHORT_TURNS)
    print(f"CPU per turn (all threads of the run process): {per_turn_cpu:.1f} ms")
    for kind, values in by_kind.items():
        print(f"  {kind:<8} step median {statistics.median(values):.1f} ms")


if __name__ == "__main__":
    main()
