"""Event timing of the GUI thread: which event, delivered to which object, took how long.

``TimingApplication`` is a ``QApplication`` whose ``notify()`` times every event it delivers and keeps those
over ``threshold_ms`` (receiver class, object name, event type, nesting depth, duration, the time it started),
gaps as long between two top-level events, and every ``LayoutRequest`` delivered to a widget with its parent
chain: the chain of ``LayoutRequest`` events in one event-loop turn shows which widget's size hint set off a
relayout of the main window.

It is a diagnostic for benchmarks (``bench_graph.py --slow-events MS``): overriding ``notify`` runs Python for
every event, which costs GUI-thread time of its own. It does not sample other threads' stacks (samplers
built on ``sys._current_frames`` crashed the app).
"""

from __future__ import annotations

import time
from typing import Any, Optional

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QWidget

_LAYOUT_REQUEST = QEvent.Type.LayoutRequest


def _name(obj: QObject) -> str:
    name = obj.objectName()
    return f"{type(obj).__name__}" + (f"#{name}" if name else "")


def widget_chain(widget: QObject, depth: int = 6) -> str:
    """``Class#name < Parent < ...`` for ``depth`` levels up."""
    parts = []
    obj: Optional[QObject] = widget
    while obj is not None and len(parts) < depth:
        parts.append(_name(obj))
        obj = obj.parent()
    return " < ".join(parts)


class TimingApplication(QApplication):
    """A ``QApplication`` that logs slow events and layout requests (see the module docstring)."""

    def __init__(self, argv: list[str], threshold_ms: float = 10.0) -> None:
        super().__init__(argv)
        self.threshold_ms = threshold_ms
        self.slow: list[dict[str, Any]] = []
        self.layout_requests: list[dict[str, Any]] = []
        self.gaps: list[dict[str, Any]] = []
        self.recording = False
        self._depth = 0
        self._t0 = time.perf_counter()
        self._last_end = self._t0

    def mark(self) -> None:
        """Forget what was logged; times are from now on."""
        self.slow.clear()
        self.layout_requests.clear()
        self.gaps.clear()
        self._t0 = self._last_end = time.perf_counter()

    def notify(self, receiver: QObject, event: QEvent) -> bool:  # noqa: D102 - Qt API
        if not self.recording:
            return super().notify(receiver, event)
        start = time.perf_counter()
        if self._depth == 0 and (start - self._last_end) * 1000 >= self.threshold_ms:
            # Between two events at the top: with a 2 ms timer running (the bench's stall monitor) the loop is
            # never idle that long, so this is the GUI thread waiting for the GIL (or not scheduled).
            self.gaps.append({"at_ms": round((self._last_end - self._t0) * 1000, 1),
                              "ms": round((start - self._last_end) * 1000, 1)})
        self._depth += 1
        try:
            return super().notify(receiver, event)
        finally:
            self._depth -= 1
            end = time.perf_counter()
            if self._depth == 0:
                self._last_end = end
            ms = (end - start) * 1000
            try:
                etype = event.type()
                if etype == _LAYOUT_REQUEST and isinstance(receiver, QWidget):
                    self.layout_requests.append({"at_ms": round((start - self._t0) * 1000, 1), "ms": round(ms, 1),
                                                 "receiver": widget_chain(receiver), "depth": self._depth})
                if ms >= self.threshold_ms:
                    self.slow.append({"at_ms": round((start - self._t0) * 1000, 1), "ms": round(ms, 1),
                                      "event": str(etype).rsplit(".", 1)[-1], "receiver": widget_chain(receiver, 3),
                                      "depth": self._depth})
            except RuntimeError:  # the receiver was deleted while its event was delivered
                pass

    def report(self, title: str, out: Any) -> None:
        """Print what was logged since :meth:`mark` to ``out``."""
        print(f"--- {title}: events >= {self.threshold_ms:.0f} ms", file=out)
        for e in self.slow:
            print(f"  at {e['at_ms']:8.1f}  {e['ms']:6.1f} ms  d{e['depth']} {e['event']:<22} {e['receiver']}", file=out)
        for g in self.gaps:
            print(f"  at {g['at_ms']:8.1f}  {g['ms']:6.1f} ms  gap between events (GIL wait / not scheduled)", file=out)
        big = [r for r in self.layout_requests]
        print(f"--- {title}: {len(big)} LayoutRequest deliveries", file=out)
        for r in big:
            print(f"  at {r['at_ms']:8.1f}  {r['ms']:6.1f} ms  d{r['depth']} {r['receiver']}", file=out)
