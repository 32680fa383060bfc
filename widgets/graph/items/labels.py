"""Painter of the group labels far out: names of collapsed groups and expanded frames in screen-size text."""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFont, QFontMetricsF, QPainter, QTransform

from widgets.graph.adapter import GROUP
from widgets.graph.palette import GraphPalette
from widgets.graph.prepare import Prepared
from widgets.graph.tiles import Tile

DeviceBox = tuple[float, float, float, float]
#: Most labels painted at once, and how many recent ones each new label is tested against for overlap.
MAX_LABELS = 300
OVERLAP_WINDOW = 40
#: A group's name is not written in a box shorter than this many pixels (it could not be read).
MIN_LABEL_PX = 7.0


def _to_device(world: QTransform) -> Callable[[float, float, float, float], DeviceBox]:
    m11, m12, m21, m22, dx, dy = world.m11(), world.m12(), world.m21(), world.m22(), world.dx(), world.dy()
    if m12 or m21:  # rotated or sheared (the view never does this): Qt maps the rectangles
        def mapped(x: float, y: float, w: float, h: float) -> DeviceBox:
            r = world.mapRect(QRectF(x, y, w, h))
            return r.x(), r.y(), r.width(), r.height()
        return mapped

    def scaled(x: float, y: float, w: float, h: float) -> DeviceBox:
        return m11 * x + dx, m22 * y + dy, m11 * w, m22 * h
    return scaled


def _label_items(painter: QPainter, exposed: QRectF, p: Prepared, tiles: list[Tile],
                 ) -> list[tuple[DeviceBox, str, bool]]:
    """Device boxes and texts of the collapsed groups of ``tiles`` (``False``: written inside the box) and
    of the nested frames that meet ``exposed`` (``True``: written beside the frame's top left corner)."""
    to_device = _to_device(painter.worldTransform())
    items: list[tuple[DeviceBox, str, bool]] = []
    base_cats, rects, titles = p.base_cats, p.rects, p.titles
    for t in tiles:
        for i in t.nodes:
            if base_cats[i] == GROUP:
                items.append((to_device(*rects[i]), titles[i], False))
    for _path, rect, label, _gid, kind in p.frames:
        if kind == "nested" and rect.intersects(exposed):
            items.append((to_device(rect.x(), rect.y(), rect.width(), rect.height()), label, True))
    return items


def _scaled_font(pal: GraphPalette, px: float) -> tuple[QFont, QFontMetricsF]:
    """The label font at ``px`` pixels (cached per whole pixel)."""
    key = int(px)
    hit = pal.label_fonts.get(key)
    if hit is None:
        font = QFont(pal.label_font)
        font.setPixelSize(max(1, key))
        hit = pal.label_fonts[key] = (font, QFontMetricsF(font))
    return hit


def _width(pal: GraphPalette, widths: dict[tuple[int, str], float], size: float, label: str) -> float:
    """The width of ``label`` in the label font at ``size`` pixels (cached)."""
    key = (int(size), label)
    tw = widths.get(key)
    if tw is None:
        tw = widths[key] = _scaled_font(pal, size)[1].horizontalAdvance(label)
    return tw


def paint_group_labels(painter: QPainter, exposed: QRectF, p: Prepared, tiles: list[Tile],
                       pal: GraphPalette) -> None:
    """Far out: names of collapsed groups inside their boxes, scaled to the box (never larger than the
    box, never the normal label size, none when the box is too small to read), and names of expanded
    frames beside their top left corner; a label that would overlap an earlier one is skipped, at most
    a few hundred per paint.

    Geometry and overlap tests are plain Python arithmetic and label widths are cached: every Qt call
    from Python gives up the GIL and waits to get it back, which, while a worker thread runs Python,
    made this paint of a 50k-node model's ~800 groups take 100-170 ms instead of ~10."""
    normal = pal.label_metrics.height()
    widths = pal.label_widths
    items = _label_items(painter, exposed, p, tiles)
    if not items:
        return
    painter.save()
    painter.resetTransform()
    painter.setPen(pal.text_pen)
    label_bg = pal.label_bg
    placed: list[DeviceBox] = []
    drawn = 0
    for (x, y, w, h), label, beside in items:
        px = min(normal, 0.8 * h) if not beside else normal
        if px < MIN_LABEL_PX:
            continue
        room = w - 6.0 if not beside else max(40.0, x - 4.0)
        size = px * 0.8
        tw = _width(pal, widths, size, label)
        if tw > room and not beside:  # smaller to fit the box's width, as long as it can be read
            size = max(MIN_LABEL_PX * 0.8, size * room / tw)
            tw = _width(pal, widths, size, label)
        font, fm = _scaled_font(pal, size)
        line_h = fm.height()
        text = label
        if tw > room:
            text = fm.elidedText(label, Qt.TextElideMode.ElideLeft, room)
            if not text:
                continue
            tw = fm.horizontalAdvance(text)
        if beside:
            bx, by = x - tw - 6.0, y
        else:
            bx, by = x + w / 2.0 - tw / 2.0, y + h / 2.0 - line_h / 2.0
        bx1, by1 = bx + tw, by + line_h
        if any(bx < ox1 and ox0 < bx1 and by < oy1 and oy0 < by1 for ox0, oy0, ox1, oy1 in placed[-OVERLAP_WINDOW:]):
            continue
        placed.append((bx, by, bx1, by1))
        painter.setFont(font)
        painter.fillRect(QRectF(bx - 2.0, by, tw + 4.0, line_h), label_bg)
        painter.drawText(QRectF(bx, by, tw, line_h), Qt.AlignmentFlag.AlignCenter, text)
        drawn += 1
        if drawn >= MAX_LABELS:
            break
    painter.restore()
