"""The minimap in the graph view's corner: the whole layout as a small image (painted off the GUI thread),
marks over it (the diverging nodes of the "where values diverge" overlay) and the viewport rectangle; a click
or drag centres the view there."""

from __future__ import annotations

from typing import Any, Optional

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter, QPen
from PySide6.QtWidgets import QGraphicsView, QWidget

from widgets.graph.palette import GraphPalette, blend
from widgets.graph.prepare import OVERVIEW_H, OVERVIEW_W


class GraphMinimap(QWidget):
    """A child of ``view``'s widget showing :meth:`set_image`'s image; ``wanted`` says whether the user wants
    it (off by default; the view shows it only when the graph does not fit)."""

    def __init__(self, view: QGraphicsView, palette: GraphPalette) -> None:
        super().__init__(view)
        self._view = view
        self._palette = palette
        self._image: Optional[QImage] = None
        self._scale = 1.0
        self._marks: list[tuple[tuple[float, float, float, float], QColor]] = []
        self.wanted = False  # off by default: it would cover nodes (View ▸ Show Overview turns it on)
        self.resize(OVERVIEW_W + 8, OVERVIEW_H + 8)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setVisible(False)

    def set_image(self, image: Optional[QImage], scale: float = 1.0) -> None:
        """The layout's image and its scale (image pixels per scene unit); None: no graph."""
        self._image = image
        self._scale = scale

    def set_marks(self, marks: list[tuple[tuple[float, float, float, float], QColor]]) -> None:
        """Boxes (scene ``x, y, w, h``) drawn over the image in their colours, at least 3 pixels wide."""
        self._marks = list(marks)
        self.update()

    def marks(self) -> list[tuple[tuple[float, float, float, float], QColor]]:
        """The marks drawn over the image."""
        return list(self._marks)

    def _geometry(self) -> tuple[Any, float, float, float]:
        img = self._image
        if img is None:
            return None, 1.0, 0.0, 0.0
        ox = (self.width() - img.width()) / 2.0
        oy = (self.height() - img.height()) / 2.0
        return img, self._scale, ox, oy

    def viewport_rect(self) -> QRectF:
        """The view's visible scene rectangle in minimap coordinates."""
        img, scale, ox, oy = self._geometry()
        if img is None:
            return QRectF()
        vis = self._view.mapToScene(self._view.viewport().rect()).boundingRect()
        return QRectF(ox + vis.left() * scale, oy + vis.top() * scale, vis.width() * scale, vis.height() * scale)

    def paintEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        """Background, border, the image and the viewport rectangle."""
        img, scale, ox, oy = self._geometry()
        painter = QPainter(self)
        try:
            c = self._palette.colors
            painter.fillRect(self.rect(), blend(c["base"], c["text"], 0.06))
            painter.setPen(QPen(c["border"], 1.0))
            painter.drawRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5))
            if img is None:
                return
            painter.drawImage(QPointF(ox, oy), img)
            painter.setPen(Qt.PenStyle.NoPen)
            for (x, y, w, h), colour in self._marks:
                painter.setBrush(colour)
                painter.drawRect(QRectF(ox + x * scale - 1, oy + y * scale - 1, max(3.0, w * scale), max(3.0, h * scale)))
            r = self.viewport_rect().intersected(QRectF(self.rect()).adjusted(1, 1, -1, -1))
            painter.setPen(QPen(c["selection"], 1.5))
            painter.setBrush(QColor(c["selection"].red(), c["selection"].green(), c["selection"].blue(), 40))
            painter.drawRect(r)
        finally:
            painter.end()

    def _move_to(self, pos: QPointF) -> None:
        img, scale, ox, oy = self._geometry()
        if img is None or scale <= 0:
            return
        self._view.centerOn(QPointF((pos.x() - ox) / scale, (pos.y() - oy) / scale))
        self.update()

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        """Centre the view on the point clicked."""
        self._move_to(event.position())
        event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        """Drag: follow the pointer."""
        if event.buttons() & Qt.MouseButton.LeftButton:
            self._move_to(event.position())
        event.accept()
