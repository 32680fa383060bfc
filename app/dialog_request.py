"""One engine request behind a dialog (Compare Pipelines, Find Breaking Step, Where Values Diverge): the request
is tracked on its controller (``owner.request``), progress events of the given names go to the dialog's status
line, and only the answer of the request still tracked reaches the controller — an answer that comes after a
newer request was started, or after the dialog went away, is dropped."""

from __future__ import annotations

from typing import Any, Callable

from app.engine_worker import EngineRequest
from app.i18n import tr
from widgets.build_texts import shown_progress


def track(owner: Any, request: EngineRequest, progress_events: tuple[str, ...],
          finished: Callable[[Any], None], failed: Callable[[str], None]) -> EngineRequest:
    """Make ``request`` ``owner.request`` and connect it: ``finished(value)`` / ``failed(message)`` run only while
    it is still ``owner.request`` and ``owner.dialog`` exists (``owner.request`` is cleared first)."""
    owner.request = request

    def current() -> bool:
        if request is not owner.request or owner.dialog is None:
            return False
        owner.request = None
        return True

    def on_event(name: str, data: Any) -> None:
        if owner.dialog is not None and isinstance(data, dict) and name in progress_events:
            owner.dialog.status.setText(shown_progress(str(data.get("message") or data.get("phase") or "")[:300]))

    request.event.connect(on_event)
    request.finished.connect(lambda value: finished(value) if current() else None)
    request.failed.connect(lambda message: failed(message) if current() else None)
    return request


def stop(owner: Any) -> None:
    """Stop ``owner``'s tracked request (its answer then arrives as a failure)."""
    if owner.request is not None and owner.dialog is not None:
        owner.request.cancel()
        owner.dialog.status.setText(tr("Stopping…"))
