"""Packaging tests: build the bundle and the .deb once per session, on the test desktop."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.xdisplay import xsession

__all__ = ["xsession"]

ROOT = Path(__file__).resolve().parents[2]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/packaging/" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.desktop)


@dataclass(frozen=True)
class Built:
    """What packaging/build made, and the .deb extracted into a root (dpkg-deb -x)."""

    bundle: Path
    deb: Path
    root: Path
    seconds: float
    log: str


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    """packaging/build with this test run's Python (it has the 'package' extra), into a
    temporary build and dist folder, by a builder whose umask is private (077); then the .deb
    extracted as dpkg would lay it out."""
    work = tmp_path_factory.mktemp("packaging")
    env = dict(os.environ, PYTHON=sys.executable, BUILD_DIR=str(work / "build"))
    env["DIST_DIR"] = str(work / "dist")
    started = time.monotonic()
    result = subprocess.run(
        [str(ROOT / "packaging" / "build")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        umask=0o077,
    )
    seconds = time.monotonic() - started
    if result.returncode != 0:
        pytest.fail(f"packaging/build failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}")
    (deb,) = (work / "dist").glob("desktop-agent_*.deb")
    root = work / "root"
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True, timeout=300)
    yield Built(work / "dist" / "desktop-agent", deb, root, seconds, result.stdout)
