"""Every desktop module imports on a machine without a display, and imports no OS library."""

from __future__ import annotations

import json
import os
import subprocess
import sys

MODULES = [
    "desktop_agent.desktop",
    "desktop_agent.desktop.capture",
    "desktop_agent.desktop.clipboard",
    "desktop_agent.desktop.doctor",
    "desktop_agent.desktop.executor",
    "desktop_agent.desktop.geometry",
    "desktop_agent.desktop.hotkey",
    "desktop_agent.desktop.input",
    "desktop_agent.desktop.inventory",
    "desktop_agent.desktop.inventory.atspi",
    "desktop_agent.desktop.inventory.atspi_wayland",
    "desktop_agent.desktop.inventory.atspi_bus",
    "desktop_agent.desktop.inventory.base",
    "desktop_agent.desktop.inventory.uia",
    "desktop_agent.desktop.inventory.x11",
    "desktop_agent.desktop.launch",
    "desktop_agent.desktop.observer",
    "desktop_agent.desktop.win32",
    "desktop_agent.desktop.win_input",
    "desktop_agent.desktop.win_messages",
]
HEAVY = [
    "pyautogui",
    "Xlib",
    "mss",
    "PIL",
    "PySide6",
    "gi",
    "pyatspi",
    "jeepney",
    "uiautomation",
    "keyboard",
]

SCRIPT = f"""
import importlib, json, sys
for name in {MODULES!r}:
    importlib.import_module(name)
print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))
"""


def test_desktop_modules_import_without_a_display_and_load_no_os_library() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}

    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=60
    )

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []
