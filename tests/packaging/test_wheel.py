"""The wheel built from a clean checkout: the top-level resources/ lands in the package as
desktop_agent/resources (pyproject's package-dir), and no package of desktop_agent/ is left out
of pyproject's package list."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def clean_checkout(into: Path) -> Path:
    """The repository's files as a commit of them would hold them: tracked and new ones, as
    they are now; nothing git ignores (no build/, no .venv, no egg-info, no leftovers)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=False,
    )
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    for name in listed.stdout.decode().split("\0"):
        source = ROOT / name
        if name and source.is_file():
            target = into / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return into


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    checkout = clean_checkout(tmp_path_factory.mktemp("checkout"))
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(checkout)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-3000:]
    (path,) = out.glob("desktop_agent-*.whl")
    return zipfile.ZipFile(path)


def test_the_wheel_carries_the_top_level_resources_inside_the_package(
    wheel: zipfile.ZipFile,
) -> None:
    names = set(wheel.namelist())
    # the layout asked for: the assets at the top of the repository, not inside the code
    assert (ROOT / "resources" / "icons" / "desktop-agent.svg").is_file()
    assert not (ROOT / "desktop_agent" / "resources").exists()
    # what a checkout holds, but the translation sources: the .qm built from each .ts is
    # committed (docs/translations.md), so a wheel built from a checkout speaks Chinese
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "resources"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert "resources/i18n/desktop_agent_zh_CN.ts" in listed
    qm = "desktop_agent/resources/i18n/desktop_agent_zh_CN.qm"
    assert wheel.read(qm) == (ROOT / "resources" / "i18n" / "desktop_agent_zh_CN.qm").read_bytes()
    for resource in (ROOT / name for name in listed if not name.endswith(".ts")):
        if resource.is_file() and "__pycache__" not in resource.parts:
            inside = (
                "desktop_agent/resources/" + resource.relative_to(ROOT / "resources").as_posix()
            )
            assert inside in names, inside
    assert "desktop_agent/resources/icons/desktop-agent.svg" in names
    assert not any(name.startswith("resources/") for name in names)


def test_the_wheel_has_every_package_of_the_source_tree(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    for init in (ROOT / "desktop_agent").rglob("__init__.py"):
        assert init.relative_to(ROOT).as_posix() in names, f"{init.parent} is not packaged"
