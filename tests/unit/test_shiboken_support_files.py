"""scripts/bootstrap leaves shiboken6's signature support modules beside its package, compiled
(packaging/shiboken_files.py): the venv's `import shiboken6` runs them from bytecode, where
without the folder shiboken6 compiles them from the source inside its library at every start."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

REPORT = (
    "import json, sys, shiboken6\n"
    "print(json.dumps({name: module.__file__ for name, module in sys.modules.items()\n"
    "                  if name.split('.')[0] == 'shibokensupport'}))\n"
)


def shiboken6_package() -> Path:
    spec = importlib.util.find_spec("shiboken6")
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).resolve().parent


def bytecode_beside(source: str | Path) -> Path:
    """Where Python keeps a module's bytecode without a PYTHONPYCACHEPREFIX."""
    path = Path(source)
    return path.parent / "__pycache__" / f"{path.stem}.{sys.implementation.cache_tag}.pyc"


def environment(**changes: str) -> dict[str, str]:
    """This machine's environment (nothing written at import), without a bytecode cache of the
    process's own elsewhere."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    return {**env, "PYTHONDONTWRITEBYTECODE": "1", **changes}


def test_the_venvs_shiboken6_runs_its_signature_loader_from_bytecode_beside_its_package(
    tmp_path: Path,
) -> None:
    folder = shiboken6_package() / "files.dir"
    assert folder.is_dir(), f"no {folder}: a venv made before 024dffa; run scripts/bootstrap again"
    done = subprocess.run(
        [sys.executable, "-v", "-c", REPORT],
        cwd=tmp_path,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    modules: dict[str, str] = json.loads(done.stdout.splitlines()[-1])
    assert "shibokensupport.signature.loader" in modules, modules
    from_bytecode = set(re.findall(r"^# code object from '(.*)'$", done.stderr, re.MULTILINE))
    for name, file in modules.items():
        assert Path(file).is_relative_to(folder), (name, file)
        assert str(bytecode_beside(file)) in from_bytecode, (name, file)


def test_the_folder_is_written_again_only_when_another_shiboken6_version_wrote_it(
    tmp_path: Path,
) -> None:
    # a copy of this venv's shiboken6 (its two libraries find each other beside them) first on
    # the path: the script writes the copy's folder, the venv's is left as it is
    site = tmp_path / "site"
    shutil.copytree(
        shiboken6_package(),
        site / "shiboken6",
        ignore=shutil.ignore_patterns("files.dir", "__pycache__"),
    )
    env = environment(PYTHONPATH=str(site))

    def write() -> None:
        subprocess.run(
            [sys.executable, str(ROOT / "packaging" / "shiboken_files.py")],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            timeout=60,
            check=True,
        )

    write()
    folder = site / "shiboken6" / "files.dir"
    loader = folder / "shibokensupport" / "signature" / "loader.py"
    assert loader.is_file() and bytecode_beside(loader).is_file()
    stamp = folder / "desktop-agent-shiboken6-version"
    version = importlib.metadata.version("shiboken6")
    assert stamp.read_text(encoding="utf-8") == version
    left = folder / "left-behind"
    left.write_text("", encoding="utf-8")

    write()  # the same version wrote it: kept
    assert left.exists()

    stamp.write_text("6.0.0", encoding="utf-8")  # as pip leaves it after an update
    write()
    assert not left.exists()
    assert stamp.read_text(encoding="utf-8") == version
    assert bytecode_beside(loader).is_file()
