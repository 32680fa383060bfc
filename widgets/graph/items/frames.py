"""Painter of the frames around dataflow blocks and expanded groups (fill, dashed outline, title)."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QPainter, QPen

from widgets.graph.palette import GraphPalette
from widgets.graph.tiles import FramePaint


def _arc_start(is_left: bool, is_top: bool) -> int:
    if is_left and is_top:
        return 90 * 16
    if is_top:
        return 0
    if is_left:
        return 180 * 16
    return 270 * 16


def _paint_long_outline(painter: QPainter, pen: QPen, rect: QRectF, exposed: QRectF) -> None:
    """The dashed outline of a large frame: only the visible pieces, dash phase anchored to the frame (so
    it does not crawl while panning); a dashed 190,000-unit outline would otherwise be dashed whole."""
    period = 6.0 * pen.widthF()
    top, bottom, left, right = exposed.top(), exposed.bottom(), exposed.left(), exposed.right()
    y0 = rect.top() + 10.0
    y1 = rect.bottom() - 10.0
    ys = max(y0, y0 + ((top - y0) // period) * period)
    ye = min(y1, bottom + period)
    for x in (rect.left(), rect.right()):
        if left - 2 <= x <= right + 2 and ys < ye:
            pen.setDashOffset((ys - y0) / pen.widthF())
            painter.setPen(pen)
            painter.drawLine(QPointF(x, ys), QPointF(x, ye))
    x0 = rect.left() + 10.0
    x1 = rect.right() - 10.0
    xs = max(x0, x0 + ((left - x0) // period) * period)
    xe = min(x1, right + period)
    for y in (rect.top(), rect.bottom()):
        if top - 2 <= y <= bottom + 2 and xs < xe:
            pen.setDashOffset((xs - x0) / pen.widthF())
            painter.setPen(pen)
            painter.drawLine(QPointF(xs, y), QPointF(xe, y))
    pen.setDashOffset(0.0)
    painter.setPen(pen)
    for cx, cy in ((rect.left(), rect.top()), (rect.right() - 20, rect.top()),
                   (rect.left(), rect.bottom() - 20), (rect.right() - 20, rect.bottom() - 20)):
        if cx <= right and cx + 20 >= left and cy <= bottom and cy + 20 >= top:
            painter.drawArc(QRectF(cx, cy, 20.0, 20.0), _arc_start(cx == rect.left(), cy == rect.top()), 90 * 16)


def paint_frames(painter: QPainter, frames: list[FramePaint], exposed: QRectF, pal: GraphPalette) -> None:
    """Fill, outline and title of the frames that meet ``exposed`` (outer frames first)."""
    if not frames:
        return
    painter.setBrush(pal.frame_brush)
    painter.setPen(Qt.PenStyle.NoPen)
    for rect, *_ in frames:
        if rect.intersects(exposed):
            painter.drawRect(rect.intersected(exposed))
    pen = QPen(pal.frame_pen)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.setPen(pen)
    top, bottom = exposed.top(), exposed.bottom()
    for rect, label, *_ in frames:
        if not rect.intersects(exposed):
            continue
        if rect.height() < 4000 and rect.width() < 4000:
            # no path kept per frame: a path Qt has drawn keeps a ~3 kB converted copy (9,600 frames of the
            # 800-layer decoder expanded whole: ~28 MB)
            painter.drawRoundedRect(rect, 10.0, 10.0)
        else:
            _paint_long_outline(painter, pen, rect, exposed)
        if top - 20 <= rect.top() <= bottom + 2:
            painter.setPen(pal.colors["muted"])
            painter.drawText(QPointF(rect.left() + 10.0, rect.top() + 15.0), label)
            painter.setPen(pen)
