"""Painters of the node boxes (stubs included: pill-shaped boxes), their two text lines and the profile's
heat overlay."""

from __future__ import annotations

from typing import Callable, Container

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFont, QFontMetricsF, QPainter, QPen, QStaticText

from widgets.graph.adapter import CATEGORIES, CHANGED
from widgets.graph.palette import GraphPalette, heat_colour, heat_text_colour
from widgets.graph.prepare import Prepared
from widgets.graph.tiles import Rect, Tile

#: Below this view scale (or below the palette's ``sub_scale``, where it is not legible) the second text line
#: (shape·dtype) of a node is not drawn.
SUBTITLE_SCALE = 0.5

#: ``(which line, text, font) -> (prepared static text, its width)`` (the diagram item's cache).
StaticText = Callable[[int, str, QFont], tuple[QStaticText, float]]


def heat_label(share: float) -> str:
    """A share of the run time as the heat overlay writes it: ``12.3 %`` (``<0.1 %`` for crumbs)."""
    pct = 100.0 * share
    return "<0.1 %" if 0.0 < pct < 0.05 else f"{pct:.1f} %"


def paint_boxes(painter: QPainter, tiles: list[Tile], pal: GraphPalette) -> None:
    """Detail: the tiles' box paths, one brush and pen per category."""
    brushes = pal.brushes
    pens = pal.box_pens
    for c in range(len(CATEGORIES)):
        painter.setBrush(brushes[c])
        painter.setPen(pens[c])
        for t in tiles:
            path = t.boxes[c]
            if path is not None:
                painter.drawPath(path)


def paint_overview_boxes(painter: QPainter, tiles: list[Tile], pal: GraphPalette) -> None:
    """Far out: the coarse tiles' plain rectangles, no outline."""
    painter.setPen(Qt.PenStyle.NoPen)
    brushes = pal.overview_brushes
    for c in range(len(CATEGORIES)):
        painter.setBrush(brushes[c])
        for t in tiles:
            path = t.boxes[c]
            if path is not None:
                painter.drawPath(path)


def shown_nodes(tiles: list[Tile], rects: list[Rect], exposed: QRectF) -> list[int]:
    """Indices of the nodes of ``tiles`` whose box meets ``exposed``."""
    left, right, top, bottom = exposed.left(), exposed.right(), exposed.top(), exposed.bottom()
    shown: list[int] = []
    for t in tiles:
        for i in t.nodes:
            x0, y0, w, h = rects[i]
            if x0 <= right and x0 + w >= left and y0 <= bottom and y0 + h >= top:
                shown.append(i)
    return shown


def paint_texts(painter: QPainter, shown: list[int], p: Prepared, cats: list[int], lod: float,
                pal: GraphPalette, static: StaticText, strong: Container[int] = ()) -> None:
    """Titles of the ``shown`` nodes, and their shape·dtype lines (a collapsed group's op count, inputs and
    outputs) from ``SUBTITLE_SCALE`` (or the palette's ``sub_scale``) on; every line sits at a fixed offset from the box's top. The lines of
    changed nodes and of the nodes in ``strong`` (coloured fills) are in the full text colour."""
    node_h = pal.node_height
    painter.setPen(pal.text_pen)
    font = pal.title_font
    painter.setFont(font)
    rects = p.rects
    titles = p.titles
    draw = painter.drawStaticText
    for i in shown:
        x0, y0, w, h = rects[i]
        st, tw = static(0, titles[i], font)
        draw(QPointF(x0 + (w - tw) / 2.0, y0 + 5.0), st)
    if lod < max(SUBTITLE_SCALE, pal.sub_scale):
        return
    _paint_details(painter, shown, p, pal, static)
    font = pal.sub_font
    painter.setFont(font)
    sub_h = pal.sub_height
    subs = p.subs
    # shape·dtype lines: muted on plain boxes, full text colour on the accent fill of changed ones
    # (muted grey on the accent colour is below readable contrast, light and dark)
    for pen, want_changed in ((pal.muted_pen, False), (pal.text_pen, True)):
        painter.setPen(pen)
        for i in shown:
            text = subs[i]
            if not text or (cats[i] == CHANGED or i in strong) != want_changed:
                continue
            x0, y0, w, h = rects[i]
            st, tw = static(1, text, font)
            draw(QPointF(x0 + (w - tw) / 2.0, y0 + node_h - sub_h - 5.0), st)


def _paint_details(painter: QPainter, shown: list[int], p: Prepared, pal: GraphPalette, static: StaticText) -> None:
    """A collapsed group's input and output lines, left-aligned under its op count."""
    details = p.details
    if not details:
        return
    font = pal.sub_font
    painter.setFont(font)
    painter.setPen(pal.text_pen)
    top = pal.node_height - 5.0
    step = p.line_height
    for i in shown:
        lines = details.get(i)
        if not lines:
            continue
        x0, y0, _w, _h = p.rects[i]
        for k, line in enumerate(lines):
            st, _tw = static(2, line, font)
            painter.drawStaticText(QPointF(x0 + 10.0, y0 + top + k * step), st)


def paint_heat(painter: QPainter, ids: list[int], heat: dict[int, float], rects: list[Rect],
               pal: GraphPalette) -> None:
    """The profile's heat overlay in its own colour scale (:func:`heat_colour`, see the view's legend):
    an outline and a bar along the box's bottom edge (as long as the node's share is of the largest) in
    the scale's colour, and the share as ``12.3 %`` in a pill above the box's top-right corner. The box's
    fill stays what it is, so "changed by this step" (amber fill) and heat read together."""
    if not ids:
        return
    top = max(heat.values()) or 1.0
    painter.save()
    font = pal.sub_font
    painter.setFont(font)
    metrics = QFontMetricsF(font)
    for i in ids:
        share = heat[i]
        t = min(1.0, share / top)
        colour = heat_colour(t)
        x0, y0, w, h = rects[i]
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(QPen(colour, 3.0))
        painter.drawRoundedRect(QRectF(x0 - 1.5, y0 - 1.5, w + 3.0, h + 3.0), 7.0, 7.0)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour)
        painter.drawRect(QRectF(x0 + 4.0, y0 + h - 6.0, max(3.0, (w - 8.0) * t), 4.0))
        label = heat_label(share)
        tw = metrics.horizontalAdvance(label) + 8.0
        th = metrics.height() + 2.0
        pill = QRectF(x0 + w - tw - 2.0, y0 - th * 0.6, tw, th)
        painter.drawRoundedRect(pill, th / 2.0, th / 2.0)
        painter.setPen(QPen(heat_text_colour(t)))
        painter.drawText(pill, int(Qt.AlignmentFlag.AlignCenter), label)
    painter.restore()


def paint_overview_heat(painter: QPainter, ids: list[int], heat: dict[int, float], rects: list[Rect]) -> None:
    """Far out: each profiled node outlined in its heat colour (two pixels at any zoom), fills untouched."""
    if not ids:
        return
    top = max(heat.values()) or 1.0
    painter.save()
    painter.setBrush(Qt.BrushStyle.NoBrush)
    for i in sorted(ids, key=heat.__getitem__):  # the hottest last, on top
        pen = QPen(heat_colour(min(1.0, heat[i] / top)), 2.0)
        pen.setCosmetic(True)
        painter.setPen(pen)
        painter.drawRect(QRectF(*rects[i]))
    painter.restore()
