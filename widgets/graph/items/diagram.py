"""The whole diagram as one scene item, painting from the tile index what meets the exposed rectangle.

So a repaint costs what is on screen, never the node count, and the scene has three items instead of
20,000 (building it is free): the tiles that meet the exposed rectangle draw a handful of merged paths each,
plus the texts of the visible nodes as cached ``QStaticText``. Level of detail: from the palette's
``text_scale`` the boxes carry their own text (legible: at least ``READABLE_PX`` on screen); below it the
names of the nodes, groups and frames are written in screen-size text instead (:mod:`widgets.graph.items.labels`),
so no zoom that fit-to-view can choose shows empty boxes; far out (below ``LOD_SCALE``) the coarse bands
replace the tiles (plain rectangles, no antialiasing) under those labels.
"""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFont, QPainter, QStaticText, QTransform
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from widgets.graph.errors import ErrorMark
from widgets.graph.items.edges import paint_edges, paint_overview_edges
from widgets.graph.items.errors import group_rects, paint_error_boxes, paint_error_labels, paint_overview_errors
from widgets.graph.items.frames import paint_frames
from widgets.graph.items.labels import paint_group_labels
from widgets.graph.items.nodes import (
    paint_boxes,
    paint_heat,
    paint_overview_boxes,
    paint_overview_heat,
    paint_texts,
    shown_nodes,
)
from widgets.graph.palette import GraphPalette
from widgets.graph.prepare import Prepared
from widgets.graph.tiles import detail_paths, visible

#: Below this view scale the overview (coarse bands of plain rectangles) replaces boxes, texts and arrows.
LOD_SCALE = 0.42


class DiagramItem(QGraphicsItem):
    """Paints a :class:`Prepared` graph with a :class:`GraphPalette`. ``cats`` (each node's category,
    ``changed`` for highlighted ones), ``heat`` (view node index -> share of the run time; empty when
    the overlay is hidden) and ``errors`` / ``first_error`` (the "where values diverge" marks per view node
    index and the first diverging node's index; while there are marks, they replace the heat) are set by
    the view; call ``update()`` after changing them."""

    def __init__(self, prepared: Prepared, palette: GraphPalette) -> None:
        super().__init__()
        self.prepared = prepared
        self.palette = palette
        self.cats: list[int] = list(prepared.base_cats)
        self.heat: dict[int, float] = {}
        self.errors: dict[int, ErrorMark] = {}
        self.first_error: Optional[int] = None
        self.first_text = "first"
        self._overview_errors: Optional[tuple] = None  # (errors and tiles painted, the errors, their boxes by colour)
        self._rect = QRectF(0.0, 0.0, max(prepared.layout.width, 100.0), max(prepared.layout.height, 100.0))
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption, True)
        self.static_texts: dict[tuple[int, str], tuple[QStaticText, float]] = {}
        self.paint_count = 0

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt API
        """The layout's extent (at least 100 x 100)."""
        return self._rect

    def _static(self, which: int, text: str, font: QFont) -> tuple[QStaticText, float]:
        key = (which, text)
        hit = self.static_texts.get(key)
        if hit is None:
            st = QStaticText(text)
            st.setTextFormat(Qt.TextFormat.PlainText)
            st.setPerformanceHint(QStaticText.PerformanceHint.AggressiveCaching)
            st.prepare(QTransform(), font)
            hit = self.static_texts[key] = (st, st.size().width())
        return hit

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: Optional[QWidget] = None) -> None:
        """Frames, then the detail or (far out) the overview of what meets the exposed rectangle."""
        self.paint_count += 1
        exposed = option.exposedRect
        lod = QStyleOptionGraphicsItem.levelOfDetailFromTransform(painter.worldTransform())
        painter.save()
        try:
            paint_frames(painter, self.prepared.frames, exposed, self.palette)
            if lod >= LOD_SCALE:
                self._paint_detail(painter, exposed, lod)
            else:
                self._paint_overview(painter, exposed)
        finally:
            painter.restore()

    def _paint_detail(self, painter: QPainter, exposed: QRectF, lod: float) -> None:
        p = self.prepared
        pal = self.palette
        tiles = visible(p.bands, p.band_starts, p.band_margin, exposed)
        if not tiles:
            return
        detail_paths(tiles, p.rects, p.pills, self.cats)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        paint_edges(painter, tiles, pal)
        paint_boxes(painter, tiles, pal)
        shown = shown_nodes(tiles, p.rects, exposed)
        if not shown:
            return
        errors = self.errors
        if errors:
            paint_error_boxes(painter, shown, errors, self.cats, p.base_cats, p.rects, p.pills, pal)
        elif self.heat:
            paint_heat(painter, [i for i in shown if i in self.heat], self.heat, p.rects, pal)
        if lod < pal.text_scale:  # the boxes' own text would not be legible: names at screen size
            paint_group_labels(painter, exposed, p, tiles, pal)
        else:
            paint_texts(painter, shown, p, self.cats, lod, pal, self._static, strong=errors)
        if errors:
            paint_error_labels(painter, shown, errors, self.first_error, p.rects, p.pills, pal, self.first_text)

    def _paint_overview(self, painter: QPainter, exposed: QRectF) -> None:
        p = self.prepared
        tiles = visible(p.coarse, p.coarse_starts, p.band_margin, exposed)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        paint_overview_edges(painter, tiles, self.palette)
        paint_overview_boxes(painter, tiles, self.palette)
        if self.errors:
            errors = self.errors
            key = (id(errors), tuple(id(t) for t in tiles))
            if self._overview_errors is None or self._overview_errors[0] != key or self._overview_errors[1] is not errors:
                ids = [i for t in tiles for i in t.nodes if i in errors]
                self._overview_errors = (key, errors, group_rects(ids, errors, p.rects))
            paint_overview_errors(painter, [], errors, self.first_error, p.rects, self.palette, self._overview_errors[2])
        elif self.heat:
            paint_overview_heat(painter, [i for t in tiles for i in t.nodes if i in self.heat], self.heat, p.rects)
        paint_group_labels(painter, exposed, p, tiles, self.palette)
