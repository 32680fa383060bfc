"""The spatial index the diagram paints from (level of detail included), built off the GUI thread.

The layout is cut into tiles (a band of ``BAND_LAYERS`` layers by a column of ``TILE_WIDTH`` scene units);
each tile draws its edges merged into one path, its arrowheads into another and its node boxes into one
path per category. Coarse bands of ``COARSE_LAYERS`` layers (one tile each: plain rectangles and straight
polylines) are what the far-out overview paints. A repaint finds the tiles that meet the exposed rectangle
with :func:`visible` (binary search on the bands, then a box test per tile).

Memory: a detail tile keeps its edge segments as a flat ``array`` of coordinates and makes its paths when it
is first painted (:func:`detail_paths`); until then (and after a recolouring, for its boxes) it holds no
path. A 54,000-node graph expanded whole would otherwise hold ~1.2 million path elements for tiles that a
view at fit never paints in detail. Coarse tiles are few and all painted at fit: their paths are made with
the index, off the GUI thread.
"""

from __future__ import annotations

import bisect
from array import array
from typing import Any, Optional

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QPainterPath

from pipeline_model.layout import Frame
from widgets.graph.adapter import CATEGORIES

#: Tile size: layers per band, scene units per column; coarse overview bands.
BAND_LAYERS = 6
TILE_WIDTH = 768.0
COARSE_LAYERS = 48
#: Corner radius of a node box; arrowhead length.
NODE_RADIUS = 6.0
ARROW = 7.0

Rect = tuple[float, float, float, float]  # x0, y0, width, height


class Tile:
    """What one tile draws: merged edge and arrow paths, node boxes merged per category (``None`` per
    category without a node), its nodes. A detail tile's ``segs`` (``xa, ya, xb, yb`` per edge segment) and
    ``heads`` (``x, y, sign`` per arrowhead) are what its paths are made from when first painted
    (:func:`detail_paths`); its ``boxes`` are ``None`` until then and after a recolouring."""

    __slots__ = ("bounds", "edges", "arrows", "nodes", "boxes", "segs", "heads")

    def __init__(self) -> None:
        self.bounds = QRectF()
        self.edges: Optional[QPainterPath] = None
        self.arrows: Optional[QPainterPath] = None
        self.nodes: list[int] = []
        self.boxes: Optional[list[Optional[QPainterPath]]] = None
        self.segs = array("d")
        self.heads = array("d")


class Band:
    """A horizontal band of tiles (or one coarse overview band): content y-range and its tiles."""

    __slots__ = ("y0", "y1", "tiles")

    def __init__(self) -> None:
        self.y0 = float("inf")
        self.y1 = float("-inf")
        self.tiles: dict[int, Tile] = {}


class TileIndex:
    """Detail bands and coarse bands with their start ordinates, and the margin by which content sticks
    out of its band (what :func:`visible` adds to the exposed rectangle)."""

    def __init__(self, layer_ys: list[float]) -> None:
        self.band_starts = _starts_every(layer_ys, BAND_LAYERS)
        self.coarse_starts = _starts_every(layer_ys, COARSE_LAYERS)
        self.bands = [Band() for _ in self.band_starts]
        self.coarse = [Band() for _ in self.coarse_starts]
        self.margin = 0.0
        self._bounds: dict[int, list[float]] = {}  # id(tile) -> [x0, y0, x1, y1]

    def tile_of(self, coarse: bool, x: float, y: float) -> Tile:
        """The tile a point belongs to (created on first use)."""
        band_list, starts = (self.coarse, self.coarse_starts) if coarse else (self.bands, self.band_starts)
        band = band_list[bisect.bisect_right(starts, y) - 1]
        col = 0 if coarse else int(x // TILE_WIDTH)
        tile = band.tiles.get(col)
        if tile is None:
            tile = band.tiles[col] = Tile()
        return tile

    def grow(self, tile: Tile, x0: float, y0: float, x1: float, y1: float) -> None:
        """Extend a tile's bounds to a box."""
        b = self._bounds.get(id(tile))
        if b is None:
            self._bounds[id(tile)] = [x0, y0, x1, y1]
        else:
            if x0 < b[0]:
                b[0] = x0
            if y0 < b[1]:
                b[1] = y0
            if x1 > b[2]:
                b[2] = x1
            if y1 > b[3]:
                b[3] = y1

    def add_node(self, i: int, x: float, y: float, rect: Rect) -> None:
        """File node ``i`` (centre ``x, y``, box ``rect``) in its detail tile and its coarse tile."""
        x0, y0, w, h = rect
        for is_coarse in (False, True):
            tile = self.tile_of(is_coarse, x, y)
            tile.nodes.append(i)
            self.grow(tile, x0 - 2.0, y0 - 2.0, x0 + w + 2.0, y0 + h + 2.0)

    def add_edge(self, pts: list[tuple[float, float]]) -> None:
        """File an edge polyline: each segment (a cubic in detail, a line far out) goes to the tile of its
        midpoint; the last one gets the arrowhead."""
        last = len(pts) - 2
        for k in range(len(pts) - 1):
            (xa, ya), (xb, yb) = pts[k], pts[k + 1]
            mx, my = (xa + xb) / 2.0, (ya + yb) / 2.0
            tile = self.tile_of(False, mx, my)
            tile.segs.extend((xa, ya, xb, yb))
            lo_x, hi_x = (xa, xb) if xa < xb else (xb, xa)
            lo_y, hi_y = (ya, yb) if ya < yb else (yb, ya)
            self.grow(tile, lo_x - ARROW, lo_y - ARROW, hi_x + ARROW, hi_y + ARROW)
            if k == last:
                tile.heads.extend((xb, yb, 1.0 if yb >= ya else -1.0))
            ctile = self.tile_of(True, mx, my)
            ctile.segs.extend((xa, ya, xb, yb))
            self.grow(ctile, lo_x, lo_y, hi_x, hi_y)

    def finish(self, rects: list[Rect], pills: list[bool], cats: list[int]) -> None:
        """Fix the tiles' bounds, make the coarse tiles' paths (detail tiles make theirs when first
        painted) and compute the band margin."""
        margin = 0.0
        for band_list, coarse in ((self.bands, False), (self.coarse, True)):
            for band in band_list:
                for tile in band.tiles.values():
                    x0, y0, x1, y1 = self._bounds[id(tile)]
                    tile.bounds = QRectF(x0, y0, x1 - x0, y1 - y0)
                    band.y0 = min(band.y0, y0)
                    band.y1 = max(band.y1, y1)
                    if coarse:
                        _coarse_edges(tile)
                        box_paths(tile, rects, pills, cats, False)
        for starts, band_list in ((self.band_starts, self.bands), (self.coarse_starts, self.coarse)):
            for k, band in enumerate(band_list):
                if band.tiles and k > 0:
                    margin = max(margin, starts[k] - band.y0)
                if band.tiles and k + 1 < len(starts):
                    margin = max(margin, band.y1 - starts[k + 1])
        self.margin = margin + 1.0
        self._bounds = {}


def _starts_every(layer_ys: list[float], k: int) -> list[float]:
    """Band start ordinates for bands of ``k`` layers: a band owns the nodes whose centre and the edge
    segments whose midpoint lie between its start and the next band's start."""
    out = [float("-inf")]
    for j in range(k, len(layer_ys), k):
        out.append((layer_ys[j - 1] + layer_ys[j]) / 2.0)
    return out


def _coarse_edges(tile: Tile) -> None:
    """A coarse tile's straight polylines, one path (its segments are not kept)."""
    path = QPainterPath()
    segs = tile.segs
    for k in range(0, len(segs), 4):
        path.moveTo(segs[k], segs[k + 1])
        path.lineTo(segs[k + 2], segs[k + 3])
    tile.edges, tile.arrows, tile.segs = path, QPainterPath(), array("d")


def detail_paths(tiles: list[Tile], rects: list[Rect], pills: list[bool], cats: list[int]) -> None:
    """Make what ``tiles`` (detail tiles about to be painted) lack: their edge and arrow paths from their
    segments (cubics, each arrowhead a triangle), their box paths in the categories ``cats``."""
    for tile in tiles:
        if tile.edges is None:
            edges = QPainterPath()
            segs = tile.segs
            for k in range(0, len(segs), 4):
                xa, ya, xb, yb = segs[k], segs[k + 1], segs[k + 2], segs[k + 3]
                dy = (yb - ya) / 2.0
                edges.moveTo(xa, ya)
                edges.cubicTo(xa, ya + dy, xb, yb - dy, xb, yb)
            arrows = QPainterPath()
            arrows.setFillRule(Qt.FillRule.WindingFill)  # arrowheads meeting at one input overlap
            heads = tile.heads
            for k in range(0, len(heads), 3):
                xb, yb, sign = heads[k], heads[k + 1], heads[k + 2]
                arrows.moveTo(xb, yb)
                arrows.lineTo(xb - ARROW / 2.0, yb - sign * ARROW)
                arrows.lineTo(xb + ARROW / 2.0, yb - sign * ARROW)
                arrows.closeSubpath()
            tile.edges, tile.arrows = edges, arrows
        if tile.boxes is None:
            box_paths(tile, rects, pills, cats, True)


def box_paths(tile: Tile, rects: list[Rect], pills: list[bool], cats: list[int], rounded: bool) -> None:
    """(Re)build a tile's node boxes, one path per category: pills for the function's inputs, outputs and
    stubs, rounded boxes for the rest, plain rectangles in a coarse tile."""
    boxes: list[Optional[QPainterPath]] = [None] * len(CATEGORIES)
    for i in tile.nodes:
        c = cats[i]
        path = boxes[c]
        if path is None:
            path = boxes[c] = QPainterPath()
        x0, y0, w, h = rects[i]
        if not rounded:
            path.addRect(x0, y0, w, h)
        elif pills[i]:
            path.addRoundedRect(x0, y0, w, h, h / 2.0, h / 2.0)  # pills for the function's inputs and outputs
        else:
            path.addRoundedRect(x0, y0, w, h, NODE_RADIUS, NODE_RADIUS)
    tile.boxes = boxes


def visible(band_list: list[Band], starts: list[float], margin: float, rect: QRectF) -> list[Tile]:
    """Tiles of ``band_list`` that meet ``rect`` (binary search on the bands, then a box test per tile)."""
    lo = max(0, bisect.bisect_right(starts, rect.top() - margin) - 1)
    hi = bisect.bisect_right(starts, rect.bottom() + margin)
    left, right, top, bottom = rect.left(), rect.right(), rect.top(), rect.bottom()
    out: list[Tile] = []
    for band in band_list[lo:hi]:
        if band.y1 < top or band.y0 > bottom:
            continue
        for tile in band.tiles.values():
            b = tile.bounds
            if b.right() >= left and b.left() <= right and b.bottom() >= top and b.top() <= bottom:
                out.append(tile)
    return out


#: A frame as painted: rectangle (its outline: rounded by 10 units), label, group id, kind (``block`` or
#: ``nested``).
FramePaint = tuple[QRectF, str, Any, str]


def frame_paths(frames: list[Frame]) -> list[FramePaint]:
    """The layout's frames as painted, outer frames first (painted first)."""
    return [(QRectF(fr.x0, fr.y0, fr.x1 - fr.x0, fr.y1 - fr.y0), fr.label, fr.group, fr.kind)
            for fr in sorted(frames, key=lambda f: (f.kind != "block", f.depth))]
