"""Painter of the edges: curved polylines with arrowheads in detail, straight cosmetic lines far out."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter, QPen

from widgets.graph.palette import GraphPalette
from widgets.graph.tiles import Tile


def _stroke_edges(painter: QPainter, tiles: list[Tile], pen: QPen) -> None:
    """Each tile's merged edge path drawn with ``pen``, unfilled."""
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.setPen(pen)
    for t in tiles:
        if not t.edges.isEmpty():
            painter.drawPath(t.edges)


def paint_edges(painter: QPainter, tiles: list[Tile], pal: GraphPalette) -> None:
    """Detail: each tile's merged edge path, then its merged arrowheads."""
    _stroke_edges(painter, tiles, pal.edge_pen)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(pal.edge_brush)
    for t in tiles:
        if not t.arrows.isEmpty():
            painter.drawPath(t.arrows)


def paint_overview_edges(painter: QPainter, tiles: list[Tile], pal: GraphPalette) -> None:
    """Far out: each coarse tile's straight polylines, one pixel wide."""
    _stroke_edges(painter, tiles, pal.overview_edge_pen)
