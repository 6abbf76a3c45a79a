"""The built-in eval suite with the oracle planner, `--jobs 2`: its wall time (target ≤ 10 min).

    python benchmarks/eval.py [--jobs 2] [--planner oracle] [--tags T,…]

Runs `desktop-agent eval --planner oracle --jobs 2 --json` on private desks (each task its own
Xvfb + openbox + AT-SPI) and prints the suite's wall time, the tasks passed, the per-task median
and slowest wall time, and the median steps.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", default="2")
    parser.add_argument("--planner", default="oracle")
    parser.add_argument("--tags", default="")
    args = parser.parse_args()
    extra = ["--tags", args.tags] if args.tags else []
    with tempfile.TemporaryDirectory() as data:
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "desktop_agent", "eval", "--planner", args.planner,
             "--jobs", args.jobs, "--json", "--data-dir", data, *extra],
            cwd=ROOT, capture_output=True, text=True, check=False,
        )  # fmt: skip
        wall = time.monotonic() - started
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    tasks = [row for row in rows if row.get("type") == "task"]
    if not tasks:
        print(done.stderr.strip() or "no task ran", file=sys.stderr)
        return 1
    times = [row["wall_s"] for row in tasks]
    passed = sum(row["status"] == "passed" for row in tasks if not row["injection"])
    benign = sum(not row["injection"] for row in tasks)
    print(f"eval suite, planner {args.planner}, --jobs {args.jobs}: {wall:.0f} s wall "
          f"({wall / 60:.1f} min; target ≤ 10 min)")  # fmt: skip
    print(f"tasks: {len(tasks)} ({benign} benign: {passed} passed; "
          f"{len(tasks) - benign} injection cases)")  # fmt: skip
    slowest = max(tasks, key=lambda row: row["wall_s"])
    steps = statistics.median(row["steps"] for row in tasks)
    print(f"per task: median {statistics.median(times):.1f} s, slowest {slowest['wall_s']:.1f} s "
          f"({slowest['task']}); median steps {steps}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
