"""Scaling with Qt on the capture thread must not make that thread Qt's main thread."""

from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = """
import threading
from desktop_agent.desktop.capture import ScreenCapture, scale_bgra

def in_worker(capture):
    worker = threading.Thread(target=capture.choose_scaler)
    worker.start()
    worker.join()
    return capture.scaler

print(in_worker(ScreenCapture()))            # before anything: not from a worker
main = ScreenCapture()
print(main.choose_scaler())                  # on the main thread: Qt, pinned to it
bgra = bytes(1920 * 1080 * 4)
worker = threading.Thread(target=lambda: scale_bgra(bgra, (1920, 1080), (1280, 720), "qt"))
worker.start()
worker.join()
from PySide6.QtWidgets import QApplication
app = QApplication([])
print(app.eventDispatcher() is not None)
print(in_worker(ScreenCapture()))            # with an application: Qt from a worker is fine
"""


def test_qt_scaling_in_a_worker_leaves_the_main_thread_to_the_application() -> None:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")

    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=60
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["pillow", "qt", "True", "qt"]
    assert "not created in the main() thread" not in result.stderr
