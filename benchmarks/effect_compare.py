"""The effect check's comparison per turn: core.effect.compare of two observations.

Signatures of several sizes (the observer's small grey image of a 1280×720 screenshot) with
150 elements each, the screen unchanged (the slowest case: every byte and element compared)
and changed. Prints the median and p99 in ms over `--trials` (default 300). The signature
itself is made by the observer and measured with it (benchmarks/observe.py).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from desktop_agent.core.effect import compare
from desktop_agent.core.models import Element, Observation


def observation(signature: bytes, elements: tuple[Element, ...]) -> Observation:
    return Observation(b"", "image/jpeg", 1280, 720, elements=elements, signature=signature)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=300)
    options = parser.parse_args()
    rng = random.Random(7)
    elements = tuple(
        Element(i, "button", f"Button {i}", (i * 7 % 1200, i * 5 % 700, 80, 24)) for i in range(150)
    )
    print("effect check: compare() of two observations, 150 elements each")
    for width, height in ((64, 36), (128, 72), (160, 90), (320, 180)):
        before = bytes(rng.randrange(256) for _ in range(width * height))
        changed = bytearray(before)
        changed[: len(changed) // 4] = bytes(len(changed) // 4)
        for label, after in (("unchanged", before), ("changed", bytes(changed))):
            a, b = observation(before, elements), observation(after, elements)
            times = []
            for _ in range(options.trials):
                start = time.perf_counter()
                compare(a, b)
                times.append((time.perf_counter() - start) * 1000)
            times.sort()
            p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
            print(
                f"  {width}x{height} grey, {label:9s}: median {statistics.median(times):.3f} ms, "
                f"p99 {p99:.3f} ms"
            )


if __name__ == "__main__":
    main()
