"""The gate per call (DESIGN §7: ≤ 1 ms): what the loop does between a decision and the question.

For each call: validate the model's arguments with the tool's model (the object the gate
judges and the executor runs), dump them, `assess_call` against an observation of 150
elements (the inventory's limit) with a window list, and `Permissions.decide`. Calls: a line
into a terminal, a hotkey with extra keys, clicks by element and by point (the slowest: every
element's box is tested), a drag, a password field; and the injection guard's verdict on the
observation (its scan is made once per observation, when the turn observes: see
benchmarks/injection_detector.py). Prints the median and p99 in µs per call
over `--trials` (default 2000) and the worst call's p99 against the 1 ms target: of the
wall time, and of the thread's CPU time (what the gate costs; on a shared box the wall p99 is
mostly the scheduler's time slices of other processes).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from desktop_agent.core.builtin_tools import builtin_registry
from desktop_agent.core.call_risk import DEFAULT_SENSITIVE_TARGETS, assess_call
from desktop_agent.core.injection_guard import InjectionGuard
from desktop_agent.core.models import Element, Observation
from desktop_agent.core.permissions import Permissions

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("type_text", {"text": "rm -rf ~", "enter": "true"}),
    ("type_text", {"text": "a longer line of text, " * 40}),
    ("hotkey", {"keys": ["ctrl", "shift", "alt", "t", "a"]}),
    ("hotkey", {"keys": ["ctrl", "s"]}),
    ("click", {"element": "140"}),
    ("click", {"x": "1270", "y": "710", "button": "middle"}),
    ("drag", {"x": 10, "y": 10, "to_x": 1200, "to_y": 700}),
    ("set_value", {"element": 150, "value": "hunter2"}),
]


def observation() -> Observation:
    windows = tuple(
        Element(i, "window", f"Window {i} — app{i}", (i * 40, i * 20, 600, 400), focused=i == 1)
        for i in range(1, 6)
    )
    controls = tuple(
        Element(i, "button", f"Button {i}", (i * 7 % 1200, i * 5 % 700, 80, 24))
        for i in range(6, 150)
    )
    password = Element(150, "edit", "Password", (10, 10, 100, 20), focused=True, password=True)
    return Observation(b"", "image/jpeg", 1280, 720, elements=(*windows, *controls, password))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=2000)
    options = parser.parse_args()
    registry = builtin_registry()
    permissions = Permissions()
    screen = observation()
    guard = InjectionGuard()
    guard.notes(screen)  # the turn's observe step scanned it
    print(
        f"gate per call: validate + assess_call + injection guard + decide, "
        f"{len(screen.elements)} elements"
    )
    worst_wall = worst_cpu = 0.0
    for tool, raw in CALLS:
        wall, cpu = [], []
        for _ in range(options.trials):
            start, start_cpu = time.perf_counter(), time.thread_time()
            spec, args = registry.validate(tool, raw)
            values = args.model_dump()
            risk = assess_call(tool, values, screen, None, DEFAULT_SENSITIVE_TARGETS)
            guard.judge(tool, values, screen, input_=True)
            permissions.decide("run", tool, spec.risk, sensitive=risk.asks_every_call)
            wall.append((time.perf_counter() - start) * 1e6)
            cpu.append((time.thread_time() - start_cpu) * 1e6)
        wall_p99, cpu_p99 = p99(wall), p99(cpu)
        worst_wall, worst_cpu = max(worst_wall, wall_p99), max(worst_cpu, cpu_p99)
        label = f"{tool} {sorted(raw)}"
        print(
            f"  {label:40s} wall median {statistics.median(wall):6.1f} µs p99 {wall_p99:7.1f}"
            f" · cpu median {statistics.median(cpu):6.1f} µs p99 {cpu_p99:6.1f}"
        )
    print(f"worst p99: cpu {worst_cpu:.1f} µs, wall {worst_wall:.1f} µs (target ≤ 1000 µs)")


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


if __name__ == "__main__":
    main()
