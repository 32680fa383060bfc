"""Autosave and crash recovery of the open document (issue 9: no edit is ever lost).

:class:`AutosaveController` writes the document to a recovery file (:mod:`pipeline_model.recovery`)
about :data:`AUTOSAVE_DELAY_MS` after each edit (a single-shot ``QTimer`` restarted by the undo
stack's ``indexChanged``), removes it when the document is clean again (saved, undone to the saved
state, replaced) and on a clean exit. A recovery file left by an instance that is gone (kill -9, a
crash, SIGTERM) is offered at the next start (:meth:`AutosaveController.offer_restore`,
:class:`RestoreDialog`: Restore / Discard); the restored document keeps its original path and is
marked modified. :func:`install_signal_handlers` makes SIGTERM/SIGINT/SIGHUP write a recovery copy
and close the window without questions (Python sees signals through a ``QTimer`` tick).
"""

from __future__ import annotations

import html
import os
import signal
from typing import TYPE_CHECKING, Any, Callable, Optional

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QDialog, QLabel, QVBoxLayout, QWidget

from app.i18n import tr

if TYPE_CHECKING:  # imported by the first recovery copy written or looked for (after the first paint)
    from pipeline_model import recovery

#: Quiet time after an edit before the recovery copy is written.
AUTOSAVE_DELAY_MS = 2000


class AutosaveController(QObject):
    """Keeps a recovery copy of the open document while it has unsaved edits (see the module docstring)."""

    #: A recovery copy was written (its path).
    saved = Signal(str)

    def __init__(self, ctx: Any, folder: Optional[str] = None, delay_ms: int = AUTOSAVE_DELAY_MS) -> None:
        super().__init__(ctx)
        self.ctx = ctx
        self.folder = folder
        self.path: Optional[str] = None  # this instance's current recovery file
        self.kept = False  # set by keep(): the copy outlives this instance (exit on a signal)
        self.last_error: Optional[str] = None
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(delay_ms)
        self.timer.timeout.connect(self.save_now)
        ctx.undo_stack.indexChanged.connect(self._on_index_changed)
        ctx.undo_stack.cleanChanged.connect(self._on_clean_changed)
        ctx.document.document_replaced.connect(self._on_replaced)

    def _on_index_changed(self, _index: int) -> None:
        if self.kept:
            return
        try:
            modified = self.ctx.document.modified
        except RuntimeError:  # the window is being destroyed
            return
        if modified:
            self.timer.start()

    def _on_clean_changed(self, clean: bool) -> None:
        if clean and not self.kept:
            self.timer.stop()
            self.discard()

    def _on_replaced(self) -> None:
        if self.kept:
            return
        self.timer.stop()
        self.discard()
        if self.ctx.document.modified:  # a restored recovery copy: keep it safe from the start
            self.timer.start()

    def save_now(self) -> Optional[str]:
        """Write the recovery copy now (when there are unsaved edits); returns its path."""
        self.timer.stop()
        if not self.ctx.document.modified:
            return None
        from pipeline_model import recovery

        try:
            path = recovery.write_recovery(self.ctx.doc, folder=self.folder)
        except (OSError, ValueError) as exc:
            self.last_error = str(exc)
            self.ctx.status(tr("Could not write the recovery copy: {0}").format(exc), 8000)
            return None
        if self.path and self.path != path:
            recovery.remove_recovery(self.path)  # the document got another path (Save As)
        self.path = path
        self.last_error = None
        self.saved.emit(path)
        return path

    def keep(self) -> Optional[str]:
        """Write the recovery copy (when there are unsaved edits) and keep it for the next start: from now on
        nothing this instance does removes it — the undo stack cleared while the window is destroyed emits
        ``cleanChanged(True)``, which would otherwise discard it (an exit on SIGTERM/SIGINT/SIGHUP). Returns
        its path."""
        path = self.save_now() if not self.kept else self.path
        self.kept = True
        self.timer.stop()
        return path

    def discard(self) -> None:
        """Remove this instance's recovery file (clean document or clean exit); nothing after :meth:`keep`."""
        if self.path and not self.kept:
            from pipeline_model import recovery

            recovery.remove_recovery(self.path)
            self.path = None

    # ---- after a crash -------------------------------------------------------------------------
    def pending(self) -> list[recovery.Recovery]:
        """Recovery files of instances that are gone, newest first (damaged ones are reported in the status bar)."""
        from pipeline_model import recovery

        found, problems = recovery.find_recoveries(self.folder)
        if problems:
            self.ctx.status(problems[0], 10000)
        return [item for item in found if item.path != self.path]

    def offer_restore(self, replace: Callable[[Any], bool], parent: Optional[QWidget] = None,
                      answer: Optional[bool] = None) -> bool:
        """Offer the newest recovery copy of a previous session (Restore / Discard). ``replace(doc)``
        shows the restored document (asking about unsaved changes); ``answer`` skips the dialog
        (tests, ``RPS_RECOVERY_ANSWER``). True when a document was restored. Discarded and restored
        copies are removed (a restored one is autosaved again under this instance)."""
        items = self.pending()
        if not items:
            return False
        from pipeline_model import recovery

        newest = items[0]
        if answer is None:
            dialog = RestoreDialog(newest, len(items), parent)
            self.dialog = dialog
            answer = dialog.exec() == QDialog.DialogCode.Accepted
        if not answer:
            for item in items:
                recovery.remove_recovery(item.path)
            return False
        if not replace(newest.document):
            return False
        for item in items:
            recovery.remove_recovery(item.path)
        self.save_now()
        return True


class RestoreDialog(QDialog):
    """"Restore unsaved changes?" after a crash: Restore (accepted) or Discard (rejected)."""

    def __init__(self, item: recovery.Recovery, count: int, parent: Optional[QWidget] = None) -> None:
        from PySide6.QtWidgets import QDialogButtonBox

        super().__init__(parent)
        self.setWindowTitle(tr("Restore unsaved changes?"))
        where = item.pipeline_path or tr("an unsaved pipeline ({0})").format(item.document.name)
        text = tr("Relax Pipeline Studio did not exit normally. Unsaved changes to <b>{where}</b> "
                  "({steps} steps) were saved at {when}.<br><br>Restore them? The restored pipeline is "
                  "marked modified; save it to keep it.").format(
            where=html.escape(where), steps=len(item.document.steps), when=html.escape(item.saved_at))
        if count > 1:
            text += "<br><br>" + tr("{0} older recovery copies are discarded with this choice.").format(count - 1)
        label = QLabel(text, self)
        label.setWordWrap(True)
        buttons = QDialogButtonBox(self)
        self.restore_button = buttons.addButton(tr("Restore"), QDialogButtonBox.ButtonRole.AcceptRole)
        self.discard_button = buttons.addButton(tr("Discard"), QDialogButtonBox.ButtonRole.DestructiveRole)
        self.restore_button.setDefault(True)
        buttons.accepted.connect(self.accept)
        self.discard_button.clicked.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(label)
        layout.addWidget(buttons)
        self.resize(520, 200)


def install_signal_handlers(window: Any) -> QTimer:
    """SIGTERM, SIGINT and SIGHUP: write a recovery copy and close ``window`` without questions (the
    copy is kept for the next start). Returns the timer that lets Python see signals while Qt runs."""

    def handle(signum: int, _frame: Any) -> None:
        QTimer.singleShot(0, lambda: _exit_keeping_edits(window, signum))

    for name in ("SIGTERM", "SIGINT", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            signal.signal(sig, handle)
    tick = QTimer(window)
    tick.timeout.connect(lambda: None)  # the interpreter runs signal handlers between bytecodes
    tick.start(200)
    return tick


def _exit_keeping_edits(window: Any, signum: int) -> None:
    """The signal's exit: the recovery copy is written and kept (:meth:`AutosaveController.keep`) before the
    window closes, so the teardown cannot remove it."""
    window.autosave.keep()
    window.exit_on_signal(signum)


def env_answer() -> Optional[bool]:
    """``RPS_RECOVERY_ANSWER=restore|discard`` (test hook): answer the restore offer without a dialog."""
    value = os.environ.get("RPS_RECOVERY_ANSWER", "").strip().lower()
    return True if value == "restore" else False if value == "discard" else None
