"""``TargetEditorDialog``: the advanced JSON target editor.

The text is parsed here (JSON syntax errors name line and column); whether TVM accepts the target is
asked of the engine: the dialog emits ``validate_requested(dict)`` and whoever owns the engine answers
with :meth:`TargetEditorDialog.set_validation` (the reply of the engine's ``validate_target``). "OK"
closes the dialog only once the engine accepted the target.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPushButton, QVBoxLayout, QWidget

from pipeline_model.targets import parse_target_json
from widgets.code_editor import CodeEditor

EXAMPLES = (
    '{"kind": "llvm", "mcpu": "znver4", "num-cores": 2}',
    '{"kind": "cuda", "arch": "sm_80"}',
)


class TargetEditorDialog(QDialog):
    """Edit a target as JSON; validated by the engine before it is accepted."""

    validate_requested = Signal(dict)

    def __init__(self, target: dict[str, Any], parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Compilation target (JSON)"))
        self.target: dict[str, Any] = dict(target)
        self._accept_after_check = False
        self._pending: Optional[dict[str, Any]] = None
        intro = QLabel(
            self.tr("A TVM target as a JSON object with a <code>kind</code>, e.g. {examples}. "
                    "The engine checks it with <code>tvm.target.Target</code>.").format(
                examples=self.tr(" or ").join(f"<code>{e}</code>" for e in EXAMPLES)),
            self,
        )
        intro.setWordWrap(True)
        self.editor = CodeEditor(self)
        self.editor.set_text(json.dumps(target, indent=2))
        self.status = QLabel("", self)
        self.status.setObjectName("targetStatus")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.check_button = QPushButton(self.tr("Check"), self)
        self.check_button.clicked.connect(lambda: self._check(accept=False))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.addButton(self.check_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.accepted.connect(lambda: self._check(accept=True))
        buttons.rejected.connect(self.reject)
        self.buttons = buttons
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.status)
        layout.addWidget(buttons)
        self.resize(560, 360)

    def text(self) -> str:
        """The JSON being edited."""
        return self.editor.toPlainText()

    def set_text(self, text: str) -> None:
        """Replace the JSON text."""
        self.editor.set_text(text)

    def _check(self, accept: bool) -> None:
        try:
            value = parse_target_json(self.text())
        except ValueError as exc:
            self.status.setText(f"✗ {exc}")
            self.status.setProperty("kind", "error")
            return
        self._accept_after_check = accept
        self._pending = value
        self.status.setText(self.tr("Checking with the engine…"))
        self.buttons.setEnabled(False)
        self.validate_requested.emit(value)

    def set_validation(self, reply: dict[str, Any]) -> None:
        """The engine's ``validate_target`` reply for the last request (``{"ok", "target"|"error"}``)."""
        self.buttons.setEnabled(True)
        if not reply.get("ok"):
            self._accept_after_check = False
            self.status.setText("✗ " + str(reply.get("error") or self.tr("the engine refused this target")))
            self.status.setProperty("kind", "error")
            return
        canonical = reply.get("target") or {}
        keys = ", ".join(str(k) for k in reply.get("keys") or [])
        kind = canonical.get("kind", self._pending and self._pending.get("kind"))
        self.status.setText(self.tr("✓ valid: {kind} (keys: {keys})").format(kind=kind, keys=keys) if keys
                            else self.tr("✓ valid: {kind}").format(kind=kind))
        self.status.setProperty("kind", "ok")
        if self._pending is not None:
            self.target = dict(self._pending)
        if self._accept_after_check:
            self._accept_after_check = False
            self.accept()
