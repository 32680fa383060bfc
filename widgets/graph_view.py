"""Node diagram of one Relax function: ``GraphView`` (a ``QGraphicsView``).

Feed it the graph JSON of :func:`pipeline_model.ir_graph.graph_to_json` (what the engine's ``graph`` command
returns under ``"graph"``) with :meth:`GraphView.set_graph`. The layered layout runs on a ``QThreadPool``
thread together with the construction of every ``QPainterPath``; a generation counter drops the result of
an older request, so a slow layout can never replace a newer graph. The GUI thread only creates items.

Speed (5,000 nodes): stock C++ items only (no Python ``paint()``), one path item per edge, all arrowheads in
one item, and a level-of-detail switch: far out, the detail layer (boxes, texts, edges) is hidden and an
overview layer of a few merged paths is shown instead -- two ``setVisible`` calls when the zoom crosses the
threshold, never per-frame Python work proportional to the node count. Hit testing (click, hover tooltip)
uses a per-row index of the layout (binary search), not the scene's items.
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
    QPixmapCache,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QToolTip,
    QWidget,
)

from pipeline_model.ir_graph import graph_from_json
from pipeline_model.layout import GraphLayout, compute_layout, node_text

_TEXT_CACHE = QGraphicsItem.CacheMode.ItemCoordinateCache

#: Below this view scale the overview layer replaces boxes, texts and arrowheads.
LOD_SCALE = 0.42
MIN_SCALE = 0.0005
MAX_SCALE = 6.0
NODE_RADIUS = 6.0
ARROW = 7.0

_CATEGORIES = ("binding", "call", "param", "constant", "output", "changed")

def _category(attrs: dict[str, Any]) -> str:
    kind = attrs.get("kind")
    if kind in ("param", "constant", "output"):
        return str(kind)
    return "call" if attrs.get("callee") else "binding"


@dataclass
class _Prepared:
    """What the layout thread hands to the GUI thread."""

    generation: int
    data: dict[str, Any]
    layout: GraphLayout
    attrs: dict[str, dict[str, Any]]
    texts: dict[str, tuple[str, str]]
    node_paths: dict[str, QPainterPath]
    edge_paths: list[tuple[str, str, QPainterPath]]
    arrows: QPainterPath
    overview_nodes: dict[str, QPainterPath]
    overview_edges: QPainterPath
    row_ys: list[float]
    rows: list[list[tuple[float, float, str]]]
    inputs: dict[str, list[str]]
    outputs: dict[str, list[str]]
    highlight: frozenset[str]
    seconds: float = 0.0


class _LayoutSignals(QObject):
    done = Signal(object)
    failed = Signal(int, str)


class _LayoutTask(QRunnable):
    """Layout + path construction for one graph, off the GUI thread."""

    def __init__(self, generation: int, data: dict[str, Any], highlight: frozenset[str], char_width: float,
                 node_height: float, signals: _LayoutSignals) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self.generation = generation
        self.data = data
        self.highlight = highlight
        self.char_width = char_width
        self.node_height = node_height
        self.signals = signals

    def run(self) -> None:  # noqa: D102 - QRunnable API
        timer = QElapsedTimer()
        timer.start()
        try:
            prepared = _prepare(self.generation, self.data, self.highlight, self.char_width, self.node_height)
        except Exception as exc:  # noqa: BLE001 - reported to the view, which shows it
            self.signals.failed.emit(self.generation, f"{type(exc).__name__}: {exc}")
            return
        prepared.seconds = timer.elapsed() / 1000.0
        self.signals.done.emit(prepared)


def _prepare(generation: int, data: dict[str, Any], highlight: frozenset[str], char_width: float,
             node_height: float) -> _Prepared:
    g = graph_from_json(data)
    lay = compute_layout(g, char_width=char_width, node_height=node_height)
    attrs: dict[str, dict[str, Any]] = {}
    texts: dict[str, tuple[str, str]] = {}
    node_paths: dict[str, QPainterPath] = {}
    overview = {c: QPainterPath() for c in _CATEGORIES}
    for n, d in g.nodes(data=True):
        attrs[n] = d
        texts[n] = node_text(d)
        x, y = lay.positions[n]
        w, h = lay.sizes[n]
        rect = QRectF(x - w / 2.0, y - h / 2.0, w, h)
        path = QPainterPath()
        if d.get("kind") in ("param", "output"):
            path.addRoundedRect(rect, h / 2.0, h / 2.0)  # pills for the function's inputs and outputs
        else:
            path.addRoundedRect(rect, NODE_RADIUS, NODE_RADIUS)
        node_paths[n] = path
        overview["changed" if n in highlight else _category(d)].addRect(rect)
    edge_paths: list[tuple[str, str, QPainterPath]] = []
    arrows = QPainterPath()
    overview_edges = QPainterPath()
    for (u, v), pts in lay.edges.items():
        path = QPainterPath(QPointF(*pts[0]))
        for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
            dy = (y1 - y0) / 2.0
            path.cubicTo(QPointF(x0, y0 + dy), QPointF(x1, y1 - dy), QPointF(x1, y1))
        edge_paths.append((u, v, path))
        overview_edges.moveTo(*pts[0])
        for p in pts[1:]:
            overview_edges.lineTo(*p)
        ex, ey = pts[-1]
        sign = 1.0 if pts[-1][1] >= pts[-2][1] else -1.0
        arrows.moveTo(ex, ey)
        arrows.lineTo(ex - ARROW / 2.0, ey - sign * ARROW)
        arrows.lineTo(ex + ARROW / 2.0, ey - sign * ARROW)
        arrows.closeSubpath()
    by_y: dict[float, list[tuple[float, float, str]]] = {}
    for n, (x, y) in lay.positions.items():
        w, _ = lay.sizes[n]
        by_y.setdefault(y, []).append((x - w / 2.0, x + w / 2.0, n))
    row_ys = sorted(by_y)
    rows = [sorted(by_y[y]) for y in row_ys]
    inputs = {n: [u for u, _ in sorted(g.in_edges(n), key=lambda e: g.edges[e].get("index", 0))] for n in g}
    outputs = {n: list(g.successors(n)) for n in g}
    return _Prepared(generation, data, lay, attrs, texts, node_paths, edge_paths, arrows, overview,
                     overview_edges, row_ys, rows, inputs, outputs, frozenset(highlight))


def _blend(a: QColor, b: QColor, t: float) -> QColor:
    return QColor(
        round(a.red() * (1 - t) + b.red() * t),
        round(a.green() * (1 - t) + b.green() * t),
        round(a.blue() * (1 - t) + b.blue() * t),
    )


class GraphView(QGraphicsView):
    """Zoomable, pannable node diagram of a Relax function graph JSON.

    Signals: ``node_selected(dict)`` on click (the node's attributes plus ``id``, ``inputs``, ``outputs``,
    ``input_types``), ``node_activated(dict)`` on double-click, ``graph_shown()`` once the scene of the
    latest :meth:`set_graph` is built, ``layout_failed(str)``.
    """

    node_selected = Signal(dict)
    node_activated = Signal(dict)
    graph_shown = Signal()
    layout_failed = Signal(str)

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self._scene = QGraphicsScene(self)
        self._scene.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.BspTreeIndex)
        self.setScene(self._scene)
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setOptimizationFlags(
            QGraphicsView.OptimizationFlag.DontSavePainterState
            | QGraphicsView.OptimizationFlag.DontAdjustForAntialiasing
        )
        self.setCacheMode(QGraphicsView.CacheModeFlag.CacheBackground)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(True)

        if QPixmapCache.cacheLimit() < 96 * 1024:
            QPixmapCache.setCacheLimit(96 * 1024)  # KiB: room for the cached texts of the visible nodes
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._signals = _LayoutSignals(self)
        self._signals.done.connect(self._on_prepared)
        self._signals.failed.connect(self._on_failed)
        self._generation = 0
        self._busy = False
        self._prepared: Optional[_Prepared] = None
        self._highlight: frozenset[str] = frozenset()
        self._node_items: dict[str, QGraphicsPathItem] = {}
        self._title_items: dict[str, QGraphicsSimpleTextItem] = {}
        self._sub_items: dict[str, QGraphicsSimpleTextItem] = {}
        self._edge_items: list[QGraphicsPathItem] = []
        self._frame_items: list[tuple[QGraphicsPathItem, QGraphicsSimpleTextItem]] = []
        self._overview_items: dict[str, QGraphicsPathItem] = {}
        self._detail: Optional[QGraphicsRectItem] = None
        self._overview: Optional[QGraphicsRectItem] = None
        self._arrow_item: Optional[QGraphicsPathItem] = None
        self._overview_edge_item: Optional[QGraphicsPathItem] = None
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
        self._colors: dict[str, Any] = {}
        self._update_colors()
        self.clear_graph("No graph")

    # ------------------------------------------------------------------------------------------ API
    def set_graph(self, graph_json: Optional[dict[str, Any]], highlight: Iterable[str] = frozenset()) -> None:
        """Show ``graph_json`` (None clears), with the nodes in ``highlight`` in the accent colour.

        The layout runs on a worker thread; ``graph_shown`` is emitted when the scene is ready. A newer
        call supersedes an older one still running (its result is dropped).
        """
        self._generation += 1
        self._highlight = frozenset(highlight)
        if graph_json is None or not graph_json.get("nodes"):
            self._busy = False
            self.clear_graph("Empty function" if graph_json is not None else "No graph")
            self.graph_shown.emit()
            return
        self._busy = True
        task = _LayoutTask(self._generation, graph_json, self._highlight, self._char_width, self._node_height,
                           self._signals)
        self._pool.start(task)

    def set_highlight(self, ids: Iterable[str]) -> None:
        """Change the highlighted (changed-by-step) nodes of the graph shown."""
        self._highlight = frozenset(ids)
        if self._prepared is None:
            return
        overview = {c: QPainterPath() for c in _CATEGORIES}
        lay = self._prepared.layout
        for n, d in self._prepared.attrs.items():
            x, y = lay.positions[n]
            w, h = lay.sizes[n]
            overview["changed" if n in self._highlight else _category(d)].addRect(QRectF(x - w / 2, y - h / 2, w, h))
        self._prepared.overview_nodes = overview
        for c, item in self._overview_items.items():
            item.setPath(overview[c])
        self._apply_colors()

    def highlighted(self) -> frozenset[str]:
        """Ids of the highlighted nodes."""
        return self._highlight

    def is_busy(self) -> bool:
        """True while a layout is running for the latest :meth:`set_graph`."""
        return self._busy

    def graph_json(self) -> Optional[dict[str, Any]]:
        """The graph JSON shown (None when none)."""
        return self._prepared.data if self._prepared is not None else None

    def graph_layout(self) -> Optional[GraphLayout]:
        """The layout of the graph shown."""
        return self._prepared.layout if self._prepared is not None else None

    def node_ids(self) -> list[str]:
        """Ids of the nodes shown."""
        return list(self._node_items)

    def node_item(self, node_id: str) -> Optional[QGraphicsPathItem]:
        """The box item of a node (for tests and for centring)."""
        return self._node_items.get(node_id)

    def node_info(self, node_id: str) -> dict[str, Any]:
        """The node's attributes plus ``id``, ``inputs``, ``outputs`` and ``input_types``."""
        assert self._prepared is not None
        p = self._prepared
        info = dict(p.attrs[node_id])
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
        if node_id is None or node_id not in self._node_items:
            self._selected = None
            if self._selection_item is not None:
                self._selection_item.setVisible(False)
            return
        self._selected = node_id
        assert self._selection_item is not None
        self._selection_item.setPath(self._node_items[node_id].path())
        self._selection_item.setVisible(True)
        if center:
            self.centerOn(self._node_items[node_id])
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
        """Zoom so the whole graph fits (a tall graph is fitted to the width, top first, when the fit
        would make the boxes unreadably small); with very deep graphs the user zooms out further."""
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
        self._node_items = {}
        self._title_items = {}
        self._sub_items = {}
        self._edge_items = []
        self._frame_items = []
        self._overview_items = {}
        self._detail = self._overview = None
        self._arrow_item = self._overview_edge_item = self._selection_item = None
        self._selected = None
        self._detail_mode = None
        self._message_item = None
        if message:
            self._message_item = self._scene.addSimpleText(message)
            self._message_item.setBrush(self._colors["muted"])
            self._scene.setSceneRect(self._message_item.boundingRect().adjusted(-40, -40, 40, 40))

    # ------------------------------------------------------------------------------------------ build
    def _on_failed(self, generation: int, message: str) -> None:
        if generation != self._generation:
            return
        self._busy = False
        self.clear_graph(f"Cannot lay out the graph: {message}")
        self.layout_failed.emit(message)

    def _on_prepared(self, prepared: _Prepared) -> None:
        if prepared.generation != self._generation:
            return  # an older request finished after a newer one started: drop it
        timer = QElapsedTimer()
        timer.start()
        keep_selected = self._selected
        self.setUpdatesEnabled(False)
        try:
            self._build(prepared)
        finally:
            self.setUpdatesEnabled(True)
        self.last_layout_seconds = prepared.seconds
        self.last_build_seconds = timer.elapsed() / 1000.0
        self._busy = False
        if keep_selected is not None and keep_selected in self._node_items:
            self.select_node(keep_selected, emit=False)
        self.graph_shown.emit()

    def _build(self, p: _Prepared) -> None:
        scene = self._scene
        self.clear_graph("")
        self._prepared = p
        if p.highlight != self._highlight:
            self.set_highlight(self._highlight)
        lay = p.layout
        scene.setSceneRect(QRectF(0.0, 0.0, max(lay.width, 100.0), max(lay.height, 100.0)))
        c = self._colors

        # frames (few items, shown at every zoom)
        for fr in lay.frames:
            path = QPainterPath()
            path.addRoundedRect(QRectF(fr.x0, fr.y0, fr.x1 - fr.x0, fr.y1 - fr.y0), 10.0, 10.0)
            item = QGraphicsPathItem(path)
            item.setZValue(-10)
            label = QGraphicsSimpleTextItem(fr.label)
            label.setPos(fr.x0 + 10.0, fr.y0 + 3.0)
            label.setZValue(-9)
            scene.addItem(item)
            scene.addItem(label)
            self._frame_items.append((item, label))

        # overview layer: a few merged paths
        overview = QGraphicsRectItem()
        overview.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, True)
        scene.addItem(overview)
        self._overview = overview
        edge_all = QGraphicsPathItem(p.overview_edges, overview)
        edge_all.setZValue(0)
        self._overview_edge_item = edge_all
        for cat in _CATEGORIES:
            item = QGraphicsPathItem(p.overview_nodes[cat], overview)
            item.setZValue(1)
            self._overview_items[cat] = item

        # detail layer: one item per node box, two texts per node, one path per edge, all arrowheads
        detail = QGraphicsRectItem()
        detail.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, True)
        scene.addItem(detail)
        self._detail = detail
        edge_items = self._edge_items
        for _, _, path in p.edge_paths:
            item = QGraphicsPathItem(path, detail)
            edge_items.append(item)
        arrows = QGraphicsPathItem(p.arrows, detail)
        arrows.setZValue(1)
        self._arrow_item = arrows
        title_font = self._title_font
        sub_font = self._sub_font
        node_items = self._node_items
        title_items = self._title_items
        sub_items = self._sub_items
        positions = lay.positions
        half_h = self._node_height / 2.0
        for n, path in p.node_paths.items():
            box = QGraphicsPathItem(path, detail)
            box.setZValue(2)
            node_items[n] = box
            title, sub = p.texts[n]
            x, y = positions[n]
            t = QGraphicsSimpleTextItem(title, detail)
            t.setFont(title_font)
            t.setZValue(3)
            t.setCacheMode(_TEXT_CACHE)
            br = t.boundingRect()
            t.setPos(x - br.width() / 2.0, y - half_h + 5.0)
            title_items[n] = t
            if sub:
                s = QGraphicsSimpleTextItem(sub, detail)
                s.setFont(sub_font)
                s.setZValue(3)
                s.setCacheMode(_TEXT_CACHE)
                sr = s.boundingRect()
                s.setPos(x - sr.width() / 2.0, y + half_h - sr.height() - 5.0)
                sub_items[n] = s

        sel = QGraphicsPathItem()
        sel.setZValue(20)
        sel.setVisible(False)
        scene.addItem(sel)
        self._selection_item = sel
        self._apply_colors()
        self._detail_mode = None
        self._apply_lod()
        _ = c

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
        self._colors = {
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
            "changed": _blend(base, changed, 0.75),
            "changed_pen": changed.darker(130) if not dark else changed.lighter(130),
            "border": _blend(text, base, 0.5),
            "selection": accent,
        }

    def _apply_colors(self) -> None:
        c = self._colors
        self.setBackgroundBrush(QBrush(c["base"]))
        if self._message_item is not None:
            self._message_item.setBrush(c["muted"])
        for item, label in self._frame_items:
            item.setBrush(QBrush(c["frame_fill"]))
            pen = QPen(c["frame_pen"], 1.2, Qt.PenStyle.DashLine)
            item.setPen(pen)
            label.setBrush(c["muted"])
        edge_pen = QPen(c["edge"], 1.3)
        edge_pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        for item in self._edge_items:
            item.setPen(edge_pen)
        if self._arrow_item is not None:
            self._arrow_item.setPen(Qt.PenStyle.NoPen)
            self._arrow_item.setBrush(QBrush(c["edge"]))
        if self._overview_edge_item is not None:
            pen = QPen(c["edge"], 0)  # cosmetic: one pixel at any zoom
            self._overview_edge_item.setPen(pen)
        for cat, item in self._overview_items.items():
            item.setPen(Qt.PenStyle.NoPen)
            item.setBrush(QBrush(c[cat] if cat != "changed" else c["changed_pen"]))
        if self._prepared is not None:
            border = QPen(c["border"], 1.0)
            changed_pen = QPen(c["changed_pen"], 2.4)
            brushes = {cat: QBrush(c[cat]) for cat in _CATEGORIES}
            text_brush = QBrush(c["text"])
            muted = QBrush(c["muted"])
            attrs = self._prepared.attrs
            hl = self._highlight
            for n, item in self._node_items.items():
                if n in hl:
                    item.setBrush(brushes["changed"])
                    item.setPen(changed_pen)
                else:
                    item.setBrush(brushes[_category(attrs[n])])
                    item.setPen(border)
            for t in self._title_items.values():
                t.setBrush(text_brush)
            for s in self._sub_items.values():
                s.setBrush(muted)
        if self._selection_item is not None:
            self._selection_item.setPen(QPen(c["selection"], 3.0))
            self._selection_item.setBrush(Qt.BrushStyle.NoBrush)
        self.resetCachedContent()

    def _apply_lod(self) -> None:
        detail = self.transform().m11() >= LOD_SCALE
        if detail == self._detail_mode:
            return
        self._detail_mode = detail
        if self._detail is not None:
            self._detail.setVisible(detail)
        if self._overview is not None:
            self._overview.setVisible(not detail)

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
                node = self.node_at(self.mapToScene(event.position().toPoint()))
                self.select_node(node)
        self._press_pos = None

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt API
        node = self.node_at(self.mapToScene(event.position().toPoint()))
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
