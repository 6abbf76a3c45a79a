"""The desktop adapters: observe the screen, act on it, the stop hotkey, and the doctor.

Everything here imports without a display; OS libraries (mss, pyautogui, Xlib, jeepney,
uiautomation, keyboard) are imported when first used.
"""

from desktop_agent.desktop.executor import DesktopExecutor
from desktop_agent.desktop.observer import DesktopObserver

__all__ = ["DesktopExecutor", "DesktopObserver"]
