"""Work the window does at most once per frame: the latest state drawn, not every change."""

from __future__ import annotations

import math
from collections.abc import Callable
from time import monotonic

from PySide6.QtCore import QObject, Qt, QTimer

#: a frame at 60 Hz: what a screen shows at most; work for changes within one is done once
FRAME_MS = 16


class OncePerFrame(QObject):
    """Does `work` when asked: at once when it last ran a frame ago or more, else once at the
    end of that frame, however many times it was asked meanwhile.

    For a view that redraws itself from the current state (the step detail of the selected
    row): a live run may change that state every few ms, and each redraw costs a layout and a
    paint, where the screen shows one state per frame.
    """

    def __init__(
        self, work: Callable[[], None], frame_ms: int = FRAME_MS, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._work = work
        self._frame_s = frame_ms / 1000
        self._last_run = -math.inf
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self.on_due)

    def request(self) -> None:
        if self._timer.isActive():
            return  # asked already: it runs at the frame's end, with the state then
        wait = self._last_run + self._frame_s - monotonic()
        if wait <= 0:
            self.on_due()
        else:
            self._timer.start(math.ceil(wait * 1000))

    def on_due(self) -> None:
        self._last_run = monotonic()
        self._work()
