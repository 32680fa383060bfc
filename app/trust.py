"""The trust service: custom Python code in a pipeline runs only when the user trusts it.

:class:`TrustService` asks once per code content (the hash is remembered in the settings, a refusal
for the session), showing the code in a :class:`TrustDialog`; what counts as user code comes from
:func:`app.pass_kinds.trust_listing`.
"""

from __future__ import annotations

import hashlib
import html
import json
from typing import Any, Callable, Optional

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QDialog, QLabel, QVBoxLayout, QWidget

from app.i18n import tr
from app import settings as app_settings_mod
from app.pass_kinds import trust_listing
from pipeline_model.document import PipelineDocument



class TrustService:
    """Decides whether a run may execute the pipeline's custom code (asks the user when needed)."""

    def __init__(self, settings: QSettings, document: Callable[[], PipelineDocument], catalogue: Callable[[], Any],
                 dialog_parent: Callable[[], Optional[QWidget]]) -> None:
        self.settings = settings
        self._document = document
        self._catalogue = catalogue
        self._dialog_parent = dialog_parent
        #: Tests/CLI: skip the question and answer this.
        self.override: Optional[bool] = None
        self.dialog: Optional[TrustDialog] = None
        self._refused_hashes: set[str] = set()

    def listing(self, doc: Optional[PipelineDocument] = None) -> list[tuple[int, str, str]]:
        """The user code ``doc`` (default: the current document) would run (see
        :func:`app.pass_kinds.trust_listing`)."""
        return trust_listing(doc if doc is not None else self._document(), self._catalogue())

    def for_run(self, explicit: bool = True, doc: Optional[PipelineDocument] = None) -> Optional[bool]:
        """Whether the code a run of ``doc`` (default: the current document) executes may run; asks once
        per content (remembered). None = cancel.

        ``explicit`` is false for automatic re-runs: code refused in this session is not asked again."""
        listing = self.listing(doc)
        if not listing:
            return False
        if self.override is not None:
            return self.override
        digest = hashlib.sha256(json.dumps(listing, default=str).encode()).hexdigest()
        if digest in app_settings_mod.trusted_hashes(self.settings):
            return True
        if digest in self._refused_hashes and not explicit:
            return False
        shown = doc if doc is not None else self._document()
        dialog = TrustDialog(listing, shown.path or shown.name, self._dialog_parent())
        self.dialog = dialog
        if dialog.exec() == QDialog.DialogCode.Accepted:
            app_settings_mod.add_trusted_hash(self.settings, digest)
            self._refused_hashes.discard(digest)
            return True
        self._refused_hashes.add(digest)
        return False


class TrustDialog(QDialog):
    """Asks whether the custom Python code of a pipeline may run, showing that code.

    Accepted = run it (the content hash is remembered); rejected = the custom steps fail with the
    engine's "not trusted" message and none of their code runs.
    """

    def __init__(self, listing: list[tuple[int, str, str]], where: str, parent: Optional[QWidget] = None) -> None:
        from PySide6.QtWidgets import QDialogButtonBox

        from widgets.code_editor import CodeEditor

        super().__init__(parent)
        self.setWindowTitle(tr("Run custom Python code?"))
        intro = QLabel(
            tr("<b>{where}</b> has {count} step(s) with your own Python code. Running them executes the code "
               "below in the engine process, with your permissions (it can read and write your files). "
               "Run it only if you trust where this pipeline comes from. You are asked again when the code changes.")
            .format(where=html.escape(where), count=len(listing)),
            self,
        )
        intro.setWordWrap(True)
        text = "\n\n".join(f"# ---- {f'step {index}: ' if index else ''}{what} ----\n{source.rstrip()}"
                             for index, what, source in listing)
        self.code = CodeEditor(self, read_only=True)
        self.code.set_text(text)
        buttons = QDialogButtonBox(self)
        self.run_button = buttons.addButton(tr("Trust and Run"), QDialogButtonBox.ButtonRole.AcceptRole)
        self.refuse_button = buttons.addButton(tr("Don't Run"), QDialogButtonBox.ButtonRole.RejectRole)
        self.refuse_button.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.code, 1)
        layout.addWidget(buttons)
        self.resize(720, 480)
