"""Run ▸ Where Values Diverge…: every intermediate value before and after the selected step (issue 21).

Runs the engine's ``diverge`` (:mod:`pipeline_model.engine.debugging.diverge_tvm`) for the current step with
the Build & Run panel's inputs and tolerances, and shows one row per node of the entry function after the
step (what it calls, shape, max |diff| / max |ref|, ok / DIVERGES / no counterpart), the first diverging node
selected. Activating a row selects that node in the graph (the graph of the step shows the module after it).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from app.context import AppContext
from app import dialog_request
from app.engine_worker import EngineRequest
from app.i18n import tr

#: Item data: the graph node id of a row.
NODE_ROLE = Qt.ItemDataRole.UserRole + 1


class DivergeDialog(QDialog):
    """The per-node table and a status line."""

    node_activated = Signal(str)

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Where Values Diverge"))
        self.setObjectName("divergeDialog")
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget(0, 5, self)
        self.table.setHorizontalHeaderLabels([self.tr("Node"), self.tr("Calls"), self.tr("Shape"),
                                              self.tr("max |diff| / max |ref|"), self.tr("Status")])
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.cellActivated.connect(self._activated)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        layout.addWidget(self.table, 1)
        layout.addWidget(close)
        self.resize(760, 480)

    def _activated(self, row: int, _column: int) -> None:
        item = self.table.item(row, 0)
        node = item.data(NODE_ROLE) if item is not None else None
        if node:
            self.node_activated.emit(str(node))

    def show_reply(self, reply: dict[str, Any]) -> None:
        """Fill the table from a ``diverge`` reply; the first diverging row is selected and scrolled to."""
        self.table.setRowCount(0)
        first_row = None
        for node in reply.get("nodes") or []:
            ratio = node.get("max_abs_over_ref")
            status = {"ok": tr("ok"), "diverges": tr("DIVERGES"), "no counterpart": tr("no counterpart")}.get(
                node["status"], node["status"])
            cells = [node["name"], node.get("callee") or "", str(node.get("shape")),
                     "-" if not isinstance(ratio, (int, float)) else f"{ratio:.3g}", status]
            r = self.table.rowCount()
            self.table.insertRow(r)
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(NODE_ROLE, node.get("node_id"))
                if node["status"] == "diverges":
                    item.setForeground(QColor("#c0392b"))
                self.table.setItem(r, c, item)
            if node.get("first"):
                first_row = r
        self.table.resizeColumnsToContents()
        first = reply.get("first_divergent")
        self.status.setText(tr("Step {0} ({1}): first diverging node: {2}").format(reply.get("step"), reply.get("pass_id"), first)
                            if first else tr("Step {0} ({1}): no node diverges beyond the tolerance.").format(
                                reply.get("step"), reply.get("pass_id")))
        if first_row is not None:
            self.table.selectRow(first_row)
            self.table.scrollToItem(self.table.item(first_row, 0))


class DivergeController(QObject):
    """Runs ``diverge`` for the current step and shows the dialog."""

    #: The reply when it finished (tests).
    finished = Signal(object)
    #: The message when it failed.
    failed = Signal(str)

    def __init__(self, ctx: AppContext, run_settings: Callable[[], Any], current_uid: Callable[[], str],
                 select_node: Callable[[str], None]) -> None:
        super().__init__(ctx)
        self.ctx = ctx
        self._run_settings = run_settings
        self._current = current_uid
        self._select_node = select_node
        self.dialog: Optional[DivergeDialog] = None
        self.request: Optional[EngineRequest] = None

    def show_dialog(self) -> bool:
        """Run ▸ Where Values Diverge…: the current step's per-node errors."""
        from pipeline_model.engine.client import EngineClient

        doc = self.ctx.doc
        uids = [s.uid for s in doc.steps]
        settings = self._run_settings()
        if self._current() not in uids or settings is None or self.request is not None:
            self.ctx.status(tr("Select the step to look at (and check the Build & Run panel's settings)."), 6000)
            return False
        if self.dialog is None:
            self.dialog = DivergeDialog(self.ctx.dialog_parent)
            self.dialog.node_activated.connect(self._select_node)
        inputs, _bench, (rtol, atol) = settings
        run = EngineClient.run_args(doc)
        self.ctx.consent.for_run(doc=doc)  # asks about code not consented to yet; the engine client carries the consent
        args = {"run": run, "inputs": inputs.to_json(), "check": {"rtol": rtol, "atol": atol},
                "step_index": uids.index(self._current())}

        def call(client: Any, on_event: Callable[[str, dict], None]) -> dict:
            return client.request("diverge", args, on_event=on_event)

        self.dialog.table.setRowCount(0)
        self.dialog.status.setText(tr("Building and running the modules before and after step {0}…")
                                   .format(args["step_index"] + 1))
        self.dialog.show()
        self.dialog.raise_()
        dialog_request.track(self, self.ctx.engine.submit_fn("diverge", call), (), self._on_finished, self._on_failed)
        return True

    def _on_finished(self, value: Any) -> None:
        assert self.dialog is not None
        reply = dict(value or {})
        self.dialog.show_reply(reply)
        first = next((n for n in reply.get("nodes") or [] if n.get("first")), None)
        if first is not None and first.get("node_id"):
            self._select_node(str(first["node_id"]))
        self.finished.emit(reply)

    def _on_failed(self, message: str) -> None:
        assert self.dialog is not None
        self.dialog.status.setText(tr("Where Values Diverge failed: {0}").format(message.strip()))
        self.failed.emit(message)
