"""Run ▸ Find Breaking Step…: bisect the current pipeline in the engine (issue 21).

:class:`BisectDialog` shows the engine's ``bisect_progress`` messages while it works (Stop cancels between two
builds) and then one row per tested module (step, outcome, built?, max |diff|/max |ref|, milliseconds) and the
verdict. The culprit step is selected in the pipeline list (so its diff shows) and the status bar names it.
Tolerances and inputs are the Build & Run panel's; the engine side is
:mod:`pipeline_model.engine.handlers_debug` (``bisect``).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QPushButton, QTableWidget, QTableWidgetItem, QVBoxLayout,
    QWidget,
)

from app.context import AppContext
from app import dialog_request
from app.engine_worker import EngineRequest
from app.i18n import tr
from pipeline_model.debugging.bisect import BisectReport, request_bisect


class BisectDialog(QDialog):
    """Find / Stop, progress, the tested modules and the verdict."""

    find_requested = Signal()
    stop_requested = Signal()

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Find Breaking Step"))
        self.setObjectName("bisectDialog")
        self.find_button = QPushButton(self.tr("Find"), self)
        self.find_button.setDefault(True)
        self.find_button.clicked.connect(self.find_requested)
        self.stop_button = QPushButton(self.tr("Stop"), self)
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop_requested)
        self.status = QLabel(self)
        self.status.setObjectName("bisectStatus")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
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
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.status)
        layout.addWidget(self.table, 1)
        layout.addWidget(close)
        self.resize(760, 420)

    def set_busy(self, busy: bool, message: str = "") -> None:
        """While the engine bisects: Find off, Stop on; ``message`` in the status line."""
        self.find_button.setEnabled(not busy)
        self.stop_button.setEnabled(busy)
        if message:
            self.status.setText(message)

    def show_report(self, report: BisectReport) -> None:
        """One row per tested module (the culprit's row in bold) and the verdict."""
        self.table.setRowCount(0)
        for tested in report.tested:
            what = tr("model as loaded") if tested.step == 0 else f"{tested.step} {tested.pass_id}"
            if tested.mode == "without":
                what = tr("without step {0}").format(what)
            ratio = "-" if tested.max_abs_over_ref is None else f"{tested.max_abs_over_ref:.3g}"
            cells = [what, tested.outcome, tr("yes") if tested.built else tr("no"), ratio, f"{tested.ms:.0f}"]
            r = self.table.rowCount()
            self.table.insertRow(r)
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if tested.error:
                    item.setToolTip(tested.error[:2000])
                if tested.step == report.culprit_step and tested.outcome == "fail":
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        extra = tr(" Builds: {0} (budget {1}).").format(report.builds, report.max_builds)
        self.status.setText(report.message + extra)


class BisectController(QObject):
    """Runs ``bisect`` for the dialog and selects the culprit step."""

    #: ``BisectReport`` when a bisection finished (tests, screenshots).
    finished = Signal(object)
    #: The message when it failed.
    failed = Signal(str)

    def __init__(self, ctx: AppContext, run_settings: Callable[[], Any], select_uids: Callable[[list[str]], None]) -> None:
        super().__init__(ctx)
        self.ctx = ctx
        self._run_settings = run_settings
        self._select_uids = select_uids
        self.dialog: Optional[BisectDialog] = None
        self.request: Optional[EngineRequest] = None
        self._uids: list[str] = []

    def show_dialog(self) -> BisectDialog:
        """Run ▸ Find Breaking Step…"""
        if self.dialog is None:
            dialog = self.dialog = BisectDialog(self.ctx.dialog_parent)
            dialog.find_requested.connect(self.find)
            dialog.stop_requested.connect(self.stop)
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
        step = report.culprit_step
        if step is not None and 1 <= step <= len(self._uids):
            self._select_uids([self._uids[step - 1]])
            self.ctx.status(tr("Breaking step: {0} ({1})").format(step, report.culprit_pass_id), 8000)
        self.finished.emit(report)

    def _on_failed(self, message: str) -> None:
        assert self.dialog is not None
        self.dialog.set_busy(False, tr("Find Breaking Step failed: {0}").format(message.strip()))
        self.failed.emit(message)
