"""Run ▸ Find Breaking Step…: bisect the current pipeline in the engine (issue 21).

:class:`BisectDialog` shows the engine's ``bisect_progress`` messages while it works (Stop cancels between two
builds) and then one row per tested module (step, outcome, built?, max |diff|/max |ref|, milliseconds) and the
verdict. The culprit step is selected in the pipeline list (so its diff shows), marked there with its own colour,
icon and tooltip (the tested steps get a small good / bad badge: :meth:`QtPipelineModel.set_bisect_marks`), and the
status bar names it. Any edit of the pipeline clears the marks (they may no longer hold).
Tolerances and inputs are the Build & Run panel's; the engine side is
:mod:`pipeline_model.engine.handlers_debug` (``bisect``).
"""

from __future__ import annotations

import html
from typing import Any, Callable, Optional

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (
    QDialog, QHBoxLayout, QLabel, QPushButton, QTableWidget, QTableWidgetItem, QVBoxLayout,
    QWidget,
)

from app.context import AppContext
from app import dialog_request
from app.engine_worker import EngineRequest
from app.bisect_texts import outcome_label, verdict_html
from app.i18n import tr
from pipeline_model.debugging.bisect import BisectReport, request_bisect
from widgets.dialog_parts import close_box, start_stop_buttons, status_label
from widgets.engine_texts import code
from widgets.error_trace import engine_step_words


class BisectDialog(QDialog):
    """Find / Stop, progress, the tested modules and the verdict."""

    find_requested = Signal()
    stop_requested = Signal()
    #: Save Reproducer… of the breaking step (offered when TVM's own default pipeline fails on the model).
    reproducer_requested = Signal()

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Find Breaking Step"))
        self.setObjectName("bisectDialog")
        self.find_button, self.stop_button = start_stop_buttons(self, self.tr("Find"), self.find_requested,
                                                                self.stop_requested, self.tr("Stop"))
        # the verdict's values and TVM's words in a code font
        self.status = status_label(self, "bisectStatus", rich=True)
        self.reference = status_label(self, "bisectReference")  # the reference used, when the default one failed
        self.reference.hide()
        self.tvm_bug = QLabel(self)
        self.tvm_bug.setObjectName("bisectTvmBug")
        self.tvm_bug.setWordWrap(True)
        self.tvm_bug.hide()
        self.reproducer_button = QPushButton(self.tr("Save Reproducer…"), self)
        self.reproducer_button.clicked.connect(self.reproducer_requested)
        self.reproducer_button.hide()
        self.table = QTableWidget(0, 5, self)
        self.table.setHorizontalHeaderLabels([self.tr("Tested"), self.tr("Result"), self.tr("Built"),
                                              self.tr("max |diff| / max |ref|"), self.tr("ms")])
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        row = QHBoxLayout()
        row.addWidget(QLabel(self.tr("The first step after which the built model is wrong or fails to build:"), self))
        row.addStretch(1)
        row.addWidget(self.find_button)
        row.addWidget(self.stop_button)
        close = close_box(self)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.status)
        bug_row = QHBoxLayout()
        bug_row.addWidget(self.tvm_bug, 1)
        bug_row.addWidget(self.reproducer_button)
        layout.addLayout(bug_row)
        layout.addWidget(self.reference)
        layout.addWidget(self.table, 1)
        layout.addWidget(close)
        self.resize(760, 420)

    def set_busy(self, busy: bool, message: str = "") -> None:
        """While the engine bisects: Find off, Stop on; ``message`` in the status line."""
        self.find_button.setEnabled(not busy)
        self.stop_button.setEnabled(busy)
        if message:
            self.status.setText(html.escape(message, quote=False))

    def show_report(self, report: BisectReport) -> None:
        """One row per tested module (the culprit's row in bold) and the verdict."""
        self.table.setRowCount(0)
        for tested in report.tested:
            what = tr("model as loaded") if tested.step == 0 else f"{tested.step} {tested.pass_id}"
            if tested.mode == "without":
                what = tr("without step {0}").format(what)
            ratio = "-" if tested.max_abs_over_ref is None else f"{tested.max_abs_over_ref:.3g}"
            cells = [what, outcome_label(tested.outcome), tr("yes") if tested.built else tr("no"), ratio,
                     f"{tested.ms:.0f}"]
            r = self.table.rowCount()
            self.table.insertRow(r)
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if tested.error:  # what TVM or Python said, as code
                    item.setToolTip(f"<pre style='white-space: pre-wrap'>{html.escape(tested.error[:2000])}</pre>")
                if tested.step == report.culprit_step and (tested.outcome == "fail" or tested.mode == "without"
                                                           and tested.outcome == "pass"):
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        extra = tr(" Builds: {0} (budget {1}).").format(report.builds, report.max_builds)
        self.status.setText(verdict_html(report.message) + html.escape(extra, quote=False))
        self._show_reference(report)

    def _show_reference(self, report: BisectReport) -> None:
        """The reference the numbers were checked against when the default-pipeline one failed, and the line
        saying TVM's own default pipeline fails on the model (with Save Reproducer… when a step was found)."""
        if report.reference_failure:
            self.reference.setText(self.tr("The default-pipeline reference failed ({0}). Reference used: {1}")
                                   .format(report.reference_failure, report.reference or self.tr("none")))
        self.reference.setVisible(bool(report.reference_failure))
        kind = report.default_pipeline_fails
        texts = {"crash": self.tr("TVM's default pipeline crashes on this model too: this is a TVM bug."),
                 "build": self.tr("TVM's default pipeline fails to build this model too: this is a TVM bug."),
                 "run": self.tr("TVM's default pipeline fails at run time on this model too: this is a TVM bug.")}
        self.tvm_bug.setText(texts.get(kind or "", self.tr("TVM's default pipeline fails on this model too: "
                                                           "this is a TVM bug.")) if kind else "")
        self.tvm_bug.setVisible(bool(kind))
        self.reproducer_button.setVisible(bool(kind) and report.culprit_step is not None)


class BisectController(QObject):
    """Runs ``bisect`` for the dialog and selects the culprit step."""

    #: ``BisectReport`` when a bisection finished (tests, screenshots).
    finished = Signal(object)
    #: The message when it failed.
    failed = Signal(str)
    #: Save Reproducer… of the breaking step asked in the dialog (its uid; the main window saves it).
    reproducer_requested = Signal(str)

    def __init__(self, ctx: AppContext, run_settings: Callable[[], Any], select_uids: Callable[[list[str]], None],
                 set_marks: Optional[Callable[[dict[str, tuple[str, str]]], None]] = None) -> None:
        super().__init__(ctx)
        self.ctx = ctx
        self._run_settings = run_settings
        self._select_uids = select_uids
        self._set_marks = set_marks or (lambda _marks: None)
        self.dialog: Optional[BisectDialog] = None
        self.request: Optional[EngineRequest] = None
        self._uids: list[str] = []
        #: The last report while the pipeline is unchanged since (its culprit's reproducer can be saved).
        self.report: Optional[BisectReport] = None
        #: The ``bisect`` request arguments of :attr:`report`.
        self.report_args: Optional[dict[str, Any]] = None
        self._args: Optional[dict[str, Any]] = None
        ctx.document.edited.connect(self.forget)
        ctx.document.document_replaced.connect(self.forget)

    def forget(self, *_args: Any) -> None:
        """The pipeline changed: the last report and the marks in the pipeline list no longer hold."""
        if self.report is not None:
            self.report = self.report_args = None
            self._set_marks({})

    def culprit_uid(self) -> str:
        """The uid of the last report's culprit step ("" when none, or after an edit)."""
        step = self.report.culprit_step if self.report is not None else None
        return self._uids[step - 1] if step is not None and 1 <= step <= len(self._uids) else ""

    def show_dialog(self) -> BisectDialog:
        """Run ▸ Find Breaking Step…"""
        if self.dialog is None:
            dialog = self.dialog = BisectDialog(self.ctx.dialog_parent)
            dialog.find_requested.connect(self.find)
            dialog.stop_requested.connect(self.stop)
            dialog.reproducer_requested.connect(lambda: self.reproducer_requested.emit(self.culprit_uid()))
        self.dialog.show()
        self.dialog.raise_()
        return self.dialog

    def request_args(self) -> Optional[dict[str, Any]]:
        """The ``bisect`` request for the current document (``None`` when the panel's settings are not valid)."""
        from pipeline_model.engine.client import EngineClient

        settings = self._run_settings()
        if settings is None:
            return None
        inputs, _bench, (rtol, atol) = settings
        doc = self.ctx.doc
        run = EngineClient.run_args(doc)
        self.ctx.consent.for_run(doc=doc)  # asks about code not consented to yet; the engine client carries the consent
        self._uids = [s.uid for s in doc.steps]
        return {"run": run, "inputs": inputs.to_json(), "check": {"rtol": rtol, "atol": atol}, "check_against": "tvm"}

    def find(self) -> bool:
        """Start the bisection (one engine request)."""
        if self.dialog is None:
            self.show_dialog()
        assert self.dialog is not None
        if self.request is not None:
            return False
        args = self.request_args()
        if args is None:
            self.dialog.status.setText(tr("The Build & Run panel's settings are not valid (see the panel)."))
            return False

        def call(client: Any, on_event: Callable[[str, dict], None]) -> dict:
            return request_bisect(client, args, on_event=on_event)

        self._args = args
        self.dialog.table.setRowCount(0)
        self.dialog.set_busy(True, tr("Running the pipeline…"))
        dialog_request.track(self, self.ctx.engine.submit_fn("bisect", call), ("bisect_progress", "build_progress"),
                             self._on_finished, self._on_failed)
        return True

    def stop(self) -> None:
        """Stop between two builds."""
        dialog_request.stop(self)

    def _on_finished(self, value: Any) -> None:
        assert self.dialog is not None
        report = BisectReport.from_json(dict(value or {}))
        self.dialog.set_busy(False)
        self.dialog.show_report(report)
        self.report, self.report_args = report, self._args
        self._set_marks(bisect_marks(report, self._uids))
        step = report.culprit_step
        if step is not None and 1 <= step <= len(self._uids):
            self._select_uids([self._uids[step - 1]])
            self.ctx.status(tr("Breaking step: {0} ({1})").format(step, report.culprit_pass_id), 8000)
        self.finished.emit(report)

    def _on_failed(self, message: str) -> None:
        assert self.dialog is not None
        self.dialog.set_busy(False)
        self.dialog.status.setText(html.escape(tr("Find Breaking Step failed: {0}")).format(code(message.strip())))
        self.failed.emit(message)


def _ratio(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.3g}"


def _said(error: str, limit: int) -> str:
    """What TVM or Python said in a tested module's error (the engine's step framing left out), as code."""
    return code((engine_step_words(error) or error)[:limit])


def culprit_tip(report: BisectReport) -> str:
    """The culprit's tooltip line (rich text): what the bisection saw after it (the error ratio, or the error as
    code)."""
    tested = next((t for t in report.tested if t.step == report.culprit_step and t.outcome == "fail"), None)
    failure = dict(report.failure or {})
    ratio = tested.max_abs_over_ref if tested is not None else failure.get("max_abs_over_ref")
    if ratio is not None:
        text = html.escape(tr("breaking step found by bisect: max |diff|/max |ref| {0}").format(_ratio(ratio)))
    else:
        error = (tested.error if tested is not None else None) or str(failure.get("error") or "")
        first = error.strip().splitlines()[0][:200] if error.strip() else report.method
        text = html.escape(tr("breaking step found by bisect: {0}")).format(_said(first, 200))
    if report.method == "leave-one-out":
        text += " " + html.escape(tr("(the pipeline passes without it)"))
    return text


def bisect_marks(report: BisectReport, uids: list[str]) -> dict[str, tuple[str, str]]:
    """The marks of a report for the pipeline list: the culprit, and each tested prefix step good / bad / skipped
    (uid -> (mark, tooltip line as rich text: what TVM said as code))."""
    from widgets.step_model import BISECT_CULPRIT, BISECT_FAIL, BISECT_PASS, BISECT_SKIP

    def uid(step: Optional[int]) -> str:
        return uids[step - 1] if step is not None and 1 <= step <= len(uids) else ""

    marks: dict[str, tuple[str, str]] = {}
    for tested in report.tested:
        if tested.mode != "prefix" or not uid(tested.step):
            continue
        if tested.outcome == "pass":
            tip = html.escape(tr("bisect: the model after this step is right (max |diff|/max |ref| {0})").format(
                _ratio(tested.max_abs_over_ref)))
            marks[uid(tested.step)] = (BISECT_PASS, tip)
        elif tested.outcome == "fail":
            first = (tested.error or "").strip().splitlines()[:1]
            tip = html.escape(tr("bisect: the model after this step is wrong or fails ({0})")).format(
                _said(first[0], 160) if first else
                html.escape(tr("max |diff|/max |ref| {0}").format(_ratio(tested.max_abs_over_ref))))
            marks[uid(tested.step)] = (BISECT_FAIL, tip)
        else:
            marks[uid(tested.step)] = (BISECT_SKIP, html.escape(tr("bisect: skipped (the module after this step could "
                                                                   "not be completed)")))
    if not report.ok and uid(report.culprit_step):
        marks[uid(report.culprit_step)] = (BISECT_CULPRIT, culprit_tip(report))
    return marks
