"""``RunSession``: the pipeline run lifecycle — Run / Run to / Stop, automatic re-runs after edits
(debounced for parameter typing), progress, the Tuning panel, and the stale-result guard.

Each run is one :class:`app.engine_worker.RunRequest`; its events are handled only while the
document is still at the run's revision (the worker drops older ones too).
"""

from __future__ import annotations

import html
from typing import Any, Optional

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QLabel, QProgressBar

from app.i18n import tr
from app.code_gate import CodeGate
from app.context import AppContext
from app.engine_worker import RunRequest
from app.pass_kinds import runs_tuning
from app.undo_commands import SetParamCommand, SetParamsCommand
from pipeline_model.engine.results import CHANGED, FAILED, UNCHANGED, RunResult, StepResult
from widgets.error_trace import error_html
from widgets.step_model import QtPipelineModel, format_ms
from widgets.tuning_panel import TuningPanel

PARAM_DEBOUNCE_MS = 300



class RunSession(QObject):
    """Runs the pipeline in the engine and shows its progress; see the module docstring."""

    #: True while a run is in flight (the Stop action follows it).
    running_changed = Signal(bool)
    #: ``(input_script, input_key)``: the model loaded for the current run.
    input_loaded = Signal(object, object)
    #: A step's result of the current run.
    step_result = Signal(object)
    #: ``(revision, RunResult)`` of a run of the current revision.
    run_finished = Signal(int, object)

    def __init__(self, ctx: AppContext, step_model: QtPipelineModel, tuning_panel: TuningPanel,
                 progress: QProgressBar, run_label: QLabel, current_uid: Any) -> None:
        super().__init__(ctx)
        self.ctx = ctx
        self.step_model = step_model
        self.tuning_panel = tuning_panel
        self.progress = progress
        self.run_label = run_label
        self.run_label.setTextFormat(Qt.TextFormat.RichText)  # a failed step's TVM words in a code font (summary)
        self._current_uid = current_uid
        self.request: Optional[RunRequest] = None
        self.last_run: Optional[RunResult] = None
        self.auto_run = True
        self._run_until: Optional[int] = None
        #: Uids of the tuning steps the user ran (Run / Run to): automatic re-runs include only these.
        self._tuning_started: set[str] = set()
        self.run_timer = QTimer(self)
        self.run_timer.setSingleShot(True)
        self.run_timer.timeout.connect(self.run_pipeline_auto)
        #: Holds automatic re-runs while edited custom-pass code is still being typed (``app.code_gate``).
        self.code_gate = CodeGate(ctx, lambda: self.run_pipeline_auto(code_ready=True))
        tuning_panel.stop_requested.connect(self.stop_tuning)
        ctx.document.document_replaced.connect(tuning_panel.reset)
        ctx.document.document_replaced.connect(self._tuning_started.clear)
        ctx.document.model_changed.connect(tuning_panel.reset)
        lost = getattr(ctx.engine, "engine_lost", None)
        if lost is not None:
            lost.connect(self._on_engine_lost)

    # ---- actions ------------------------------------------------------------------------------
    def run_pipeline_auto(self, code_ready: bool = False) -> None:
        """Debounced re-run after an edit. It stops before a tuning step the user has not run yet (a step
        just dropped, a file just opened): tuning takes minutes with the budget set in the step, so it
        starts only with Run (F5) or Run to; a tuning step that was run re-runs after an edit (a new
        budget restarts it). Edited custom-pass code waits for :class:`app.code_gate.CodeGate` (never run while
        the user is still typing it); ``code_ready``: the gate released it."""
        if not code_ready and self.code_gate.hold():
            return
        until = self._run_until
        waiting = self.tuning_waiting(until)
        if waiting is not None:
            title = self.ctx.catalogue.title_for(self.ctx.doc.steps[waiting].pass_id)
            self.ctx.status(tr("Step {0} ({1}) waits for Run (F5): set its tuning budget, then run it.").format(
                waiting + 1, title), 15000)
            if waiting == 0:
                return
            until = waiting - 1
        self.run_pipeline(until=until, explicit=False, remember_until=False)

    def tuning_waiting(self, until: Optional[int] = None) -> Optional[int]:
        """Index of the first enabled tuning step up to ``until`` that the user has not run (it waits for
        Run), or ``None``."""
        for index, step in enumerate(self.ctx.doc.steps):
            if until is not None and index > until:
                break
            if step.enabled and runs_tuning(step.pass_id) and step.uid not in self._tuning_started:
                return index
        return None

    def run_pipeline(self, checked: bool = False, until: Optional[int] = None, explicit: bool = True,  # noqa: ARG002
                     remember_until: bool = True) -> None:
        """Run (F5): every step, or up to ``until``. Code a file brings runs only with consent; an explicit
        run starts the tuning steps it covers (automatic re-runs then include them)."""
        self.run_timer.stop()
        self.code_gate.settle()  # the code as it is now is what this run runs
        self.ctx.consent.for_run(explicit=explicit, until=until)  # asks; the engine client carries the consent
        if explicit:
            steps = self.ctx.doc.steps if until is None else self.ctx.doc.steps[: until + 1]
            self._tuning_started.update(s.uid for s in steps if runs_tuning(s.pass_id))
        if remember_until:
            self._run_until = until
        doc = self.ctx.document
        request = self.ctx.engine.submit_run(doc.doc, doc.revision, until=until)
        revision = request.revision
        request.started.connect(lambda until_: self._on_started(revision, until_))
        request.step_started.connect(lambda index, uid: self._on_step_started(revision, index, uid))
        request.step_finished.connect(lambda result: self._on_step_finished(revision, result))
        request.event.connect(lambda name, data: self._on_event(revision, name, data))
        request.finished.connect(lambda result: self._on_finished(revision, result))
        self.request = request

    def run_to_selected(self) -> None:
        """Run up to the selected step."""
        uid = self._current_uid()
        if uid:
            self.run_to_uid(uid)

    def run_to_uid(self, uid: str) -> None:
        """Run the steps up to ``uid`` (inclusive)."""
        self.run_pipeline(until=self.ctx.doc.index_of(uid))

    def _on_engine_lost(self) -> None:
        """The engine process ended while idle: its modules are gone, so the steps run again (as after an edit;
        tuning steps not run yet still wait for Run) and the diff and graph panes can fetch them again."""
        if self.auto_run and self.ctx.doc.steps:  # lost only while idle: no run in flight
            self.run_pipeline_auto()

    def stop(self) -> None:
        """Stop the running pipeline (between passes)."""
        self.run_timer.stop()
        self.code_gate.timer.stop()
        if self.request is not None:
            self.request.cancel()
        self.ctx.status(tr("Stopping…"), 3000)

    def stop_tuning(self) -> None:
        """End the tuning in flight early (the Tuning panel's Stop): the tuning step keeps what was
        measured and the run goes on to the apply step. The main Stop cancels the whole run."""
        if self.request is not None:
            self.request.stop_tuning()
        self.ctx.status(tr("Stopping tuning; measured trials are kept and the run goes on…"), 5000)

    def on_edited(self, first_index: int) -> None:
        """An edit: newer revision (older results dropped), stale results cleared, re-run scheduled."""
        self.ctx.engine.set_revision(self.ctx.document.revision)
        self.step_model.clear_results(first_index)
        if self.auto_run:
            stack = self.ctx.undo_stack
            param = stack.count() and isinstance(stack.command(stack.index() - 1), (SetParamCommand, SetParamsCommand))
            self.run_timer.start(PARAM_DEBOUNCE_MS if param else 0)

    # ---- the run request's events --------------------------------------------------------------
    def _current(self, revision: int) -> bool:
        return revision == self.ctx.document.revision

    def _on_started(self, revision: int, until: Any) -> None:
        if not self._current(revision):
            return
        steps = self.ctx.doc.steps if until is None else self.ctx.doc.steps[: int(until) + 1]
        self.running_changed.emit(True)
        self.progress.setRange(0, max(1, len(steps)))
        self.progress.setValue(0)
        self.progress.setFormat(tr("%v / %m steps"))
        self.progress.show()
        self.run_label.setText(tr("Running…"))

    def _on_step_started(self, revision: int, index: int, uid: str) -> None:
        if not self._current(revision):
            return
        steps = self.ctx.doc.steps
        self.step_model.set_running(uid)
        self.progress.setValue(index)
        title = self.ctx.catalogue.title_for(steps[index].pass_id) if 0 <= index < len(steps) else uid
        if 0 <= index < len(steps) and runs_tuning(steps[index].pass_id):
            self.tuning_panel.start(tr("step {0}: {1}").format(index + 1, title))
            dock = self.tuning_panel.parentWidget()
            if dock is not None:
                dock.show()
                dock.raise_()
        self.run_label.setText(html.escape(tr("Running step {0}: {1}…").format(index + 1, title), quote=False))

    def _on_event(self, revision: int, name: str, data: Any) -> None:
        if not self._current(revision) or not isinstance(data, dict):
            return
        if name == "model_loaded":
            self.input_loaded.emit(data.get("input_script"), data.get("input_key"))
        elif name == "tuning_progress":
            done, total = data.get("done"), data.get("total")
            if isinstance(done, int) and isinstance(total, int) and total > 0:
                self.run_label.setText(tr("Tuning: {0}/{1} trials").format(done, total))
            self.tuning_panel.update_progress(data)
        elif name == "warning":
            self.ctx.status(str(data.get("message", ""))[:300], 10000)

    def _on_step_finished(self, revision: int, result: StepResult) -> None:
        if not self._current(revision):
            return
        result.error = self.ctx.consent.shown_error(result.error, result.index)  # the app's words, not the CLI's
        self.step_model.set_result(result)
        self.progress.setValue(result.index + 1)
        self.step_result.emit(result)

    def _on_finished(self, revision: int, result: RunResult) -> None:
        if not self._current(revision):
            return
        self.running_changed.emit(False)
        self.progress.hide()
        self.step_model.set_running(None)
        self.last_run = result
        if self.tuning_panel.active:
            self.tuning_panel.end(tr("Run stopped; measured trials are kept in the database") if result.cancelled else "")
        result.error = self.ctx.consent.shown_error(result.error)
        for step in result.steps:
            step.error = self.ctx.consent.shown_error(step.error, step.index)
            self.step_model.set_result(step)
        self.run_label.setText(self.summary(result))
        if result.error and result.failed_index is None:
            self.ctx.banner(result.error)
        self.run_finished.emit(revision, result)

    @staticmethod
    def summary(result: RunResult) -> str:
        """The status line after a run: steps, time, cache hits, stop, the failure."""
        ran = [s for s in result.steps if s.state in (CHANGED, UNCHANGED, FAILED)]
        engine_ms = sum(s.elapsed_ms for s in ran if not s.cached)
        parts = [tr("Run: {0} step(s), {1} (passes {2})").format(len(ran), format_ms(result.total_ms), format_ms(engine_ms))]
        cached = sum(1 for s in result.steps if s.cached)
        if cached:
            parts.append(tr("{0} from cache").format(cached))
        if result.cancelled:
            parts.append(tr("stopped"))
        if result.failed_index is not None:
            failed = result.steps[result.failed_index] if result.failed_index < len(result.steps) else None
            detail = ": " + error_html(failed.error.splitlines()[0], 120) if failed and failed.error else ""
            parts.append(tr("step {0} failed").format(result.failed_index + 1) + detail)
        if result.error and result.failed_index is None:
            parts.append(html.escape(result.error.splitlines()[0][:200], quote=False))
        return " · ".join(parts)  # rich text: TVM's words of a failed step in a code font
