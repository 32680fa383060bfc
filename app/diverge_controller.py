"""Run ▸ Where Values Diverge…: every intermediate value before and after the selected step (issue 21).

Runs the engine's ``diverge`` (:mod:`pipeline_model.engine.debugging.diverge_tvm`) for the current step with
the Build & Run panel's inputs and tolerances, and shows one row per node of the entry function after the
step (what it calls, shape, max |diff| / max |ref|, ok / DIVERGES / no counterpart), the first diverging node
selected. Activating a row reveals that node in the graph (the graph of the step shows the module after it).

The graph of the step is coloured by the errors (:meth:`widgets.graph_view.GraphView.set_node_errors`, the
dialog's *Show on graph* box): only while it shows the module after that step, of the pipeline as it was
asked — any edit of the document clears the colouring (and the dialog says its table is of the pipeline as it
was), selecting another step clears it, Esc or the legend's button too. A value inside a call (a row with
``parent``, key ``<call>/<binding>``) is coloured on the node of that binding when the graph expands the call in
place (the graph's id of that node is the row's key), and the first diverging value inside the first node is
marked first while its call is expanded; buffers split out of a PrimFunc and values two calls deep are in the
table only. Keys, not names, identify rows: names repeat (``lv`` in every fused function).
"""

from __future__ import annotations

import html
from typing import Any, Callable, Optional

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QHBoxLayout,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app import dialog_request
from app.context import AppContext
from app.engine_worker import EngineRequest
from app.graph_controller import GraphController
from app.i18n import tr
from pipeline_model.engine.results import CHANGED, UNCHANGED
from widgets.dialog_parts import close_box, status_label
from widgets.engine_texts import code
from widgets.graph.errors import DIVERGES, NO_COUNTERPART, OK, NodeError

#: Item data: the graph node id of a row.
NODE_ROLE = Qt.ItemDataRole.UserRole + 1


def _status_word(status: Any) -> str:
    return {OK: tr("ok"), DIVERGES: tr("DIVERGES"), NO_COUNTERPART: tr("no counterpart")}.get(status, str(status))


def _ratio_text(ratio: Any) -> str:
    return "-" if not isinstance(ratio, (int, float)) or isinstance(ratio, bool) else f"{ratio:.3g}"


def _graph_id(row: dict[str, Any]) -> Optional[str]:
    """The graph node a row colours: a top-level row's ``node_id``; a value inside a call, its key
    (``<call>/<binding>``: the id the graph gives that binding when it expands the call in place)."""
    if not row.get("parent"):
        return str(row["node_id"]) if row.get("node_id") else None
    key = str(row.get("key") or "")
    return key if row.get("via") != "split" and key.count("/") == 1 else None


def node_errors(reply: dict[str, Any]) -> tuple[dict[str, NodeError], Optional[str]]:
    """The graph's error colouring of a ``diverge`` reply: ``{node id: NodeError}`` for the rows that name
    a node of the graph (``node_id``, or the key of a value inside a call: :func:`_graph_id`) with a known
    status, and the first diverging node's id (the row marked ``first``). Other rows (buffers split out of a
    PrimFunc, values two calls deep) and unknown statuses are ignored."""
    errors: dict[str, NodeError] = {}
    first: Optional[str] = None
    culprit = reply.get("likelier_culprit") if isinstance(reply.get("likelier_culprit"), dict) else None
    for row in reply.get("nodes") or []:
        if not isinstance(row, dict):
            continue
        node_id, status = _graph_id(row), row.get("status")
        if not node_id or status not in (OK, DIVERGES, NO_COUNTERPART):
            continue
        ratio = row.get("max_abs_over_ref")
        rel = float(ratio) if isinstance(ratio, (int, float)) and not isinstance(ratio, bool) else None
        lines = [f"{row.get('key') or row.get('name') or node_id}: {_status_word(status)}"]
        if status != NO_COUNTERPART:
            lines.append(tr("max |diff| / max |ref| = {0}").format(_ratio_text(rel)))
        else:
            lines.append(tr("the step changed the structure here"))
        lines.append(tr("shape {0}").format(row.get("shape")))
        if row.get("first") and reply.get("first_inside"):
            lines.append(tr("first diverging value inside: {0}").format(reply["first_inside"]))
        if row.get("first") and culprit:
            lines.append(tr("likelier culprit: {0} (no counterpart before the step, and this value depends on "
                            "it)").format(culprit.get("key")))
        errors[str(node_id)] = NodeError(str(status), rel, " · ".join(lines))
        if row.get("first"):
            first = str(node_id)
    return errors, first


def first_inside_node(reply: dict[str, Any]) -> Optional[str]:
    """The graph id of the first diverging value inside the first node (a call), when the graph can show it."""
    row = next((r for r in reply.get("nodes") or [] if isinstance(r, dict) and r.get("first_inside")), None)
    return _graph_id(row) if row is not None and row.get("parent") else None


def tolerance_of(reply: dict[str, Any]) -> float:
    """The relative error at which the check fails, as the colour scale reads it (``rtol + atol``: the check
    scales ``atol`` to the output's largest magnitude)."""
    total = 0.0
    for key in ("rtol", "atol"):
        value = reply.get(key)
        if isinstance(value, (int, float)) and value > 0:
            total += float(value)
    return total or 1e-5


class DivergeDialog(QDialog):
    """The per-node table, a status line and the *Show on graph* box."""

    node_activated = Signal(str)

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Where Values Diverge"))
        self.setObjectName("divergeDialog")
        self.status = status_label(self)
        self.table = QTableWidget(0, 5, self)
        self.table.setHorizontalHeaderLabels([self.tr("Node"), self.tr("Calls"), self.tr("Shape"),
                                              self.tr("max |diff| / max |ref|"), self.tr("Status")])
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.cellActivated.connect(self._activated)
        self.show_on_graph = QCheckBox(self.tr("Show on graph"), self)
        self.show_on_graph.setObjectName("divergeShowOnGraph")
        self.show_on_graph.setChecked(True)
        self.show_on_graph.setToolTip(self.tr("Colour the step's graph by each node's error (Esc in the graph "
                                              "clears it; any edit of the pipeline too)"))
        close = close_box(self)
        bottom = QHBoxLayout()
        bottom.addWidget(self.show_on_graph)
        bottom.addStretch(1)
        bottom.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        layout.addWidget(self.table, 1)
        layout.addLayout(bottom)
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
            if not isinstance(node, dict):
                continue
            status = str(node.get("status") or "")
            name = str(node.get("key") or node.get("name") or "").rsplit("/", 1)[-1]  # lv, lv#2: unique
            if node.get("parent"):
                name = f"{node['parent']} ▸ {name}"
            cells = [name, str(node.get("callee") or ""), str(node.get("shape")),
                     _ratio_text(node.get("max_abs_over_ref")), _status_word(status)]
            r = self.table.rowCount()
            self.table.insertRow(r)
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(NODE_ROLE, _graph_id(node) or (str(node["parent"]).split("/", 1)[0]
                                                             if node.get("parent") else None))
                if status == DIVERGES:
                    item.setForeground(QColor("#c0392b"))
                self.table.setItem(r, c, item)
            if node.get("first"):
                first_row = r
        self.table.resizeColumnsToContents()
        first = reply.get("first_divergent")
        text = (tr("Step {0} ({1}): first diverging node: {2}").format(reply.get("step"), reply.get("pass_id"), first)
                if first else tr("Step {0} ({1}): no node diverges beyond the tolerance.").format(
                    reply.get("step"), reply.get("pass_id")))
        culprit = reply.get("likelier_culprit")
        if first and isinstance(culprit, dict) and culprit.get("key"):
            text += " " + tr("Likelier culprit: {0}: it has no counterpart before the step (the step changed the "
                             "structure there) and the first diverging value depends on it.").format(culprit["key"])
        self.status.setText(text)
        if first_row is not None:
            self.table.selectRow(first_row)
            self.table.scrollToItem(self.table.item(first_row, 0))


class DivergeController(QObject):
    """Runs ``diverge`` for the current step, shows the dialog and colours the step's graph."""

    #: The reply when it finished (tests).
    finished = Signal(object)
    #: The message when it failed.
    failed = Signal(str)

    def __init__(self, ctx: AppContext, run_settings: Callable[[], Any], current_uid: Callable[[], str],
                 graphs: GraphController, step_result: Callable[[str], Any]) -> None:
        super().__init__(ctx)
        self.ctx = ctx
        self._run_settings = run_settings
        self._current = current_uid
        self._graphs = graphs
        self._step_result = step_result
        self.dialog: Optional[DivergeDialog] = None
        self.request: Optional[EngineRequest] = None
        self._reply: Optional[dict[str, Any]] = None  # the last answer, while it is of the document as it is
        self._reply_uid = ""  # the step it is of
        self._asked: Optional[tuple[str, int]] = None  # (step uid, document revision) of the request in flight
        self._on_graph = False  # the colouring is on the graph
        view = graphs.area.graph_view
        view.graph_shown.connect(self._on_graph_shown)
        view.node_errors_cleared.connect(self._on_errors_cleared)
        document = ctx.document
        for signal in (document.edited, document.document_replaced, document.model_changed,
                       document.pass_context_changed):
            signal.connect(self._on_document_changed)

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
            self.dialog.node_activated.connect(self._reveal)
            self.dialog.show_on_graph.toggled.connect(self._on_toggled)
        inputs, _bench, (rtol, atol) = settings
        run = EngineClient.run_args(doc)
        self.ctx.consent.for_run(doc=doc)  # asks about code not consented to yet; the engine client carries the consent
        args = {"run": run, "inputs": inputs.to_json(), "check": {"rtol": rtol, "atol": atol},
                "step_index": uids.index(self._current())}

        def call(client: Any, on_event: Callable[[str, dict], None]) -> dict:
            return client.request("diverge", args, on_event=on_event)

        self.clear_graph()
        self._reply = None
        self._asked = (self._current(), self.ctx.document.revision)
        self.dialog.table.setRowCount(0)
        self.dialog.show_on_graph.setEnabled(True)
        self._set_box(True)  # a new answer is shown on the graph, as the dialog's first one is
        self.dialog.status.setText(tr("Building and running the modules before and after step {0}…")
                                   .format(args["step_index"] + 1))
        self.dialog.show()
        self.dialog.raise_()
        dialog_request.track(self, self.ctx.engine.submit_fn("diverge", call), (), self._on_finished, self._on_failed)
        return True

    def _on_finished(self, value: Any) -> None:
        assert self.dialog is not None
        reply = dict(value or {})
        asked, self._asked = self._asked, None
        self.dialog.show_reply(reply)
        if asked is not None and asked[1] == self.ctx.document.revision:
            self._reply, self._reply_uid = reply, asked[0]
            if not self.show_on_graph(switch=True):
                _errors, first = node_errors(reply)
                if first is not None and self._current() == asked[0]:
                    self._reveal(first)
        else:
            self._say_stale()
        self.finished.emit(reply)

    def _on_failed(self, message: str) -> None:
        assert self.dialog is not None
        self._asked = None
        self.dialog.status.setText(html.escape(tr("Where Values Diverge failed: {0}")).format(code(message.strip())))
        self.failed.emit(message)

    # ---- the graph ---------------------------------------------------------------------------
    def graph_is_of_the_step(self) -> bool:
        """True when the graph shows the module after the step of the last answer (that step selected,
        run, and the function the answer measured)."""
        reply = self._reply
        if reply is None or self._current() != self._reply_uid:
            return False
        result = self._step_result(self._reply_uid)
        shown = self._graphs.shown_graph()
        if result is None or result.state not in (CHANGED, UNCHANGED) or not result.snapshot_key or shown is None:
            return False
        return shown[0] == result.snapshot_key and (not reply.get("function") or shown[1] == reply.get("function"))

    def show_on_graph(self, switch: bool = False) -> bool:
        """Colour the step's graph by the last answer when the dialog's box is checked and the graph shows
        that step's module (else when it comes: the step run, its function shown; with ``switch`` the graph is
        switched to the function measured when it shows another one); True when coloured."""
        reply = self._reply
        if reply is None or self.dialog is None or not self.dialog.show_on_graph.isChecked():
            return False
        view = self._graphs.area.graph_view
        if not self.graph_is_of_the_step():
            shown = self._graphs.shown_graph()
            if (switch and self._current() == self._reply_uid and shown is not None and reply.get("function")
                    and shown[1] != reply.get("function")):
                self._graphs.show_function(str(reply["function"]))  # coloured when that graph is shown
            return False
        if view.is_busy():
            return False  # coloured when the layout is shown (graph_shown)
        errors, first = node_errors(reply)
        view.set_node_errors(errors, first, tolerance_of(reply),
                             title=tr("Step {0} ({1}): where values diverge").format(reply.get("step"), reply.get("pass_id")),
                             first_inside=first_inside_node(reply))
        self._on_graph = True
        return True

    def clear_graph(self) -> None:
        """Remove the colouring from the graph (the answer is kept: the box shows it again)."""
        if self._on_graph:
            self._on_graph = False
            self._graphs.area.graph_view.clear_node_errors()

    def _on_graph_shown(self) -> None:
        if self._on_graph and (not self.graph_is_of_the_step() or not self._graphs.area.graph_view.node_errors()):
            self._on_graph = False  # another step or module: never left on it
            self._graphs.area.graph_view.clear_node_errors()
            self._set_box(False)
        elif not self._on_graph and self._reply is not None:
            self.show_on_graph()

    def _on_errors_cleared(self) -> None:
        if self._on_graph:  # Esc or the legend's button in the graph
            self._on_graph = False
            self._set_box(False)

    def _on_toggled(self, checked: bool) -> None:
        if checked:
            self.show_on_graph(switch=True)
        else:
            self.clear_graph()

    def _set_box(self, checked: bool) -> None:
        if self.dialog is not None:
            box = self.dialog.show_on_graph
            box.blockSignals(True)
            box.setChecked(checked)
            box.blockSignals(False)

    def _on_document_changed(self, *_args: Any) -> None:
        """An edit: the answer is of the pipeline as it was; its colours go from the graph."""
        self.clear_graph()
        if self._reply is not None:
            self._reply = None
            self._say_stale()

    def _say_stale(self) -> None:
        if self.dialog is not None:
            self.dialog.show_on_graph.setEnabled(False)
            text = self.dialog.status.text()
            note = tr("The pipeline changed since: this table is of the pipeline as it was (run Where Values Diverge again).")
            if note not in text:
                self.dialog.status.setText(f"{text}\n{note}" if text else note)

    def _reveal(self, node_id: str) -> None:
        """Show a node of the step's graph (groups expanded around it), centred and selected."""
        if self.graph_is_of_the_step():
            self._graphs.area.graph_view.reveal(node_id)
