"""The look for model servers (planner/discovery.py) when nothing listens: target ≤ 300 ms.

Probes the usual ports (11434, 1234, 8080, 8000, 1337) on 127.0.0.1 `--trials` times (default
50) and prints the median, p95 and the longest, in ms, counting the aiohttp session too (what
the window, `doctor` and a refused run pay). When something does listen on one of them here,
the same number of free ports stands in (and the line says so). Also one figure with a port
that takes the connection but never answers, which the deadline (`--deadline`, default the
module's 1.5 s) ends.

`--hostile`: the look against hostile servers on loopback, each in a process of its own
(as any local process could answer on a probed port): an Ollama-like list of 60,000 names,
one of 10,000 names (every name asked about with /api/show on old code), and 400,000 levels
of nested JSON. While each look runs, a thread hands the loop a callback every 2 ms
(call_soon_threadsafe, as the stop hotkey's thread hands the engine its stop) and the time
until it runs is the loop's answer to a stop: its median, p99 and longest are printed with
the look's own time (DESIGN §7: a stop p99 ≤ 5 ms in process).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

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


#: a server answering /api/tags and /v1/models with the body in argv[2] (a file), /api/show
#: with a capability list after 10 ms; it prints its port
_HOSTILE_SERVER = """
import asyncio, sys
from aiohttp import web
body = open(sys.argv[1], "rb").read()
async def listing(request):
    return web.Response(body=body, content_type="application/json")
async def show(request):
    await asyncio.sleep(0.01)
    return web.json_response({"capabilities": ["completion"]})
async def main():
    app = web.Application()
    app.router.add_get("/api/tags", listing)
    app.router.add_get("/v1/models", listing)
    app.router.add_post("/api/show", show)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    print(runner.addresses[0][1], flush=True)
    await asyncio.Event().wait()
asyncio.run(main())
"""


def hostile_bodies() -> dict[str, bytes]:
    def names(count: int) -> bytes:
        listed = [{"name": str(index)} for index in range(count)]
        return json.dumps({"models": listed}, separators=(",", ":")).encode()

    depth = 400_000
    return {
        "60,000 names (900 KB)": names(60_000),
        "10,000 names (150 KB)": names(10_000),
        "JSON nested 400,000 deep": b'{"data": ' + b"[" * depth + b"]" * depth + b"}",
    }


class StopProbe:
    """A thread handing the loop a callback every `every_s`; how long each waited to run."""

    def __init__(self, loop: asyncio.AbstractEventLoop, every_s: float = 0.002) -> None:
        self.waits: list[float] = []
        self._loop = loop
        self._every_s = every_s
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._hand, daemon=True)

    def _hand(self) -> None:
        while not self._done.wait(self._every_s):
            self._loop.call_soon_threadsafe(self._ran, time.perf_counter())

    def _ran(self, asked: float) -> None:
        self.waits.append(time.perf_counter() - asked)

    def __enter__(self) -> StopProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()


def start_hostile(tmp: str) -> list[tuple[str, int, subprocess.Popen[str]]]:
    """Each hostile body served by a process of its own: (label, port, process)."""
    servers = []
    for number, (label, body) in enumerate(hostile_bodies().items()):
        path = f"{tmp}/body-{number}.json"
        with open(path, "wb") as file:
            file.write(body)
        server = subprocess.Popen(
            [sys.executable, "-c", _HOSTILE_SERVER, path], stdout=subprocess.PIPE, text=True
        )
        assert server.stdout is not None
        servers.append((label, int(server.stdout.readline()), server))
    return servers


async def hostile_async(deadline_s: float, servers: list[tuple[str, int, Any]]) -> None:
    print(f"hostile servers on loopback (deadline {deadline_s} s; a stop's wait: p99 ≤ 5 ms)")
    loop = asyncio.get_running_loop()
    await discover(free_ports(1), deadline_s=deadline_s)  # aiohttp imported before measuring
    with StopProbe(loop) as idle:
        await asyncio.sleep(0.5)
    report_waits("no look (the machine's own noise)", None, idle.waits)
    for label, port, _ in servers:
        with StopProbe(loop) as probe:
            started = time.perf_counter()
            found = await discover([port], deadline_s=deadline_s)
            took = time.perf_counter() - started
            await asyncio.sleep(0.02)  # the last callbacks handed run
        models = sum(len(s.models) for s in found.servers)
        report_waits(label, f"the look {took * 1000:.0f} ms, {models} models listed", probe.waits)


def report_waits(label: str, look: str | None, seconds: list[float]) -> None:
    waits = sorted(wait * 1000 for wait in seconds)
    p99 = waits[min(len(waits) - 1, int(len(waits) * 0.99))]
    print(
        f"  {label}: {look + '; ' if look else ''}a stop waits median "
        f"{statistics.median(waits):.2f} ms, p99 {p99:.2f} ms, longest {waits[-1]:.1f} ms "
        f"({len(waits)} handed)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--deadline", type=float, default=DEADLINE_S)
    parser.add_argument("--hostile", action="store_true", help="the hostile servers' case")
    options = parser.parse_args()
    if options.hostile:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            servers = start_hostile(tmp)
            try:
                asyncio.run(hostile_async(options.deadline, servers))
            finally:
                for _, _, server in servers:
                    server.terminate()
                    server.wait()
        return
    asyncio.run(main_async(options.trials, options.deadline))


if __name__ == "__main__":
    main()
