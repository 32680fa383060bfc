"""Save Reproducer: a reproducer folder for the step that failed, or for a bisection's breaking step (issue 21).

Run ▸ Save Reproducer of Failed Step… takes the current step when it failed, else the first failed step of the
last run. The pipeline list's context menu (Save Reproducer… on a failed step or on the breaking step that Find
Breaking Step marked) takes that step: a step that failed gets the reproducer of its failure, the breaking
step the reproducer of the bisection's failure (as ``main.py bisect --reproducer DIR``: numerics, build or crash
after the step; :func:`pipeline_model.debugging.reproducer.report_kind`). The folder is chosen in a dialog;
the engine writes ``repro.py``, ``README.md`` and its data there (``save_reproducer``,
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
from app.output_folder import ask_overwrite
from pipeline_model.debugging import reproducer


class ReproducerController(QObject):
    """Saves a reproducer of a failed step through the engine."""

    #: The folder when a reproducer was written.
    saved = Signal(str)
    #: The message when it could not be written.
    failed = Signal(str)

    def __init__(self, ctx: AppContext, step_result: Callable[[str], Any], current_uid: Callable[[], str],
                 run_settings: Callable[[], Any], bisector: Any = None) -> None:
        super().__init__(ctx)
        self.ctx = ctx
        self._result = step_result
        self._current = current_uid
        self._run_settings = run_settings
        #: The :class:`app.bisect_controller.BisectController` whose culprit can be saved (``None``: none).
        self.bisector = bisector
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

    def failed_step_of(self, uid: str) -> Optional[tuple[int, Any]]:
        """``(index, StepResult)`` of step ``uid`` when it failed in the last run."""
        order = [s.uid for s in self.ctx.doc.steps]
        result = self._result(uid) if uid in order else None
        return (order.index(uid), result) if result is not None and result.state == "failed" else None

    def can_save(self, uid: str = "") -> bool:
        """Whether a reproducer can be saved for step ``uid`` (failed, or the bisection's culprit); without
        ``uid``, for the failed step :meth:`failed_step` finds."""
        if not uid:
            return self.failed_step() is not None
        return self.failed_step_of(uid) is not None or self._is_culprit(uid)

    def _is_culprit(self, uid: str) -> bool:
        return bool(uid) and self.bisector is not None and self.bisector.culprit_uid() == uid

    def ask_folder(self) -> str:
        """The folder for a reproducer, chosen in a dialog ("" when cancelled)."""
        start = os.path.dirname(self.ctx.doc.path) if self.ctx.doc.path else os.path.expanduser("~")
        return QFileDialog.getExistingDirectory(self.ctx.dialog_parent, tr("Save Reproducer Into"), start)

    def save_dialog(self, uid: str = "") -> bool:
        """Ask for a folder, then :meth:`save` (for step ``uid``: the context menu; else the failed step)."""
        if not self.can_save(uid):
            self.ctx.status(tr("No step failed in the last run: nothing to reproduce."), 6000)
            return False
        folder = self.ask_folder()
        return bool(folder) and self.save(folder, uid)

    def save(self, folder: str, uid: str = "") -> bool:
        """Write a reproducer into ``folder`` (one engine request): of step ``uid``'s failure when it failed, of
        the bisection's failure when it is the breaking step Find Breaking Step found; without ``uid``, of the
        failed step :meth:`failed_step` finds."""
        if self.request is not None:
            return False
        found = self.failed_step_of(uid) if uid else self.failed_step()
        if found is not None:
            index, result = found
            error = str(result.error or "")
            request = self._request(index, reproducer.failure_kind(error), folder, error=error,
                                    traceback=str(result.traceback or ""))
        elif self._is_culprit(uid):
            report = self.bisector.report
            kind, error, run_after = reproducer.report_kind(report)
            index = int(report.culprit_step) - 1
            request = self._request(index, kind, folder, error=error, run_after=run_after,
                                    bisect_args=self.bisector.report_args)
        else:
            return False
        overwrite = ask_overwrite(self.ctx.dialog_parent, folder, reproducer.FOLDER_FILES)  # never replaced unasked
        if overwrite is None:
            return False
        request["overwrite"] = overwrite
        return self._submit(request, index)

    def _request(self, index: int, kind: str, folder: str, *, error: str = "", traceback: str = "",
                 run_after: bool = False, bisect_args: Optional[dict[str, Any]] = None) -> dict[str, Any]:
        """The ``save_reproducer`` request (the bisection's own inputs and tolerances for its culprit)."""
        from pipeline_model.engine.client import EngineClient

        doc = self.ctx.doc
        run = EngineClient.run_args(doc)
        self.ctx.consent.for_run(doc=doc)  # asks about code not consented to yet; the engine client carries the consent
        if bisect_args is not None:
            check = dict(bisect_args.get("check") or {})
            # (a tolerance the bisection left to the model's precision: the reproducer's float check)
            rtol, atol = (float(1e-4 if check.get(name) is None else check[name]) for name in ("rtol", "atol"))
            inputs = bisect_args.get("inputs")
        else:
            settings = self._run_settings()
            rtol, atol = settings[2] if settings is not None else (1e-4, 1e-4)
            inputs = settings[0].to_json() if settings is not None else None
        return reproducer.save_request(run, index, kind, folder, error=error, traceback=traceback, rtol=rtol,
                                       atol=atol, inputs=inputs, run_after=run_after)

    def _submit(self, args: dict[str, Any], index: int) -> bool:
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
