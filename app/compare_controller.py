"""Run ▸ Compare Pipelines…: two or more pipelines on the current model, inputs and target (issue 11).

:class:`CompareDialog` lists the candidates ("current document" plus pipeline files the user adds), runs
``build_api.compare_many`` through one engine request handle (progress in the dialog, Stop cancels) and
shows the answer in :class:`widgets.compare_view.CompareView` (table, chart, final-IR diff summary).
Every candidate is built for the current document's model and target (the file's own model and target
are replaced), with the Build & Run panel's inputs, timing and tolerances. "Use this one" opens the chosen
file through the file controller (which asks about unsaved changes) and puts it on the compared model and
target (undoable edits).
"""

from __future__ import annotations

import html
import os
from typing import Any, Callable, Optional

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QDialog, QFileDialog, QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QPushButton,
    QSplitter, QVBoxLayout, QWidget,
)

from app.context import AppContext
from app import dialog_request
from app.engine_worker import EngineRequest
from app.i18n import tr
from app.undo_commands import SetModelCommand, SetTargetCommand
from pipeline_model import build_api
from pipeline_model.build_api import MultiCompareResult
from pipeline_model.document import PipelineDocument
from pipeline_model.resources import resource_path
from widgets.compare_view import CompareView
from widgets.dialog_parts import close_box, start_stop_buttons, status_label
from widgets.engine_texts import code

#: Item data: the pipeline file of a candidate ("" for the current document).
PATH_ROLE = Qt.ItemDataRole.UserRole + 1



class CompareDialog(QDialog):
    """Candidates (checkable list, Add Files…, Remove), Compare / Stop, progress, the comparison."""

    add_requested = Signal()
    compare_requested = Signal()
    stop_requested = Signal()

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Compare Pipelines"))
        self.setObjectName("compareDialog")
        self.list = QListWidget(self)
        self.list.setObjectName("compareCandidates")
        self.add_button = QPushButton(self.tr("Add Files…"), self)
        self.add_button.clicked.connect(self.add_requested)
        self.remove_button = QPushButton(self.tr("Remove"), self)
        self.remove_button.clicked.connect(self.remove_selected)
        self.compare_button, self.stop_button = start_stop_buttons(self, self.tr("Compare"), self.compare_requested,
                                                                   self.stop_requested, self.tr("Stop"))
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        self.status = status_label(self, "compareStatus")
        self.view = CompareView(self)
        buttons_row = QHBoxLayout()
        for b in (self.add_button, self.remove_button):
            buttons_row.addWidget(b)
        buttons_row.addStretch(1)
        buttons_row.addWidget(self.compare_button)
        buttons_row.addWidget(self.stop_button)
        top = QWidget(self)
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(QLabel(self.tr("Pipelines to compare (checked):"), top))
        top_layout.addWidget(self.list, 1)
        top_layout.addLayout(buttons_row)
        top_layout.addWidget(self.note)
        top_layout.addWidget(self.status)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(top)
        split.addWidget(self.view)
        split.setStretchFactor(1, 1)
        split.setSizes([200, 420])
        close = close_box(self)
        layout = QVBoxLayout(self)
        layout.addWidget(split, 1)
        layout.addWidget(close)
        self.resize(900, 680)

    def add_candidate(self, label: str, path: str, checked: bool = True) -> QListWidgetItem:
        """Add a candidate (``path`` "" = the current document); a path already listed is not added again."""
        for i in range(self.list.count()):
            item = self.list.item(i)
            if item.data(PATH_ROLE) == path:
                item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
                return item
        item = QListWidgetItem(label)
        item.setData(PATH_ROLE, path)
        item.setToolTip(path or label)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
        self.list.addItem(item)
        return item

    def checked(self) -> list[tuple[str, str]]:
        """``(label, path)`` of the checked candidates, in list order."""
        out = []
        for i in range(self.list.count()):
            item = self.list.item(i)
            if item.checkState() == Qt.CheckState.Checked:
                out.append((item.text(), str(item.data(PATH_ROLE) or "")))
        return out

    def remove_selected(self) -> None:
        """Remove the selected candidates."""
        for item in self.list.selectedItems():
            self.list.takeItem(self.list.row(item))

    def set_busy(self, busy: bool, message: str = "") -> None:
        """While the engine compares: Compare off, Stop on; ``message`` in the status line."""
        self.compare_button.setEnabled(not busy)
        self.add_button.setEnabled(not busy)
        self.stop_button.setEnabled(busy)
        if message:
            self.status.setText(message)


class CompareController(QObject):
    """Runs the comparison for the dialog and loads the chosen pipeline."""

    #: ``MultiCompareResult`` when a comparison finished (tests, screenshots).
    finished = Signal(object)
    #: The message when it failed.
    failed = Signal(str)

    def __init__(self, ctx: AppContext, run_settings: Callable[[], Any], open_pipeline: Callable[..., bool],
                 maybe_save: Callable[[], bool]) -> None:
        super().__init__(ctx)
        self.ctx = ctx
        self._run_settings = run_settings
        self._open_pipeline = open_pipeline
        self._maybe_save = maybe_save
        self.dialog: Optional[CompareDialog] = None
        self.request: Optional[EngineRequest] = None
        self._compared: list[tuple[str, str]] = []
        self._subject: tuple[str, dict] = ("", {})
        ctx.document.document_replaced.connect(self._forget)
        ctx.document.model_changed.connect(self._forget)

    def show_dialog(self) -> CompareDialog:
        """Run ▸ Compare Pipelines…"""
        if self.dialog is None:
            dialog = self.dialog = CompareDialog(self.ctx.dialog_parent)
            dialog.add_candidate(tr("Current document"), "")
            dialog.add_requested.connect(self.add_files_dialog)
            dialog.compare_requested.connect(self.compare)
            dialog.stop_requested.connect(self.stop)
            dialog.view.use_requested.connect(self.use_row)
        self._update_note()
        self.dialog.show()
        self.dialog.raise_()
        return self.dialog

    def _update_note(self) -> None:
        if self.dialog is not None:
            doc = self.ctx.doc
            from pipeline_model.document import target_label

            self.dialog.note.setText(tr("Each pipeline is built for the current model {model} and target {target}, "
                                        "with the Build & Run panel's inputs, timing and tolerances.")
                                     .format(model=doc.model, target=target_label(doc.target)))

    def _forget(self) -> None:
        """Another document/model/target: a comparison still running goes on (it holds its pipelines);
        the note names what a new comparison will use."""
        self._update_note()

    def add_files_dialog(self) -> None:
        """Add Files…: pick pipeline files."""
        start = os.path.dirname(self.ctx.doc.path) if self.ctx.doc.path else str(resource_path("pipelines"))
        paths, _ = QFileDialog.getOpenFileNames(self.ctx.dialog_parent, tr("Pipelines to compare"), start,
                                                tr("Pipeline files (*.json *.rps.json);;All files (*)"))
        self.add_files(paths)

    def add_files(self, paths: list[str]) -> None:
        """Add pipeline files to the candidates (checked)."""
        if self.dialog is None:
            self.show_dialog()
        assert self.dialog is not None
        for path in paths:
            self.dialog.add_candidate(os.path.basename(path), os.path.abspath(path))

    def documents(self, chosen: list[tuple[str, str]]) -> tuple[list[tuple[str, PipelineDocument]], list[str]]:
        """``(label, document)`` per candidate, on the current model and target, and the errors of the
        files that cannot be read (each naming the file)."""
        from pipeline_model.fileformat import PipelineFileError, load_pipeline

        current = self.ctx.doc
        model = current.model
        if not model.startswith("builtin:") and not os.path.isabs(model) and current.model_path_base():
            model = os.path.join(current.model_path_base() or "", model)
        docs, errors = [], []
        for label, path in chosen:
            if not path:
                doc = current.clone()
                doc.path = current.path
            else:
                try:
                    doc = load_pipeline(path, known_pass_ids=self.ctx.catalogue.known_ids())
                except PipelineFileError as exc:
                    errors.append(str(exc))
                    continue
                except OSError as exc:
                    errors.append(f"{path}: {exc.strerror or exc}")
                    continue
                doc.model = model
                doc.target = dict(current.target)
            docs.append((label, doc))
        return docs, errors

    def compare(self) -> bool:
        """Build and run the checked candidates on the same inputs (one engine request)."""
        if self.dialog is None or self.request is not None:
            return False
        chosen = self.dialog.checked()
        if len(chosen) < 2:
            self.dialog.status.setText(tr("Check two or more pipelines to compare."))
            return False
        settings = self._run_settings()
        if settings is None:
            self.dialog.status.setText(tr("The Build & Run panel's settings are not valid (see the panel)."))
            return False
        inputs, bench, tol = settings
        docs, errors = self.documents(chosen)
        if errors:
            self.dialog.status.setText("\n".join(errors))
            return False
        modules = []
        for label, doc in docs:
            self.ctx.consent.for_run(doc=doc)  # asks; the engine client carries the consent
            module = build_api.module_request(doc)
            module["label"] = label
            modules.append(module)

        def call(client: Any, on_event: Callable[[str, dict], None]) -> MultiCompareResult:
            return build_api.compare_many(client, modules, inputs=inputs, bench=bench, check=tol, on_event=on_event)

        self._compared = chosen
        self._subject = (self.ctx.doc.model, dict(self.ctx.doc.target))
        self.dialog.view.set_result(None)
        self.dialog.set_busy(True, tr("Building and timing {0} pipelines…").format(len(modules)))
        dialog_request.track(self, self.ctx.engine.submit_fn("compare", call), ("build_progress", "compare_progress"),
                             self._on_finished, self._on_failed)
        return True

    def stop(self) -> None:
        """Stop the comparison."""
        dialog_request.stop(self)

    def _on_finished(self, value: Any) -> None:
        assert self.dialog is not None
        result = value if isinstance(value, MultiCompareResult) else MultiCompareResult.from_json(dict(value or {}))
        self.dialog.set_busy(False, tr("Compared {0} pipelines.").format(len(result.rows)))
        self.dialog.view.set_result(result)
        self.finished.emit(result)

    def _on_failed(self, message: str) -> None:
        assert self.dialog is not None
        # what the engine or TVM said, as code (rich text)
        self.dialog.set_busy(False, html.escape(tr("Comparison failed: {0}")).format(code(message.strip())))
        self.failed.emit(message)

    def use_row(self, row: int) -> bool:
        """"Use this one": open that pipeline (unsaved changes asked first) on the compared model and target."""
        if not 0 <= row < len(self._compared):
            return False
        _label, path = self._compared[row]
        if not path:
            self.ctx.status(tr("That is the current document."), 4000)
            return False
        model, target = self._subject
        # The file controller's unsaved-changes question, asked once (then the file opens without asking again).
        if not self._maybe_save() or not self._open_pipeline(path, ask=False):
            return False
        doc = self.ctx.doc
        if model and doc.model != model:
            self.ctx.undo_stack.push(SetModelCommand(self.ctx.document, model))
        if target and doc.target != target:
            self.ctx.undo_stack.push(SetTargetCommand(self.ctx.document, dict(target)))
        return True
