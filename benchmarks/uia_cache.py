"""The Windows UIA inventory against its 0.1 s budget, the per-call cost of UI Automation
modelled: the element-by-element walk (uiautomation 2.0.29's properties, one call each) next
to the cache request the backend now makes (desktop/inventory/uia_cache.py).

No Windows here: tests/unit/desktop/fake_uiautomation.py stands in for uiautomation and
comtypes, and each cross-process call sleeps `--call-ms` (plus `--element-us` per element a
cache brings back). The figures are the wall time of the real backend code over that model,
not of a real Windows machine (docs/windows-checklist.md check 42 measures that).

    .venv/bin/python benchmarks/uia_cache.py [--controls 200] [--call-ms 0.5] [--element-us 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from desktop_agent.desktop.inventory import WalkLimits  # noqa: E402
from desktop_agent.desktop.inventory.uia import ROLES, UiaInventory  # noqa: E402
from tests.unit.desktop import fake_uiautomation  # noqa: E402
from tests.unit.desktop.test_uia_cache import form  # noqa: E402

BUDGET_S = 0.1


def per_property_walk(auto: Any, limits: WalkLimits) -> int:
    """The walk before the cache request (old main's UiaInventory._walk): each property a
    call, each child two more (GetChildren). Answers the elements listed."""
    found = 0
    for window in auto.GetRootControl().GetChildren():
        if limits.expired():
            return found
        if not window.IsOffscreen and window.Name and window.BoundingRectangle.right:
            window.IsEnabled  # noqa: B018 - the read is the cost
            window.NativeWindowHandle  # noqa: B018
            found += 1
    queue = [(auto.GetForegroundControl(), 0)]
    while queue and found < limits.max_elements and not limits.expired():
        control, depth = queue.pop(0)
        if depth and control.IsOffscreen:
            continue
        if ROLES.get(control.ControlTypeName):
            for _ in (control.BoundingRectangle, control.Name, control.IsEnabled,
                      control.HasKeyboardFocus, control.IsPassword):  # fmt: skip
                pass
            found += 1
        queue.extend((child, depth + 1) for child in control.GetChildren())
    return found


def measure(controls: int, call_s: float, element_s: float, rounds: int) -> None:
    module, log = fake_uiautomation.load_tree(form(controls))
    log.call_s, log.element_s, log.sleep = call_s, element_s, time.sleep
    sys.modules["uiautomation"] = module
    backend = UiaInventory()
    backend.thread_init()

    def cached(limits: WalkLimits) -> int:
        return len(backend.snapshot(limits)[0])

    def walked(limits: WalkLimits) -> int:
        return per_property_walk(module, limits)

    for name, run in (("per-property walk (old)", walked), ("cache request (now)", cached)):
        times, counts, calls = [], [], []
        for _ in range(rounds):
            log.reads = 0
            start = time.monotonic()
            limits = WalkLimits(deadline=start + BUDGET_S)
            counts.append(run(limits))
            times.append(time.monotonic() - start)
            calls.append(log.reads)
        print(
            f"{name:26} median {statistics.median(times) * 1e3:6.1f} ms, "
            f"elements {min(counts)}-{max(counts)}, calls {statistics.median(calls):.0f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--controls", type=int, default=200)
    parser.add_argument("--call-ms", type=float, default=0.5)
    parser.add_argument("--element-us", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    print(
        f"{args.controls} buttons in the foreground window, {args.call_ms} ms a call, "
        f"{args.element_us} us an element cached, budget {BUDGET_S * 1e3:.0f} ms"
    )
    measure(args.controls, args.call_ms / 1e3, args.element_us / 1e6, args.rounds)


if __name__ == "__main__":
    main()
