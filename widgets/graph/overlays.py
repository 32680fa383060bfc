"""What the graph view paints over the diagram besides the change highlight: the profile's heat overlay and
the "where values diverge" overlay, with their legends (:class:`OverlayMixin`, a base of
:class:`widgets.graph_view.GraphView`).

Both overlays are given by ids of the full graph and shown on the view nodes (a collapsed group sums the heat
of its members and shows the worst error of its members). The heat is kept across ``set_graph``; the error
colouring is bound to the graph it was given for (the layout key, or the graph object when there is no key):
showing another graph clears it, so colours measured on one module never stay on another.
"""

from __future__ import annotations

import html
from typing import Any, Mapping, Optional

from PySide6.QtGui import QColor

from widgets.graph.adapter import CHANGED
from widgets.graph.errors import DIVERGES, NO_COUNTERPART, OK, ErrorMark, NodeError, fill_colour, outline_colour, \
    view_marks
from widgets.graph.legend import ErrorLegend, HeatLegend
from widgets.graph.palette import GraphPalette

#: The minimap marks at most this many diverging nodes.
MINIMAP_MARKS = 2000


class OverlayMixin:
    """The heat and error overlays of :class:`widgets.graph_view.GraphView` (which provides ``_prepared``,
    ``_scene``, ``_cats``, ``_key``, ``viewport()``, ``reveal()``, ``is_busy()``, ``_overview_widget``, the
    ``node_errors_cleared`` signal and ``_overlay_words()``: the translated words, kept in the view's module
    where the translation tools look)."""

    _prepared: Any
    _scene: Any
    _cats: list[int]
    _overview_widget: Any

    def _init_overlays(self, palette: GraphPalette) -> None:
        self._heat: dict[str, float] = {}  # full-graph node id -> share of the run time (0..1)
        self._heat_view: dict[int, float] = {}  # view node index -> share (collapsed groups sum)
        self._heat_shown = True
        self._legend = HeatLegend(self, palette)  # type: ignore[arg-type]
        words = self._overlay_words()  # type: ignore[attr-defined]
        self._legend.set_texts(words["heat_title"], words["heat_changed"])
        self._errors: dict[str, NodeError] = {}
        self._error_marks: dict[int, ErrorMark] = {}
        self._first_error: Optional[str] = None
        self._first_inside: Optional[str] = None  # the first diverging value inside the first node (a call)
        self._tolerance = 1e-5
        self._errors_for: Any = None  # the graph the errors were given for (see _bind_graph)
        self._asked_graph: Any = None
        self._reveal_error: Optional[str] = None
        self._error_legend = ErrorLegend(self, palette)  # type: ignore[arg-type]
        self._error_legend.clear_requested.connect(self.clear_node_errors)
        self.graph_shown.connect(self._after_graph_shown)  # type: ignore[attr-defined]

    # ---- heat
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
        self._push_item_state()

    def heat_visible(self) -> bool:
        """True when the heat overlay is painted (shown and there is one for the nodes on screen; the error
        colouring, while on, is painted instead)."""
        return self._heat_shown and bool(self._heat_view) and not self._error_marks

    def node_heat(self, node_id: str) -> Optional[float]:
        """The share painted on a shown node (view id), or None."""
        p = self._prepared
        if p is None or node_id not in p.index:
            return None
        return self._heat_view.get(p.index[node_id])

    def heat_legend(self) -> HeatLegend:
        """The heat overlay's legend (top left; shown while the overlay is painted, in a view roomy enough
        that it covers little of the graph)."""
        return self._legend

    def _update_heat_view(self) -> None:
        p = self._prepared
        self._heat_view = {}
        if p is not None and self._heat:
            for full_id, share in self._heat.items():
                vid = p.rep.get(full_id, full_id)
                if vid in p.index:
                    i = p.index[vid]
                    self._heat_view[i] = self._heat_view.get(i, 0.0) + share
        self._push_item_state()

    # ---- where values diverge
    def set_node_errors(self, errors: Mapping[str, NodeError], first_id: Optional[str] = None,
                        tolerance: float = 1e-5, *, title: str = "", reveal: bool = True,
                        first_inside: Optional[str] = None) -> None:
        """Colour the nodes of the graph shown (or being laid out) by their error: ``errors`` maps ids of the
        full graph to :class:`NodeError` (nodes not in it keep their look), ``first_id`` is the first
        diverging node in topological order (thick outline and a badge; revealed, centred and selected when
        ``reveal``), ``tolerance`` the check's relative tolerance (the middle of the colour scale), ``title``
        the legend's title, ``first_inside`` the first diverging value inside the first node when that is a
        call (``<call id>/<id in the callee>``: marked instead of the call while the call is expanded in place;
        ``errors`` may name such values too). Cleared by :meth:`clear_node_errors`, Esc, the legend's button, or showing
        another graph (another layout key); ``node_errors_cleared`` is emitted then."""
        self._errors = {str(k): v for k, v in errors.items() if isinstance(v, NodeError)}
        self._first_error = str(first_id) if first_id else None
        self._first_inside = str(first_inside) if first_inside else None
        self._tolerance = float(tolerance) if tolerance and tolerance > 0 else 1e-5
        self._errors_for = self._asked_graph
        words = self._overlay_words()  # type: ignore[attr-defined]
        counts = {s: sum(1 for e in self._errors.values() if e.status == s) for s in (DIVERGES, OK, NO_COUNTERPART)}
        self._error_legend.set_texts(
            title=title or words["title"],
            summary=words["summary"].format(counts[DIVERGES], counts[OK], counts[NO_COUNTERPART]),
            ok=words["ok"], tolerance=words["tolerance"].format(f"{self._tolerance:g}"), diverges=words["diverges"],
            none=words["none"], first=words["first"], badge=words["badge"], clear_tip=words["clear_tip"])
        self._update_error_view()
        if reveal and self._first_error:
            if self.is_busy():  # type: ignore[attr-defined]
                self._reveal_error = self._first_error
            else:
                self.reveal(self._first_error)  # type: ignore[attr-defined]

    def clear_node_errors(self) -> None:
        """Remove the error colouring (and its legend); emits ``node_errors_cleared`` when there was one."""
        had = bool(self._errors)
        self._errors = {}
        self._first_error = None
        self._first_inside = None
        self._reveal_error = None
        self._errors_for = None
        self._update_error_view()
        if had:
            self.node_errors_cleared.emit()  # type: ignore[attr-defined]

    def node_errors(self) -> dict[str, NodeError]:
        """The errors shown (full-graph ids; empty when the colouring is off)."""
        return dict(self._errors)

    def first_error_node(self) -> Optional[str]:
        """The first diverging node marked (full-graph id), or None."""
        return self._first_error if self._errors else None

    def node_error_mark(self, node_id: str) -> Optional[ErrorMark]:
        """The error mark painted on a shown node (view id), or None."""
        p = self._prepared
        if p is None or node_id not in p.index:
            return None
        return self._error_marks.get(p.index[node_id])

    def error_legend(self) -> ErrorLegend:
        """The error colouring's legend (top left while the colouring is on; its button clears it)."""
        return self._error_legend

    def _node_overlay_fill(self, node_id: str) -> Optional[QColor]:
        """The fill the error colouring paints on a shown node, if it changes it (its error colour, or its
        plain category colour instead of "changed" amber)."""
        p = self._prepared
        if p is None or not self._error_marks or node_id not in p.index:
            return None
        i = p.index[node_id]
        mark = self._error_marks.get(i)
        if mark is not None:
            return fill_colour(mark, self._palette.colors["base"])  # type: ignore[attr-defined]
        if self._cats[i] == CHANGED:
            return QColor(self._palette.brushes[p.base_cats[i]].color())  # type: ignore[attr-defined]
        return None

    def _error_tooltip(self, node_id: str) -> str:
        """The tooltip line of a node's error (HTML), or ''."""
        error = self._errors.get(node_id)
        if error is not None:
            words = self._overlay_words()  # type: ignore[attr-defined]
            status = {OK: words["ok"], DIVERGES: words["diverges_status"], NO_COUNTERPART: words["no counterpart"]}
            text = html.escape(error.tooltip or status.get(error.status, error.status))
            return f"<b>{text}</b>" + (" — <b>" + html.escape(words["first"]) + "</b>"
                                       if node_id in (self._first_error, self._first_inside) else "")
        mark = self.node_error_mark(node_id)
        if mark is not None and mark.status == DIVERGES:
            return "<b>" + html.escape(self._overlay_words()["holds"]) + "</b>"  # type: ignore[attr-defined]
        return ""

    def _bind_graph(self, graph_json: Any, key: Any) -> None:
        """``set_graph`` was asked for ``graph_json`` under ``key``: the error colouring of another graph goes."""
        asked = (key, None) if key is not None else (None, id(graph_json))
        self._asked_graph = asked
        if self._errors and self._errors_for != asked:
            self.clear_node_errors()

    def _update_error_view(self) -> None:
        p = self._prepared
        self._error_marks = view_marks(self._errors, self._tolerance, p.rep, p.index) if p is not None and \
            self._errors else {}
        self._push_item_state()

    def _after_graph_shown(self) -> None:
        target, self._reveal_error = self._reveal_error, None
        if target is not None and self._errors:
            self.reveal(target)  # type: ignore[attr-defined]

    def _first_index(self) -> Optional[int]:
        """The view index marked first: the first node (or the collapsed group showing it), else, while that
        node is a call expanded in place, the first diverging value inside it."""
        p = self._prepared
        if p is None or not self._first_error:
            return None
        for node_id in (self._first_error, self._first_inside):
            vid = node_id if node_id in p.index else p.rep.get(node_id) if node_id else None
            if vid is not None and vid in p.index:
                return p.index[vid]
        return None

    # ---- painting state
    def _push_item_state(self) -> None:
        """Hand the diagram item what it paints besides the layout: categories, the heat shown and the error
        marks; place the legends and the minimap's marks."""
        item = self._scene.diagram
        marks = self._error_marks
        if item is not None:
            item.cats = self._cats
            item.heat = self._heat_view if self._heat_shown else {}
            item.errors = marks
            item.first_error = self._first_index() if marks else None
            item.first_text = self._overlay_words()["badge"]  # type: ignore[attr-defined]
            item.update()
        if not hasattr(self, "_error_legend"):
            return
        vp = self.viewport().geometry()  # type: ignore[attr-defined]
        corner = (vp.left() + 8, vp.top() + 8)
        legend = self._error_legend
        whole = legend.full_size()
        legend.set_compact(vp.width() < 2.2 * whole[0] or vp.height() < 4.0 * whole[1])
        errors_shown = bool(marks) and item is not None and vp.width() >= 1.4 * legend.width()
        if errors_shown:
            self._error_legend.move(*corner)
            self._error_legend.raise_()
        self._error_legend.setVisible(errors_shown)
        roomy = vp.width() >= 2.5 * self._legend.width() and vp.height() >= 5 * self._legend.height()
        shown = self._heat_shown and bool(self._heat_view) and item is not None and roomy and not marks
        if shown:
            self._legend.set_top(max(self._heat_view.values()))
            self._legend.move(*corner)
            self._legend.raise_()
        self._legend.setVisible(shown)
        self._push_minimap_marks()

    def _push_minimap_marks(self) -> None:
        p = self._prepared
        base = self._palette.colors["base"]  # type: ignore[attr-defined]
        marks: list[tuple[tuple[float, float, float, float], QColor]] = []
        if p is not None and self._error_marks:
            bad = sorted((i for i, m in self._error_marks.items() if m.status == DIVERGES),
                         key=lambda i: self._error_marks[i].t)[-MINIMAP_MARKS:]
            marks = [(p.rects[i], outline_colour(self._error_marks[i], base)) for i in bad]
        self._overview_widget.set_marks(marks)
