"""Tests of the views' shared background thread (widgets.background)."""

from __future__ import annotations

import threading
import time

from PySide6.QtCore import QRunnable

from widgets.background import BackgroundQueue, shared_pool


class _Task(QRunnable):
    def __init__(self, log: list, name: str, gate: threading.Event | None = None) -> None:
        super().__init__()
        self.log, self.name, self.gate = log, name, gate

    def run(self) -> None:  # noqa: D102 - QRunnable API
        self.log.append(("start", self.name, threading.get_ident()))
        if self.gate is not None:
            self.gate.wait(10)
        time.sleep(0.01)
        self.log.append(("end", self.name, threading.get_ident()))


def test_views_share_one_thread_and_a_newer_task_takes_back_the_queued_one(qapp):
    log: list = []
    layout, diff = BackgroundQueue(1), BackgroundQueue(0)
    gate = threading.Event()
    diff.replace(_Task(log, "diff-running", gate))  # occupies the one thread
    while not log:
        time.sleep(0.001)
    layout.replace(_Task(log, "layout-old"))  # queued behind it ...
    layout.replace(_Task(log, "layout-new"))  # ... and taken back by the newer one
    diff.replace(_Task(log, "diff-next"))  # queued, lower priority than the layout
    gate.set()
    assert shared_pool().waitForDone(10_000)
    names = [name for what, name, _tid in log if what == "start"]
    assert names == ["diff-running", "layout-new", "diff-next"]
    # one after the other, never two at once, on a single thread
    events = [(what, name) for what, name, _tid in log]
    assert events == [(w, n) for n in names for w in ("start", "end")]
    assert len({tid for _w, _n, tid in log}) == 1
    # taking back a task that already ran (and was deleted by Qt) is harmless
    layout.replace(None)
    diff.replace(None)
