"""The command line's start: wall and CPU time (user + system, the one less moved by the
machine's load) of `desktop-agent runs` (an empty history: "no runs
yet") and of `desktop-agent --help`, from a fresh process to its exit, in English and in
Chinese (issue 35 item 4: the command line reads its words from the .qm catalogue).

The processes run with Python's bytecode cache on, as an installed package does
(PYTHONDONTWRITEBYTECODE, when set here, is dropped for them), and one uncounted trial of
each case fills it first. The cases are interleaved, trial by trial, so that the machine's
load falls on all of them alike.

    .venv/bin/python benchmarks/cli_start.py [--trials 15] [--checkout PATH ...]

`--checkout PATH` (repeatable: the checkouts are interleaved too) runs the package of
another checkout with this interpreter (e.g. `git archive` of the commit before, its
resources/ copied into desktop_agent/resources): its folder comes first on PYTHONPATH (the
processes start in a folder of their own, so the current one is not on their path).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES = {
    "runs, en": (["runs"], "en"),
    "runs, zh_CN": (["runs"], "zh_CN"),
    "--help, en": (["--help"], "en"),
    "--help, zh_CN": (["--help"], "zh_CN"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=15)
    parser.add_argument("--checkout", type=Path, action="append", default=[])
    options = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    checkouts: list[Path | None] = list(options.checkout) or [None]
    with tempfile.TemporaryDirectory() as home:
        os.chmod(home, 0o700)
        base["DESKTOP_AGENT_HOME"] = home
        envs = {}
        for checkout in checkouts:
            env = dict(base)
            if checkout is not None:
                env["PYTHONPATH"] = str(checkout.resolve())
            where = subprocess.run(
                [sys.executable, "-c", "import desktop_agent; print(desktop_agent.__file__)"],
                env=env, capture_output=True, text=True, check=True, cwd=home,
            ).stdout.strip()  # fmt: skip
            print(f"package: {where}")
            envs[where] = env
        times: dict[tuple[str, str], list[float]] = {
            (where, case): [] for where in envs for case in CASES
        }
        cpu: dict[tuple[str, str], list[float]] = {key: [] for key in times}
        for trial in range(options.trials + 1):
            for where, env in envs.items():
                for case, (args, language) in CASES.items():
                    started = time.perf_counter()
                    before = resource.getrusage(resource.RUSAGE_CHILDREN)
                    subprocess.run(
                        [sys.executable, "-m", "desktop_agent", *args],
                        env={**env, "DESKTOP_AGENT_LANGUAGE": language},
                        stdout=subprocess.DEVNULL, check=True, cwd=home,
                    )  # fmt: skip
                    wall = (time.perf_counter() - started) * 1000
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    used = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                    if trial:  # the first fills the bytecode cache
                        times[(where, case)].append(wall)
                        cpu[(where, case)].append(used * 1000)
        floor = []
        for _ in range(options.trials):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], env=base, check=True, cwd=home)
            floor.append((time.perf_counter() - started) * 1000)
    for (where, case), values in times.items():
        values.sort()
        p90 = values[min(len(values) - 1, int(len(values) * 0.9))]
        median = statistics.median(values)
        used = statistics.median(cpu[(where, case)])
        print(
            f"{where}  {case:<15} wall median {median:6.1f} ms, p90 {p90:6.1f} ms; "
            f"CPU median {used:6.1f} ms"
        )
    print(f"python -c pass  median {statistics.median(floor):6.1f} ms")
    print(f"load average: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
