"""``GraphPacker``: packs, unpacks and releases whole graphs (:mod:`pipeline_model.graph_pack`) on a thread of
its own, one job at a time in the order asked, and reports on the GUI thread. The graph controller keeps
decoded only the graphs the view needs now (issue 33: the GUI process held one 60-70 MB graph per step of a
50,000-node model)."""

from __future__ import annotations

from typing import Any, Callable, Optional

from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal

from pipeline_model import gc_pause, graph_pack
from pipeline_model.graph_pack import PackedGraph

#: A graph still held elsewhere when it was to be released (a layout in flight) is tried again this often.
RELEASE_RETRIES = 8
RELEASE_RETRY_MS = 500
#: Queued jobs run by priority: graphs let go first (their memory serves the next), then the graph of the step
#: shown is decoded, then graphs are packed (they stay decoded meanwhile).
RELEASE_PRIORITY, UNPACK_PRIORITY, PACK_PRIORITY = 2, 1, 0


class _Signals(QObject):
    packed = Signal(object, object)
    unpacked = Signal(object, object)
    held = Signal(object, int)
    failed = Signal(object, str)


class _Job(QRunnable):
    """One job: ``"pack"`` a graph, ``"unpack"`` a :class:`PackedGraph`, ``"release"`` a graph."""

    def __init__(self, kind: str, item: Any, signals: _Signals, tries: int = 0,
                 wanted: Optional[Callable[[], bool]] = None) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self.kind, self.item, self.signals, self.tries, self.wanted = kind, item, signals, tries, wanted

    def run(self) -> None:
        item, self.item = self.item, None
        try:
            if self.kind == "pack":
                self.signals.packed.emit(item, graph_pack.pack(item))
            elif self.kind == "unpack":
                if self.wanted is not None and not self.wanted():
                    self.signals.unpacked.emit(item, None)
                    return
                with gc_pause.paused(freeze=True):  # ~10^6 long-lived objects: see the engine client's graph()
                    graph = graph_pack.unpack(item)
                self.signals.unpacked.emit(item, graph)
            elif graph_pack.release(item):
                gc_pause.release_free_memory()
            else:
                self.signals.held.emit(item, self.tries)
        except Exception as exc:  # noqa: BLE001 - reported on the GUI thread
            self.signals.failed.emit(item, f"{type(exc).__name__}: {exc}")


class GraphPacker(QObject):
    """Signals (on the GUI thread): ``packed(graph, PackedGraph)``, ``unpacked(PackedGraph, graph or None)``
    (a new graph object), ``failed(item, message)``. :meth:`release` reports nothing."""

    packed = Signal(object, object)
    unpacked = Signal(object, object)
    failed = Signal(object, str)

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._signals = _Signals(self)
        self._signals.packed.connect(self.packed)
        self._signals.unpacked.connect(self.unpacked)
        self._signals.failed.connect(self.failed)
        self._signals.held.connect(self._retry_release)

    def pack(self, graph: dict[str, Any]) -> None:
        """Pack ``graph`` (not changed; ``packed`` reports the result)."""
        self._pool.start(_Job("pack", graph, self._signals), PACK_PRIORITY)

    def unpack(self, packed: PackedGraph, wanted: Optional[Callable[[], bool]] = None) -> None:
        """Decode ``packed`` again (``unpacked`` reports the new graph; None when ``wanted()``, asked when
        the job starts, said it is no longer wanted)."""
        self._pool.start(_Job("unpack", packed, self._signals, wanted=wanted), UNPACK_PRIORITY)

    def release(self, graph: dict[str, Any], tries: int = 0) -> None:
        """Free ``graph`` in short pieces once nothing else holds it (tried again a few times while something
        does; then its last holder frees it). The caller lets go of it."""
        self._pool.start(_Job("release", graph, self._signals, tries), RELEASE_PRIORITY)

    def _retry_release(self, graph: Any, tries: int) -> None:
        if tries < RELEASE_RETRIES:
            QTimer.singleShot(RELEASE_RETRY_MS, self, lambda: self.release(graph, tries + 1))

    def wait(self, ms: int = -1) -> bool:
        """Wait for the jobs asked so far (tests, benchmarks); False on time-out."""
        return bool(self._pool.waitForDone(ms))
