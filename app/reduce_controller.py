"""Run ▸ Reduce Reproducer… and the pipeline list's Save and Reduce…: shrink a reproducer's module while it still
fails the same way (issue 21), in the engine, with progress and Stop.

The loop is the one ``main.py reduce`` runs (:func:`pipeline_model.debugging.reduce.reduce_folder`, in the engine
worker's thread through its client); :class:`ReduceDialog` shows the checks made and the bindings now against
those at the start, and the reductions accepted. Stop ends the loop between two checks (a check in flight is
cancelled, which counts as uninteresting) and the best module so far is written all the same. The output folder
is the user's choice. Running ``repro.py`` is running code: the folder's ``repro.py`` is asked about like other
code-bearing files (:class:`app.consent_service.ConsentService`, :func:`pipeline_model.consent.reproducer_item`)
and the engine client carries the consent. A candidate that crashes the engine or hangs past the watchdog
(the reproducer's hang timeout, else 120 s) just ends that engine: the client starts a new one and the candidate
counts as what it is — never an app crash.
"""

from __future__ import annotations

import html
import os
import threading
from typing import Any, Callable, Optional

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (
    QDialog, QFileDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QListWidget, QProgressBar,
    QPushButton, QVBoxLayout, QWidget,
)

from app.context import AppContext
from app.engine_worker import EngineRequest
from app.i18n import tr
from app.output_folder import ask_overwrite
from widgets.dialog_parts import close_box, start_stop_buttons, status_label
from widgets.engine_texts import code
from widgets.path_texts import shown_path_error
from widgets.repro_texts import expected_html, shown_repro_error
from pipeline_model import consent
from pipeline_model.debugging import reproducer


class ReduceDialog(QDialog):
    """Reproducer folder, output folder, Reduce / Stop, the progress and the reductions accepted."""

    reduce_requested = Signal()
    stop_requested = Signal()
    browse_input = Signal()
    browse_output = Signal()

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Reduce Reproducer"))
        self.setObjectName("reduceDialog")
        self.input_edit = QLineEdit(self)
        self.input_edit.setPlaceholderText(self.tr("a folder saved by Save Reproducer (repro.py, repro.json)"))
        self.output_edit = QLineEdit(self)
        self.output_edit.setPlaceholderText(self.tr("a new or empty folder for the reduced reproducer"))
        form = QFormLayout()
        form.addRow(self.tr("Reproducer:"), self._with_browse(self.input_edit, self.browse_input))
        form.addRow(self.tr("Reduced into:"), self._with_browse(self.output_edit, self.browse_output))
        self.about = status_label(self, "reduceAbout", rich=True)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setTextVisible(False)
        self.counts = QLabel(self)
        self.counts.setObjectName("reduceCounts")
        self.status = status_label(self, "reduceStatus", rich=True)
        self.accepted_list = QListWidget(self)
        self.accepted_list.setObjectName("reduceAccepted")
        self.reduce_button, self.stop_button = start_stop_buttons(self, self.tr("Reduce"), self.reduce_requested,
                                                                  self.stop_requested, self.tr("Stop"))
        self.stop_button.setToolTip(self.tr("Stop after the check in flight and write the smallest module so far"))
        row = QHBoxLayout()
        row.addWidget(self.counts, 1)
        row.addWidget(self.reduce_button)
        row.addWidget(self.stop_button)
        close = close_box(self)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.about)
        layout.addWidget(self.progress)
        layout.addLayout(row)
        layout.addWidget(self.status)
        layout.addWidget(QLabel(self.tr("Reductions that still fail the same way:"), self))
        layout.addWidget(self.accepted_list, 1)
        layout.addWidget(close)
        self.resize(720, 460)

    def _with_browse(self, edit: QLineEdit, signal: Any) -> QWidget:
        box = QWidget(self)
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(edit, 1)
        button = QPushButton(self.tr("Browse…"), box)
        button.clicked.connect(signal)
        row.addWidget(button)
        return box

    def set_busy(self, busy: bool, message: str = "") -> None:
        """While it reduces: Reduce and the folders off, Stop on, the bar busy; ``message`` in the status line."""
        self.reduce_button.setEnabled(not busy)
        self.stop_button.setEnabled(busy)
        self.input_edit.setEnabled(not busy)
        self.output_edit.setEnabled(not busy)
        self.progress.setRange(0, 0 if busy else 1)
        self.progress.setValue(0 if busy else 1)
        if message:
            self.status.setText(message)

    def show_counts(self, checks: int, bindings: int, start: int) -> None:
        """``Checks: 12 · bindings: 5 (37 at the start)``."""
        self.counts.setText(tr("Checks: {0} · bindings: {1} (at the start: {2})").format(checks, bindings, start))


class ReduceController(QObject):
    """Runs a reduction for the dialog (one engine request driving the whole loop) and Save and Reduce."""

    #: The JSON of the finished reduction (``folder``, ``bindings_before`` / ``after``, ``checks``, ``stopped``...).
    finished = Signal(object)
    #: The message when it failed.
    failed = Signal(str)

    def __init__(self, ctx: AppContext, reproducers: Any) -> None:
        super().__init__(ctx)
        self.ctx = ctx
        #: The :class:`app.reproducer_controller.ReproducerController` that saves the reproducer to reduce.
        self.reproducers = reproducers
        self.dialog: Optional[ReduceDialog] = None
        self.request: Optional[EngineRequest] = None
        self._stop = threading.Event()
        self._start_bindings = 0
        self._save_then_reduce = ""
        reproducers.saved.connect(self._on_reproducer_saved)

    # ---- the dialog ----------------------------------------------------------------------------------
    def show_dialog(self, folder: str = "") -> ReduceDialog:
        """Run ▸ Reduce Reproducer… (``folder``: the reproducer to reduce, an output folder is suggested)."""
        if self.dialog is None:
            dialog = self.dialog = ReduceDialog(self.ctx.dialog_parent)
            dialog.reduce_requested.connect(self.start)
            dialog.stop_requested.connect(self.stop)
            dialog.browse_input.connect(self._browse_input)
            dialog.browse_output.connect(self._browse_output)
            dialog.input_edit.editingFinished.connect(lambda: self.describe(dialog.input_edit.text()))
        if folder and self.request is None:
            self.dialog.input_edit.setText(folder)
            self.dialog.output_edit.setText(suggested_output(folder))
            self.dialog.accepted_list.clear()
            self.dialog.counts.clear()
            self.dialog.status.clear()
            self.describe(folder)
        self.dialog.show()
        self.dialog.raise_()
        return self.dialog

    def describe(self, folder: str) -> Optional[reproducer.ReproSpec]:
        """Show what the reproducer ``folder`` expects (its ``repro.json``); ``None`` when it is not one."""
        assert self.dialog is not None
        if not folder.strip():
            self.dialog.about.clear()
            return None
        try:  # repro.json only (size-capped, validated); repro.py is read and parsed in the engine worker's thread
            spec = reproducer.read_description(folder.strip())
        except (OSError, ValueError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else ""
            self.dialog.about.setText(html.escape(tr("Not a reproducer folder: {0}")).format(shown_repro_error(first)))
            return None
        self.dialog.about.setText(html.escape(tr("Step {0} ({1}), {2} binding(s) before it: {3}")).format(
            spec.step_index + 1, code(spec.pass_id), "?" if spec.bindings is None else spec.bindings,
            expected_html(spec.expected)))
        return spec

    def _browse_input(self) -> None:
        assert self.dialog is not None
        folder = QFileDialog.getExistingDirectory(self.dialog, tr("Reproducer Folder"), self._start_dir())
        if folder:
            self.show_dialog(folder)

    def _browse_output(self) -> None:
        assert self.dialog is not None
        folder = QFileDialog.getExistingDirectory(self.dialog, tr("Write the Reduced Reproducer Into"),
                                                  self._start_dir())
        if folder:
            self.dialog.output_edit.setText(folder)

    def _start_dir(self) -> str:
        assert self.dialog is not None
        text = self.dialog.input_edit.text().strip()
        if text:
            return os.path.dirname(os.path.abspath(text))
        return os.path.dirname(self.ctx.doc.path) if self.ctx.doc.path else os.path.expanduser("~")

    # ---- Save and Reduce -----------------------------------------------------------------------------
    def save_and_reduce(self, uid: str) -> bool:
        """The context menu's Save and Reduce… on step ``uid``: save its reproducer into a folder the user
        chooses, then open the dialog on it (the reduced folder is suggested beside it)."""
        if not self.reproducers.can_save(uid):
            self.ctx.status(tr("No step failed in the last run: nothing to reproduce."), 6000)
            return False
        folder = self.reproducers.ask_folder()
        return bool(folder) and self.save_then_reduce(folder, uid)

    def save_then_reduce(self, folder: str, uid: str) -> bool:
        """Save step ``uid``'s reproducer into ``folder``; the dialog opens on it once it is written."""
        self._save_then_reduce = os.path.abspath(folder)
        if not self.reproducers.save(folder, uid):
            self._save_then_reduce = ""
            return False
        return True

    def _on_reproducer_saved(self, folder: str) -> None:
        if self._save_then_reduce and os.path.abspath(folder) == self._save_then_reduce:
            self._save_then_reduce = ""
            self.show_dialog(folder)

    # ---- the reduction -------------------------------------------------------------------------------
    def start(self) -> bool:
        """Reduce the dialog's reproducer into its output folder (one engine request; asks consent first)."""
        from pipeline_model.safe_write import OutputPathError, check_output_folder

        dialog = self.dialog or self.show_dialog()
        if self.request is not None:
            return False
        folder = os.path.abspath(dialog.input_edit.text().strip()) if dialog.input_edit.text().strip() else ""
        if not folder or self.describe(folder) is None:
            dialog.status.setText(tr("Choose a reproducer folder (one that Save Reproducer wrote)."))
            return False
        try:
            out_dir = check_output_folder(dialog.output_edit.text().strip(), "output folder")
        except OutputPathError as exc:
            dialog.status.setText(shown_path_error(str(exc)) or code(str(exc)))
            return False
        if os.path.realpath(out_dir) == os.path.realpath(folder):
            dialog.status.setText(tr("The reduced reproducer needs a folder of its own."))
            return False
        overwrite = ask_overwrite(dialog, out_dir, reproducer.FOLDER_FILES)  # a file there is never replaced unasked
        if overwrite is None:
            dialog.status.setText(tr("Not reduced: choose another output folder."))
            return False
        if not self._consent(folder):
            dialog.status.setText(tr("Not reduced: reducing runs the reproducer's repro.py, and it was not consented to."))
            return False
        self._submit(folder, out_dir, overwrite)
        return True

    def _consent(self, folder: str) -> bool:
        """Ask about the folder's ``repro.py`` unless it was consented to; the client then carries the consent."""
        item = consent.reproducer_item(folder)
        if not item.sha256:
            return False
        service = self.ctx.consent
        if service.missing([item]) and service.override is None:
            service.ask([item])
        return item.sha256 in service.allow([item])

    def _submit(self, folder: str, out_dir: str, overwrite: bool = False) -> None:
        from pipeline_model.debugging.reduce import reduce_folder

        assert self.dialog is not None
        stop = self._stop = threading.Event()

        def call(client: Any, on_event: Callable[[str, dict], None]) -> dict:
            from pipeline_model.debugging.reduce import NotReproduced
            from pipeline_model.engine.client import EngineError

            pid = getattr(client, "pid", None)
            try:
                outcome = reduce_folder(
                    client, folder, out_dir, should_stop=stop.is_set, overwrite=overwrite,
                    on_start=lambda m: on_event("reduce_started", {"bindings": m.bindings}),
                    on_check=lambda best, stats: on_event("reduce_check", {"checks": stats.checks,
                                                                           "bindings": best.bindings}),
                    on_progress=lambda _message, best, stats: on_event("reduce_accepted", {
                        "candidate": dict(stats.last), "bindings": best.bindings}))
            except (NotReproduced, reproducer.ReproducerFolderError) as exc:
                raise EngineError(str(exc)) from None
            return dict(outcome.to_json(), restarted=getattr(client, "pid", None) != pid)

        self.dialog.accepted_list.clear()
        self.dialog.counts.clear()
        self.dialog.set_busy(True, tr("Checking that the reproducer fails as it says…"))
        request = self.request = self.ctx.engine.submit_fn("reduce", call)
        request.event.connect(lambda name, data: self._on_event(request, name, data))
        request.finished.connect(lambda value: self._on_finished(request, value))
        request.failed.connect(lambda message: self._on_failed(request, message))

    def stop(self) -> None:
        """Stop between two checks (the check in flight is cancelled) and write the best module so far."""
        if self.request is None:
            return
        self._stop.set()
        self.request.cancel()
        if self.dialog is not None:
            self.dialog.stop_button.setEnabled(False)
            self.dialog.status.setText(tr("Stopping: the smallest module so far is written…"))

    def _on_event(self, request: EngineRequest, name: str, data: Any) -> None:
        if request is not self.request or self.dialog is None or not isinstance(data, dict):
            return
        if name == "reduce_started":
            self._start_bindings = int(data.get("bindings") or 0)
            self.dialog.show_counts(0, self._start_bindings, self._start_bindings)
            self.dialog.status.setText(tr("It reproduces; trying smaller modules…"))
        elif name == "reduce_check":
            self.dialog.show_counts(int(data.get("checks") or 0), int(data.get("bindings") or 0),
                                    self._start_bindings)
        elif name == "reduce_accepted":
            self.dialog.accepted_list.addItem(describe_candidate(dict(data.get("candidate") or {}),
                                                                 int(data.get("bindings") or 0)))
            self.dialog.accepted_list.scrollToBottom()

    def _on_finished(self, request: EngineRequest, value: Any) -> None:
        if request is not self.request:
            return
        self.request = None
        out = dict(value or {})
        if out.get("restarted"):  # a candidate crashed or hung: the engine's modules are gone
            self.ctx.engine.engine_restarted.emit()
        if self.dialog is not None:
            self.dialog.set_busy(False)
            self.dialog.show_counts(int(out.get("checks") or 0), int(out.get("bindings_after") or 0),
                                    int(out.get("bindings_before") or 0))
            self.dialog.status.setText(html.escape(tr(
                "Reduced from {0} to {1} binding(s) in {2} check(s) ({3}); written to {4} ({5})")).format(
                    out.get("bindings_before"), out.get("bindings_after"), out.get("checks"),
                    html.escape(stopped_text(str(out.get("stopped") or ""))), code(str(out.get("folder"))),
                    code("python repro.py")))
        self.ctx.status(tr("Reduced reproducer written to {0}").format(out.get("folder")), 10000)
        self.finished.emit(out)

    def _on_failed(self, request: EngineRequest, message: str) -> None:
        if request is not self.request:
            return
        self.request = None
        if self.dialog is not None:
            said = code(message.strip().splitlines()[0][:400]) if message.strip() else "?"
            self.dialog.set_busy(False, html.escape(tr("Not reduced: {0}")).format(said))
        self.failed.emit(message)


def suggested_output(folder: str) -> str:
    """``<folder>-reduced`` (``-reduced-2``... when that exists and is not empty)."""
    base = os.path.abspath(folder).rstrip(os.sep) + "-reduced"
    candidate, n = base, 1
    while os.path.exists(candidate) and (not os.path.isdir(candidate) or os.listdir(candidate)):
        n += 1
        candidate = f"{base}-{n}"
    return candidate


def describe_candidate(candidate: dict[str, Any], bindings: int) -> str:
    """An accepted reduction (the core's words, :func:`pipeline_model.debugging.reduce.describe`, translated)
    and the bindings left."""
    from pipeline_model.debugging.reduce import describe

    return tr("{0}: {1} binding(s) left").format(describe(candidate), bindings)


def stopped_text(stopped: str) -> str:
    """Why the loop ended, in the interface's language."""
    if stopped == "stopped":
        return tr("stopped")
    if stopped == "no smaller module fails the same way":
        return tr("no smaller module fails the same way")
    if stopped.endswith("checks made"):
        return tr("{0} checks made").format(stopped.split()[0])
    return stopped
