"""``GraphController``: the graph of the selected step's module — graph requests and their cache,
the function picker (and the fallback when the function asked for is missing), refit on a new model or
function, the find bar, expand/collapse, node details of graph nodes, collapsed groups, stubs and inlined
callee nodes, the TensorIR dialog of a callee, and :meth:`shown_graph` (the hook of the profile heat
overlay).

Graphs come from the engine through one request handle each (``ctx.engine.submit_graph``); the cache is
keyed by ``(snapshot key, function)``. The graph shown is asked for collapsed first: a large function comes
as its collapsed view (:mod:`pipeline_model.graph_collapsed`), shown at once, and its whole graph is asked
for next (what expanding, find and the colourings read); a search or reveal asked for meanwhile runs when
it is there. Replies for a graph no longer shown are kept in the cache, never shown. The :class:`app.step_inspector.StepInspector` tells it what to show
(:meth:`show`, :meth:`set_step_report`, :meth:`set_changed_functions`, :meth:`show_report`); it asks the
inspector to show the selected step again through :attr:`function_chosen` (another function picked).
"""

from __future__ import annotations

import collections
import html
from typing import Any, Optional

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QApplication, QMessageBox

from app.code_dialogs import show_code_dialog
from app.context import AppContext
from app.graph_packer import GraphPacker
from app.i18n import tr
from app.panels import GraphArea
from app.pass_kinds import fusion_call_node_ids, highlights_fusion
from app.step_reports import details_placeholder_html, fused_node_ids, group_details_html, node_details_html
from pipeline_model.graph_collapsed import decode_summary
from pipeline_model.graph_pack import PackedGraph
from widgets.theme import muted_colour

#: Most graphs kept in the cache (oldest dropped first).
GRAPH_CACHE_SIZE = 64
#: Most collapsed views kept (each carries its function's whole group tree: ~10k groups for 50k nodes).
COLLAPSED_CACHE_SIZE = 16
#: Reply field of a whole graph's packed form, once made (the graph is let go again without packing it).
PACKED = "gui_packed"
#: A packed graph of a step shown again is decoded this long after it is shown (not for steps flipped through).
UNPACK_DELAY_MS = 150
#: Graphs not needed are packed or let go this long after a step is shown (its paint first).
TRIM_DELAY_MS = 100


class GraphController(QObject):
    """The graph area: what the graph shows, its cache, find, node details and TensorIR."""

    #: Another function was chosen (picker, opening a fused call): the selected step is to be shown again.
    function_chosen = Signal()
    #: The Relax functions of the shown module changed (their names): what function-name parameters offer.
    functions_changed = Signal(list)
    #: Whole graphs of at least this many nodes are packed while not needed (:meth:`_trim_graphs`).
    PACK_MIN_NODES = 5_000

    def __init__(self, ctx: AppContext, area: GraphArea) -> None:
        super().__init__(ctx)
        self.ctx = ctx
        self.area = area
        self.graph_cache: dict[tuple[Optional[str], Optional[str]], dict] = {}
        self._graph_requests: dict[tuple[str, Optional[str]], Any] = {}
        # collapsed views of large functions by (key, function): the reply, its decoded "view" and "changed"
        self._collapsed: "collections.OrderedDict[tuple[str, Optional[str]], dict]" = collections.OrderedDict()
        self._pending_find: Optional[str] = None  # searched while a collapsed view was shown
        self._picker_items: list[str] = []  # what the function picker lists
        self._shown_graph: Optional[tuple[str, Optional[str]]] = None
        self._shown_before_key: Optional[str] = None
        self._current_function: Optional[str] = None
        self._fitted_for: Optional[tuple[Any, Any]] = None  # (model, function) last fitted to the view
        self._refit_pending = False
        self._caption = ""
        self._step_report: Optional[dict] = None  # the shown step's report (fusion highlights); None: none
        self._changed_functions: set[str] = set()  # functions whose text the shown step changed
        # ... remembered per (module key, "before" key): shown again, a step's graph comes back with its
        # callers already lit (the cached layout as it was) instead of lighting up after its diff again
        self._changed_memo: "collections.OrderedDict[tuple[str, Optional[str]], set[str]]" = collections.OrderedDict()
        self._callers = CalleeIndex()  # callers by callee per graph: a step shown again skips a 50k-node scan
        # Large whole graphs are decoded only while needed (the one shown, its "before" until coloured against),
        # packed meanwhile (issue 33: ~65 MB each for 50,000 nodes, ~1 MB packed); ids of those in the works:
        self._packer = GraphPacker(self)
        self._packer.packed.connect(self._on_packed)
        self._packer.unpacked.connect(self._on_unpacked)
        self._packer.failed.connect(self._on_pack_failed)
        self._packing: set[int] = set()
        self._unpacking: set[int] = set()
        # a step shown again is decoded after this short wait (steps flipped through are not)
        self._unpack_timer = QTimer(self)
        self._unpack_timer.setSingleShot(True)
        self._unpack_timer.setInterval(UNPACK_DELAY_MS)
        self._unpack_timer.timeout.connect(self._start_unpacks)
        self._trim_timer = QTimer(self)  # graphs are let go once the step shown is painted
        self._trim_timer.setSingleShot(True)
        self._trim_timer.setInterval(TRIM_DELAY_MS)
        self._trim_timer.timeout.connect(self._trim_graphs)
        self.details_kind = "placeholder"  # or "node" (a node's details) or "report" (a step's report)
        self.prim_func_dialog: Any = None
        self.show_details_placeholder()
        area.details.anchorClicked.connect(self._on_details_link)
        area.function_picker.activated.connect(self._on_function_picked)
        gv = area.graph_view
        gv.node_selected.connect(self._on_node_selected)
        gv.node_activated.connect(self._on_node_activated)
        gv.graph_shown.connect(self._on_graph_shown)
        gv.function_requested.connect(self.show_function)
        find = area.find_bar
        find.search.connect(self._find)
        find.next_requested.connect(gv.find_next)
        find.previous_requested.connect(gv.find_previous)
        find.closed.connect(gv.setFocus)
        gv.find_changed.connect(find.set_count)

    # ---- what the inspector tells -------------------------------------------------------------
    def on_document_replaced(self) -> None:
        """A new document: forget the graphs and the node details (a report of the old document)."""
        self.graph_cache.clear()
        self._collapsed.clear()
        self._changed_memo.clear()
        self.show_details_placeholder()
        self._fitted_for = None

    def set_step_report(self, report: Optional[dict]) -> None:
        """The report of the step shown (``None``: no step result shown); changed functions are reset."""
        self._step_report = report
        self._changed_functions = set()

    def set_changed_functions(self, functions: set[str]) -> None:
        """Functions whose text the shown step changed: their callers light up (a cached layout)."""
        if self._shown_graph and self._shown_graph[0]:
            memo_key = (self._shown_graph[0], self._shown_before_key)
            self._changed_memo[memo_key] = set(functions)
            self._changed_memo.move_to_end(memo_key)
            while len(self._changed_memo) > GRAPH_CACHE_SIZE * 4:
                self._changed_memo.popitem(last=False)
        if functions != self._changed_functions:
            self._changed_functions = functions
            self._render_graph()

    def show_report(self, html_text: str) -> None:
        """A step's report in the details pane."""
        self.area.details.setHtml(html_text)
        self.details_kind = "report"

    def refresh_colours(self) -> None:
        """Redo the node details / hint made with the old palette (a report is the inspector's)."""
        if self.details_kind == "placeholder":
            self.show_details_placeholder()
        elif self.details_kind == "node":
            self._on_graph_shown()

    # ---- graph -----------------------------------------------------------------------------
    def on_engine_restarted(self) -> None:
        """The engine crashed and restarted: graphs asked of the old engine are forgotten."""
        self.graph_cache.clear()
        self._collapsed.clear()
        self._graph_requests.clear()
        self.area.graph_view.clear_cache()

    def show(self, key: Optional[str], before_key: Optional[str], caption: str) -> None:
        """Show the graph of snapshot ``key`` (changes against ``before_key`` highlighted) with ``caption``."""
        self.area.graph_caption.setText(caption)
        self._caption = caption
        self._shown_graph = (key, self._current_function) if key else None
        self._shown_before_key = before_key
        if key and before_key and (key, before_key) in self._changed_memo:
            self._changed_functions = set(self._changed_memo[(key, before_key)])
        if not key:
            self.area.graph_view.clear_graph(tr("Run the pipeline (F5) to see the model as a graph"))
            return
        self._request_graph(key, self._current_function, collapsed_before=before_key or "")
        if before_key:
            self._request_graph(before_key, self._current_function)
        self._render_graph()
        self._trim_timer.start()

    def _request_graph(self, key: str, function: Optional[str], collapsed_before: Optional[str] = None) -> None:
        """Ask for the whole graph of ``(key, function)``; with ``collapsed_before`` (the key of the
        module before the step, or "") its collapsed view first, unless one is already here."""
        wanted = (key, function)
        if wanted in self.graph_cache or wanted in self._graph_requests:
            return
        collapsed = collapsed_before is not None and wanted not in self._collapsed
        request = self.ctx.engine.submit_graph(key, function, collapsed=True, before=collapsed_before or None) \
            if collapsed else self.ctx.engine.submit_graph(key, function, have=self._held_tokens())
        self._graph_requests[wanted] = request
        request.finished.connect(lambda value: (self._on_collapsed if collapsed else self._on_graph)(wanted, value))
        request.failed.connect(lambda message: self._on_graph_failed(wanted, message))

    def _on_collapsed(self, wanted: tuple[str, Optional[str]], value: Any) -> None:
        """The reply to a collapsed request: a large function's collapsed view (shown, then its whole graph
        asked for while it is still the graph shown) or a small function's whole graph."""
        if not (isinstance(value, dict) and value.get("collapsed")):
            self._on_graph(wanted, value)
            return
        self._graph_requests.pop(wanted, None)
        try:
            view, changed = decode_summary(value["collapsed"])
        except (ValueError, KeyError, TypeError) as exc:
            self._on_graph_failed(wanted, f"{type(exc).__name__}: {exc}")
            return
        self._collapsed[wanted] = {**value, "view": view, "changed": changed}
        while len(self._collapsed) > COLLAPSED_CACHE_SIZE:
            self._collapsed.popitem(last=False)
        self._render_graph()
        if self._shown_graph == wanted:
            self._request_graph(*wanted)

    def _held_tokens(self) -> list[str]:
        """The engine's tokens of the whole graphs held here (a graph the engine would send again comes as
        its token only)."""
        return sorted({str(r["graph_token"]) for r in self.graph_cache.values()
                       if r.get("graph_token") and r.get("graph") is not None})

    def _on_graph(self, wanted: tuple[str, Optional[str]], value: Any) -> None:
        self._graph_requests.pop(wanted, None)
        if isinstance(value, dict) and value.get("graph_held"):
            held = next((r for r in self.graph_cache.values() if r.get("graph_token") == value.get("graph_token")
                         and r.get("graph") is not None), None)
            if held is None:  # dropped here since it was asked for: ask for the graph itself
                self._graph_requests[wanted] = request = self.ctx.engine.submit_graph(*wanted)
                request.finished.connect(lambda again: self._on_graph(wanted, again))
                request.failed.connect(lambda message: self._on_graph_failed(wanted, message))
                return
            value = {**value, "graph": held["graph"], PACKED: held.get(PACKED)}
            value.pop("graph_held", None)
        if isinstance(value, dict) and value.get("graph_token") and value.get("graph") is not None:
            # The engine's very same graph as a cached one (a step that left the function as it was): one
            # copy, not one per step (a 50,000-node function: ~100 MB each).
            same = next((r["graph"] for r in self.graph_cache.values() if r.get("graph_token") == value["graph_token"]
                         and r.get("graph") is not None and r is not value), None)
            if isinstance(same, PackedGraph) and isinstance(value["graph"], dict):
                self._attach(same, value["graph"])  # the packed copy's holders take this one (decoded)
                value = {**value, PACKED: same}
            elif same is not None:
                value = {**value, "graph": same, PACKED: next((r.get(PACKED) for r in self.graph_cache.values()
                                                                if r.get("graph") is same), None)}
        self.graph_cache[wanted] = value if isinstance(value, dict) else {"graph": None}
        if len(self.graph_cache) > GRAPH_CACHE_SIZE:
            self.graph_cache.pop(next(iter(self.graph_cache)))
        # (A graph reply is ~10^5 long-lived objects: the engine client froze them out of the cyclic
        # collector as it decoded them; see pipeline_model.gc_pause.)
        self._render_graph()

    def _on_graph_failed(self, wanted: tuple[str, Optional[str]], message: str) -> None:
        self._graph_requests.pop(wanted, None)
        if "not in the engine's cache" in (message or ""):
            # The engine was restarted (Stop of a step that did not return, Restart Engine, a crash) and lost the
            # modules of earlier results: not an error of this step; the next run makes them again.
            self.area.graph_caption.setText(tr("This step's module is no longer in the engine (it was restarted): "
                                               "run the pipeline again (F5) to see its graph"))
            return
        self.area.graph_caption.setText(tr("Graph unavailable: {0}").format(message.splitlines()[0][:200] if message else ""))

    def _render_graph(self) -> None:
        if not self._shown_graph:
            return
        key, function = self._shown_graph
        reply = self.graph_cache.get((key, function))
        partial = self._collapsed.get((key, function))
        gv = self.area.graph_view
        if reply is not None and isinstance(reply.get("graph"), PackedGraph):
            # Packed while other steps were shown: decoded again off the GUI thread (this runs again then);
            # meanwhile its cached layout is shown as it was coloured (else its collapsed view).
            self._unpack(reply["graph"])
        if partial is not None and reply is not None:
            # the whole graph is here too: its collapsed view first unless its layout is cached (the whole
            # graph's groups are built and laid out off the GUI thread meanwhile: ~1 s for 50k nodes)
            view_key = (key, reply.get("function"))
            if gv.has_layout(view_key) or gv.is_partial(view_key):
                partial = None
        if partial is not None:
            reply = partial
        if reply is None:
            return
        # Without the "before" graph yet, the step's graph is shown at once and its changes are
        # highlighted when that graph arrives (this runs again then; the view keeps the layout).
        before_reply = self.graph_cache.get((self._shown_before_key, function)) if self._shown_before_key else None
        data = reply.get("graph")
        self._update_function_picker(reply)
        caption = self._caption
        if reply.get("missing") and reply.get("function"):
            caption += "  " + tr("('{0}' is not in this module; showing {1})").format(reply.get("requested"), reply["function"])
        self.area.graph_caption.setText(caption)
        if partial is not None:
            self._show_graph(key, reply, partial["view"], set(partial["changed"]))
            return
        if isinstance(data, PackedGraph):
            self._show_graph(key, reply, data, set())
            return
        if not data:
            self.area.graph_view.clear_graph(tr("This module has no Relax function"))
            self.area.graph_caption.setText(caption + tr(" (no Relax function)"))
            return
        # Change detection against the step's input runs in the graph view's worker (before=...).
        before = None
        if before_reply is not None and before_reply.get("function") == reply.get("function"):
            before = before_reply.get("graph")
        extra: set[str] = set()
        if before is not None:
            # A step that changed only a PrimFunc leaves the Relax binding as it was: its callers light up.
            extra |= self._callers.callers(data, self._changed_functions)
        if self._step_report is not None and highlights_fusion(self._step_report):
            # The bindings fused into composite/offloaded functions by this step: the calls the
            # step's fusion report names (by var name), and any call of a composite function.
            extra |= fused_node_ids(data) | fusion_call_node_ids(data, self._step_report)
        self._show_graph(key, reply, data, extra, before)
        if isinstance(before, PackedGraph) and gv.before_wanted:  # its changes are coloured when it is here
            self._unpack(before)

    def _show_graph(self, key: str, reply: dict, data: Any, highlight: set[str], before: Any = None) -> None:
        """Hand a graph (the whole one, a collapsed view, or a packed one: its cached layout) to the view; a
        new model or function is fitted."""
        identity = (self.ctx.doc.model, reply.get("function"))
        if identity != self._fitted_for:
            self._fitted_for = identity
            self._refit_pending = True  # a new model or function: fit it when it is on screen
        self.area.find_bar.forget_matches()
        if isinstance(data, PackedGraph):
            self.area.graph_view.show_layout((key, reply.get("function")))
            return
        self.area.graph_view.set_graph(data, highlight, key=(key, reply.get("function")), before=before)

    # ---- whole graphs decoded only while needed (issue 33) ------------------------------------
    def _current_graphs(self) -> tuple[Any, Any]:
        """The cached whole graphs (decoded or packed) of the step shown and of its "before" module."""
        if not self._shown_graph:
            return None, None
        key, function = self._shown_graph
        shown = (self.graph_cache.get((key, function)) or {}).get("graph")
        before = (self.graph_cache.get((self._shown_before_key, function)) or {}).get("graph") \
            if self._shown_before_key else None
        return shown, before

    def _before_needed(self, before: Any) -> bool:
        """False when the step shown is on screen coloured against ``before`` (its cached layout keeps that)."""
        reply = self.graph_cache.get(self._shown_graph) if self._shown_graph else None
        if before is None or reply is None or self._shown_graph is None:
            return before is not None
        return not self.area.graph_view.coloured_against((self._shown_graph[0], reply.get("function")), before)

    def _trim_graphs(self) -> None:
        """Pack the large decoded graphs not needed now, off the GUI thread, and let them go (one packed
        before is let go at once): needed are the graph shown (expanding, find, node details read it) and its
        "before" graph until the view shows the step coloured against it (a cached layout keeps its colours)."""
        shown, before = self._current_graphs()
        keep = {id(shown)} | ({id(before)} if self._before_needed(before) else set())
        seen: set[int] = set()
        for reply in list(self.graph_cache.values()):
            graph = reply.get("graph")
            if not isinstance(graph, dict) or id(graph) in keep or id(graph) in seen:
                continue
            seen.add(id(graph))
            if len(graph.get("nodes") or ()) < self.PACK_MIN_NODES or self.area.graph_view.holds(graph):
                continue  # (a layout in flight reads it: let go once it is done, at the next graph shown)
            packed = reply.get(PACKED)
            if isinstance(packed, PackedGraph):
                self._drop(graph, packed)
            elif id(graph) not in self._packing:
                self._packing.add(id(graph))
                self._packer.pack(graph)

    def _on_packed(self, graph: dict, packed: PackedGraph) -> None:
        self._packing.discard(id(graph))
        if not any(g is graph for g in self._current_graphs()):  # (needed again meanwhile: a layout may have
            for reply in self.graph_cache.values():              # annotated it while it was packed: later)
                if reply.get("graph") is graph:
                    reply[PACKED] = packed
            self._trim_graphs()
        if self._unpacking and not self._unpack_timer.isActive():
            self._start_unpacks()

    def _drop(self, graph: dict, packed: PackedGraph) -> None:
        """Let go of the decoded ``graph``: the cache and the view's layouts hold ``packed`` for it."""
        for reply in self.graph_cache.values():
            if reply.get("graph") is graph:
                reply["graph"] = packed
        self.area.graph_view.detach_graph(graph, packed)
        self._callers.move(graph, packed)
        self._packer.release(graph)

    def _unpack(self, packed: PackedGraph) -> None:
        """Decode ``packed`` again soon (a step flipped past meanwhile is not decoded: see _start_unpacks)."""
        if id(packed) not in self._unpacking:
            self._unpacking.add(id(packed))
            self._unpack_timer.start()

    def _start_unpacks(self) -> None:
        """Decode the packed graphs asked for that are still those of the step shown (the others are
        dropped from the queue; each job checks again when it starts), once the graphs being packed are let
        go (their memory serves these: the process's peak stays lower)."""
        if self._packing:
            return  # (asked again when they are packed)
        current = [g for g in self._current_graphs() if isinstance(g, PackedGraph) and id(g) in self._unpacking]
        self._unpacking = {id(g) for g in current}
        for packed in current:
            self._packer.unpack(packed, lambda p=packed: id(p) in self._unpacking)

    def _attach(self, packed: PackedGraph, graph: dict) -> bool:
        """``graph`` is ``packed`` decoded: the cache and the view's layouts hold it again (False: nothing
        held ``packed``)."""
        holders = [r for r in self.graph_cache.values() if r.get("graph") is packed]
        for reply in holders:
            reply["graph"], reply[PACKED] = graph, packed
        self.area.graph_view.attach_graph(packed, graph)
        self._callers.move(packed, graph)
        return bool(holders)

    def _on_unpacked(self, packed: PackedGraph, graph: Optional[dict]) -> None:
        if graph is None:  # not decoded: another step was shown before its turn came
            return
        self._unpacking.discard(id(packed))
        if not self._attach(packed, graph):  # the caches were cleared, or the engine sent it meanwhile
            self._packer.release(graph)
            return
        if any(g is graph for g in self._current_graphs()):
            self._render_graph()
        else:
            self._trim_graphs()  # another step is shown now

    def _on_pack_failed(self, item: Any, message: str) -> None:
        self._packing.discard(id(item))
        self._unpacking.discard(id(item))
        if self._unpacking and not self._unpack_timer.isActive():
            self._start_unpacks()
        if isinstance(item, PackedGraph) and any(g is item for g in self._current_graphs()):
            self.area.graph_caption.setText(tr("Graph unavailable: {0}").format(message[:200]))

    def _update_function_picker(self, reply: dict) -> None:
        picker = self.area.function_picker
        names = [str(n) for n in reply.get("functions") or []]
        current = reply.get("function")
        if reply.get("missing") and current:
            # The function asked for is not in this module (another model, a fused function of a
            # later step): follow the one shown, so the next steps ask for it.
            self._current_function = str(current)
        picker.blockSignals(True)
        items = names or ([str(current)] if current else [])
        if items != self._picker_items:  # thousands of fused functions on a large model: refill only on change
            picker.clear()
            picker.addItems(items)
            self._picker_items = items
            self.functions_changed.emit(list(names))
        if current:
            picker.setCurrentText(str(current))
        picker.setEnabled(len(names) > 1)
        picker.blockSignals(False)

    def _on_function_picked(self, index: int) -> None:
        self.show_function(self.area.function_picker.itemText(index))

    def show_function(self, name: str) -> None:
        """Show Relax function ``name`` of the selected step's module (picker, or opening a fused call)."""
        self._current_function = name or None
        self.function_chosen.emit()

    def open_find(self) -> None:
        """Edit > Find in Graph (Ctrl+F)."""
        self.area.find_bar.open_bar()

    def _find(self, text: str) -> None:
        """Search the whole graph; while a collapsed view is shown, when its whole graph is (asked for)."""
        gv = self.area.graph_view
        if gv.is_partial():
            self._pending_find = text
            self.area.find_bar.count_label.setText(tr("Searching…"))
            return
        self._pending_find = None
        gv.find(text)

    def find_next(self, backwards: bool = False) -> None:
        """F3 / Shift+F3: the next (previous) match; opens the find bar when nothing was searched yet."""
        bar = self.area.find_bar
        if not bar.isVisible() or bar.searched is None:
            bar.open_bar()
            if bar.edit.text().strip():
                bar.searched = bar.edit.text().strip()
                self._find(bar.searched)
            return
        if backwards:
            self.area.graph_view.find_previous()
        else:
            self.area.graph_view.find_next()

    def shown_graph(self) -> Optional[tuple[str, Optional[str]]]:
        """``(snapshot key, function)`` of the graph shown (``None`` when none; function ``None`` = the
        engine's default, the entry function)."""
        if not self._shown_graph:
            return None
        key, function = self._shown_graph
        reply = self.graph_cache.get(self._shown_graph) or {}
        return key, (reply.get("function") or function)

    def fit_graph(self) -> None:
        """View > Fit Graph."""
        self.area.graph_view.fit_to_view()

    # ---- node details, TensorIR ---------------------------------------------------------------
    def _shown_graph_data(self) -> dict:
        return self.area.graph_view.graph_json() or {}

    def _graph_node(self, node_id: str) -> Optional[dict]:
        """The node of the graph shown with this id: a node of the function, of an inlined callee
        (``<call id>/<node id>``), or of the view (a collapsed group, a stub)."""
        return self._node_and_graph(node_id)[0]

    def _node_and_graph(self, node_id: str) -> tuple[Optional[dict], dict]:
        gv = self.area.graph_view
        full = gv.graph_json() or {}
        view = gv.view_json() or {}
        view_node = next((n for n in view.get("nodes", []) if n.get("id") == node_id), None)
        if view_node is not None and view_node.get("kind") == "group":
            return view_node, view
        if view_node is not None and view_node.get("stub_of") is not None:
            node_id = str(view_node["stub_of"])
        node = next((n for n in full.get("nodes", []) if n.get("id") == node_id), None)
        if node is not None:
            return node, full
        call_id, _sep, inner = node_id.partition("/")
        call = next((n for n in full.get("nodes", []) if n.get("id") == call_id), None) if inner else None
        callee = ((full.get("graph") or {}).get("callees") or {}).get(call.get("callee")) if call else None
        if callee:
            node = next((n for n in callee.get("nodes", []) if n.get("id") == inner), None)
            if node is not None:
                return node, callee
        return (view_node, view) if view_node is not None else (None, {})

    def _on_node_selected(self, info: Any) -> None:
        node_id = str(info.get("id", "")) if isinstance(info, dict) else str(info or "")
        node, graph = self._node_and_graph(node_id) if node_id else (None, {})
        if node is None:
            self.show_details_placeholder()
            return
        if node.get("kind") == "group":
            self.area.details.setHtml(group_details_html(node, graph, self.area.graph_view.groups()))
        else:
            text = node_details_html(node, graph)
            view_node = next((n for n in (self.area.graph_view.view_json() or {}).get("nodes", []) if n.get("id") == node_id), None)
            if view_node is not None and view_node.get("stub_of") is not None:
                text += "<p><i>" + html.escape(tr("Shown again next to this use (a stub): the value is defined once.")) + "</i></p>"
            self.area.details.setHtml(text)
        self.details_kind = "node"

    def show_details_placeholder(self) -> None:
        """The node details panel's hint (wrapped, in the palette's placeholder colour)."""
        color = muted_colour(QApplication.palette(), 0.45).name()  # PlaceholderText may be translucent
        self.area.details.setHtml(details_placeholder_html(color))
        self.details_kind = "placeholder"

    def _on_graph_shown(self) -> None:
        """A new graph is on screen: node details must describe a node of this graph; a new model or
        function is fitted to the view."""
        gv = self.area.graph_view
        if self._refit_pending and gv.graph_json() is not None:
            self._refit_pending = False
            gv.fit_to_view()
        if self._pending_find is not None and not gv.is_partial():
            self._find(self._pending_find)
        reply = self.graph_cache.get(self._shown_graph) if self._shown_graph else None
        if gv.is_partial() and reply is not None and not isinstance(reply.get("graph"), PackedGraph):
            self._render_graph()  # the whole graph came while its collapsed view was being laid out
        self._trim_timer.start()  # once it is painted
        if self.details_kind == "report":
            return
        selected = self.area.graph_view.selected_node()
        if selected is not None and self._graph_node(selected) is not None:
            self._on_node_selected({"id": selected})
        else:
            self.show_details_placeholder()

    def _on_details_link(self, url: Any) -> None:
        text = url.toString()
        if text.startswith("primfunc:"):
            self.request_prim_func(text[len("primfunc:"):])

    def _on_node_activated(self, info: Any) -> None:
        node = self._graph_node(str(info.get("id", "")) if isinstance(info, dict) else str(info or ""))
        if node and node.get("callee") and node.get("callee_kind") == "prim_func":
            self.request_prim_func(str(node["callee"]))

    def request_prim_func(self, name: str) -> None:
        """Ask the engine for the TensorIR of ``name`` in the shown module; a dialog shows it."""
        if not self._shown_graph:
            return
        request = self.ctx.engine.submit_prim_func(self._shown_graph[0], name)
        request.finished.connect(lambda value: self._show_prim_func(name, value))
        request.failed.connect(lambda message: QMessageBox.warning(self.ctx.dialog_parent, tr("TensorIR"), message))

    def _show_prim_func(self, name: str, value: Any) -> None:
        text = str(value if not isinstance(value, dict) else value.get("text", ""))
        self.prim_func_dialog, _editor = show_code_dialog(self.ctx.dialog_parent, tr("TensorIR — {0}").format(name), text)


class CalleeIndex:
    """Ids of the call nodes by callee for the last few graphs (``callers(graph, functions)`` is
    :func:`callee_changed_node_ids`): scanning a 50,000-node graph took 15-20 ms of GUI-thread time (more
    while worker threads ran) every time a step with changed PrimFuncs was shown; indexed once per graph
    (graphs are the cached reply objects, compared by identity), a step shown again looks its callees up."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._index: "collections.OrderedDict[int, tuple[Any, dict[str, list[str]]]]" = collections.OrderedDict()

    def callers(self, graph: dict, functions: set[str]) -> set[str]:
        """Ids of the nodes of ``graph`` whose callee is one of ``functions``."""
        if not functions:
            return set()
        entry = self._index.get(id(graph))
        if entry is None or entry[0] is not graph:
            by_callee: dict[str, list[str]] = {}
            for n in graph.get("nodes", []):
                if n.get("callee"):
                    by_callee.setdefault(str(n["callee"]), []).append(str(n["id"]))
            entry = (graph, by_callee)
            self._index[id(graph)] = entry
            while len(self._index) > self.size:
                self._index.popitem(last=False)
        self._index.move_to_end(id(graph))
        return {nid for name in functions for nid in entry[1].get(name, ())}

    def move(self, graph: Any, to: Any) -> None:
        """The index of ``graph`` is kept for ``to`` (a graph let go: its packed form; unpacked: the new
        graph object), so a step shown again does not scan its graph again."""
        entry = self._index.get(id(graph))
        if entry is not None and entry[0] is graph:
            del self._index[id(graph)]
            self._index[id(to)] = (to, entry[1])


def callee_changed_node_ids(graph: dict, functions: set[str]) -> set[str]:
    """Ids of the call nodes of ``graph`` (call_tir, calls of Relax functions) whose callee is one of
    ``functions``."""
    if not functions:
        return set()
    return {str(n["id"]) for n in graph.get("nodes", []) if n.get("callee") and str(n["callee"]) in functions}
