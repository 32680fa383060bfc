"""Painter of the labels written in screen-size text where the diagram's own text would be too small to read:
names of collapsed groups, of the other nodes and of expanded frames (level of detail, as Model Explorer
does: a simplified box with a legible name, never an empty box)."""

from __future__ import annotations

from typing import Callable, Optional

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFont, QFontMetricsF, QPainter, QStaticText, QTransform

from widgets.graph.adapter import GROUP
from widgets.graph.palette import NODE_LABEL_PX, READABLE_PX, GraphPalette
from widgets.graph.prepare import Prepared
from widgets.graph.tiles import Tile

DeviceBox = tuple[float, float, float, float]
#: Most labels painted at once, and how many recent ones each new label is tested against for overlap.
MAX_LABELS = 300
OVERLAP_WINDOW = 40
#: A group's name is written inside its box only when the box is at least this many pixels tall, and never
#: smaller than 0.8 of it (``READABLE_PX``): below that it could not be read.
MIN_LABEL_PX = READABLE_PX / 0.8
#: With more nodes than this on screen only groups and frames are named (a far-out view of a huge graph).
MAX_NODE_LABELS = 800
#: Label kinds: a collapsed group (inside its box, one size for all), another node, an expanded frame.
GROUP_LABEL, NODE_LABEL, FRAME_LABEL = 0, 1, 2


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


def _label_items(world: QTransform, exposed: QRectF, p: Prepared, tiles: list[Tile], nodes: bool = True,
                 ) -> list[tuple[DeviceBox, str, int]]:
    """Device boxes, texts and kinds of the labels to place, in priority order: the collapsed groups of
    ``tiles``, their other nodes (when ``nodes`` and at most ``MAX_NODE_LABELS`` of them meet ``exposed``),
    then the nested frames that meet ``exposed`` (written beside the frame's top left corner)."""
    to_device = _to_device(world)
    items: list[tuple[DeviceBox, str, int]] = []
    plain: list[int] = []
    base_cats, rects, titles = p.base_cats, p.rects, p.titles
    left, right, top, bottom = exposed.left(), exposed.right(), exposed.top(), exposed.bottom()
    for t in tiles:
        for i in t.nodes:
            if base_cats[i] == GROUP:
                items.append((to_device(*rects[i]), titles[i], GROUP_LABEL))
            elif nodes:
                x0, y0, w, h = rects[i]
                if x0 <= right and x0 + w >= left and y0 <= bottom and y0 + h >= top:
                    plain.append(i)
    if len(plain) <= MAX_NODE_LABELS:
        items.extend((to_device(*rects[i]), titles[i], NODE_LABEL) for i in plain)
    for rect, label, _gid, kind in p.frames:
        if kind == "nested" and rect.intersects(exposed):
            items.append((to_device(rect.x(), rect.y(), rect.width(), rect.height()), label, FRAME_LABEL))
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


def _fit_node(pal: GraphPalette, widths: dict[tuple[int, str], float], box: DeviceBox, label: str,
              ) -> tuple[QFont, str, float, float, float, float]:
    """A node's name at ``NODE_LABEL_PX``: inside its box when it fits (elided at its end when at least
    three characters fit), else beside the box on its right."""
    x, y, w, h = box
    font, fm = _scaled_font(pal, NODE_LABEL_PX)
    line_h = fm.height()
    tw = _width(pal, widths, NODE_LABEL_PX, label)
    if h >= 0.7 * line_h:
        room = w - 6.0
        if tw <= room:
            return font, label, tw, line_h, x + w / 2.0 - tw / 2.0, y + h / 2.0 - line_h / 2.0
        if len(label) > 3 and _width(pal, widths, NODE_LABEL_PX, label[:3] + "\u2026") <= room:
            key = (label, int(room))  # cached: a Qt call per label and paint would wait on the GIL
            hit = pal.label_elided.get(key)
            if hit is None:
                text = fm.elidedText(label, Qt.TextElideMode.ElideRight, int(room))
                hit = pal.label_elided[key] = (text, fm.horizontalAdvance(text))
            text, tw = hit
            return font, text, tw, line_h, x + w / 2.0 - tw / 2.0, y + h / 2.0 - line_h / 2.0
    return font, label, tw, line_h, x + w + 4.0, y + h / 2.0 - line_h / 2.0


def _fit(pal: GraphPalette, widths: dict[tuple[int, str], float], box: DeviceBox, label: str, kind: int,
         normal: float, inside: Optional[float]) -> Optional[tuple[QFont, str, float, float, float, float]]:
    """Font, text, width, line height and top-left corner of one label: a group's name inside its box at
    size ``inside`` (one size for all, scaled down to the boxes' heights and widths) when that is readable,
    else beside the box on its right (a column of layers far out); another node's name by :func:`_fit_node`;
    a frame's name beside its top left corner."""
    x, y, w, h = box
    lo = MIN_LABEL_PX * 0.8
    if kind == NODE_LABEL:
        return _fit_node(pal, widths, box, label)
    if kind == GROUP_LABEL:
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
                 nodes: bool = True, port: Optional[QRectF] = None) -> list[tuple[QRectF, str, QFont]]:
    """Zoomed out: where the names of collapsed groups, of the other nodes (``nodes``) and of expanded frames
    go (device rectangles), in paint order: each group's name inside its box, scaled to the box (never larger
    than it, never above the normal label size; beside it when too small to read inside), each node's name
    at ``NODE_LABEL_PX`` inside its box or beside it, each frame's name beside its top left corner
    (:func:`_fit`); a node's name is kept inside ``port`` (the device rectangle painted, when given) so the
    last node at a fit is named whole; a label that would overlap an earlier one is left out, at most
    ``MAX_LABELS``.

    Geometry and overlap tests are plain Python arithmetic and label widths are cached: every Qt call
    from Python gives up the GIL and waits to get it back, which, while a worker thread runs Python,
    made this paint of a 50k-node model's ~800 groups take 100-170 ms instead of ~10."""
    normal = pal.label_metrics.height()
    widths = pal.label_widths
    placed: list[DeviceBox] = []
    out: list[tuple[QRectF, str, QFont]] = []
    items = _label_items(world, exposed, p, tiles, nodes)
    sizes = [_inside_size(pal, widths, box, label, normal) for box, label, kind in items if kind == GROUP_LABEL]
    inside = min(sizes) if sizes else None  # one size for every group's name: they read as one column
    for box, label, kind in items:
        fitted = _fit(pal, widths, box, label, kind, normal, inside)
        if fitted is None:
            continue
        font, text, tw, line_h, bx, by = fitted
        if port is not None and kind == NODE_LABEL:
            bx = max(port.left(), min(bx, port.right() - tw))
            by = max(port.top(), min(by, port.bottom() - line_h))
        bx1, by1 = bx + tw, by + line_h
        if any(bx < ox1 and ox0 < bx1 and by < oy1 and oy0 < by1 for ox0, oy0, ox1, oy1 in placed[-OVERLAP_WINDOW:]):
            continue
        placed.append((bx, by, bx1, by1))
        out.append((QRectF(bx, by, tw, line_h), text, font))
        if len(out) >= MAX_LABELS:
            break
    return out


def paint_group_labels(painter: QPainter, exposed: QRectF, p: Prepared, tiles: list[Tile],
                       pal: GraphPalette, nodes: bool = True) -> None:
    """Zoomed out: the labels of :func:`place_labels`, in screen-size text on a background (each text a
    ``QStaticText`` prepared once per text and size: a laid-out ``drawText`` per label and paint cost more
    than the rest of the paint)."""
    labels = place_labels(painter.worldTransform(), exposed, p, tiles, pal, nodes, QRectF(painter.viewport()))
    if not labels:
        return
    painter.save()
    painter.resetTransform()
    painter.setPen(pal.text_pen)
    label_bg = pal.label_bg
    cache = pal.label_static
    current = None
    for rect, text, font in labels:
        if font is not current:
            painter.setFont(font)
            current = font
        key = (text, font.pixelSize())
        st = cache.get(key)
        if st is None:
            st = cache[key] = QStaticText(text)
            st.setTextFormat(Qt.TextFormat.PlainText)
            st.setPerformanceHint(QStaticText.PerformanceHint.AggressiveCaching)
            st.prepare(QTransform(), font)
        x, y, w, h = rect.x(), rect.y(), rect.width(), rect.height()
        painter.fillRect(QRectF(x - 2.0, y, w + 4.0, h), label_bg)
        painter.drawStaticText(QPointF(x, y), st)
    painter.restore()
