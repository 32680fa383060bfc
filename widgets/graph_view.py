"""Node diagram of one Relax function: ``GraphView`` (a ``QGraphicsView``), the view of the graph's
scene, items and palette in :mod:`widgets.graph`.

Feed it the graph JSON of :func:`pipeline_model.ir_graph.graph_to_json` (or a collapsed view of
:mod:`pipeline_model.graph_collapsed`, its whole graph set later) with :meth:`GraphView.set_graph`. The layered layout runs on a ``QThreadPool``
thread together with the construction of every ``QPainterPath`` the view will draw
(:mod:`widgets.graph.worker`, :mod:`widgets.graph.prepare`); a generation counter drops the result of an
older request, so a slow layout can never replace a newer graph. The GUI thread then only adds one item to
the scene (:class:`widgets.graph.scene.GraphScene`).

Speed (5,000 nodes, 2 cores): the whole diagram is one item (:class:`widgets.graph.items.diagram.DiagramItem`)
painting from a spatial index built off the GUI thread (:mod:`widgets.graph.tiles`): a repaint costs what is
on screen, never the node count. Hit testing (click, hover tooltip) uses a per-row index (binary search).
"""

from __future__ import annotations

import collections
from typing import Any, Iterable, Optional

from PySide6.QtCore import QCoreApplication, QElapsedTimer, QEvent, QPointF, QRectF, Qt, QThreadPool, Signal
from PySide6.QtGui import QBrush, QColor, QKeyEvent, QMouseEvent, QPainter, QWheelEvent
from PySide6.QtWidgets import QApplication, QGraphicsView, QToolTip, QWidget

from pipeline_model import graph_collapsed, graph_hierarchy
from pipeline_model.layout import GraphLayout
from widgets.graph import anchor
from widgets.graph.adapter import categories, neighbours
from widgets.graph import layout_cache, lod, node_texts
from widgets.graph.items.diagram import LOD_SCALE
from widgets.graph.errors import NodeError
from widgets.graph.find import FindMixin
from widgets.graph.minimap import GraphMinimap
from widgets.graph.overlays import OverlayMixin
from widgets.graph.palette import GraphPalette
from widgets.graph.prepare import Prepared, apply_highlight, apply_highlight_pending
from widgets.graph.scene import GraphScene
from widgets.graph.tiles import NODE_RADIUS, visible
from widgets.graph.worker import LayoutSignals, LayoutTask

__all__ = ["GraphView", "NodeError", "wait_shown"]

MIN_SCALE = 0.0005
MAX_SCALE = 6.0

class GraphView(FindMixin, OverlayMixin, QGraphicsView):
    """Zoomable, pannable node diagram of a Relax function graph JSON.

    Signals: ``node_selected(dict)`` on click (the node's attributes plus ``id``, ``inputs``, ``outputs``,
    ``input_types``), ``node_activated(dict)`` on double-click, ``graph_shown()`` once the scene of the
    latest :meth:`set_graph` is built, ``layout_failed(str)``, ``find_changed(int, int)`` (current match,
    1-based, and the number of matches), ``expansion_changed()``, ``function_requested(str)`` (the user
    asked to open a Relax function called by the graph: :meth:`open_callee`), ``node_errors_cleared()`` (the
    "where values diverge" colouring of :meth:`set_node_errors` went: Esc, its legend's button, another graph).

    Hierarchy (see :mod:`pipeline_model.graph_hierarchy`): a click on a collapsed group expands it, a click
    on an expanded group's frame title collapses it, a double-click on a call of a Relax function whose
    graph the engine attached expands it in place; the group toggled stays in view (:meth:`toggle_group`);
    :meth:`expand_all` / :meth:`collapse_all`. Layouts are cached per (key, expansion), so showing a graph
    again is instant. Nothing covers the nodes by default: the minimap is off until
    :meth:`set_overview_visible`, the heat legend shows only while a heat overlay is painted in a roomy view.
    Overlays (:class:`widgets.graph.overlays.OverlayMixin`): the profile's heat (:meth:`set_heat`) and the
    "where values diverge" colouring (:meth:`set_node_errors`, :meth:`clear_node_errors`).
    """

    node_selected = Signal(dict)
    node_activated = Signal(dict)
    graph_shown = Signal()
    layout_failed = Signal(str)
    find_changed = Signal(int, int)
    expansion_changed = Signal()
    function_requested = Signal(str)
    node_errors_cleared = Signal()

    #: Layouts kept (per key and expansion).
    CACHE_SIZE = 24
    #: At most this many view nodes in the cached layouts together (the one shown not counted): a layout
    #: costs ~1-2 kB per node (a 54,000-node decoder expanded whole: ~100 MB), so one such layout is kept,
    #: not one per step; a larger one is dropped before the next one is made (:meth:`_make_room`).
    CACHE_NODES = 60_000
    #: Graphs with more nodes are shown before their changes against ``before`` are coloured.
    HIGHLIGHT_LATER_NODES = 10_000

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self._palette = GraphPalette(self.font(), self.palette())
        self._scene = GraphScene(self._palette, self)
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
        self._signals = LayoutSignals(self)
        self._signals.done.connect(self._on_prepared)
        self._signals.failed.connect(self._on_failed)
        self._generation = 0
        self._latest = [0]  # read by layout tasks to stop when superseded
        self._cache: "collections.OrderedDict[Any, Prepared]" = collections.OrderedDict()
        self._last_expansion: dict[Any, frozenset[str]] = {}
        self._key: Any = None
        self._extra_highlight: frozenset[str] = frozenset()
        self._matches: list[str] = []
        self._match_index = -1
        self._pending_reveal: Optional[str] = None
        self._anchor: Optional[tuple[str, Any]] = None  # (toggled group, its viewport point) kept in view
        self.last_from_cache = False
        #: The last set_graph got a packed "before" graph's stand-in it could not colour against (see there).
        self.before_wanted = False
        self.cancelled_count = 0
        self._busy = False
        # the layout in flight: (graph JSON, key, expanded argument, before) of the set_graph call that started it
        self._in_flight: Optional[tuple[Any, Any, Any, Any]] = None
        # a set_graph call that only adds the "before" graph to the layout in flight: replayed when it is done
        self._after_layout: Optional[tuple[Any, frozenset[str], Any, Any, Any]] = None
        self._prepared: Optional[Prepared] = None
        self._highlight: frozenset[str] = frozenset()
        self._cats: list[int] = []
        self._selected: Optional[str] = None
        self._press_pos: Optional[QPointF] = None
        self._detail_mode: Optional[bool] = None
        self.last_layout_seconds = 0.0
        self.last_build_seconds = 0.0
        self._overview_widget = GraphMinimap(self, self._palette)
        # translation context kept from the shipped catalogue (the minimap class was ``_Overview``)
        self._overview_widget.setToolTip(QCoreApplication.translate("_Overview", "Overview: click or drag to move the view"))
        self._init_overlays(self._palette)  # the heat and error overlays and their legends
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
        # a stand-in of a "before" graph that is packed (see attach_graph): colouring against it waits for it
        stand_in = before is not None and not isinstance(before, (dict, str, bytes, bytearray))
        self.before_wanted = False
        flight = self._in_flight
        if (self._busy and flight is not None and before is not None and flight[3] is None
                and flight[0] is graph_json and flight[1:3] == asked[1:]):
            # The same graph is being laid out without change detection; its "before" graph just
            # arrived: recolour the finished layout rather than start the layout again.
            self._after_layout = (graph_json, highlight, key, before, expanded)
            self.before_wanted = stand_in
            return
        p = self._prepared
        self._begin(graph_json, key, highlight, p is not None and (p.full is graph_json or p.whole_pending()))
        if graph_json is None or (isinstance(graph_json, dict) and not graph_json.get("nodes")):
            self._busy = False
            self.clear_graph(self.tr("Empty function") if graph_json is not None else self.tr("No graph"))
            self.graph_shown.emit()
            return
        if expanded is None and key is not None:
            expanded = self._last_expansion.get(key)
        exp = frozenset(expanded) if expanded is not None else None
        cached = self._cache.get((key, exp)) if key is not None and exp is not None else None
        if (cached is not None and cached.packed is not None and isinstance(graph_json, dict)
                and not graph_collapsed.is_collapsed_view(graph_json)):
            # a layout whose graph was let go, given another copy of it: kept if that copy is annotated as
            # the layout's graph was (find and reveal read its module paths), else laid out again from it
            annotated = "module" in (graph_json.get("nodes") or [{}])[0]
            if annotated:
                cached.full, cached.packed = graph_json, None
            else:
                self._cache.pop((key, exp))
                cached = None
        self.last_from_cache = cached is not None
        if cached is not None:
            self._cache.move_to_end((key, exp))
            same_change_set = before is not None and cached.hl_before is before and cached.hl_extra == highlight
            if same_change_set or (before is None and cached.full_highlight == highlight):
                cached.generation = self._generation
                self._on_prepared(cached)  # instant: the scene is one item
                return
        if stand_in:
            self.before_wanted = True  # (the caller sets the graph again with it when it is here)
            before = None
            if cached is not None:  # shown as it was coloured meanwhile
                cached.generation = self._generation
                self._on_prepared(cached)
                return
        if (before is not None and cached is None and isinstance(graph_json, dict)
                and len(graph_json.get("nodes") or ()) > self.HIGHLIGHT_LATER_NODES):
            # A large graph is painted first and its changes are coloured right after (comparing two
            # 50k-node graphs takes about as long as laying one out).
            self._after_layout = (graph_json, highlight, key, before, asked[2])
            before = None
        if cached is None:
            self._make_room(len(graph_json.get("nodes") or ()) if isinstance(graph_json, dict) else 0)
        self._busy = True
        self._in_flight = (*asked, before)
        task = LayoutTask(self._generation, self._latest, graph_json, highlight, before, exp,
                          self._palette.char_width, self._palette.node_height, self._signals, cached, key,
                          self._palette.sub_height + 1.0, self._group_words())
        self._pool.start(task)

    def _begin(self, graph_json: Any, key: Any, highlight: frozenset[str], same: bool) -> None:
        """A new request: older layouts are dropped, the error colours of another graph go; a node to reveal
        and the group kept in place stay only for the ``same`` graph (a collapsed view: its whole graph)."""
        self._after_layout = None
        self._in_flight = None
        self._generation += 1
        self._latest[0] = self._generation
        self._pool.clear()  # drop queued, not yet started layouts
        self._extra_highlight = highlight
        self._highlight = highlight
        self._bind_graph(graph_json, key)
        self._key = key
        self._pending_reveal = self._pending_reveal if same else None
        if not same:
            self._anchor = None  # another graph: nothing to keep in place

    def show_layout(self, key: Any) -> bool:
        """Show the cached layout of ``key`` at its last expansion as it was coloured, its whole graph packed
        (:meth:`detach_graph`): expanding, find and reveal wait until :meth:`set_graph` gives it again, as
        for a collapsed view. False when no layout of ``key`` is cached."""
        exp = self._last_expansion.get(key)
        cached = self._cache.get((key, exp)) if exp is not None else None
        if cached is None:
            return False
        self._begin(None, key, cached.hl_extra, self._key == key and self.is_partial())
        self.before_wanted = False
        self.last_from_cache = True
        self._cache.move_to_end((key, exp))
        cached.generation = self._generation
        self._on_prepared(cached)
        return True

    def detach_graph(self, graph: Any, stand_in: Any) -> None:
        """``graph`` is packed and ``stand_in`` stands for it: the cached layouts let it go
        (:func:`widgets.graph.layout_cache.detach`); :meth:`set_graph` accepts ``before=stand_in``."""
        layout_cache.detach([*self._cache.values(), self._prepared], graph, stand_in)

    def attach_graph(self, stand_in: Any, graph: Any) -> None:
        """The graph ``stand_in`` stood for is here again as ``graph`` (:meth:`detach_graph` undone)."""
        layout_cache.attach([*self._cache.values(), self._prepared], stand_in, graph)

    def holds(self, graph: Any) -> bool:
        """True while a layout asked for (in flight, or to follow it) reads ``graph``."""
        return any(graph is g for asked in (self._in_flight, self._after_layout) if asked is not None
                   for g in (asked[0], asked[3]))

    def coloured_against(self, key: Any, before: Any) -> bool:
        """True when the graph shown is that of ``key``, laid out and coloured against ``before``, and nothing
        is in flight (the "before" graph is not needed to show it again)."""
        p = self._prepared
        return (not self._busy and self._after_layout is None and p is not None and self._key == key
                and not p.partial and p.hl_before is before)

    def _group_words(self) -> dict[str, str]:
        """The words of a collapsed group's box, translated (see ``pipeline_model.layout.GROUP_WORDS``)."""
        return {"op": self.tr("{0} op"), "ops": self.tr("{0} ops"), "weight": self.tr("{0} weight"),
                "weights": self.tr("{0} weights"), "in": self.tr("in "), "out": self.tr("out"),
                "more": self.tr("+ {0} more"), "nodes": self.tr("+ {0} nodes"), "output": self.tr("output"),
                "const": self.tr("const"), "tensor": self.tr("tensor"), "tuple": self.tr("tuple")}

    def _overlay_words(self) -> dict[str, str]:
        """The overlays' words, translated (see :class:`widgets.graph.overlays.OverlayMixin`)."""
        return {"heat_title": self.tr("Profile: share of run time"), "heat_changed": self.tr("changed by this step"),
                "title": self.tr("Where values diverge"), "summary": self.tr("{0} diverge · {1} ok · {2} no counterpart"),
                "ok": self.tr("ok"), "tolerance": self.tr("tolerance {0}"), "diverges": self.tr("diverges"),
                "none": self.tr("no counterpart (not compared)"), "first": self.tr("first diverging node"),
                "badge": self.tr("first"), "clear_tip": self.tr("Clear the colouring (Esc)"),
                "holds": self.tr("holds a diverging node"), "diverges_status": self.tr("DIVERGES"),
                "no counterpart": self.tr("no counterpart")}

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
        if p is None or (p.full is None and not p.whole_pending()):
            return
        exp = frozenset(g for g in groups if g in p.tree)
        if self._key is not None:
            self._last_expansion[self._key] = exp
        if p.whole_pending():  # shown so when its whole graph is set (the controller asked for it)
            self.expansion_changed.emit()
            return
        self.set_graph(p.full, self._extra_highlight | p.full_highlight, key=self._key, expanded=exp)
        self.expansion_changed.emit()

    def toggle_group(self, group_id: str) -> None:
        """Expand a collapsed group or collapse an expanded one (with the groups nested in it); the group
        stays where it is on screen (its top edge under the same point of the viewport, Model Explorer's
        behaviour), scrolled as little as needed to show it whole when it fits."""
        rect = self.group_rect(group_id)
        if rect is not None:
            self._anchor = (group_id, anchor.anchor_point(self, rect))
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

    def group_rect(self, group_id: str) -> Optional[QRectF]:
        """Where a group is drawn (scene coordinates): its frame when expanded, its box when collapsed."""
        return anchor.group_rect(self._prepared, group_id)

    def _keep_anchor(self) -> None:
        """After an expand/collapse: put the toggled group back under the viewport point it was at."""
        held, self._anchor = self._anchor, None
        rect = self.group_rect(held[0]) if held is not None else None
        if held is not None and rect is not None:
            anchor.restore(self, rect, held[1])
            self._sync_overview()

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

    def set_highlight(self, ids: Iterable[str]) -> None:
        """Change the highlighted (changed-by-step) nodes (ids of the full graph) of the graph shown."""
        self._extra_highlight = frozenset(ids)
        p = self._prepared
        if p is None:
            self._highlight = self._extra_highlight
            return
        apply_highlight(p, self._extra_highlight)
        self._highlight = p.highlight
        self._cats = categories(p.base_cats, p.ids, self._highlight)
        self._push_item_state()

    def highlighted(self) -> frozenset[str]:
        """Ids of the highlighted nodes."""
        return self._highlight

    def wait_for_worker(self, ms: int) -> None:
        """Let the layout thread run for up to ``ms`` milliseconds (scripts and benchmarks without an event loop)."""
        self._pool.waitForDone(ms)

    def is_busy(self) -> bool:
        """True while a layout is running for the latest :meth:`set_graph`."""
        return self._busy

    def graph_json(self) -> Optional[dict[str, Any]]:
        """The graph JSON of the whole function shown (None when none)."""
        if self._prepared is None:
            return None
        return self._prepared.full if self._prepared.full is not None else self._prepared.data

    def is_partial(self, key: Any = None) -> bool:
        """True while the graph shown (under ``key``, when given) is a collapsed view or a layout whose graph
        is packed (:meth:`show_layout`), its whole graph not set."""
        return self._prepared is not None and self._prepared.whole_pending() and (key is None or key == self._key)

    def has_layout(self, key: Any) -> bool:
        """True when a layout of the graph under ``key`` (at its last expansion) is cached: shown at once."""
        exp = self._last_expansion.get(key)
        return exp is not None and (key, exp) in self._cache

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
        """Show or hide the minimap (hidden by default: it would cover nodes)."""
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

    def _make_room(self, incoming: int, keep: Optional[Prepared] = None) -> None:
        """:func:`widgets.graph.layout_cache.make_room` (never ``keep`` nor the layout shown)."""
        layout_cache.make_room(self._cache, incoming, self.CACHE_SIZE, self.CACHE_NODES, (keep, self._prepared))

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
        """The colour a node's box is filled with (its category, the highlight colour, or while the error
        colouring is on its error colour)."""
        p = self._prepared
        if p is None or node_id not in p.index:
            return None
        overlay = self._node_overlay_fill(node_id)
        if overlay is not None:
            return overlay
        return QColor(self._palette.brushes[self._cats[p.index[node_id]]].color())

    def node_info(self, node_id: str) -> dict[str, Any]:
        """The node's attributes plus ``id``, ``inputs``, ``outputs`` and ``input_types``."""
        assert self._prepared is not None
        p = self._prepared
        info = {k: v for k, v in p.attrs[node_id].items() if k != "id"}
        info["id"] = node_id
        info["inputs"], info["outputs"] = neighbours(p.data, node_id)
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
            self._scene.set_selection(None)
            return
        self._selected = node_id
        p = self._prepared
        assert p is not None
        radius = rect.height() / 2.0 if p.pills[p.index[node_id]] else NODE_RADIUS
        self._scene.set_selection(rect, radius)
        if center:
            self.centerOn(rect.center())
        if emit:
            self.node_selected.emit(self.node_info(node_id))

    def node_at(self, scene_pos: QPointF) -> Optional[str]:
        """Id of the node under a scene position (the tiles that meet it, then their nodes' boxes), or None."""
        p = self._prepared
        if p is None:
            return None
        x, y = scene_pos.x(), scene_pos.y()
        for tile in visible(p.bands, p.band_starts, p.band_margin, QRectF(x, y, 0.0, 0.0)):
            for i in tile.nodes:
                x0, y0, w, h = p.rects[i]
                if x0 <= x <= x0 + w and y0 <= y <= y0 + h:
                    return p.ids[i]
        return None

    def fit_to_view(self) -> None:
        """Zoom so the whole graph fits; a graph that would then be too small to read but is at most
        ``FIT_SCREENS`` viewports tall at a legible scale is shown at that scale from its top instead
        (scroll for the rest; :func:`widgets.graph.lod.fit_scale`). Far out, names are written at screen size."""
        rect = self._scene.itemsBoundingRect() if self._prepared is None else self._scene.sceneRect()
        if rect.isEmpty():
            return
        self.resetTransform()
        self.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)
        port = QRectF(self.viewport().rect())
        p = self._prepared  # a model summary (a few boxes, collapsed groups among them) is fitted whole
        chain = len(p.ids) if p is not None and len(p.ids) <= lod.CHAIN_NODES and any(
            p.attrs[n].get("kind") == "group" for n in p.ids) else 0
        scale = lod.fit_scale(rect, port, self._palette, chain) if p is not None else 0.0
        if scale > self.transform().m11():
            self.resetTransform()
            self.scale(scale, scale)
            centre = lod.fitted_centre(rect, port, scale)
            self.centerOn(*(centre if centre is not None else (rect.center().x(), rect.center().y())))
        self._apply_lod()

    def label_mode(self) -> str:
        """How names are drawn at the current scale (:func:`widgets.graph.lod.label_mode`): ``"text"``,
        ``"labels"`` or ``"overview"``."""
        return lod.label_mode(self.transform().m11(), self._palette)

    def screen_labels(self) -> list[tuple[QRectF, str, float]]:
        """The names written in screen-size text over the viewport (viewport rectangle, text, font pixel size)."""
        if self._prepared is None:
            return []
        exposed = self.mapToScene(self.viewport().rect()).boundingRect()
        return lod.screen_labels(self._prepared, self._palette, self.viewportTransform(), exposed,
                                 QRectF(self.viewport().rect()), self.transform().m11())

    def title_px(self) -> float:
        """Screen pixel size of a box's own title text at the current scale."""
        return self._palette.title_px * self.transform().m11()

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
        self._scene.show_message(message)
        self._prepared = None
        self._cats = []
        self._selected = None
        self._detail_mode = None
        self._overview_widget.set_image(None)
        self._overview_widget.setVisible(False)

    # ------------------------------------------------------------------------------------------ build
    def _on_failed(self, generation: int, message: str) -> None:
        if generation != self._generation:
            return
        self._busy = False
        self._in_flight = self._after_layout = None
        self.clear_graph(self.tr("Cannot lay out the graph: {message}").format(message=message))
        self.layout_failed.emit(message)

    def _on_prepared(self, prepared: Prepared) -> None:
        if prepared.generation != self._generation:
            self.cancelled_count += 1
            return  # an older request finished after a newer one started: drop it
        apply_highlight_pending(prepared, self._generation)  # a cached layout's new colours, on this thread
        timer = QElapsedTimer()
        timer.start()
        keep_selected = self._selected
        if self._key is not None and not prepared.partial:  # (a collapsed view waits for its whole graph)
            self._cache[(self._key, prepared.expanded)] = prepared
            self._cache.move_to_end((self._key, prepared.expanded))
            self._make_room(0, keep=prepared)
            self._last_expansion[self._key] = prepared.expanded
        self._build(prepared)
        self.last_layout_seconds = prepared.seconds
        self.last_build_seconds = timer.elapsed() / 1000.0
        self._busy = False
        if keep_selected is not None and self.node_rect(keep_selected) is not None:
            self.select_node(keep_selected, emit=False)
        pending, self._pending_reveal = self._pending_reveal, None
        if pending is not None:
            self._anchor = None
            self.reveal(pending)  # (a node asked for while a collapsed view was shown: its groups expanded now)
        else:
            self._keep_anchor()
        self._overview_widget.update()
        self._in_flight = None
        self.graph_shown.emit()
        replay, self._after_layout = self._after_layout, None
        if replay is not None:
            graph_json, highlight, key, before, expanded = replay
            self.set_graph(graph_json, highlight, key=key, before=before, expanded=expanded)

    def _build(self, p: Prepared) -> None:
        self.clear_graph("")
        self._prepared = p
        for k, (rect, label, gid, kind) in enumerate(p.frames):  # the engine names blocks in English
            if kind == "block" and label == f"dataflow block {gid}":
                p.frames[k] = (rect, self.tr("dataflow block {0}").format(gid), gid, kind)
        self._highlight = p.highlight
        self._cats = categories(p.base_cats, p.ids, p.highlight)
        self._update_heat_view()
        self._scene.show_prepared(p, self._cats, self._heat_view if self._heat_shown else {})
        self._update_error_view()
        self._overview_widget.set_image(p.overview, p.overview_scale)
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
    def _apply_colors(self) -> None:
        self.setBackgroundBrush(QBrush(self._palette.colors["base"]))
        self._scene.apply_colors()
        self.resetCachedContent()

    def _apply_lod(self) -> None:
        """Record whether the detail or the overview is drawn (the item decides per paint from the scale)."""
        self._detail_mode = self.transform().m11() >= LOD_SCALE
        if hasattr(self, "_overview_widget"):
            self._sync_overview()

    # ------------------------------------------------------------------------------------------ events
    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._palette.update_colors(self.palette())
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
        elif key == Qt.Key.Key_Escape and self._errors:
            self.clear_node_errors()
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
        for rect, _label, gid, kind in reversed(p.frames):
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
        """Tooltip text of a node: name, op/callee, type, attributes (see :mod:`widgets.graph.node_texts`)."""
        return node_texts.tooltip_html(node_id, self.node_info(node_id), self._error_tooltip(node_id))

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        self._apply_lod()
        self._place_overview()
        self._push_item_state()  # the heat legend: shown only where it leaves room for the graph


def wait_shown(view: GraphView, timeout_ms: int = 10000) -> bool:
    """Process events until the view has no layout in flight (for scripts and benchmarks)."""
    timer = QElapsedTimer()
    timer.start()
    app = QApplication.instance()
    while view.is_busy() and timer.elapsed() < timeout_ms:
        app.processEvents()
        view.wait_for_worker(5)
    app.processEvents()
    return not view.is_busy()
