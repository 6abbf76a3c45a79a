"""The look for model servers (planner/discovery.py) when nothing listens: target ≤ 300 ms.

Probes the usual ports (11434, 1234, 8080, 8000, 1337) on 127.0.0.1 `--trials` times (default
50) and prints the median, p95 and the longest, in ms, counting the aiohttp session too (what
the window, `doctor` and a refused run pay). When something does listen on one of them here,
the same number of free ports stands in (and the line says so). Also one figure with a port
that takes the connection but never answers, which the deadline (`--deadline`, default the
module's 1.5 s) ends.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import time

from desktop_agent.planner.discovery import DEADLINE_S, DEFAULT_PORT_NUMBERS, discover


def listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def free_ports(count: int) -> list[int]:
    ports = []
    for _ in range(count):
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            ports.append(sock.getsockname()[1])
    return ports


async def measure(ports: list[int], trials: int, deadline_s: float) -> list[float]:
    times = []
    for _ in range(trials):
        start = time.perf_counter()
        found = await discover(ports, deadline_s=deadline_s)
        times.append((time.perf_counter() - start) * 1000)
        assert not found.servers, f"something answers: {found.lines()}"
    return sorted(times)


def report(label: str, times: list[float]) -> None:
    p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
    print(
        f"  {label}: median {statistics.median(times):.1f} ms, p95 {p95:.1f} ms, "
        f"longest {times[-1]:.1f} ms ({len(times)} trials)"
    )


async def main_async(trials: int, deadline_s: float) -> None:
    ports = list(DEFAULT_PORT_NUMBERS)
    taken = [port for port in ports if listening(port)]
    if taken:
        ports = free_ports(len(ports))
        label = f"nothing listens ({len(ports)} free ports; {taken} are taken here)"
    else:
        label = f"nothing listens on {', '.join(map(str, ports))}"
    print("model server discovery on 127.0.0.1 (target: ≤ 300 ms when nothing listens)")
    first = await measure(ports, 1, deadline_s)
    print(f"  first look in this process (imports aiohttp): {first[0]:.1f} ms")
    report(label, await measure(ports, trials, deadline_s))
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)  # takes connections, never answers
    try:
        times = await measure([*ports, silent.getsockname()[1]], 3, deadline_s)
    finally:
        silent.close()
    report(f"one port takes the connection and never answers (deadline {deadline_s} s)", times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--deadline", type=float, default=DEADLINE_S)
    options = parser.parse_args()
    asyncio.run(main_async(options.trials, options.deadline))


if __name__ == "__main__":
    main()
