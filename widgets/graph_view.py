"""Node diagram of one Relax function: ``GraphView`` (a ``QGraphicsView``).

Feed it the graph JSON of :func:`pipeline_model.ir_graph.graph_to_json` (what the engine's ``graph`` command
returns under ``"graph"``) with :meth:`GraphView.set_graph`. The layered layout runs on a ``QThreadPool``
thread together with the construction of every ``QPainterPath`` the view will draw; a generation counter
drops the result of an older request, so a slow layout can never replace a newer graph. The GUI thread then
only adds one item to the scene.

Speed (5,000 nodes, 2 cores): the whole diagram is one item (``_DiagramItem``) that paints from a spatial
index built off the GUI thread. The layout is cut into tiles (a band of a few layers by a column of
``TILE_WIDTH`` scene units); each tile holds its edges merged into one path, its arrowheads into another and
its node boxes into one path per colour. A repaint finds the tiles that meet the exposed rectangle (binary
search on the bands) and draws a handful of paths per tile, plus the texts of the visible nodes as cached
``QStaticText``. Far out (below ``LOD_SCALE``) coarse bands of merged rectangles and polylines (no text, no
antialiasing) replace the tiles. So a repaint costs what is on screen, never the node count, and the scene
has three items instead of 20,000 (building it is free). Hit testing (click, hover tooltip) uses a per-row
index of the layout (binary search).
"""

from __future__ import annotations

import bisect
import html
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from PySide6.QtCore import QElapsedTimer, QEvent, QObject, QPointF, QRectF, QRunnable, Qt, QThreadPool, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPalette,
    QPen,
    QStaticText,
    QTransform,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QStyleOptionGraphicsItem,
    QToolTip,
    QWidget,
)

import collections
import json

from pipeline_model import gc_pause, graph_hierarchy
from pipeline_model.ir_graph import GRAPH_FORMAT, changed_nodes
from pipeline_model.layout import GraphLayout, LayoutCancelled, compute_layout, node_text

#: Below this view scale the overview (coarse bands of plain rectangles) replaces boxes, texts and arrows.
LOD_SCALE = 0.42
#: Below this view scale the second text line (shape·dtype) of a node is not drawn.
SUBTITLE_SCALE = 0.5
MIN_SCALE = 0.0005
MAX_SCALE = 6.0
NODE_RADIUS = 6.0
ARROW = 7.0
#: Tile size: layers per band, scene units per column; coarse overview bands.
BAND_LAYERS = 6
TILE_WIDTH = 768.0
COARSE_LAYERS = 48

_CATEGORIES = ("binding", "call", "param", "constant", "output", "group", "stub", "changed")
_CAT_INDEX = {c: k for k, c in enumerate(_CATEGORIES)}
_CHANGED = _CAT_INDEX["changed"]


def _category(attrs: dict[str, Any]) -> str:
    kind = attrs.get("kind")
    if attrs.get("stub"):
        return "stub"
    if kind == "group":
        return "group"
    if kind in ("param", "constant", "output"):
        return str(kind)
    return "call" if attrs.get("callee") else "binding"


class _JsonGraph:
    """The graph JSON as the minimal graph :func:`compute_layout` reads (``nodes(data=True)``, ``edges()``,
    ``graph``): no networkx objects to build on the way (that alone cost ~100 ms for 5,000 nodes)."""

    def __init__(self, data: dict[str, Any]) -> None:
        if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
            raise ValueError("graph JSON: expected an object with 'nodes' and 'edges'")
        if data.get("format", GRAPH_FORMAT) != GRAPH_FORMAT:
            raise ValueError(f"graph JSON: unknown format {data.get('format')!r}")
        self.graph: dict[str, Any] = dict(data.get("graph") or {})
        self.node_list: list[tuple[str, dict[str, Any]]] = []
        self.attrs: dict[str, dict[str, Any]] = {}
        for i, node in enumerate(data["nodes"]):
            if not isinstance(node, dict) or "id" not in node:
                raise ValueError(f"graph JSON: nodes[{i}] has no 'id'")
            nid = node["id"]
            self.node_list.append((nid, node))
            self.attrs[nid] = node
        self.edge_list: list[tuple[str, str]] = []
        self.inputs: dict[str, list[str]] = {n: [] for n in self.attrs}
        self.outputs: dict[str, list[str]] = {n: [] for n in self.attrs}
        keyed: dict[str, list[tuple[Any, int, str]]] = {}
        seen: set[tuple[str, str]] = set()
        for i, edge in enumerate(data.get("edges", data.get("links", [])) or []):
            src, dst = edge.get("source"), edge.get("target")
            if src not in self.attrs or dst not in self.attrs:
                raise ValueError(f"graph JSON: edges[{i}] refers to an unknown node ({src!r} -> {dst!r})")
            if (src, dst) in seen:  # a DiGraph keeps one edge per pair
                continue
            seen.add((src, dst))
            self.edge_list.append((src, dst))
            keyed.setdefault(dst, []).append((edge.get("index", 0) or 0, i, src))
            self.outputs[src].append(dst)
        for dst, ins in keyed.items():
            ins.sort()
            self.inputs[dst] = [src for _, _, src in ins]

    def nodes(self, data: bool = False) -> list:  # noqa: D102 - networkx-like
        return self.node_list if data else [n for n, _ in self.node_list]

    def edges(self) -> list[tuple[str, str]]:  # noqa: D102 - networkx-like
        return self.edge_list


class _Tile:
    """What one tile draws: merged edge and arrow paths, node boxes merged per colour, its nodes."""

    __slots__ = ("bounds", "edges", "arrows", "nodes", "boxes")

    def __init__(self) -> None:
        self.bounds = QRectF()
        self.edges = QPainterPath()
        self.arrows = QPainterPath()
        self.arrows.setFillRule(Qt.FillRule.WindingFill)  # arrowheads meeting at one input overlap
        self.nodes: list[int] = []
        self.boxes: list[Optional[QPainterPath]] = [None] * len(_CATEGORIES)


class _Band:
    """A horizontal band of tiles (or one coarse overview band): content y-range and its tiles."""

    __slots__ = ("y0", "y1", "tiles")

    def __init__(self) -> None:
        self.y0 = float("inf")
        self.y1 = float("-inf")
        self.tiles: dict[int, _Tile] = {}


@dataclass
class _Prepared:
    """What the layout thread hands to the GUI thread."""

    generation: int
    data: dict[str, Any]
    layout: GraphLayout
    ids: list[str]
    attrs: dict[str, dict[str, Any]]
    titles: list[str]
    subs: list[str]
    rects: list[tuple[float, float, float, float]]  # x0, y0, w, h
    pills: list[bool]
    base_cats: list[int]
    bands: list[_Band]
    band_starts: list[float]
    coarse: list[_Band]
    coarse_starts: list[float]
    band_margin: float
    frames: list[tuple[QPainterPath, QRectF, str, Any, str]]
    row_ys: list[float]
    rows: list[list[tuple[float, float, str]]]
    inputs: dict[str, list[str]]
    outputs: dict[str, list[str]]
    highlight: frozenset[str]
    index: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    full: Optional[dict[str, Any]] = None  # the whole function's graph JSON (the view graph is ``data``)
    tree: dict[str, dict[str, Any]] = field(default_factory=dict)
    expanded: frozenset[str] = frozenset()
    rep: dict[str, str] = field(default_factory=dict)
    full_highlight: frozenset[str] = frozenset()  # highlighted ids of the full graph
    overview: Any = None  # QImage of the whole layout (the minimap)
    overview_scale: float = 1.0
    cache_key: Any = None
    # what ``full_highlight`` was computed from: the ``before`` graph (by identity) and the extra ids
    hl_before: Any = None
    hl_extra: frozenset[str] = frozenset()


class _LayoutSignals(QObject):
    done = Signal(object)
    failed = Signal(int, str)


class _LayoutTask(QRunnable):
    """Everything heavier than painting, off the GUI thread: JSON decoding, module annotation, change
    detection against ``before``, the view graph for the expansion, layout, paths and the overview image.
    ``latest`` is the view's generation holder: a task whose generation is no longer the latest stops at
    the next check (before starting, between layout stages) and reports nothing."""

    def __init__(self, generation: int, latest: list[int], data: Any, highlight: frozenset[str], before: Any,
                 expanded: Optional[frozenset[str]], char_width: float, node_height: float,
                 signals: _LayoutSignals, cached: Optional["_Prepared"] = None, cache_key: Any = None) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self.generation = generation
        self.latest = latest
        self.data = data
        self.highlight = highlight
        self.before = before
        self.expanded = expanded
        self.char_width = char_width
        self.node_height = node_height
        self.signals = signals
        self.cached = cached
        self.cache_key = cache_key

    def stale(self) -> bool:
        """True when a newer request superseded this one."""
        return self.latest[0] != self.generation

    def run(self) -> None:  # noqa: D102 - QRunnable API
        if self.stale():
            return
        timer = QElapsedTimer()
        timer.start()
        # ~100k short-lived objects: collections of the whole heap would cost ~20% here and stall the GUI
        # thread (GIL); what is left is the cached layout, frozen out of later collections.
        with gc_pause.paused(freeze=True):
            try:
                full = _decode(self.data)
                before = _decode(self.before) if self.before is not None else None
                highlight = set(self.highlight)
                if before is not None:
                    highlight |= changed_nodes(before, full)
                if self.cached is not None:
                    prepared = self.cached
                    _apply_highlight(prepared, frozenset(highlight))
                    prepared.generation = self.generation
                else:
                    prepared = _prepare_full(self.generation, full, frozenset(highlight), self.expanded,
                                             self.char_width, self.node_height, self.stale)
                    prepared.cache_key = self.cache_key
                prepared.hl_before, prepared.hl_extra = self.before, self.highlight
            except LayoutCancelled:
                return
            except Exception as exc:  # noqa: BLE001 - reported to the view, which shows it
                self.signals.failed.emit(self.generation, f"{type(exc).__name__}: {exc}")
                return
        if self.stale():
            return
        prepared.seconds = timer.elapsed() / 1000.0
        self.signals.done.emit(prepared)


def _decode(data: Any) -> dict[str, Any]:
    """Graph JSON given as a dict, or as JSON text/bytes (decoded here, off the GUI thread)."""
    if isinstance(data, (bytes, bytearray, str)):
        data = json.loads(data)
    if not isinstance(data, dict):
        raise ValueError("graph JSON: expected an object with 'nodes' and 'edges'")
    return data


def _view_highlight(full_ids: frozenset[str], rep: dict[str, str], view_ids: list[str],
                    attrs: dict[str, dict[str, Any]]) -> frozenset[str]:
    """Full-graph highlighted ids -> view ids (a collapsed group is highlighted when a member is, a stub
    when its source is)."""
    if not full_ids:
        return frozenset()
    shown = {rep.get(n, n) for n in full_ids}
    for vid in view_ids:
        src = attrs[vid].get("stub_of")
        if src is not None and src in shown:
            shown.add(vid)
    return frozenset(shown)


def _apply_highlight(p: "_Prepared", full_ids: frozenset[str]) -> None:
    """Recolour a prepared layout for another highlight set (rebuilds the box paths)."""
    p.full_highlight = full_ids
    p.highlight = _view_highlight(full_ids, p.rep, p.ids, p.attrs)
    cats = _categories(p.base_cats, p.ids, p.highlight)
    for band_list, rounded in ((p.bands, True), (p.coarse, False)):
        for band in band_list:
            for tile in band.tiles.values():
                _box_paths(tile, p.rects, p.pills, cats, rounded)


def _prepare_full(generation: int, full: dict[str, Any], highlight: frozenset[str],
                  expanded: Optional[frozenset[str]], char_width: float, node_height: float,
                  should_stop: Any = None) -> "_Prepared":
    """The view graph of ``full`` for ``expanded`` (None: the default expansion), laid out and prepared."""
    if not isinstance(full.get("nodes"), list):
        raise ValueError("graph JSON: expected an object with 'nodes' and 'edges'")
    if full.get("format", GRAPH_FORMAT) != GRAPH_FORMAT:
        raise ValueError(f"graph JSON: unknown format {full.get('format')!r}")
    known = set()
    for i, node in enumerate(full["nodes"]):
        if not isinstance(node, dict) or "id" not in node:
            raise ValueError(f"graph JSON: nodes[{i}] has no 'id'")
        known.add(node["id"])
    for i, edge in enumerate(full.get("edges", full.get("links", [])) or []):
        src, dst = edge.get("source"), edge.get("target")
        if src not in known or dst not in known:
            raise ValueError(f"graph JSON: edges[{i}] refers to an unknown node ({src!r} -> {dst!r})")
    if full["nodes"] and "module" not in full["nodes"][0]:
        graph_hierarchy.annotate_modules(full)
    tree = graph_hierarchy.group_tree(full)
    if expanded is None:
        expanded = graph_hierarchy.default_expansion(full)
    expanded = frozenset(g for g in expanded if g in tree)
    view = graph_hierarchy.build_view(full, expanded, tree=tree)
    rep = view["graph"].pop("rep")
    view_attrs = {n["id"]: n for n in view["nodes"]}
    view_hl = _view_highlight(highlight, rep, list(view_attrs), view_attrs)
    prepared = _prepare(generation, view, view_hl, char_width, node_height, should_stop)
    prepared.full = full
    prepared.tree = tree
    prepared.expanded = expanded
    prepared.rep = rep
    prepared.full_highlight = highlight
    prepared.overview, prepared.overview_scale = _overview_image(prepared)
    return prepared


OVERVIEW_W = 150
OVERVIEW_H = 220


def _overview_image(p: "_Prepared") -> tuple[Any, float]:
    """A small image of the whole layout (boxes only) for the minimap, painted off the GUI thread."""
    from PySide6.QtGui import QImage  # noqa: PLC0415

    w = max(p.layout.width, 1.0)
    h = max(p.layout.height, 1.0)
    scale = min(OVERVIEW_W / w, OVERVIEW_H / h)
    img = QImage(max(8, int(w * scale) + 1), max(8, int(h * scale) + 1), QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(QColor(0, 0, 0, 0))
    painter = QPainter(img)
    try:
        colours = [QColor("#4a7bd0"), QColor("#8a5cd0"), QColor("#3aa55a"), QColor("#808080"), QColor("#d0603a"),
                   QColor("#2a9d8f"), QColor("#9ab79a"), QColor("#e0a020")]
        cats = _categories(p.base_cats, p.ids, p.highlight)
        for i, (x0, y0, bw, bh) in enumerate(p.rects):
            painter.fillRect(QRectF(x0 * scale, y0 * scale, max(1.0, bw * scale), max(1.0, bh * scale)),
                             colours[cats[i]])
    finally:
        painter.end()
    return img, scale


def _box_paths(tile: _Tile, rects: list[tuple[float, float, float, float]], pills: list[bool],
               cats: list[int], rounded: bool) -> None:
    boxes: list[Optional[QPainterPath]] = [None] * len(_CATEGORIES)
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


def _categories(base: list[int], ids: list[str], highlight: frozenset[str]) -> list[int]:
    if not highlight:
        return base
    return [_CHANGED if n in highlight else c for n, c in zip(ids, base)]


def _prepare(generation: int, data: dict[str, Any], highlight: frozenset[str], char_width: float,
             node_height: float, should_stop: Any = None) -> _Prepared:
    g = _JsonGraph(data)
    ids = [n for n, _ in g.node_list]
    titles: list[str] = []
    subs: list[str] = []
    sizes: dict[str, tuple[float, float]] = {}
    from pipeline_model.layout import MIN_NODE_WIDTH, NODE_PADDING  # noqa: PLC0415

    base_cats: list[int] = []
    pills: list[bool] = []
    for n, d in g.node_list:
        title, sub = node_text(d)
        titles.append(title)
        subs.append(sub)
        sizes[n] = (max(MIN_NODE_WIDTH, char_width * max(len(title), len(sub)) + NODE_PADDING), node_height)
        base_cats.append(_CAT_INDEX[_category(d)])
        pills.append(d.get("kind") in ("param", "output") or bool(d.get("stub")))
    lay = compute_layout(g, char_width=char_width, node_height=node_height, sizes=sizes, should_stop=should_stop)
    positions = lay.positions
    rects: list[tuple[float, float, float, float]] = []
    for n in ids:
        x, y = positions[n]
        w, h = sizes[n]
        rects.append((x - w / 2.0, y - h / 2.0, w, h))

    # bands: BAND_LAYERS layers each (and coarse ones for the overview); a band owns the nodes whose centre
    # and the edge segments whose midpoint lie between its start and the next band's start
    layer_ys = sorted({positions[n][1] for n in ids})

    def starts_every(k: int) -> list[float]:
        out = [float("-inf")]
        for j in range(k, len(layer_ys), k):
            out.append((layer_ys[j - 1] + layer_ys[j]) / 2.0)
        return out

    band_starts = starts_every(BAND_LAYERS)
    coarse_starts = starts_every(COARSE_LAYERS)
    bands = [_Band() for _ in band_starts]
    coarse = [_Band() for _ in coarse_starts]
    cats = _categories(base_cats, ids, frozenset(highlight))
    index = {n: i for i, n in enumerate(ids)}

    def tile_of(band_list: list[_Band], starts: list[float], x: float, y: float, coarse_tile: bool) -> _Tile:
        band = band_list[bisect.bisect_right(starts, y) - 1]
        col = 0 if coarse_tile else int(x // TILE_WIDTH)
        tile = band.tiles.get(col)
        if tile is None:
            tile = band.tiles[col] = _Tile()
        return tile

    bounds: dict[int, list[float]] = {}  # id(tile) -> [x0, y0, x1, y1]

    def grow(tile: _Tile, x0: float, y0: float, x1: float, y1: float) -> None:
        b = bounds.get(id(tile))
        if b is None:
            bounds[id(tile)] = [x0, y0, x1, y1]
        else:
            if x0 < b[0]:
                b[0] = x0
            if y0 < b[1]:
                b[1] = y0
            if x1 > b[2]:
                b[2] = x1
            if y1 > b[3]:
                b[3] = y1

    for i, n in enumerate(ids):
        x, y = positions[n]
        x0, y0, w, h = rects[i]
        for band_list, starts, is_coarse in ((bands, band_starts, False), (coarse, coarse_starts, True)):
            tile = tile_of(band_list, starts, x, y, is_coarse)
            tile.nodes.append(i)
            grow(tile, x0 - 2.0, y0 - 2.0, x0 + w + 2.0, y0 + h + 2.0)
    for pts in lay.edges.values():
        last = len(pts) - 2
        for k in range(len(pts) - 1):
            (xa, ya), (xb, yb) = pts[k], pts[k + 1]
            mx, my = (xa + xb) / 2.0, (ya + yb) / 2.0
            tile = tile_of(bands, band_starts, mx, my, False)
            dy = (yb - ya) / 2.0
            tile.edges.moveTo(xa, ya)
            tile.edges.cubicTo(xa, ya + dy, xb, yb - dy, xb, yb)
            lo_x, hi_x = (xa, xb) if xa < xb else (xb, xa)
            lo_y, hi_y = (ya, yb) if ya < yb else (yb, ya)
            grow(tile, lo_x - ARROW, lo_y - ARROW, hi_x + ARROW, hi_y + ARROW)
            if k == last:
                sign = 1.0 if yb >= ya else -1.0
                tile.arrows.moveTo(xb, yb)
                tile.arrows.lineTo(xb - ARROW / 2.0, yb - sign * ARROW)
                tile.arrows.lineTo(xb + ARROW / 2.0, yb - sign * ARROW)
                tile.arrows.closeSubpath()
            ctile = tile_of(coarse, coarse_starts, mx, my, True)
            ctile.edges.moveTo(xa, ya)
            ctile.edges.lineTo(xb, yb)
            grow(ctile, lo_x, lo_y, hi_x, hi_y)
    margin = 0.0
    for band_list, rounded in ((bands, True), (coarse, False)):
        for band in band_list:
            for tile in band.tiles.values():
                x0, y0, x1, y1 = bounds[id(tile)]
                tile.bounds = QRectF(x0, y0, x1 - x0, y1 - y0)
                band.y0 = min(band.y0, y0)
                band.y1 = max(band.y1, y1)
                _box_paths(tile, rects, pills, cats, rounded)
    for starts, band_list in ((band_starts, bands), (coarse_starts, coarse)):
        for k, band in enumerate(band_list):
            if band.tiles and k > 0:
                margin = max(margin, starts[k] - band.y0)
            if band.tiles and k + 1 < len(starts):
                margin = max(margin, band.y1 - starts[k + 1])

    frames: list[tuple[QPainterPath, QRectF, str, Any, str]] = []
    for fr in sorted(lay.frames, key=lambda f: (f.kind != "block", f.depth)):  # outer frames painted first
        rect = QRectF(fr.x0, fr.y0, fr.x1 - fr.x0, fr.y1 - fr.y0)
        path = QPainterPath()
        path.addRoundedRect(rect, 10.0, 10.0)
        frames.append((path, rect, fr.label, fr.group, fr.kind))

    by_y: dict[float, list[tuple[float, float, str]]] = {}
    for i, n in enumerate(ids):
        x0, y0, w, h = rects[i]
        by_y.setdefault(positions[n][1], []).append((x0, x0 + w, n))
    row_ys = sorted(by_y)
    rows = [sorted(by_y[y]) for y in row_ys]
    return _Prepared(generation, data, lay, ids, g.attrs, titles, subs, rects, pills, base_cats,
                     bands, band_starts, coarse, coarse_starts, margin + 1.0, frames, row_ys, rows,
                     g.inputs, g.outputs, frozenset(highlight), index)


def _blend(a: QColor, b: QColor, t: float) -> QColor:
    return QColor(
        round(a.red() * (1 - t) + b.red() * t),
        round(a.green() * (1 - t) + b.green() * t),
        round(a.blue() * (1 - t) + b.blue() * t),
    )


def _visible(band_list: list[_Band], starts: list[float], margin: float, rect: QRectF) -> list[_Tile]:
    """Tiles of ``band_list`` that meet ``rect`` (binary search on the bands, then a box test per tile)."""
    lo = max(0, bisect.bisect_right(starts, rect.top() - margin) - 1)
    hi = bisect.bisect_right(starts, rect.bottom() + margin)
    left, right, top, bottom = rect.left(), rect.right(), rect.top(), rect.bottom()
    out: list[_Tile] = []
    for band in band_list[lo:hi]:
        if band.y1 < top or band.y0 > bottom:
            continue
        for tile in band.tiles.values():
            b = tile.bounds
            if b.right() >= left and b.left() <= right and b.bottom() >= top and b.top() <= bottom:
                out.append(tile)
    return out


def heat_label(share: float) -> str:
    """A share of the run time as the heat overlay writes it: ``12.3 %`` (``<0.1 %`` for crumbs)."""
    pct = 100.0 * share
    return "<0.1 %" if 0.0 < pct < 0.05 else f"{pct:.1f} %"


class _DiagramItem(QGraphicsItem):
    """The whole diagram: paints the tiles that meet the exposed rectangle (see the module docstring)."""

    def __init__(self, view: "GraphView", prepared: _Prepared) -> None:
        super().__init__()
        self._view = view
        self.prepared = prepared
        self._rect = QRectF(0.0, 0.0, max(prepared.layout.width, 100.0), max(prepared.layout.height, 100.0))
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption, True)
        self.static_texts: dict[tuple[int, str], tuple[QStaticText, float]] = {}
        self.paint_count = 0

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt API
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

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: Optional[QWidget] = None) -> None:  # noqa: D102,E501
        self.paint_count += 1
        p = self.prepared
        v = self._view
        exposed = option.exposedRect
        lod = QStyleOptionGraphicsItem.levelOfDetailFromTransform(painter.worldTransform())
        painter.save()
        try:
            self._paint_frames(painter, exposed, v)
            if lod >= LOD_SCALE:
                self._paint_detail(painter, exposed, lod, v, p)
            else:
                self._paint_overview(painter, exposed, v, p)
        finally:
            painter.restore()

    def _paint_frames(self, painter: QPainter, exposed: QRectF, v: "GraphView") -> None:
        frames = self.prepared.frames
        if not frames:
            return
        painter.setBrush(v._frame_brush)  # noqa: SLF001 - the view's palette
        painter.setPen(Qt.PenStyle.NoPen)
        for _path, rect, *_ in frames:
            if rect.intersects(exposed):
                painter.drawRect(rect.intersected(exposed))
        # the dashed outline: only the visible pieces, dash phase anchored to the frame (so it does not
        # crawl while panning); a dashed 190,000-unit outline would otherwise be dashed whole every paint
        pen = QPen(v._frame_pen)  # noqa: SLF001
        period = 6.0 * pen.widthF()
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(pen)
        top, bottom, left, right = exposed.top(), exposed.bottom(), exposed.left(), exposed.right()
        for path, rect, label, *_ in frames:
            if not rect.intersects(exposed):
                continue
            if rect.height() < 4000 and rect.width() < 4000:
                painter.drawPath(path)
            else:
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
                        painter.drawArc(QRectF(cx, cy, 20.0, 20.0),
                                        self._arc_start(cx == rect.left(), cy == rect.top()), 90 * 16)
            if top - 20 <= rect.top() <= bottom + 2:
                painter.setPen(v._colors["muted"])  # noqa: SLF001
                painter.drawText(QPointF(rect.left() + 10.0, rect.top() + 15.0), label)
                painter.setPen(pen)

    @staticmethod
    def _arc_start(is_left: bool, is_top: bool) -> int:
        if is_left and is_top:
            return 90 * 16
        if is_top:
            return 0
        if is_left:
            return 180 * 16
        return 270 * 16

    def _paint_detail(self, painter: QPainter, exposed: QRectF, lod: float, v: "GraphView", p: _Prepared) -> None:
        tiles = _visible(p.bands, p.band_starts, p.band_margin, exposed)
        if not tiles:
            return
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(v._edge_pen)  # noqa: SLF001
        for t in tiles:
            if not t.edges.isEmpty():
                painter.drawPath(t.edges)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(v._edge_brush)  # noqa: SLF001
        for t in tiles:
            if not t.arrows.isEmpty():
                painter.drawPath(t.arrows)
        brushes = v._brushes  # noqa: SLF001
        pens = v._box_pens  # noqa: SLF001
        for c in range(len(_CATEGORIES)):
            painter.setBrush(brushes[c])
            painter.setPen(pens[c])
            for t in tiles:
                path = t.boxes[c]
                if path is not None:
                    painter.drawPath(path)
        # texts of the nodes that meet the exposed rectangle
        left, right, top, bottom = exposed.left(), exposed.right(), exposed.top(), exposed.bottom()
        rects = p.rects
        shown: list[int] = []
        for t in tiles:
            for i in t.nodes:
                x0, y0, w, h = rects[i]
                if x0 <= right and x0 + w >= left and y0 <= bottom and y0 + h >= top:
                    shown.append(i)
        if not shown:
            return
        heat = v._heat_view if v._heat_shown else {}  # noqa: SLF001
        if heat:
            self._paint_heat(painter, [i for i in shown if i in heat], heat, v, p)
        half_h = v._node_height / 2.0  # noqa: SLF001
        painter.setPen(v._text_pen)  # noqa: SLF001
        font = v._title_font  # noqa: SLF001
        painter.setFont(font)
        titles = p.titles
        static = self._static
        draw = painter.drawStaticText
        for i in shown:
            x0, y0, w, h = rects[i]
            st, tw = static(0, titles[i], font)
            draw(QPointF(x0 + (w - tw) / 2.0, y0 + h / 2.0 - half_h + 5.0), st)
        if lod < SUBTITLE_SCALE:
            return
        font = v._sub_font  # noqa: SLF001
        painter.setFont(font)
        sub_h = v._sub_height  # noqa: SLF001
        subs = p.subs
        cats = v._cats  # noqa: SLF001
        # shape·dtype lines: muted on plain boxes, full text colour on the accent fill of changed ones
        # (muted grey on the accent colour is below readable contrast, light and dark)
        for pen, want_changed in ((v._muted_pen, False), (v._text_pen, True)):  # noqa: SLF001
            painter.setPen(pen)
            for i in shown:
                text = subs[i]
                if not text or (cats[i] == _CHANGED) != want_changed:
                    continue
                x0, y0, w, h = rects[i]
                st, tw = static(1, text, font)
                draw(QPointF(x0 + (w - tw) / 2.0, y0 + h / 2.0 + half_h - sub_h - 5.0), st)

    def _paint_heat(self, painter: QPainter, ids: list[int], heat: dict[int, float], v: "GraphView", p: _Prepared) -> None:
        """The profile's heat overlay: a red tint whose strength follows the node's share of the run time,
        and the share as ``12.3 %`` in a pill above the box's top-right corner."""
        if not ids:
            return
        top = max(heat.values()) or 1.0
        painter.save()
        font = v._sub_font  # noqa: SLF001
        painter.setFont(font)
        metrics = QFontMetricsF(font)
        for i in ids:
            share = heat[i]
            x0, y0, w, h = p.rects[i]
            colour = QColor(v._colors["heat"])  # noqa: SLF001
            colour.setAlphaF(0.12 + 0.5 * min(1.0, share / top))
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colour)
            painter.drawRoundedRect(QRectF(x0, y0, w, h), 6.0, 6.0)
            label = heat_label(share)
            tw = metrics.horizontalAdvance(label) + 8.0
            th = metrics.height() + 2.0
            pill = QRectF(x0 + w - tw - 2.0, y0 - th * 0.6, tw, th)
            painter.setBrush(v._colors["heat"])  # noqa: SLF001
            painter.drawRoundedRect(pill, th / 2.0, th / 2.0)
            painter.setPen(QPen(v._colors["heat_text"]))  # noqa: SLF001
            painter.drawText(pill, int(Qt.AlignmentFlag.AlignCenter), label)
        painter.restore()

    def _paint_overview(self, painter: QPainter, exposed: QRectF, v: "GraphView", p: _Prepared) -> None:
        tiles = _visible(p.coarse, p.coarse_starts, p.band_margin, exposed)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(v._overview_edge_pen)  # noqa: SLF001
        for t in tiles:
            if not t.edges.isEmpty():
                painter.drawPath(t.edges)
        painter.setPen(Qt.PenStyle.NoPen)
        brushes = v._overview_brushes  # noqa: SLF001
        for c in range(len(_CATEGORIES)):
            painter.setBrush(brushes[c])
            for t in tiles:
                path = t.boxes[c]
                if path is not None:
                    painter.drawPath(path)
        self._paint_group_labels(painter, exposed, v, p, tiles)

    def _paint_group_labels(self, painter: QPainter, exposed: QRectF, v: "GraphView", p: _Prepared,
                            tiles: list[_Tile]) -> None:
        """Far out: names of collapsed groups and expanded frames, in screen-size text (readable at any
        zoom); labels that would overlap an earlier one are skipped, at most a few hundred per paint.

        Geometry and overlap tests are plain Python arithmetic and label widths are cached: every Qt call
        from Python gives up the GIL and waits to get it back, which, while a worker thread runs Python,
        made this paint of a 50k-node model's ~800 groups take 100-170 ms instead of ~10."""
        world = painter.worldTransform()
        m11, m12, m21, m22, dx, dy = world.m11(), world.m12(), world.m21(), world.m22(), world.dx(), world.dy()
        if m12 or m21:  # rotated or sheared (the view never does this): Qt maps the rectangles
            def to_device(x: float, y: float, w: float, h: float) -> tuple[float, float, float, float]:
                r = world.mapRect(QRectF(x, y, w, h))
                return r.x(), r.y(), r.width(), r.height()
        else:
            def to_device(x: float, y: float, w: float, h: float) -> tuple[float, float, float, float]:
                return m11 * x + dx, m22 * y + dy, m11 * w, m22 * h
        fm = v._label_metrics  # noqa: SLF001
        widths = v._label_widths  # noqa: SLF001
        line_h = fm.height()
        items: list[tuple[tuple[float, float, float, float], str]] = []
        for _path, rect, label, _gid, kind in p.frames:
            if kind == "nested" and rect.intersects(exposed):
                items.append((to_device(rect.x(), rect.y(), rect.width(), rect.height()), label))
        gcat = _CAT_INDEX["group"]
        base_cats, rects, titles = p.base_cats, p.rects, p.titles
        for t in tiles:
            for i in t.nodes:
                if base_cats[i] == gcat:
                    items.append((to_device(*rects[i]), titles[i]))
        if not items:
            return
        painter.save()
        painter.resetTransform()
        painter.setFont(v._label_font)  # noqa: SLF001
        painter.setPen(v._text_pen)  # noqa: SLF001
        label_bg = v._label_bg  # noqa: SLF001
        centre = Qt.AlignmentFlag.AlignCenter
        placed: list[tuple[float, float, float, float]] = []
        drawn = 0
        for (x, y, w, h), label in items:
            room = max(40.0, w + 80.0)
            tw = widths.get(label)
            if tw is None:
                tw = widths[label] = fm.horizontalAdvance(label)
            text = label
            if tw > room:
                text = fm.elidedText(label, Qt.TextElideMode.ElideLeft, room)
                tw = fm.horizontalAdvance(text)
            bx = x + w / 2.0 - tw / 2.0
            by = y - 1.0 if h > 3 * line_h else y + h / 2.0 - line_h / 2.0
            bx1, by1 = bx + tw, by + line_h
            if any(bx < ox1 and ox0 < bx1 and by < oy1 and oy0 < by1 for ox0, oy0, ox1, oy1 in placed[-40:]):
                continue
            placed.append((bx, by, bx1, by1))
            painter.fillRect(QRectF(bx - 2.0, by, tw + 4.0, line_h), label_bg)
            painter.drawText(QRectF(bx, by, tw, line_h), centre, text)
            drawn += 1
            if drawn >= 300:
                break
        painter.restore()


class GraphView(QGraphicsView):
    """Zoomable, pannable node diagram of a Relax function graph JSON.

    Signals: ``node_selected(dict)`` on click (the node's attributes plus ``id``, ``inputs``, ``outputs``,
    ``input_types``), ``node_activated(dict)`` on double-click, ``graph_shown()`` once the scene of the
    latest :meth:`set_graph` is built, ``layout_failed(str)``, ``find_changed(int, int)`` (current match,
    1-based, and the number of matches), ``expansion_changed()``, ``function_requested(str)`` (the user
    asked to open a Relax function called by the graph: :meth:`open_callee`).

    Hierarchy (see :mod:`pipeline_model.graph_hierarchy`): a click on a collapsed group expands it, a click
    on an expanded group's frame title collapses it, a double-click on a call of a Relax function whose
    graph the engine attached expands it in place; :meth:`expand_all` / :meth:`collapse_all`. Layouts are
    cached per (key, expansion), so showing a graph again is instant.
    """

    node_selected = Signal(dict)
    node_activated = Signal(dict)
    graph_shown = Signal()
    layout_failed = Signal(str)
    find_changed = Signal(int, int)
    expansion_changed = Signal()
    function_requested = Signal(str)

    #: Layouts kept (per key and expansion).
    CACHE_SIZE = 24
    #: Graphs with more nodes are shown before their changes against ``before`` are coloured.
    HIGHLIGHT_LATER_NODES = 10_000

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self._scene = QGraphicsScene(self)
        self._scene.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.NoIndex)  # three items; own tile index
        self.setScene(self._scene)
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.MinimalViewportUpdate)
        self.setOptimizationFlags(
            QGraphicsView.OptimizationFlag.DontSavePainterState
            | QGraphicsView.OptimizationFlag.DontAdjustForAntialiasing
        )
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(True)

        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._signals = _LayoutSignals(self)
        self._signals.done.connect(self._on_prepared)
        self._signals.failed.connect(self._on_failed)
        self._generation = 0
        self._latest = [0]  # read by layout tasks to stop when superseded
        self._cache: "collections.OrderedDict[Any, _Prepared]" = collections.OrderedDict()
        self._last_expansion: dict[Any, frozenset[str]] = {}
        self._key: Any = None
        self._extra_highlight: frozenset[str] = frozenset()
        self._heat: dict[str, float] = {}  # full-graph node id -> share of the run time (0..1)
        self._heat_view: dict[int, float] = {}  # view node index -> share (collapsed groups sum)
        self._heat_shown = True
        self._matches: list[str] = []
        self._match_index = -1
        self._pending_reveal: Optional[str] = None
        self.last_from_cache = False
        self.cancelled_count = 0
        self._busy = False
        # the layout in flight: (graph JSON, key, expanded argument, before) of the set_graph call that started it
        self._in_flight: Optional[tuple[Any, Any, Any, Any]] = None
        # a set_graph call that only adds the "before" graph to the layout in flight: replayed when it is done
        self._after_layout: Optional[tuple[Any, frozenset[str], Any, Any, Any]] = None
        self._prepared: Optional[_Prepared] = None
        self._highlight: frozenset[str] = frozenset()
        self._cats: list[int] = []
        self._item: Optional[_DiagramItem] = None
        self._selection_item: Optional[QGraphicsPathItem] = None
        self._message_item: Optional[QGraphicsSimpleTextItem] = None
        self._selected: Optional[str] = None
        self._press_pos: Optional[QPointF] = None
        self._detail_mode: Optional[bool] = None
        self.last_layout_seconds = 0.0
        self.last_build_seconds = 0.0

        self._title_font = QFont(self.font())
        self._title_font.setBold(True)
        self._sub_font = QFont(self.font())
        self._sub_font.setPointSizeF(max(6.0, self.font().pointSizeF() * 0.85))
        fm_title = QFontMetricsF(self._title_font)
        fm_sub = QFontMetricsF(self._sub_font)
        self._char_width = max(fm_title.horizontalAdvance("m_x0") / 4.0, fm_sub.horizontalAdvance("m_x0") / 4.0) * 1.08
        self._node_height = max(36.0, fm_title.height() + fm_sub.height() + 14.0)
        self._sub_height = fm_sub.height()
        self._label_font = QFont(self.font())
        self._label_font.setBold(True)
        self._label_metrics = QFontMetricsF(self._label_font)
        self._label_widths: dict[str, float] = {}  # group label -> its width in the label font
        self._overview_widget = _Overview(self)
        self._colors: dict[str, Any] = {}
        self._update_colors()
        self.clear_graph(self.tr("No graph"))

    # ------------------------------------------------------------------------------------------ API
    def set_graph(self, graph_json: Any, highlight: Iterable[str] = frozenset(), *, key: Any = None,
                  before: Any = None, expanded: Optional[Iterable[str]] = None) -> None:
        """Show ``graph_json`` (a dict or JSON text; None clears), with the nodes in ``highlight`` plus the
        nodes changed since ``before`` (the graph JSON of the same function before the step, compared off
        the GUI thread) in the accent colour.

        ``key`` (hashable, e.g. ``(module_key, function)``) enables the layout cache: the same key and
        expansion come back without a new layout. ``expanded`` gives the expanded groups (default: the last
        expansion used for ``key``, else everything for small functions and nothing for large ones).
        Everything heavier than painting runs on a worker thread; ``graph_shown`` is emitted when the scene
        is ready (twice for a graph over ``HIGHLIGHT_LATER_NODES`` nodes with a ``before``: laid out, then
        coloured). A newer call cancels an older one still queued or running.
        """
        highlight = frozenset(highlight)
        expanded = frozenset(expanded) if expanded is not None else None
        asked = (graph_json, key, expanded)
        flight = self._in_flight
        if (self._busy and flight is not None and before is not None and flight[3] is None
                and flight[0] is graph_json and flight[1:3] == asked[1:]):
            # The same graph is being laid out without change detection; its "before" graph just
            # arrived: recolour the finished layout rather than start the layout again.
            self._after_layout = (graph_json, highlight, key, before, expanded)
            return
        self._after_layout = None
        self._in_flight = None
        self._generation += 1
        self._latest[0] = self._generation
        self._pool.clear()  # drop queued, not yet started layouts
        self._extra_highlight = highlight
        self._highlight = highlight
        self._key = key
        self._pending_reveal = None if self._prepared is None or self._prepared.full is not graph_json else \
            self._pending_reveal
        if graph_json is None or (isinstance(graph_json, dict) and not graph_json.get("nodes")):
            self._busy = False
            self.clear_graph(self.tr("Empty function") if graph_json is not None else self.tr("No graph"))
            self.graph_shown.emit()
            return
        if expanded is None and key is not None:
            expanded = self._last_expansion.get(key)
        exp = frozenset(expanded) if expanded is not None else None
        cached = self._cache.get((key, exp)) if key is not None and exp is not None else None
        self.last_from_cache = cached is not None
        if cached is not None:
            self._cache.move_to_end((key, exp))
            same_change_set = before is not None and cached.hl_before is before and cached.hl_extra == highlight
            if same_change_set or (before is None and cached.full_highlight == highlight):
                cached.generation = self._generation
                self._on_prepared(cached)  # instant: the scene is one item
                return
        if (before is not None and cached is None and isinstance(graph_json, dict)
                and len(graph_json.get("nodes") or ()) > self.HIGHLIGHT_LATER_NODES):
            # A large graph is painted first and its changes are coloured right after (comparing two
            # 50k-node graphs takes about as long as laying one out).
            self._after_layout = (graph_json, highlight, key, before, asked[2])
            before = None
        self._busy = True
        self._in_flight = (*asked, before)
        task = _LayoutTask(self._generation, self._latest, graph_json, highlight, before, exp,
                           self._char_width, self._node_height, self._signals, cached, key)
        self._pool.start(task)

    # ---- hierarchy
    def groups(self) -> dict[str, dict[str, Any]]:
        """The groups of the graph shown (see :func:`pipeline_model.graph_hierarchy.group_tree`)."""
        return dict(self._prepared.tree) if self._prepared is not None else {}

    def expanded_groups(self) -> frozenset[str]:
        """Ids of the expanded groups."""
        return self._prepared.expanded if self._prepared is not None else frozenset()

    def set_expanded(self, groups: Iterable[str]) -> None:
        """Show the graph with exactly ``groups`` expanded (laid out off the GUI thread, or from the cache)."""
        p = self._prepared
        if p is None or p.full is None:
            return
        exp = frozenset(g for g in groups if g in p.tree)
        if self._key is not None:
            self._last_expansion[self._key] = exp
        self.set_graph(p.full, self._extra_highlight | p.full_highlight, key=self._key, expanded=exp)
        self.expansion_changed.emit()

    def toggle_group(self, group_id: str) -> None:
        """Expand a collapsed group or collapse an expanded one (with the groups nested in it)."""
        exp = set(self.expanded_groups())
        if group_id in exp:
            exp = {g for g in exp if g != group_id and not self._inside(g, group_id)}
        else:
            exp.add(group_id)
            parent = self.groups().get(group_id, {}).get("parent")
            while parent:
                exp.add(parent)
                parent = self.groups().get(parent, {}).get("parent")
        self.set_expanded(exp)

    def _inside(self, group_id: str, outer: str) -> bool:
        tree = self.groups()
        parent = tree.get(group_id, {}).get("parent")
        while parent:
            if parent == outer:
                return True
            parent = tree.get(parent, {}).get("parent")
        return False

    def expand_all(self) -> None:
        """Expand every module group (calls stay collapsed: expand them one by one)."""
        self.set_expanded(g for g, info in self.groups().items() if info["kind"] == "module")

    def collapse_all(self) -> None:
        """Collapse every group."""
        self.set_expanded(())

    def open_callee(self, node_id: str) -> None:
        """Emit ``function_requested`` with the Relax function a call node calls (to open it as the graph)."""
        p = self._prepared
        if p is None:
            return
        attrs = p.attrs.get(node_id) or {}
        if attrs.get("callee") and attrs.get("callee_kind") == "relax_function":
            self.function_requested.emit(str(attrs["callee"]))

    # ---- find
    def find(self, text: str) -> list[str]:
        """Nodes of the whole function (collapsed groups and fused calls included) whose name, op, callee,
        module path or shape contains ``text``; the first is revealed (groups expanded as needed), centred
        and selected. Returns the matching ids (full-graph ids)."""
        p = self._prepared
        self._matches = graph_hierarchy.find_nodes(p.full, text) if p is not None and p.full is not None else []
        self._match_index = -1
        if self._matches:
            self.find_next()
        else:
            self.find_changed.emit(0, 0)
        return list(self._matches)

    def find_next(self) -> Optional[str]:
        """Reveal the next match (wraps); returns its id."""
        return self._step_match(1)

    def find_previous(self) -> Optional[str]:
        """Reveal the previous match (wraps); returns its id."""
        return self._step_match(-1)

    def current_match(self) -> Optional[str]:
        """Id of the match shown, or None."""
        if 0 <= self._match_index < len(self._matches):
            return self._matches[self._match_index]
        return None

    def _step_match(self, step: int) -> Optional[str]:
        if not self._matches:
            return None
        self._match_index = (self._match_index + step) % len(self._matches)
        node = self._matches[self._match_index]
        self.find_changed.emit(self._match_index + 1, len(self._matches))
        self.reveal(node)
        return node

    def reveal(self, node_id: str) -> None:
        """Expand the groups around a node of the full graph if needed, then centre and select it."""
        p = self._prepared
        if p is None or p.full is None:
            return
        need = graph_hierarchy.groups_of(p.full, node_id, _tree=p.tree)
        missing = [g for g in need if g not in p.expanded]
        if missing:
            self._pending_reveal = node_id
            self.set_expanded(set(p.expanded) | set(missing))
            return
        self._centre_select(node_id)

    def _centre_select(self, node_id: str) -> None:
        p = self._prepared
        if p is None:
            return
        shown = node_id if node_id in p.index else p.rep.get(node_id, node_id)
        if shown not in p.index:
            return
        if self.current_scale() < 0.8:
            self.resetTransform()
            self.scale(0.9, 0.9)
            self._apply_lod()
        self.select_node(shown, center=True)

    def set_highlight(self, ids: Iterable[str]) -> None:
        """Change the highlighted (changed-by-step) nodes (ids of the full graph) of the graph shown."""
        self._extra_highlight = frozenset(ids)
        p = self._prepared
        if p is None:
            self._highlight = self._extra_highlight
            return
        _apply_highlight(p, self._extra_highlight)
        self._highlight = p.highlight
        self._cats = _categories(p.base_cats, p.ids, self._highlight)
        if self._item is not None:
            self._item.update()

    def highlighted(self) -> frozenset[str]:
        """Ids of the highlighted nodes."""
        return self._highlight

    def set_heat(self, shares: dict[str, float]) -> None:
        """The profile's heat overlay: ``{node id of the full graph: share of the run time (0..1)}`` (empty:
        none). Each node is tinted by its share and labelled ``12.3 %``; a collapsed group shows the sum
        of its members. Kept across :meth:`set_graph` (ids that are not in the shown graph are ignored)."""
        self._heat = {str(k): float(v) for k, v in (shares or {}).items() if float(v) > 0.0}
        self._update_heat_view()

    def heat(self) -> dict[str, float]:
        """The heat overlay's shares (full-graph ids)."""
        return dict(self._heat)

    def set_heat_visible(self, visible: bool) -> None:
        """Show or hide the heat overlay (View ▸ Profile Heat Overlay)."""
        self._heat_shown = bool(visible)
        if self._item is not None:
            self._item.update()

    def heat_visible(self) -> bool:
        """True when the heat overlay is painted (shown and there is one for the nodes on screen)."""
        return self._heat_shown and bool(self._heat_view)

    def node_heat(self, node_id: str) -> Optional[float]:
        """The share painted on a shown node (view id), or None."""
        p = self._prepared
        if p is None or node_id not in p.index:
            return None
        return self._heat_view.get(p.index[node_id])

    def _update_heat_view(self) -> None:
        p = self._prepared
        self._heat_view = {}
        if p is not None and self._heat:
            for full_id, share in self._heat.items():
                vid = p.rep.get(full_id, full_id)
                if vid in p.index:
                    i = p.index[vid]
                    self._heat_view[i] = self._heat_view.get(i, 0.0) + share
        if self._item is not None:
            self._item.update()

    def is_busy(self) -> bool:
        """True while a layout is running for the latest :meth:`set_graph`."""
        return self._busy

    def graph_json(self) -> Optional[dict[str, Any]]:
        """The graph JSON of the whole function shown (None when none)."""
        if self._prepared is None:
            return None
        return self._prepared.full if self._prepared.full is not None else self._prepared.data

    def view_json(self) -> Optional[dict[str, Any]]:
        """The graph laid out: collapsed groups as single nodes, stubs, inlined calls (None when none)."""
        return self._prepared.data if self._prepared is not None else None

    def shown_node(self, node_id: str) -> Optional[str]:
        """The view node that shows a node of the full graph (itself, or its collapsed group)."""
        p = self._prepared
        if p is None:
            return None
        if node_id in p.index:
            return node_id
        shown = p.rep.get(node_id)
        return shown if shown in p.index else None

    def overview(self) -> QWidget:
        """The minimap widget (bottom right; the viewport rectangle; click or drag to move there)."""
        return self._overview_widget

    def set_overview_visible(self, visible: bool) -> None:
        """Show or hide the minimap."""
        self._overview_widget.wanted = visible
        self._sync_overview()

    def _sync_overview(self) -> None:
        """The minimap is shown when wanted and the graph does not fit in the viewport (it would only hide
        part of a graph that is wholly visible)."""
        ov = self._overview_widget
        show = ov.wanted and self._prepared is not None
        if show:
            visible = self.mapToScene(self.viewport().rect()).boundingRect().adjusted(-1, -1, 1, 1)
            show = not visible.contains(self._scene.sceneRect())
        if ov.isVisible() != show:
            ov.setVisible(show)

    def clear_cache(self) -> None:
        """Forget the cached layouts (e.g. when the engine restarted and keys are reused)."""
        self._cache.clear()
        self._last_expansion.clear()

    def cache_size(self) -> int:
        """Number of cached layouts."""
        return len(self._cache)

    def graph_layout(self) -> Optional[GraphLayout]:
        """The layout of the graph shown."""
        return self._prepared.layout if self._prepared is not None else None

    def node_ids(self) -> list[str]:
        """Ids of the nodes shown."""
        return list(self._prepared.ids) if self._prepared is not None else []

    def node_rect(self, node_id: str) -> Optional[QRectF]:
        """The box of a node in scene coordinates (None if it is not shown)."""
        p = self._prepared
        if p is None or node_id not in p.index:
            return None
        return QRectF(*p.rects[p.index[node_id]])

    def node_fill(self, node_id: str) -> Optional[QColor]:
        """The colour a node's box is filled with (its category, or the highlight colour)."""
        p = self._prepared
        if p is None or node_id not in p.index:
            return None
        return QColor(self._brushes[self._cats[p.index[node_id]]].color())

    def node_info(self, node_id: str) -> dict[str, Any]:
        """The node's attributes plus ``id``, ``inputs``, ``outputs`` and ``input_types``."""
        assert self._prepared is not None
        p = self._prepared
        info = {k: v for k, v in p.attrs[node_id].items() if k != "id"}
        info["id"] = node_id
        info["inputs"] = list(p.inputs.get(node_id, []))
        info["outputs"] = list(p.outputs.get(node_id, []))
        info["input_types"] = [str(p.attrs[i].get("type_text") or "") for i in info["inputs"]]
        info["changed"] = node_id in self._highlight
        return info

    def selected_node(self) -> Optional[str]:
        """Id of the selected node, or None."""
        return self._selected

    def select_node(self, node_id: Optional[str], center: bool = False, emit: bool = True) -> None:
        """Select a node (outline), optionally centre the view on it; emits ``node_selected``."""
        rect = self.node_rect(node_id) if node_id is not None else None
        if rect is None:
            self._selected = None
            if self._selection_item is not None:
                self._selection_item.setVisible(False)
            return
        self._selected = node_id
        assert self._selection_item is not None
        path = QPainterPath()
        p = self._prepared
        assert p is not None
        radius = rect.height() / 2.0 if p.pills[p.index[node_id]] else NODE_RADIUS
        path.addRoundedRect(rect, radius, radius)
        self._selection_item.setPath(path)
        self._selection_item.setVisible(True)
        if center:
            self.centerOn(rect.center())
        if emit:
            self.node_selected.emit(self.node_info(node_id))

    def node_at(self, scene_pos: QPointF) -> Optional[str]:
        """Id of the node under a scene position (binary search in the layout rows), or None."""
        p = self._prepared
        if p is None or not p.row_ys:
            return None
        y = scene_pos.y()
        k = bisect.bisect_left(p.row_ys, y)
        for idx in (k - 1, k):
            if 0 <= idx < len(p.row_ys):
                row = p.rows[idx]
                if not row:
                    continue
                h = p.layout.sizes[row[0][2]][1]
                if abs(p.row_ys[idx] - y) > h / 2.0:
                    continue
                x = scene_pos.x()
                j = bisect.bisect_right(row, (x, float("inf"), "")) - 1
                if j >= 0 and row[j][0] <= x <= row[j][1]:
                    return row[j][2]
        return None

    def fit_to_view(self) -> None:
        """Zoom so the whole graph fits (a deep graph then shows as the overview; zoom in for details)."""
        rect = self._scene.itemsBoundingRect() if self._prepared is None else self._scene.sceneRect()
        if rect.isEmpty():
            return
        self.resetTransform()
        self.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)
        self._apply_lod()

    def zoom_by(self, factor: float) -> None:
        """Zoom by ``factor`` around the mouse (or the centre), within the scale limits."""
        current = self.transform().m11()
        target = min(MAX_SCALE, max(MIN_SCALE, current * factor))
        if target != current:
            self.scale(target / current, target / current)
        self._apply_lod()

    def reset_zoom(self) -> None:
        """Scale 1:1."""
        self.resetTransform()
        self._apply_lod()

    def current_scale(self) -> float:
        """The view scale (1.0 = one scene unit per pixel)."""
        return self.transform().m11()

    def detail_shown(self) -> bool:
        """True when boxes and texts are shown (False: the far-out overview)."""
        return bool(self._detail_mode)

    def clear_graph(self, message: str = "") -> None:
        """Remove everything; show ``message`` in the middle."""
        self._scene.clear()
        self._prepared = None
        self._item = None
        self._cats = []
        self._selection_item = None
        self._selected = None
        self._detail_mode = None
        self._message_item = None
        if hasattr(self, "_overview_widget"):
            self._overview_widget.setVisible(False)
        if message:
            self._message_item = self._scene.addSimpleText(message)
            self._message_item.setBrush(self._colors["muted"])
            self._scene.setSceneRect(self._message_item.boundingRect().adjusted(-40, -40, 40, 40))

    # ------------------------------------------------------------------------------------------ build
    def _on_failed(self, generation: int, message: str) -> None:
        if generation != self._generation:
            return
        self._busy = False
        self._in_flight = self._after_layout = None
        self.clear_graph(self.tr("Cannot lay out the graph: {message}").format(message=message))
        self.layout_failed.emit(message)

    def _on_prepared(self, prepared: _Prepared) -> None:
        if prepared.generation != self._generation:
            self.cancelled_count += 1
            return  # an older request finished after a newer one started: drop it
        timer = QElapsedTimer()
        timer.start()
        keep_selected = self._selected
        if self._key is not None:
            self._cache[(self._key, prepared.expanded)] = prepared
            self._cache.move_to_end((self._key, prepared.expanded))
            while len(self._cache) > self.CACHE_SIZE:
                self._cache.popitem(last=False)
            self._last_expansion[self._key] = prepared.expanded
        self._build(prepared)
        self.last_layout_seconds = prepared.seconds
        self.last_build_seconds = timer.elapsed() / 1000.0
        self._busy = False
        if keep_selected is not None and self.node_rect(keep_selected) is not None:
            self.select_node(keep_selected, emit=False)
        pending, self._pending_reveal = self._pending_reveal, None
        if pending is not None:
            self._centre_select(pending)
        self._overview_widget.update()
        self._in_flight = None
        self.graph_shown.emit()
        replay, self._after_layout = self._after_layout, None
        if replay is not None:
            graph_json, highlight, key, before, expanded = replay
            self.set_graph(graph_json, highlight, key=key, before=before, expanded=expanded)

    def _build(self, p: _Prepared) -> None:
        self.clear_graph("")
        self._prepared = p
        self._highlight = p.highlight
        self._cats = _categories(p.base_cats, p.ids, p.highlight)
        item = _DiagramItem(self, p)
        self._item = None
        self._update_heat_view()
        self._scene.setSceneRect(item.boundingRect())
        self._scene.addItem(item)
        self._item = item
        sel = QGraphicsPathItem()
        sel.setZValue(20)
        sel.setVisible(False)
        self._scene.addItem(sel)
        self._selection_item = sel
        self._apply_colors()
        self._detail_mode = None
        self._apply_lod()
        self._sync_overview()
        self._place_overview()

    def _place_overview(self) -> None:
        ov = self._overview_widget
        vp = self.viewport().geometry()
        ov.move(vp.right() - ov.width() - 8, vp.bottom() - ov.height() - 8)
        # In a small view (a 1024×700 window) the minimap would cover most of the graph: hidden there.
        roomy = vp.width() >= 2.5 * ov.width() and vp.height() >= 1.6 * ov.height()
        ov.setVisible(bool(ov.wanted) and self._prepared is not None and roomy)
        ov.raise_()

    def scrollContentsBy(self, dx: int, dy: int) -> None:  # noqa: N802 - Qt API
        super().scrollContentsBy(dx, dy)
        self._sync_overview()
        self._overview_widget.update()

    # ------------------------------------------------------------------------------------------ look
    def _update_colors(self) -> None:
        pal = self.palette()
        base = pal.color(QPalette.ColorRole.Base)
        text = pal.color(QPalette.ColorRole.Text)
        dark = base.lightness() < 128
        try:
            accent = pal.color(QPalette.ColorRole.Accent)
        except AttributeError:  # Qt < 6.6
            accent = pal.color(QPalette.ColorRole.Highlight)
        changed = QColor("#e0a020") if not dark else QColor("#c88a10")
        tint = 0.22 if dark else 0.16
        c = self._colors = {
            "base": base,
            "text": text,
            "muted": _blend(text, base, 0.45),
            "edge": _blend(text, base, 0.55),
            "frame_fill": _blend(base, QColor("#4a90d9"), 0.06),
            "frame_pen": _blend(text, base, 0.7),
            "binding": _blend(base, QColor("#4a7bd0"), tint),
            "call": _blend(base, QColor("#8a5cd0"), tint),
            "param": _blend(base, QColor("#3aa55a"), tint + 0.05),
            "constant": _blend(base, QColor("#808080"), tint),
            "output": _blend(base, QColor("#d0603a"), tint + 0.05),
            "group": _blend(base, QColor("#2a9d8f"), tint + 0.08),
            "stub": _blend(base, QColor("#3aa55a"), tint * 0.6),
            "changed": _blend(base, changed, 0.75),
            "changed_pen": changed.darker(130) if not dark else changed.lighter(130),
            "border": _blend(text, base, 0.5),
            "selection": accent,
            "heat": QColor("#d7301f") if not dark else QColor("#ef6548"),
            "heat_text": QColor("#ffffff"),
        }
        # what the diagram item paints with (built once per palette, not per paint)
        self._brushes = [QBrush(c[cat]) for cat in _CATEGORIES]
        border = QPen(c["border"], 1.0)
        self._box_pens = [border] * len(_CATEGORIES)
        self._box_pens[_CHANGED] = QPen(c["changed_pen"], 2.4)
        self._overview_brushes = [QBrush(c[cat] if cat != "changed" else c["changed_pen"]) for cat in _CATEGORIES]
        self._edge_pen = QPen(c["edge"], 1.3)
        self._edge_pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        self._edge_brush = QBrush(c["edge"])
        self._overview_edge_pen = QPen(c["edge"], 0)  # cosmetic: one pixel at any zoom
        self._frame_brush = QBrush(c["frame_fill"])
        self._frame_pen = QPen(c["frame_pen"], 1.2, Qt.PenStyle.DashLine)
        self._text_pen = QPen(c["text"])
        self._label_bg = _blend(base, text, 0.04)
        self._muted_pen = QPen(c["muted"])

    def _apply_colors(self) -> None:
        c = self._colors
        self.setBackgroundBrush(QBrush(c["base"]))
        if self._message_item is not None:
            self._message_item.setBrush(c["muted"])
        if self._selection_item is not None:
            self._selection_item.setPen(QPen(c["selection"], 3.0))
            self._selection_item.setBrush(Qt.BrushStyle.NoBrush)
        if self._item is not None:
            self._item.update()
        self.resetCachedContent()

    def _apply_lod(self) -> None:
        """Record whether the detail or the overview is drawn (the item decides per paint from the scale)."""
        self._detail_mode = self.transform().m11() >= LOD_SCALE
        if hasattr(self, "_overview_widget"):
            self._sync_overview()

    # ------------------------------------------------------------------------------------------ events
    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._update_colors()
            self._apply_colors()
        super().changeEvent(event)

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 - Qt API
        delta = event.angleDelta().y()
        if delta == 0:
            super().wheelEvent(event)
            return
        self.zoom_by(1.0015 ** delta)  # 120 units (one notch) = x1.2
        event.accept()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt API
        key = event.key()
        if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom_by(1.25)
        elif key in (Qt.Key.Key_Minus, Qt.Key.Key_Underscore):
            self.zoom_by(0.8)
        elif key == Qt.Key.Key_0:
            self.fit_to_view()
        elif key == Qt.Key.Key_1:
            self.reset_zoom()
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        self._press_pos = event.position()
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        super().mouseReleaseEvent(event)
        if event.button() == Qt.MouseButton.LeftButton and self._press_pos is not None:
            moved = (event.position() - self._press_pos).manhattanLength()
            if moved < 5:
                scene_pos = self.mapToScene(event.position().toPoint())
                node = self.node_at(scene_pos)
                p = self._prepared
                if node is not None and p is not None and p.attrs[node].get("kind") == "group":
                    self.toggle_group(str(p.attrs[node]["group_id"]))
                elif node is None and self._frame_title_at(scene_pos) is not None:
                    self.toggle_group(str(self._frame_title_at(scene_pos)))
                else:
                    self.select_node(node)
        self._press_pos = None

    def _frame_title_at(self, scene_pos: QPointF) -> Optional[str]:
        """The expanded group whose frame title band (its top edge) is at ``scene_pos``, innermost first."""
        p = self._prepared
        if p is None:
            return None
        for _path, rect, _label, gid, kind in reversed(p.frames):
            if kind == "nested" and rect.left() <= scene_pos.x() <= rect.right() \
                    and rect.top() <= scene_pos.y() <= rect.top() + 18.0:
                return str(gid)
        return None

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        node = self.node_at(self.mapToScene(event.position().toPoint()))
        p = self._prepared
        if node is not None and p is not None and graph_hierarchy.CALL_PREFIX + node in p.tree:
            self.toggle_group(graph_hierarchy.CALL_PREFIX + node)  # a fused call: expand it in place
            event.accept()
            return
        if node is not None:
            self.select_node(node, emit=False)
            self.node_activated.emit(self.node_info(node))
            event.accept()
            return
        super().mouseDoubleClickEvent(event)

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.ToolTip:
            node = self.node_at(self.mapToScene(event.pos()))
            if node is None:
                QToolTip.hideText()
            else:
                QToolTip.showText(event.globalPos(), self.tooltip_html(node), self.viewport())
            return True
        return super().viewportEvent(event)

    def tooltip_html(self, node_id: str) -> str:
        """Tooltip text of a node: name, op/callee, type, attributes."""
        info = self.node_info(node_id)
        esc = html.escape
        lines = [f"<b>{esc(str(info.get('name') or node_id))}</b> <i>({esc(str(info.get('kind')))})</i>"]
        if info.get("op"):
            lines.append(f"op: {esc(str(info['op']))}")
        if info.get("callee"):
            extra = f" [{esc(str(info['callee_kind']))}]" if info.get("callee_kind") else ""
            lines.append(f"callee: {esc(str(info['callee']))}{extra}")
        if info.get("composite"):
            lines.append(f"composite: {esc(str(info['composite']))}")
        if info.get("type_text"):
            lines.append(f"type: <code>{esc(str(info['type_text']))}</code>")
        for k, v in (info.get("attrs") or {}).items():
            lines.append(f"{esc(str(k))} = <code>{esc(str(v))}</code>")
        if info.get("changed"):
            lines.append("<i>changed by the selected step</i>")
        return "<br>".join(lines)

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        self._apply_lod()
        self._place_overview()


class _Overview(QWidget):
    """Minimap: the whole layout as a small image (painted off the GUI thread) and the viewport rectangle;
    a click or drag centres the view there."""

    def __init__(self, view: GraphView) -> None:
        super().__init__(view)
        self._view = view
        self.wanted = True
        self.resize(OVERVIEW_W + 8, OVERVIEW_H + 8)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip(self.tr("Overview: click or drag to move the view"))
        self.setVisible(False)

    def _geometry(self) -> tuple[Any, float, float, float]:
        p = self._view._prepared  # noqa: SLF001 - the view's own helper widget
        img = p.overview if p is not None else None
        if img is None:
            return None, 1.0, 0.0, 0.0
        ox = (self.width() - img.width()) / 2.0
        oy = (self.height() - img.height()) / 2.0
        return img, p.overview_scale, ox, oy

    def viewport_rect(self) -> QRectF:
        """The view's visible scene rectangle in minimap coordinates."""
        img, scale, ox, oy = self._geometry()
        if img is None:
            return QRectF()
        vis = self._view.mapToScene(self._view.viewport().rect()).boundingRect()
        return QRectF(ox + vis.left() * scale, oy + vis.top() * scale, vis.width() * scale, vis.height() * scale)

    def paintEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        img, scale, ox, oy = self._geometry()
        painter = QPainter(self)
        try:
            c = self._view._colors  # noqa: SLF001
            painter.fillRect(self.rect(), _blend(c["base"], c["text"], 0.06))
            painter.setPen(QPen(c["border"], 1.0))
            painter.drawRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5))
            if img is None:
                return
            painter.drawImage(QPointF(ox, oy), img)
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
        self._move_to(event.position())
        event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        if event.buttons() & Qt.MouseButton.LeftButton:
            self._move_to(event.position())
        event.accept()


def wait_shown(view: GraphView, timeout_ms: int = 10000) -> bool:
    """Process events until the view has no layout in flight (for scripts and benchmarks)."""
    timer = QElapsedTimer()
    timer.start()
    app = QApplication.instance()
    while view.is_busy() and timer.elapsed() < timeout_ms:
        app.processEvents()
        view._pool.waitForDone(5)  # noqa: SLF001 - helper of this module
    app.processEvents()
    return not view.is_busy()
