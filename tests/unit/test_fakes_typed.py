"""The shared fakes have the shape of the ports they stand for: mypy, strict, passes on them.

Each fake module ends with assignments under `if TYPE_CHECKING:` (`_observer: ScreenObserver =
FakeObserver()`) that only mypy reads: a fake whose method drifts from its port (a parameter
the port gained, a sync method the port awaits) fails here, named, instead of as a TypeError in
whichever test first calls it. The test files are checked too, under mypy's defaults: a fake
local to one test file drifts as a shared one does (docs/architecture.md, "Tests and their
fakes").
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: the modules pyproject.toml's [[tool.mypy.overrides]] makes strict for tests
CHECKED = (
    "tests/fakes.py",
    "tests/unit/desktop/fakes.py",
    "tests/support",
    *sorted(str(path.relative_to(ROOT)) for path in (ROOT / "tests/unit").glob("*/conftest.py")),
)


def mypy(*paths: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", *paths],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_shared_fakes_and_test_support_pass_mypy() -> None:
    done = mypy(*CHECKED)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_test_files_pass_mypy() -> None:
    """`mypy tests`: every test file, with the strict section above for the shared ones."""
    done = mypy("tests")
    assert done.returncode == 0, done.stdout + done.stderr
