"""Pipeline ▸ PassContext…: the pipeline's ``tvm.transform.PassContext`` settings (opt level, config
entries such as ``relax.FuseOps.max_depth``, disabled passes) in a non-modal dialog.

The dialog holds a :class:`widgets.pass_context_editor.PassContextEditor`; its known config keys come from
the engine's ``env`` reply (``pass_configs``). Every edit is a
:class:`app.undo_commands.SetPassContextCommand` (marks the document modified, re-runs from step 1; the
engine's step cache key includes the settings). The dialog follows the document (undo, New, Open).
"""

from __future__ import annotations

import html
from typing import Any, Optional

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QDialog, QLabel, QVBoxLayout, QWidget

from app.context import AppContext
from app.undo_commands import SetPassContextCommand, normalized_pass_context
from widgets.dialog_parts import close_box
from widgets.pass_context_editor import PassContextEditor


class PassContextDialog(QDialog):
    """The pipeline's PassContext settings: an explanation, the editor and Close."""

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Pipeline PassContext"))
        self.setObjectName("passContextDialog")
        said = html.escape(self.tr("Every step runs inside {0}. The settings are saved in the pipeline file and "
                                   "written into exported scripts; changing them re-runs the pipeline."))
        context_call = "<code>tvm.transform.PassContext(opt_level, config, disabled_pass)</code>"  # TVM's call: code
        intro = QLabel(said.format(context_call), self)
        intro.setTextFormat(Qt.TextFormat.RichText)
        intro.setWordWrap(True)
        self.editor = PassContextEditor(self)
        buttons = close_box(self)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.editor, 1)
        layout.addWidget(buttons)
        self.resize(560, 520)


class PassContextController(QObject):
    """Opens the PassContext dialog, turns its edits into undo commands and keeps it in sync."""

    def __init__(self, ctx: AppContext) -> None:
        super().__init__(ctx)
        self.ctx = ctx
        self.dialog: Optional[PassContextDialog] = None
        self.known_configs: dict[str, str] = {}
        self._env_request: Any = None
        ctx.document.pass_context_changed.connect(self.sync)
        ctx.document.document_replaced.connect(self.sync)

    def show_dialog(self) -> PassContextDialog:
        """Pipeline ▸ PassContext…"""
        if self.dialog is None:
            self.dialog = PassContextDialog(self.ctx.dialog_parent)
            self.dialog.editor.settings_changed.connect(self.set_settings)
        self.sync()
        if not self.known_configs and self._env_request is None:
            self._ask_known_configs()
        self.dialog.show()
        self.dialog.raise_()
        return self.dialog

    def _ask_known_configs(self) -> None:
        request = self.ctx.engine.submit_call("env", {})
        self._env_request = request
        request.finished.connect(self._on_env)
        request.failed.connect(lambda _message: setattr(self, "_env_request", None))

    def _on_env(self, reply: Any) -> None:
        self._env_request = None
        configs = (reply or {}).get("pass_configs") if isinstance(reply, dict) else None
        if isinstance(configs, dict):
            self.known_configs = {str(k): str(v) for k, v in configs.items()}
            if self.dialog is not None:
                self.dialog.editor.set_known_configs(self.known_configs)

    def sync(self) -> None:
        """Show the document's settings in the dialog (after undo/redo, New, Open)."""
        if self.dialog is not None:
            self.dialog.editor.set_settings(self.ctx.doc.pass_context or None)

    def set_settings(self, settings: dict[str, Any]) -> bool:
        """Set the pipeline's PassContext settings (one undo command); False when nothing changes."""
        if normalized_pass_context(settings) == normalized_pass_context(self.ctx.doc.pass_context or {}):
            return False
        self.ctx.undo_stack.push(SetPassContextCommand(self.ctx.document, settings))
        return True
