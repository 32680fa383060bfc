"""Painter of the group labels far out: names of collapsed groups and expanded frames in screen-size text."""

from __future__ import annotations

from typing import Callable, Optional

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


def _label_items(world: QTransform, exposed: QRectF, p: Prepared, tiles: list[Tile],
                 ) -> list[tuple[DeviceBox, str, bool]]:
    """Device boxes and texts of the collapsed groups of ``tiles`` (``False``: written inside the box) and
    of the nested frames that meet ``exposed`` (``True``: written beside the frame's top left corner)."""
    to_device = _to_device(world)
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


def _inside_size(pal: GraphPalette, widths: dict[tuple[int, str], float], box: DeviceBox, label: str,
                 normal: float) -> float:
    """The largest label size (pixels) at which ``label`` fits inside ``box`` (at most the normal size)."""
    _x, _y, w, h = box
    size = min(normal, 0.8 * h) * 0.8
    if size < MIN_LABEL_PX * 0.8 or w <= 6.0:
        return size if w > 6.0 else 0.0  # too small to read inside whatever the width: nothing to measure
    tw = _width(pal, widths, size, label)
    if tw > w - 6.0 > 0.0:
        size = size * (w - 6.0) / tw
    return size if w > 6.0 else 0.0


def _fit(pal: GraphPalette, widths: dict[tuple[int, str], float], box: DeviceBox, label: str, beside: bool,
         normal: float, inside: Optional[float]) -> Optional[tuple[QFont, str, float, float, float, float]]:
    """Font, text, width, line height and top-left corner of one label: a group's name inside its box at
    size ``inside`` (one size for all, scaled down to the boxes' heights and widths) when that is readable,
    else beside the box on its right (a column of layers far out); a frame's name beside its top left corner."""
    x, y, w, h = box
    lo = MIN_LABEL_PX * 0.8
    if not beside:
        if inside is not None and inside >= lo:
            size = min(inside, _inside_size(pal, widths, box, label, normal))
            font, fm = _scaled_font(pal, size)
            tw = _width(pal, widths, size, label)
            return font, label, tw, fm.height(), x + w / 2.0 - tw / 2.0, y + h / 2.0 - fm.height() / 2.0
        size = min(normal * 0.8, max(lo, 1.1 * h))
        font, fm = _scaled_font(pal, size)
        return font, label, _width(pal, widths, size, label), fm.height(), x + w + 6.0, y + h / 2.0 - fm.height() / 2.0
    size = normal * 0.8
    font, fm = _scaled_font(pal, size)
    text, tw = label, _width(pal, widths, size, label)
    if tw > x - 8.0:  # no room left of the frame: no name rather than a clipped one
        return None
    return font, text, tw, fm.height(), x - tw - 6.0, y


def place_labels(world: QTransform, exposed: QRectF, p: Prepared, tiles: list[Tile], pal: GraphPalette,
                 ) -> list[tuple[QRectF, str, QFont]]:
    """Far out: where the names of collapsed groups and expanded frames go (device rectangles), in paint
    order: each group's name inside its box, scaled to the box (never larger than it, never above the normal
    label size; beside it when too small to read inside), each frame's name beside its top left corner
    (:func:`_fit`); a label that would overlap an earlier one is left out, at most ``MAX_LABELS``.

    Geometry and overlap tests are plain Python arithmetic and label widths are cached: every Qt call
    from Python gives up the GIL and waits to get it back, which, while a worker thread runs Python,
    made this paint of a 50k-node model's ~800 groups take 100-170 ms instead of ~10."""
    normal = pal.label_metrics.height()
    widths = pal.label_widths
    placed: list[DeviceBox] = []
    out: list[tuple[QRectF, str, QFont]] = []
    items = _label_items(world, exposed, p, tiles)
    sizes = [_inside_size(pal, widths, box, label, normal) for box, label, beside in items if not beside]
    inside = min(sizes) if sizes else None  # one size for every group's name: they read as one column
    for box, label, beside in items:
        fitted = _fit(pal, widths, box, label, beside, normal, inside)
        if fitted is None:
            continue
        font, text, tw, line_h, bx, by = fitted
        bx1, by1 = bx + tw, by + line_h
        if any(bx < ox1 and ox0 < bx1 and by < oy1 and oy0 < by1 for ox0, oy0, ox1, oy1 in placed[-OVERLAP_WINDOW:]):
            continue
        placed.append((bx, by, bx1, by1))
        out.append((QRectF(bx, by, tw, line_h), text, font))
        if len(out) >= MAX_LABELS:
            break
    return out


def paint_group_labels(painter: QPainter, exposed: QRectF, p: Prepared, tiles: list[Tile],
                       pal: GraphPalette) -> None:
    """Far out: the labels of :func:`place_labels`, in screen-size text on a background."""
    labels = place_labels(painter.worldTransform(), exposed, p, tiles, pal)
    if not labels:
        return
    painter.save()
    painter.resetTransform()
    painter.setPen(pal.text_pen)
    label_bg = pal.label_bg
    for rect, text, font in labels:
        painter.setFont(font)
        painter.fillRect(rect.adjusted(-2.0, 0.0, 2.0, 0.0), label_bg)
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
    painter.restore()
