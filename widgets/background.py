"""One background thread for the views' heavy Python work (graph layout, module diffs).

That work is pure Python, so two worker threads would never run at the same time anyway (the GIL), but
each busy one competes with the GUI thread for the interpreter: with a layout and a diff running at once,
the GUI thread got about a third of it and stalled for 100 ms and more while it had a scene to build.
One shared thread gives the same total throughput and the GUI thread half of the interpreter.

Each view keeps the task it queued last and takes it back (:meth:`BackgroundQueue.replace`) when a newer
request supersedes it; a task already running checks its own generation and stops early.
"""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QCoreApplication, QRunnable, QThreadPool

__all__ = ["shared_pool", "BackgroundQueue", "LAYOUT_PRIORITY", "DIFF_PRIORITY"]

#: Queued graph layouts run before queued diffs (the graph is what a selection shows first).
LAYOUT_PRIORITY = 1
DIFF_PRIORITY = 0

_pool: Optional[QThreadPool] = None


def shared_pool() -> QThreadPool:
    """The one-thread pool the views share (created with the application as its parent)."""
    global _pool
    if _pool is None:
        pool = QThreadPool(QCoreApplication.instance())
        pool.setMaxThreadCount(1)
        _pool = pool
        pool.destroyed.connect(_forget)
    return _pool


def _forget(*_args: object) -> None:
    global _pool
    _pool = None


class BackgroundQueue:
    """One view's place in the shared pool: at most one queued task of its own."""

    def __init__(self, priority: int) -> None:
        self.priority = priority
        self._queued: Optional[QRunnable] = None

    def replace(self, task: Optional[QRunnable]) -> None:
        """Take back this view's task if it has not started yet, then queue ``task`` (None: just take back)."""
        pool = shared_pool()
        if self._queued is not None:
            try:
                pool.tryTake(self._queued)
            except RuntimeError:  # it ran and Qt deleted it (auto-delete): nothing to take back
                pass
            self._queued = None
        if task is not None:
            self._queued = task
            pool.start(task, self.priority)

    def wait(self, ms: int) -> bool:
        """Wait up to ``ms`` for the shared pool to be idle (for scripts and benchmarks)."""
        return shared_pool().waitForDone(ms)
