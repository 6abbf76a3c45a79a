"""The bundle's run-time hook packaging/rthook_finders.py, run against PyInstaller's own importer
(`PyInstaller/loader/pyimod02_importers.py`, installed as the bootloader's bootstrap installs it,
over a real PYZ archive written by PyInstaller's `ZlibArchiveWriter`): with the archive empty,
as the spec's `noarchive` build makes it, the app's modules are found by Python's FileFinder
alone; with modules in the archive, PyInstaller's finder stays and finds them there."""

from __future__ import annotations

import json
import py_compile
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOOK = ROOT / "packaging" / "rthook_finders.py"

pytest.importorskip("PyInstaller")

# the bootloader's steps, in a plain interpreter: sys._MEIPASS and sys._pyinstaller_pyz set,
# PyInstaller's importer installed (pyiboot01_bootstrap.py), a module imported through it
# (PyInstaller's ctypes hook does so), then the spec's run-time hook, then the app's imports
CHILD = """
import json, sys
app, pyz, loader, hook = sys.argv[1:5]
sys._MEIPASS = app
sys._pyinstaller_pyz = pyz
sys.path[:] = [loader, *sys.path[1:], app]
import pyimod02_importers
pyimod02_importers.install()
import plain_before
before = type(sys.path_importer_cache[app]).__name__
exec(compile(open(hook).read(), hook, "exec"), {"__name__": "__main__"})
import plain_after, package.inner
names = sys.argv[5:]
for name in names:
    __import__(name)
print(json.dumps({
    "before": before,
    "app": type(sys.path_importer_cache[app]).__name__,
    "package": type(sys.path_importer_cache[package.__path__[0]]).__name__,
    "frozen_hook": pyimod02_importers.PyiFrozenFinder.path_hook in sys.path_hooks,
    "loaders": {name: type(sys.modules[name].__loader__).__name__
                for name in ["plain_before", "plain_after", "package.inner", *names]},
    "files": {name: sys.modules[name].__file__ for name in ["plain_after", "package.inner"]},
}))
"""


def sourceless(source: str, pyc: Path) -> None:
    """A module as the noarchive bundle ships it: its .pyc where the .py would be, no source."""
    pyc.parent.mkdir(parents=True, exist_ok=True)
    py = pyc.with_suffix(".py")
    py.write_text(source, encoding="utf-8")
    py_compile.compile(str(py), cfile=str(pyc), doraise=True)
    py.unlink()


def run_hook(tmp_path: Path, archived: dict[str, str]) -> dict[str, object]:
    from PyInstaller.archive.writers import ZlibArchiveWriter

    app = tmp_path / "_internal"
    for name in ("plain_before", "plain_after"):
        sourceless(f"NAME = {name!r}\n", app / f"{name}.pyc")
    sourceless("", app / "package" / "__init__.pyc")
    sourceless("VALUE = 1\n", app / "package" / "inner.pyc")
    entries = []
    for name, source in archived.items():
        path = tmp_path / "src" / f"{name}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(source, encoding="utf-8")
        entries.append((name, str(path), "PYMODULE"))
    pyz = tmp_path / "PYZ.pyz"
    code = {name: compile(source, name, "exec") for name, source in archived.items()}
    ZlibArchiveWriter(str(pyz), entries, code)
    import PyInstaller

    loader = Path(PyInstaller.__path__[0]) / "loader"
    done = subprocess.run(
        [sys.executable, "-I", "-c", CHILD, str(app), str(pyz), str(loader), str(HOOK), *archived],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def test_with_the_archive_empty_the_bundles_imports_go_to_pythons_own_finder(
    tmp_path: Path,
) -> None:
    found = run_hook(tmp_path, archived={})
    assert found["before"] == "PyiFrozenFinder"  # what PyInstaller's bootstrap puts in front
    assert found["app"] == "FileFinder" and found["package"] == "FileFinder"
    assert found["frozen_hook"] is False
    assert found["loaders"] == {
        "plain_before": "SourcelessFileLoader",
        "plain_after": "SourcelessFileLoader",
        "package.inner": "SourcelessFileLoader",
    }
    files = found["files"]
    assert isinstance(files, dict)
    assert files["package.inner"] == str(tmp_path / "_internal" / "package" / "inner.pyc")


def test_with_modules_in_the_archive_pyinstallers_finder_stays(tmp_path: Path) -> None:
    found = run_hook(tmp_path, archived={"from_archive": "VALUE = 2\n"})
    assert found["app"] == "PyiFrozenFinder" and found["frozen_hook"] is True
    loaders = found["loaders"]
    assert isinstance(loaders, dict)
    assert loaders["from_archive"] == "PyiFrozenLoader"
    assert loaders["package.inner"] == "SourcelessFileLoader"
