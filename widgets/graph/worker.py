"""The off-thread preparation of a graph (a ``QRunnable`` for the view's one-thread ``QThreadPool``)."""

from __future__ import annotations

from typing import Any, Optional

from PySide6.QtCore import QElapsedTimer, QObject, QRunnable, Signal

from pipeline_model import gc_pause, graph_collapsed
from pipeline_model.ir_graph import changed_nodes
from pipeline_model.layout import DETAIL_LINE, GROUP_WORDS, LayoutCancelled
from widgets.graph.adapter import decode
from widgets.graph.prepare import Prepared, prepare_collapsed, prepare_full


class LayoutSignals(QObject):
    """How a :class:`LayoutTask` reports: ``done(Prepared)`` or ``failed(generation, message)``."""

    done = Signal(object)
    failed = Signal(int, str)


class LayoutTask(QRunnable):
    """Everything heavier than painting, off the GUI thread: JSON decoding, module annotation, change
    detection against ``before``, the view graph for the expansion, layout, paths and the overview image.
    ``latest`` is the view's generation holder: a task whose generation is no longer the latest stops at
    the next check (before starting, between layout stages) and reports nothing."""

    def __init__(self, generation: int, latest: list[int], data: Any, highlight: frozenset[str], before: Any,
                 expanded: Optional[frozenset[str]], char_width: float, node_height: float,
                 signals: LayoutSignals, cached: Optional[Prepared] = None, cache_key: Any = None,
                 line_height: float = DETAIL_LINE, words: Optional[dict[str, str]] = None) -> None:
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
        self.line_height = line_height
        self.words = words if words is not None else dict(GROUP_WORDS)

    def stale(self) -> bool:
        """True when a newer request superseded this one."""
        return self.latest[0] != self.generation

    def run(self) -> None:
        """Prepare the graph (or recolour the cached layout) and report it, unless superseded."""
        if self.stale():
            return
        timer = QElapsedTimer()
        timer.start()
        # ~100k short-lived objects: collections of the whole heap would cost ~20% here and stall the GUI
        # thread (GIL); what is left is the cached layout, frozen out of later collections.
        with gc_pause.paused(freeze=True):
            try:
                prepared = self._prepared()
            except LayoutCancelled:
                return
            except Exception as exc:  # noqa: BLE001 - reported to the view, which shows it
                self.signals.failed.emit(self.generation, f"{type(exc).__name__}: {exc}")
                return
        if self.stale():
            return
        if self.cached is None:
            gc_pause.release_free_memory()  # what the layout freed, back to the system (~10 ms)
        prepared.seconds = timer.elapsed() / 1000.0
        self.signals.done.emit(prepared)

    def _prepared(self) -> Prepared:
        full = decode(self.data)
        if graph_collapsed.is_collapsed_view(full):  # the engine's collapsed view: its changes come with it
            prepared = prepare_collapsed(self.generation, full, self.highlight, self.char_width, self.node_height,
                                         self.stale, self.line_height, self.words)
            prepared.hl_extra = self.highlight
            return prepared
        before = decode(self.before) if self.before is not None else None
        highlight = set(self.highlight)
        if before is not None:
            highlight |= changed_nodes(before, full)
        if self.cached is not None:  # the view may be painting it: it recolours it on the GUI thread
            prepared = self.cached
            prepared.highlight_pending = (self.generation, frozenset(highlight), self.before, self.highlight)
            prepared.generation = self.generation
            return prepared
        prepared = prepare_full(self.generation, full, frozenset(highlight), self.expanded,
                                self.char_width, self.node_height, self.stale, self.line_height, self.words)
        prepared.cache_key = self.cache_key
        prepared.hl_before, prepared.hl_extra = self.before, self.highlight
        return prepared
