"""The frozen app has comtypes write its generated wrappers into the data dir, not into the
bundle's `_internal\\comtypes\\gen`, which the uninstaller leaves behind (issue 37 item 8)."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from desktop_agent.desktop.inventory.uia import UiaInventory
from tests.unit.desktop import fake_uiautomation


def fake_comtypes(package_gen: Path) -> dict[str, types.ModuleType]:
    """comtypes 1.4 as the bundle has it: `comtypes.gen` a package whose __path__ is the
    package's own gen folder; `comtypes.client.gen_dir` set at import to the first writable
    folder of that path, the package's own when writable (client/_code_cache.py
    `_find_gen_dir`); GetModule(typelib) writes the generated wrapper
    `<gen_dir>/<name>.py` (client/_generate.py) and imports it from comtypes.gen."""
    gen = types.ModuleType("comtypes.gen")
    gen.__path__ = [str(package_gen)]
    client = types.ModuleType("comtypes.client")
    client.gen_dir = str(package_gen)  # type: ignore[attr-defined]

    def get_module(typelib: str) -> Path:
        name = "_" + typelib.replace(".", "_")
        target = Path(client.gen_dir) / f"{name}.py"
        target.write_text("# generated\n")
        assert str(target.parent) in gen.__path__  # importable from comtypes.gen
        return target

    client.GetModule = get_module  # type: ignore[attr-defined]
    comtypes = types.ModuleType("comtypes")
    comtypes.gen, comtypes.client = gen, client  # type: ignore[attr-defined]
    return {"comtypes": comtypes, "comtypes.gen": gen, "comtypes.client": client}


def test_the_frozen_app_generates_uia_wrappers_into_the_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle_gen = tmp_path / "desktop-agent" / "_internal" / "comtypes" / "gen"
    bundle_gen.mkdir(parents=True)
    home = tmp_path / "data"
    for name, module in fake_comtypes(bundle_gen).items():
        monkeypatch.setitem(sys.modules, name, module)
    uia, _ = fake_uiautomation.load("uia_notepad.json")
    monkeypatch.setitem(sys.modules, "uiautomation", uia)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setenv("DESKTOP_AGENT_HOME", str(home))

    UiaInventory().thread_init()
    # what uiautomation does on first use: GetModule("UIAutomationCore.dll")
    written = sys.modules["comtypes.client"].GetModule("UIAutomationCore.dll")

    # on old main it landed in the bundle, where the uninstaller leaves it
    assert written.parent == home / "comtypes-gen"
    assert list(bundle_gen.iterdir()) == []
    assert sys.modules["comtypes.gen"].__path__[0] == str(home / "comtypes-gen")
