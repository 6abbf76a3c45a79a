"""scripts/bootstrap leaves shiboken6's signature support modules beside its package, compiled
(packaging/shiboken_files.py): the venv's `import shiboken6` runs them from bytecode, where
without the folder shiboken6 compiles them from the source inside its library at every start."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPORT = (
    "import json, sys, shiboken6\n"
    "print(json.dumps({name: module.__file__ for name, module in sys.modules.items()\n"
    "                  if name.split('.')[0] == 'shibokensupport'}))\n"
)


def test_the_venvs_shiboken6_runs_its_signature_loader_from_bytecode_beside_its_package(
    tmp_path: Path,
) -> None:
    spec = importlib.util.find_spec("shiboken6")
    assert spec is not None and spec.origin is not None
    folder = Path(spec.origin).resolve().parent / "files.dir"
    assert folder.is_dir(), f"no {folder}: a venv made before 024dffa; run scripts/bootstrap again"
    # as on this machine: nothing written at import; no cache of the process's own elsewhere
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    done = subprocess.run(
        [sys.executable, "-v", "-c", REPORT],
        cwd=tmp_path,
        env=env,
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
        assert importlib.util.cache_from_source(file) in from_bytecode, (name, file)
