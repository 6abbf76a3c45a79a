"""`desktop-agent stop-all`: the shortest path from a fresh process to every run stopped.

It imports the standard library, argparse's grammar and the instance registry only (no
asyncio, aiohttp, openai or pydantic): see benchmarks/cli_stop_latency.py.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from desktop_agent.cli.words import tr


def cmd_stop_all(args: argparse.Namespace, data_dir: Path) -> int:
    from desktop_agent.instances.registry import stop_all_blocking

    stopped = stop_all_blocking(data_dir)
    print(tr("stopped {count} run(s)", count=stopped), flush=True)
    return 0
