"""The desktop adapters: observe the screen, act on it, the stop hotkey, and the doctor.

Everything here imports without a display; OS libraries (mss, pyautogui, Xlib, jeepney,
uiautomation, keyboard) are imported when first used. The package itself imports nothing of
its own (PEP 562): a light module of it (session.py, read before the app's first paint) does
not bring in the executor and the observer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from desktop_agent.desktop.executor import DesktopExecutor
    from desktop_agent.desktop.observer import DesktopObserver

__all__ = ["DesktopExecutor", "DesktopObserver"]


def __getattr__(name: str) -> Any:
    if name == "DesktopExecutor":
        from desktop_agent.desktop.executor import DesktopExecutor

        return DesktopExecutor
    if name == "DesktopObserver":
        from desktop_agent.desktop.observer import DesktopObserver

        return DesktopObserver
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
