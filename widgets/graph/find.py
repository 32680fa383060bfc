"""Find in the graph view and revealing a node (:class:`FindMixin`, a base of
:class:`widgets.graph_view.GraphView`): matches are nodes of the whole function; revealing one expands the
groups around it, or waits for the whole graph while a collapsed view or a packed graph's layout is shown."""

from __future__ import annotations

from typing import Any, Optional

from pipeline_model import graph_hierarchy


class FindMixin:
    """Find and reveal of :class:`widgets.graph_view.GraphView` (which provides ``_prepared``, ``_matches``,
    ``_match_index``, ``_pending_reveal``, the ``find_changed`` signal, :meth:`set_expanded`,
    :meth:`select_node` and the zoom methods)."""

    _prepared: Any
    _matches: list[str]
    _match_index: int
    _pending_reveal: Optional[str]
    find_changed: Any

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
        if p is not None and p.whole_pending():
            self._pending_reveal = node_id  # revealed when the whole graph is shown
            return
        if p is None or p.full is None:
            return
        need = graph_hierarchy.groups_of(p.full, node_id, _tree=p.tree)
        missing = [g for g in need if g not in p.expanded]
        if missing:
            self._pending_reveal = node_id
            self.set_expanded(set(p.expanded) | set(missing))  # type: ignore[attr-defined]
            return
        self._centre_select(node_id)

    def _centre_select(self, node_id: str) -> None:
        p = self._prepared
        if p is None:
            return
        shown = node_id if node_id in p.index else p.rep.get(node_id, node_id)
        if shown not in p.index:
            return
        if self.current_scale() < 0.8:  # type: ignore[attr-defined]
            self.resetTransform()  # type: ignore[attr-defined]
            self.scale(0.9, 0.9)  # type: ignore[attr-defined]
            self._apply_lod()  # type: ignore[attr-defined]
        self.select_node(shown, center=True)  # type: ignore[attr-defined]
