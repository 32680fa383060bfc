"""Painters of the "where values diverge" overlay (:mod:`widgets.graph.errors`): each node with a value is
filled with its error colour (grey with a dashed outline for "no counterpart"), a diverging node carries its
relative error in a pill above its top-right corner, and the first diverging node a thick outline and a
badge above its top-left corner. While the overlay is on, the amber of "changed by this step" is set aside
(it would read as an error colour): such nodes without a value are drawn in their plain category colour."""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFontMetricsF, QPainter, QPen

from widgets.graph.adapter import CHANGED
from widgets.graph.errors import BINS, NO_COUNTERPART, ErrorMark, colour_index, colour_table, fill_colour, \
    first_colour, outline_colour
from widgets.graph.palette import GraphPalette
from widgets.graph.tiles import NODE_RADIUS, Rect

WHITE = QColor("#ffffff")
BLACK = QColor("#000000")


def _box(rect: Rect, pill: bool, grow: float = 0.0) -> tuple[QRectF, float]:
    x0, y0, w, h = rect
    r = QRectF(x0 - grow, y0 - grow, w + 2 * grow, h + 2 * grow)
    return r, (r.height() / 2.0 if pill else NODE_RADIUS + grow)


def paint_error_boxes(painter: QPainter, shown: list[int], marks: dict[int, ErrorMark], cats: list[int],
                      base_cats: list[int], rects: list[Rect], pills: list[bool], pal: GraphPalette) -> None:
    """Detail: the fills and outlines of the ``shown`` nodes that have a mark, and the plain fill of the
    changed ones that have none."""
    base = pal.colors["base"]
    painter.save()
    for i in shown:
        mark = marks.get(i)
        if mark is None:
            if cats[i] == CHANGED:
                box, radius = _box(rects[i], pills[i])
                painter.setBrush(pal.brushes[base_cats[i]])
                painter.setPen(pal.box_pens[base_cats[i]])
                painter.drawRoundedRect(box, radius, radius)
            continue
        box, radius = _box(rects[i], pills[i])
        painter.setBrush(fill_colour(mark, base))
        if mark.status == NO_COUNTERPART:
            painter.setPen(QPen(outline_colour(mark, base), 1.6, Qt.PenStyle.DashLine))
        else:
            painter.setPen(QPen(outline_colour(mark, base), 1.8))
        painter.drawRoundedRect(box, radius, radius)
    painter.restore()


def paint_error_labels(painter: QPainter, shown: list[int], marks: dict[int, ErrorMark], first: Optional[int],
                       rects: list[Rect], pills: list[bool], pal: GraphPalette, first_text: str) -> None:
    """Detail, above the texts: the relative error of each diverging node in a pill on its top-right corner
    (its outline colour, white text), and the first diverging node's thick outline and badge."""
    base = pal.colors["base"]
    painter.save()
    font = pal.sub_font
    painter.setFont(font)
    metrics = QFontMetricsF(font)
    th = metrics.height() + 2.0
    if first is not None and first in shown:
        box, radius = _box(rects[first], pills[first], 3.0)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(QPen(first_colour(base), 4.0))
        painter.drawRoundedRect(box, radius, radius)
    for i in shown:
        mark = marks.get(i)
        if mark is None or not mark.label:
            continue
        x0, y0, w, _h = rects[i]
        tw = metrics.horizontalAdvance(mark.label) + 10.0
        lift = 7.0 if i == first else 2.0  # clear of the first node's ring
        pill = QRectF(x0 + w - tw, y0 - th - lift, tw, th)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(outline_colour(mark, WHITE))
        painter.drawRoundedRect(pill, th / 2.0, th / 2.0)
        painter.setPen(QPen(WHITE))
        painter.drawText(pill, int(Qt.AlignmentFlag.AlignCenter), mark.label)
    if first is not None and first in shown:
        colour = first_colour(base)
        x0, y0, _w, _h = rects[first]
        bold = pal.title_font
        painter.setFont(bold)
        bw = QFontMetricsF(bold).horizontalAdvance(first_text) + 14.0
        bh = QFontMetricsF(bold).height() + 4.0
        badge = QRectF(x0 - 4.0, y0 - bh - 4.0, bw, bh)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour)
        painter.drawRoundedRect(badge, 4.0, 4.0)
        painter.setPen(QPen(WHITE if base.lightness() >= 128 else BLACK))
        painter.drawText(badge, int(Qt.AlignmentFlag.AlignCenter), first_text)
    painter.restore()


def group_rects(ids: list[int], marks: dict[int, ErrorMark], rects: list[Rect]) -> dict[int, list[QRectF]]:
    """The boxes of the marked ``ids`` by their :func:`colour_index` (what the overview paints)."""
    by_colour: dict[int, list[QRectF]] = {}
    for i in ids:
        by_colour.setdefault(colour_index(marks[i]), []).append(QRectF(*rects[i]))
    return by_colour


def paint_overview_errors(painter: QPainter, ids: list[int], marks: dict[int, ErrorMark], first: Optional[int],
                          rects: list[Rect], pal: GraphPalette,
                          grouped: Optional[dict[int, list[QRectF]]] = None) -> None:
    """Far out: each marked node filled in its colour (the outline colour of the scale, the grey fill for no
    counterpart; one ``drawRects`` per colour, the worst last), the first one ringed (three pixels at any
    zoom)."""
    base = pal.colors["base"]
    fills, outlines = colour_table(base.rgb())
    by_colour = grouped if grouped is not None else group_rects(ids, marks, rects)
    painter.save()
    painter.setPen(Qt.PenStyle.NoPen)
    for k in sorted(by_colour, key=lambda k: -1 if k == BINS else k):
        painter.setBrush(fills[k] if k == BINS else outlines[k])
        painter.drawRects(by_colour[k])
    if first is not None and first in marks:
        pen = QPen(first_colour(base), 3.0)
        pen.setCosmetic(True)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(QRectF(*rects[first]).adjusted(-2, -2, 2, 2))
    painter.restore()
