"""The app's icons: one per step and run status (painted, cached) and the application icon."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor

if TYPE_CHECKING:
    from PySide6.QtGui import QIcon, QPainter

# The drawing classes (QIcon, QPainter, QPen, QPixmap, QPolygonF, QPointF, QRectF) are imported
# where an icon is first drawn, each status's once (the icons are cached): PySide6 makes a
# class's enums when it is first imported, and the window's first frame shows no icon (its
# history and timeline are empty; the window's icon is set after the paint).


@cache
def resources() -> Path:
    """`desktop_agent.resources`: package data where installed (wheel, bundle, .deb), the
    repository's top-level resources/ in a checkout whose install predates the mapping (the
    app falls back to a painted icon if they are missing). Looked up when first needed: the
    icon is set after the window's first paint."""
    spec = importlib.util.find_spec("desktop_agent.resources")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(__file__).resolve().parents[2] / "resources"


GREEN = QColor(40, 160, 70)
BLUE = QColor(40, 110, 210)
AMBER = QColor(225, 160, 20)
RED = QColor(210, 45, 45)
ORANGE = QColor(230, 110, 20)
GREY = QColor(130, 130, 130)
PURPLE = QColor(130, 80, 170)

#: status value → (colour, glyph); step and run statuses share the table
_LOOKS: dict[str, tuple[QColor, str]] = {
    # step statuses
    "running": (BLUE, "dot"),
    "ok": (GREEN, "check"),
    "failed": (RED, "cross"),
    "denied": (ORANGE, "bar"),
    "skipped": (GREY, "dash"),
    # run statuses
    "queued": (GREY, "ring"),
    "paused": (AMBER, "pause"),
    "completed": (GREEN, "check"),
    "stopped": (GREY, "square"),
    "interrupted": (PURPLE, "bang"),
}


def status_color(status: str) -> QColor:
    return QColor(_LOOKS.get(status, (GREY, ""))[0])


@cache
def status_icon(status: str, size: int = 16) -> QIcon:
    """A round icon for a step or run status (running, ok, failed, denied, completed, ...)."""
    from PySide6.QtGui import QIcon, QPainter, QPixmap

    color, glyph = _LOOKS.get(status, (GREY, "ring"))
    scale = 4  # paint large, let Qt scale down smoothly
    side = size * scale
    pixmap = QPixmap(side, side)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        _paint(painter, side, color, glyph)
    finally:
        painter.end()
    return QIcon(pixmap.scaled(size, size, mode=Qt.TransformationMode.SmoothTransformation))


def _paint(painter: QPainter, side: int, color: QColor, glyph: str) -> None:
    from PySide6.QtCore import QPointF, QRectF
    from PySide6.QtGui import QPen, QPolygonF

    s = side / 64
    margin = 4 * s
    circle = QRectF(margin, margin, side - 2 * margin, side - 2 * margin)
    if glyph == "ring":
        painter.setPen(QPen(color, 6 * s))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawEllipse(circle.adjusted(3 * s, 3 * s, -3 * s, -3 * s))
        return
    painter.setPen(QPen(color.darker(130), 2 * s))
    painter.setBrush(color)
    painter.drawEllipse(circle)
    white = QPen(Qt.GlobalColor.white, 7 * s)
    white.setCapStyle(Qt.PenCapStyle.RoundCap)
    white.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    painter.setPen(white)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    if glyph == "check":
        painter.drawPolyline(
            QPolygonF([QPointF(19 * s, 33 * s), QPointF(28 * s, 42 * s), QPointF(45 * s, 23 * s)])
        )
    elif glyph == "cross":
        painter.drawLine(QPointF(22 * s, 22 * s), QPointF(42 * s, 42 * s))
        painter.drawLine(QPointF(42 * s, 22 * s), QPointF(22 * s, 42 * s))
    elif glyph == "dash":
        painter.drawLine(QPointF(21 * s, 32 * s), QPointF(43 * s, 32 * s))
    elif glyph == "bar":
        painter.drawLine(QPointF(20 * s, 32 * s), QPointF(44 * s, 32 * s))
        painter.drawEllipse(QPointF(32 * s, 32 * s), 15 * s, 15 * s)
    elif glyph == "pause":
        painter.drawLine(QPointF(26 * s, 21 * s), QPointF(26 * s, 43 * s))
        painter.drawLine(QPointF(38 * s, 21 * s), QPointF(38 * s, 43 * s))
    elif glyph == "square":
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(Qt.GlobalColor.white)
        painter.drawRoundedRect(QRectF(23 * s, 23 * s, 18 * s, 18 * s), 2 * s, 2 * s)
    elif glyph == "bang":
        painter.drawLine(QPointF(32 * s, 19 * s), QPointF(32 * s, 35 * s))
        painter.drawPoint(QPointF(32 * s, 45 * s))
    else:  # "dot"
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(Qt.GlobalColor.white)
        painter.drawEllipse(QPointF(32 * s, 32 * s), 9 * s, 9 * s)


@cache
def app_icon() -> QIcon:
    """The application's icon: resources/icons/desktop-agent.svg, else a painted one."""
    from PySide6.QtGui import QIcon

    svg = resources() / "icons" / "desktop-agent.svg"
    if svg.is_file():
        icon = QIcon(str(svg))
        if not icon.isNull():
            return icon
    return status_icon("running", 64)
