"""Small shared Qt helpers: a screenshot view with the acted-on point marked."""

from __future__ import annotations

from typing import NamedTuple

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPaintEvent, QPen, QPixmap
from PySide6.QtWidgets import QSizePolicy, QSplitter, QVBoxLayout, QWidget

#: the marker's colour: red with a white halo reads on light and dark screens alike
MARKER_COLOR = QColor(230, 30, 30)
_HALO_COLOR = QColor(255, 255, 255, 220)
#: a grounding's first guess (grey ring) and the crop it looked at (dashed blue frame)
FIRST_POINT_COLOR = QColor(120, 120, 120)
_CROP_COLOR = QColor(40, 110, 230)


def split(
    parent: QWidget,
    orientation: Qt.Orientation,
    *parts: QWidget,
    stretch: tuple[tuple[int, int], ...] = (),
) -> QSplitter:
    """A splitter of `parts`; `stretch`: (index, factor) pairs."""
    made = QSplitter(orientation, parent)
    for part in parts:
        made.addWidget(part)
    for index, factor in stretch:
        made.setStretchFactor(index, factor)
    return made


def column(parent: QWidget, *parts: QWidget, stretch_last: bool = False) -> QWidget:
    """`parts` one under the other, with no margins; `stretch_last`: room below them."""
    made = QWidget(parent)
    layout = QVBoxLayout(made)
    layout.setContentsMargins(0, 0, 0, 0)
    for part in parts:
        layout.addWidget(part)
    if stretch_last:
        layout.addStretch(1)
    return made


def fit_rect(image_size: QSize, bounds: QRectF) -> QRectF:
    """The largest rectangle of the image's aspect ratio centred in `bounds`."""
    if image_size.isEmpty() or bounds.isEmpty():
        return QRectF()
    scale = min(bounds.width() / image_size.width(), bounds.height() / image_size.height())
    width, height = image_size.width() * scale, image_size.height() * scale
    return QRectF(
        bounds.left() + (bounds.width() - width) / 2,
        bounds.top() + (bounds.height() - height) / 2,
        width,
        height,
    )


def map_target(image_size: QSize, drawn: QRectF, target: tuple[int, int]) -> QPointF:
    """A screenshot pixel mapped into the rectangle the image is drawn in."""
    x, y = target
    return QPointF(
        drawn.left() + (x + 0.5) * drawn.width() / image_size.width(),
        drawn.top() + (y + 0.5) * drawn.height() / image_size.height(),
    )


def draw_target(painter: QPainter, center: QPointF, radius: float = 12.0) -> None:
    """A ring with a cross-hair at `center`, outlined so it shows on any background."""
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    for color, width in ((_HALO_COLOR, 5.0), (MARKER_COLOR, 2.5)):
        painter.setPen(QPen(color, width))
        painter.drawEllipse(center, radius, radius)
        arm = radius * 1.6
        painter.drawLine(QPointF(center.x() - arm, center.y()), QPointF(center.x() - 3, center.y()))
        painter.drawLine(QPointF(center.x() + 3, center.y()), QPointF(center.x() + arm, center.y()))
        painter.drawLine(QPointF(center.x(), center.y() - arm), QPointF(center.x(), center.y() - 3))
        painter.drawLine(QPointF(center.x(), center.y() + 3), QPointF(center.x(), center.y() + arm))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(MARKER_COLOR)
    painter.drawEllipse(center, 2.0, 2.0)
    painter.restore()


class Grounded(NamedTuple):
    """What a grounding adds to a screenshot: the model's first point and the crop it looked
    at (screenshot pixels; either may be unknown). A named tuple, like the timeline's row
    texts: the dataclasses module is not needed before the window's first paint."""

    first: tuple[int, int] | None = None
    crop: tuple[int, int, int, int] | None = None


def draw_grounding(painter: QPainter, image_size: QSize, drawn: QRectF, grounded: Grounded) -> None:
    """The crop as a dashed frame and the first point as a small grey ring."""
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    if grounded.crop is not None:
        left, top, crop_w, crop_h = grounded.crop
        corner = map_target(image_size, drawn, (left, top))
        end = map_target(image_size, drawn, (left + crop_w, top + crop_h))
        pen = QPen(_CROP_COLOR, 2.0, Qt.PenStyle.DashLine)
        painter.setPen(pen)
        # map_target aims at pixel centres: the frame is drawn on the pixels' edges
        half_x = drawn.width() / image_size.width() / 2
        half_y = drawn.height() / image_size.height() / 2
        painter.drawRect(
            QRectF(
                QPointF(corner.x() - half_x, corner.y() - half_y),
                QPointF(end.x() - half_x, end.y() - half_y),
            )
        )
    if grounded.first is not None:
        center = map_target(image_size, drawn, grounded.first)
        for color, pen_width in ((_HALO_COLOR, 4.0), (FIRST_POINT_COLOR, 2.0)):
            painter.setPen(QPen(color, pen_width))
            painter.drawEllipse(center, 7.0, 7.0)
    painter.restore()


def paint_screenshot(
    painter: QPainter,
    bounds: QRectF,
    image: QImage,
    target: tuple[int, int] | None,
    grounded: Grounded | None = None,
    *,
    scaled: QPixmap | None = None,
) -> QRectF:
    """Paint `image` scaled to fit `bounds` with `target` marked (and, after a grounding, its
    crop and first point); the rectangle it was drawn in. `scaled`: the image already scaled
    to that rectangle (`scaled_to_fit`), drawn as it is."""
    drawn = fit_rect(image.size(), bounds)
    if scaled is not None:
        painter.drawPixmap(drawn.topLeft(), scaled)
    else:
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        painter.drawImage(drawn, image)
        painter.restore()
    if grounded is not None:
        draw_grounding(painter, image.size(), drawn, grounded)
    if target is not None:
        draw_target(painter, map_target(image.size(), drawn, target))
    return drawn


def scaled_to_fit(image: QImage, bounds: QRectF, pixel_ratio: float = 1.0) -> QPixmap:
    """`image` smoothly scaled to the rectangle `paint_screenshot` draws it in within `bounds`,
    at the screen's pixel ratio."""
    size = fit_rect(image.size(), bounds).size() * pixel_ratio
    pixmap = QPixmap.fromImage(
        image.scaled(
            size.toSize(),
            Qt.AspectRatioMode.IgnoreAspectRatio,
            Qt.TransformationMode.SmoothTransformation,
        )
    )
    pixmap.setDevicePixelRatio(pixel_ratio)
    return pixmap


def render_marked(
    image: QImage,
    target: tuple[int, int] | None,
    size: QSize,
    grounded: Grounded | None = None,
) -> QImage:
    """`image` scaled to fit `size` with `target` marked (thumbnails, exports, tests)."""
    out = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
    out.fill(Qt.GlobalColor.transparent)
    painter = QPainter(out)
    try:
        bounds = QRectF(0, 0, size.width(), size.height())
        paint_screenshot(painter, bounds, image, target, grounded)
    finally:
        painter.end()
    return out


class ScreenshotView(QWidget):
    """A screenshot scaled to fit the widget, aspect kept, with the acted-on point marked.

    Used by the approval dialog and the step detail; both have the image read off the GUI
    thread (ImageLoader) and hand it over with `set_image`. The image is scaled once per image
    and size, not on every paint (a smooth scale of a screenshot is 1-2 ms, and the step
    detail repaints with every step of a live run).

    Attributes:
        image: the screenshot shown, or None (then `placeholder` is drawn instead).
        target: the marked point in screenshot pixels, or None.
        placeholder: the text shown when there is no screenshot.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.image: QImage | None = None
        self.target: tuple[int, int] | None = None
        self.grounded: Grounded | None = None
        self.placeholder = self.tr("No screenshot")
        self._scaled: QPixmap | None = None
        self._scaled_for: tuple[int, QSize, float] | None = None  # image, widget size, ratio
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setAccessibleName(self.tr("Screenshot"))

    def set_image(
        self,
        image: QImage | None,
        target: tuple[int, int] | None = None,
        grounded: Grounded | None = None,
    ) -> None:
        # the step detail shows each step of a turn on the turn's one screenshot: the same
        # image object again (the loader's) is no reason to paint (`is`: QImage's == compares
        # every pixel)
        same = image is not None and image is self.image
        if same and target == self.target and grounded == self.grounded:
            return
        self.image = image
        self.target = target
        self.grounded = grounded
        if image is None:
            self._scaled = self._scaled_for = None
        description = (
            self.tr("screenshot with the target at {x}, {y}").format(x=target[0], y=target[1])
            if image is not None and target is not None
            else (self.tr("screenshot") if image is not None else self.placeholder)
        )
        if image is not None and grounded is not None and grounded.first is not None:
            first = grounded.first
            description += self.tr(", first aimed at {x}, {y}").format(x=first[0], y=first[1])
        self.setAccessibleDescription(description)
        self.update()

    def image_rect(self) -> QRectF:
        """Where the image is drawn, in widget coordinates (empty without an image)."""
        if self.image is None:
            return QRectF()
        return fit_rect(self.image.size(), QRectF(self.rect()))

    def target_in_widget(self) -> QPointF | None:
        if self.image is None or self.target is None:
            return None
        return map_target(self.image.size(), self.image_rect(), self.target)

    def _scaled_image(self, bounds: QRectF) -> QPixmap:
        assert self.image is not None
        ratio = self.devicePixelRatioF()
        key = (self.image.cacheKey(), self.size(), ratio)
        if self._scaled is None or self._scaled_for != key:
            self._scaled = scaled_to_fit(self.image, bounds, ratio)
            self._scaled_for = key
        return self._scaled

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(480, 270)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(160, 90)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        painter = QPainter(self)
        try:
            if self.image is None:
                painter.setPen(self.palette().placeholderText().color())
                painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self.placeholder)
            else:
                bounds = QRectF(self.rect())
                paint_screenshot(
                    painter,
                    bounds,
                    self.image,
                    self.target,
                    self.grounded,
                    scaled=self._scaled_image(bounds),
                )
        finally:
            painter.end()
