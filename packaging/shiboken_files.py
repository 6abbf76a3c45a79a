"""shiboken6's signature support modules as compiled files beside its package (`files.dir`).

shiboken6 (6.11) keeps its Python support modules (shibokensupport/signature/*.py) as a zip
inside its library and `compile()`s them from source at every `import shiboken6`, unless a
folder `files.dir` sits beside its package: then it imports them from there with Python's own
path finder, from bytecode where there is some (shiboken6's signature_bootstrap.py,
`find_incarnated_files`). Its own switch SBK_EMBED=0 writes that folder, as source
(`handle_embedding_switch` → `reincarnate_files`); this writes it and compiles it.

scripts/bootstrap leaves it in the dev venv (`python packaging/shiboken_files.py`) and
packaging/desktop-agent.spec ships a copy in the bundle (`write_support_files`, then
`compile_support_files` with hash-stamped bytecode). A plain `pip install` of the app does not
get it: pip runs no code of the app's at install (README.md, "From source").

    python packaging/shiboken_files.py     # the folder of this Python's shiboken6, compiled
"""

from __future__ import annotations

import compileall
import importlib.metadata
import importlib.util
import os
import py_compile
import shutil
import subprocess
import sys
from pathlib import Path

#: the shiboken6 version the folder was written from: a folder another version wrote (pip
#: leaves it behind when it updates PySide6: it is not in the wheel's RECORD) is written again
STAMP = "desktop-agent-shiboken6-version"


def support_folder() -> Path:
    """Where this Python's shiboken6 looks for its support files (not importing it)."""
    spec = importlib.util.find_spec("shiboken6")
    if spec is None or spec.origin is None:
        raise RuntimeError("shiboken6 is not installed for this Python")
    return Path(spec.origin).resolve().parent / "files.dir"


def write_support_files() -> Path:
    """The support folder of this Python's shiboken6, written by shiboken6 itself (SBK_EMBED=0)
    unless the same shiboken6 version wrote it already, and compiled in place (bytecode that
    Python checks against the source's time, as pip's)."""
    folder = support_folder()
    version = importlib.metadata.version("shiboken6")
    stamp = folder / STAMP
    if not (stamp.is_file() and stamp.read_text(encoding="utf-8") == version):
        shutil.rmtree(folder, ignore_errors=True)
        subprocess.run(
            [sys.executable, "-c", "import shiboken6"],
            env={**os.environ, "SBK_EMBED": "0"},
            check=True,
        )
        if not (folder / "shibokensupport" / "signature" / "loader.py").is_file():
            raise RuntimeError(f"shiboken6 {version} did not write its support files in {folder}")
        stamp.write_text(version, encoding="utf-8")
    compile_support_files(folder, py_compile.PycInvalidationMode.TIMESTAMP)
    return folder


def compile_support_files(folder: Path, mode: py_compile.PycInvalidationMode) -> None:
    """Bytecode for every module of `folder`, in its __pycache__ folders: also where the
    environment says PYTHONDONTWRITEBYTECODE (py_compile writes regardless) or names a
    PYTHONPYCACHEPREFIX (the app then reads its own cache there, not these)."""
    prefix, sys.pycache_prefix = sys.pycache_prefix, None
    try:
        if not compileall.compile_dir(folder, quiet=1, invalidation_mode=mode):
            raise RuntimeError(f"the support files in {folder} did not compile")
    finally:
        sys.pycache_prefix = prefix


def main() -> int:
    folder = write_support_files()
    print(f"shiboken_files: {folder} (compiled)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
