"""The approval dialog's picture: a magnified close-up of the target, the whole screen near."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRect, QRectF, QSize, Qt, Signal, Slot
from PySide6.QtGui import QColor, QImage, QPainter, QPaintEvent, QPen, QPixmap
from PySide6.QtWidgets import QToolButton, QVBoxLayout, QWidget

from desktop_agent.ui.widgets import Grounded, ScreenshotView, fit_rect

Box = tuple[int, int, int, int]

#: the close-up's narrowest width in screenshot px: a 16 px button shows at ~2x in the dialog
MIN_ZOOM_WIDTH = 360
#: the room left around the element in the close-up, in screenshot px
ZOOM_MARGIN = 80
#: the close-up's shape: the dialog's picture is about this wide for its height
ZOOM_ASPECT = 16 / 9
#: the field a text goes to (or the element acted on), outlined
OUTLINE_COLOR = QColor(255, 140, 0)


def zoom_region(size: QSize, target: tuple[int, int] | None, box: Box | None) -> Box | None:
    """The part of a screenshot of `size` the close-up shows: around the target point (else
    the element's box), wide enough for the whole element and some of what is around it;
    None when there is nothing to look closer at, or the part would be the whole screen."""
    if box is not None and (box[2] <= 0 or box[3] <= 0):
        box = None
    if target is None and box is None:
        return None
    if target is not None:
        cx, cy = target
    else:
        assert box is not None
        cx, cy = box[0] + box[2] // 2, box[1] + box[3] // 2
    width = float(MIN_ZOOM_WIDTH)
    if box is not None:
        width = max(width, box[2] + 2 * ZOOM_MARGIN, (box[3] + 2 * ZOOM_MARGIN) * ZOOM_ASPECT)
    height = width / ZOOM_ASPECT
    if width >= size.width() or height >= size.height():
        return None
    w, h = round(width), round(height)
    left = min(max(0, cx - w // 2), size.width() - w)
    top = min(max(0, cy - h // 2), size.height() - h)
    return left, top, w, h


class CloseUpView(ScreenshotView):
    """A ScreenshotView that can show only a region of its screenshot, magnified, with the
    target marked and an element's box outlined where they fall in it.

    Attributes:
        zoom: the region shown (screenshot px), or None for the whole screenshot.
        outline: the box outlined (screenshot px), or None.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.zoom: Box | None = None
        self.outline: Box | None = None
        self._region: QImage | None = None
        self._region_of: tuple[int, Box] | None = None
        self._magnified: QPixmap | None = None
        self._magnified_for: tuple[int, QSize, float] | None = None

    def set_view(self, zoom: Box | None, outline: Box | None) -> None:
        if (zoom, outline) != (self.zoom, self.outline):
            self.zoom, self.outline = zoom, outline
            self.update()

    def shown_image(self) -> QImage | None:
        """The image painted: the zoomed region (cut once per image and region), or all."""
        if self.image is None or self.zoom is None:
            return self.image
        key = (self.image.cacheKey(), self.zoom)
        if self._region is None or self._region_of != key:
            self._region = self.image.copy(QRect(*self.zoom))
            self._region_of = key
        return self._region

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        if self.image is None or self.zoom is None:
            super().paintEvent(event)
            self._paint_outline(self.image.size() if self.image else None, (0, 0))
            return
        whole, target, grounded = self.image, self.target, self.grounded
        left, top = self.zoom[0], self.zoom[1]
        # the base class paints `image` with `target`: for one paint, the region and the
        # point moved into it (a point outside the region is not marked)
        self.image = self.shown_image()
        self.target = _inside(target, self.zoom)
        self.grounded = None
        try:
            super().paintEvent(event)
        finally:
            self.image, self.target, self.grounded = whole, target, grounded
        self._paint_outline(QSize(self.zoom[2], self.zoom[3]), (left, top))

    def _scaled_image(self, bounds: QRectF) -> QPixmap:
        if self.zoom is None or self.image is None:
            return super()._scaled_image(bounds)
        ratio = self.devicePixelRatioF()
        key = (self.image.cacheKey(), self.size(), ratio)
        if self._magnified is None or self._magnified_for != key:
            # magnified: whole pixels, sharp (a smooth scale blurs the edges one looks at, and
            # is most of the dialog's opening time)
            size = fit_rect(self.image.size(), bounds).size() * ratio
            scaled = self.image.scaled(
                size.toSize(),
                Qt.AspectRatioMode.IgnoreAspectRatio,
                Qt.TransformationMode.FastTransformation,
            )
            self._magnified = QPixmap.fromImage(scaled)
            self._magnified.setDevicePixelRatio(ratio)
            self._magnified_for = key
        return self._magnified

    def _paint_outline(self, size: QSize | None, origin: tuple[int, int]) -> None:
        if size is None or self.outline is None:
            return
        drawn = fit_rect(size, QRectF(self.rect()))
        left, top, width, height = self.outline
        sx, sy = drawn.width() / size.width(), drawn.height() / size.height()
        rect = QRectF(
            QPointF(drawn.left() + (left - origin[0]) * sx, drawn.top() + (top - origin[1]) * sy),
            QSize(round(width * sx), round(height * sy)).toSizeF(),
        )
        painter = QPainter(self)
        try:
            painter.setClipRect(drawn)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setPen(QPen(OUTLINE_COLOR, 3.0))
            painter.drawRect(rect.adjusted(-2, -2, 2, 2))
        finally:
            painter.end()


def _inside(point: tuple[int, int] | None, region: Box) -> tuple[int, int] | None:
    if point is None:
        return None
    x, y = point[0] - region[0], point[1] - region[1]
    return (x, y) if 0 <= x < region[2] and 0 <= y < region[3] else None


class CloseUp(QWidget):
    """The close-up of a call's target and a button that shows the whole screen instead.

    Signals:
        whole_screen_toggled(bool): the button was pressed (True: the whole screen shows).

    Attributes:
        view: the picture.
        whole_button: shows the whole screen (checked) or the close-up; hidden when there is
            no close-up to show.
    """

    whole_screen_toggled = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = CloseUpView(self)
        self.whole_button = QToolButton(self)
        self.whole_button.setText(self.tr("Whole screen"))
        self.whole_button.setCheckable(True)
        self.whole_button.setToolTip(self.tr("Show the whole screen instead of the close-up"))
        self.whole_button.hide()
        self._target: tuple[int, int] | None = None
        self._box: Box | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.whole_button, 0, Qt.AlignmentFlag.AlignLeft)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self.whole_button.toggled.connect(self.on_whole_toggled)

    def set_image(
        self,
        image: QImage | None,
        target: tuple[int, int] | None = None,
        box: Box | None = None,
        grounded: Grounded | None = None,
    ) -> None:
        """Show `image` with `target` marked and `box` (what the call acts on) outlined,
        close up unless the whole screen was asked for."""
        self._target, self._box = target, box
        self.view.set_image(image, target, grounded)
        self._show()

    @Slot(bool)
    def on_whole_toggled(self, whole: bool) -> None:
        self._show()
        self.whole_screen_toggled.emit(whole)

    def _show(self) -> None:
        image = self.view.image
        zoom = None if image is None else zoom_region(image.size(), self._target, self._box)
        self.whole_button.setVisible(zoom is not None)
        shown = None if self.whole_button.isChecked() else zoom
        self.view.set_view(shown, self._box)
        whole = self.whole_button.isChecked()
        self.whole_button.setText(self.tr("Close-up") if whole else self.tr("Whole screen"))
