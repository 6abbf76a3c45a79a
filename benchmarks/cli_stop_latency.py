"""Stop latency from outside the process, for each stop path of a `desktop-agent run`.

A run's model request hangs (the loopback model server never answers); then the run is
stopped by SIGINT, by the global hotkey (`xdotool key ctrl+alt+Escape` on Xvfb), or by
`desktop-agent stop-all` from another process. Measured: from just before the stop is
sent to the `run_finished` line arriving on the run's stdout (stored before it is printed).
For stop-all, the time includes starting the stop-all process (Python's own start is printed
last as the floor); for the hotkey, starting xdotool.

The processes run with Python's bytecode cache on, as an installed package does (pip compiles
it at install): PYTHONDONTWRITEBYTECODE, when set here, is dropped for them (it would make
every start compile the package's modules again), and one trial of each path is run first,
not counted, to fill the cache (PYTHONPYCACHEPREFIX, when set, says where it is).

    .venv/bin/python benchmarks/cli_stop_latency.py [--trials 20] [--paths stop-all]
        [--stop-python PATH]

`--stop-python` runs stop-all with another interpreter, e.g. of a venv where the package is
installed from its wheel: this venv's editable install adds an import hook to every start
(setuptools' finder imports pathlib, re and urllib.parse: ~10 ms) that a user's install has not.
`--stop-bundle dist/desktop-agent` runs it with the frozen app of a one-folder bundle
(packaging/build), as the .deb and the Windows installer install it.

Target: stop-all p95 <= 100 ms (DESIGN §7, issue 22).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.model_server import Hang, ModelServer, serve_in_thread  # noqa: E402
from tests.support.xdisplay import start_xsession, wait_until  # noqa: E402

GRABBED = "stop hotkey ctrl+alt+esc is on"


def stop_all_command(stop_python: str, bundle: Path | None) -> list[str]:
    if bundle is not None:
        return [str(bundle / "desktop-agent"), "stop-all"]
    return [stop_python, "-m", "desktop_agent", "stop-all"]


def one_trial(
    path: str, server: ModelServer, env: dict[str, str], data: Path, stop: list[str]
) -> float:
    before = len(server.requests)
    log = data / "desktop-agent.log"
    grabs = log.read_text().count(GRABBED) if log.exists() else 0
    server.add(Hang())
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "desktop_agent",
            "run",
            "stop me",
            "--base-url",
            server.base_url,
            "--model",
            "m",
            "--vision",
            "yes",
            "--approve",
            "all",
            "--json",
            "--data-dir",
            str(data),
        ],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    wait_until(lambda: len(server.requests) > before, timeout=30, what="the model request")
    if path == "hotkey":
        wait_until(
            lambda: log.read_text().count(GRABBED) > grabs, timeout=10, what="the hotkey grab"
        )
    began = time.perf_counter()
    if path == "sigint":
        process.send_signal(2)
    elif path == "hotkey":
        subprocess.run(["xdotool", "key", "ctrl+alt+Escape"], env=env, check=True)
    else:
        subprocess.Popen(
            [*stop, "--data-dir", str(data)],
            env=env,
            # another interpreter (or a bundle) imports its own install, not this checkout
            cwd=ROOT if stop[0] == sys.executable else data,
            stdout=subprocess.DEVNULL,
        )
    for line in process.stdout:
        if json.loads(line)["type"] == "run_finished":
            elapsed = (time.perf_counter() - began) * 1000
            break
    else:
        raise RuntimeError("no run_finished")
    process.communicate()
    return elapsed


def interpreter_floor(trials: int, python: str) -> float:
    """The median start of this Python doing nothing: the part of stop-all no code can save."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    times = []
    for _ in range(trials):
        began = time.perf_counter()
        subprocess.run([python, "-c", "pass"], check=True, env=env)
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument(
        "--paths", default="sigint,hotkey,stop-all", help="comma-separated: sigint,hotkey,stop-all"
    )
    parser.add_argument(
        "--stop-python", default=sys.executable, help="the interpreter that runs stop-all"
    )
    parser.add_argument(
        "--stop-bundle",
        type=Path,
        help="run stop-all with the frozen app of this one-folder bundle (dist/desktop-agent)",
    )
    args = parser.parse_args()
    stop = stop_all_command(args.stop_python, args.stop_bundle)
    session = start_xsession(atspi=False)
    try:
        with tempfile.TemporaryDirectory() as tmp, serve_in_thread(ModelServer()) as server:
            data = Path(tmp)
            env = session.child_env({"DESKTOP_AGENT_HOME": str(data)})
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            for path in args.paths.split(","):
                # fills the bytecode cache; not counted
                one_trial(path, server, env, data, stop)
                times = sorted(one_trial(path, server, env, data, stop) for _ in range(args.trials))
                p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
                p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
                print(
                    f"{path:<9} n={len(times)}  p50 {statistics.median(times):7.1f} ms  "
                    f"p95 {p95:7.1f} ms  p99 {p99:7.1f} ms  max {times[-1]:7.1f} ms",
                    flush=True,
                )
    finally:
        session.close()
    if args.stop_bundle is None:
        floor = interpreter_floor(args.trials, args.stop_python)
        print(f"(stop-all includes its own Python start; `python -c pass` p50 {floor:.1f} ms)")
    os._exit(0)


if __name__ == "__main__":
    main()
