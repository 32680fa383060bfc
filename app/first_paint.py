"""What waits for a window's first paint (start-up, issue 33): :func:`after_first_paint`.

The main window is shown with only what its first frame needs; the engine, the start-up document and the
parts hidden at first (the Build & Run and Profile panels, see :meth:`app.main_window.MainWindow.build_hidden_parts`)
follow on the event-loop turn after the first paint.
"""

from __future__ import annotations

from typing import Callable, Optional

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget


class _FirstPaint(QObject):
    """Calls ``callback`` once, on the event-loop turn after ``window``'s first paint event, or after
    ``fallback_ms`` when no paint came by then (a window started minimised or hidden; ``None``: no fallback)."""

    def __init__(self, window: QWidget, callback: Callable[[], None], fallback_ms: Optional[int]) -> None:
        super().__init__(window)
        self._window = window
        self._callback: Optional[Callable[[], None]] = callback
        window.installEventFilter(self)
        if fallback_ms is not None:
            QTimer.singleShot(fallback_ms, self._fire)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if obj is self._window and event.type() == QEvent.Type.Paint and self._callback is not None:
            self._window.removeEventFilter(self)
            QTimer.singleShot(0, self._fire)
        return False

    def _fire(self) -> None:
        callback, self._callback = self._callback, None
        if callback is not None:
            self._window.removeEventFilter(self)
            callback()


def after_first_paint(window: QWidget, callback: Callable[[], None], fallback_ms: Optional[int] = 2000) -> None:
    """Run ``callback`` once, just after ``window`` was first painted (what the first frame does not
    need waits for it), at the latest ``fallback_ms`` after now (``None``: only after a paint)."""
    hooks = getattr(window, "_rps_first_paint_hooks", None)
    if hooks is None:
        hooks = window._rps_first_paint_hooks = []  # type: ignore[attr-defined]
    hooks.append(_FirstPaint(window, callback, fallback_ms))
