"""Run ▸ Save Reproducer of Failed Step…: a reproducer folder for the step that failed (issue 21).

The step is the current one when it failed, else the first failed step of the last run. The folder is chosen
in a dialog; the engine writes ``repro.py``, ``README.md`` and its data there (``save_reproducer``,
:mod:`pipeline_model.engine.debugging.reproducer_tvm`), with the Build & Run panel's inputs and tolerances.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Optional

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog

from app.context import AppContext
from app.engine_worker import EngineRequest
from app.i18n import tr
from pipeline_model.debugging import reproducer


class ReproducerController(QObject):
    """Saves a reproducer of a failed step through the engine."""

    #: The folder when a reproducer was written.
    saved = Signal(str)
    #: The message when it could not be written.
    failed = Signal(str)

    def __init__(self, ctx: AppContext, step_result: Callable[[str], Any], current_uid: Callable[[], str],
                 run_settings: Callable[[], Any]) -> None:
        super().__init__(ctx)
        self.ctx = ctx
        self._result = step_result
        self._current = current_uid
        self._run_settings = run_settings
        self.request: Optional[EngineRequest] = None

    def failed_step(self) -> Optional[tuple[int, Any]]:
        """``(index, StepResult)`` of the current step when it failed, else of the first failed step."""
        steps = self.ctx.doc.steps
        order = [s.uid for s in steps]
        current = self._current()
        for uid in ([current] if current in order else []) + order:
            result = self._result(uid)
            if result is not None and result.state == "failed":
                return order.index(uid), result
        return None

    def save_dialog(self) -> bool:
        """Ask for a folder, then :meth:`save`."""
        if self.failed_step() is None:
            self.ctx.status(tr("No step failed in the last run: nothing to reproduce."), 6000)
            return False
        start = os.path.dirname(self.ctx.doc.path) if self.ctx.doc.path else os.path.expanduser("~")
        folder = QFileDialog.getExistingDirectory(self.ctx.dialog_parent, tr("Save Reproducer Into"), start)
        return bool(folder) and self.save(folder)

    def save(self, folder: str) -> bool:
        """Write a reproducer of the failed step into ``folder`` (one engine request)."""
        from pipeline_model.engine.client import EngineClient

        found = self.failed_step()
        if found is None or self.request is not None:
            return False
        index, result = found
        doc = self.ctx.doc
        run = EngineClient.run_args(doc)
        self.ctx.consent.for_run(doc=doc)  # asks about code not consented to yet; the engine client carries the consent
        settings = self._run_settings()
        rtol, atol = settings[2] if settings is not None else (1e-4, 1e-4)
        inputs = settings[0].to_json() if settings is not None else None
        error = str(result.error or "")
        args = reproducer.save_request(run, index, reproducer.failure_kind(error), folder, error=error,
                                       traceback=str(result.traceback or ""), rtol=rtol, atol=atol, inputs=inputs)

        def call(client: Any, _on_event: Callable[[str, dict], None]) -> dict:
            return client.request("save_reproducer", args)

        request = self.ctx.engine.submit_fn("save_reproducer", call)
        self.request = request
        request.finished.connect(lambda value: self._on_finished(request, value))
        request.failed.connect(lambda message: self._on_failed(request, message))
        self.ctx.status(tr("Saving a reproducer of step {0}…").format(index + 1))
        return True

    def _on_finished(self, request: EngineRequest, value: Any) -> None:
        if request is not self.request:
            return
        self.request = None
        folder = str((value or {}).get("folder") or "")
        self.ctx.status(tr("Reproducer saved to {0} (python repro.py)").format(folder), 10000)
        self.saved.emit(folder)

    def _on_failed(self, request: EngineRequest, message: str) -> None:
        if request is not self.request:
            return
        self.request = None
        self.ctx.status(tr("No reproducer: {0}").format(message.strip()), 10000)
        self.failed.emit(message)
