"""A non-modal read-only code dialog (TensorIR of a PrimFunc, a user's pattern file at its error line)."""

from __future__ import annotations

from typing import Any, Optional

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QDialog, QLabel, QPushButton, QVBoxLayout, QWidget


def show_code_dialog(parent: Optional[QWidget], title: str, text: str, caption: str = "",
                     mark: Optional[tuple[int, str]] = None, size: tuple[int, int] = (820, 640)) -> tuple[QDialog, Any]:
    """Show ``text`` read-only (``mark``: ``(line, message)`` to mark); returns ``(dialog, editor)``."""
    from widgets.code_editor import CodeEditor

    dialog = QDialog(parent)
    dialog.setWindowTitle(title)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    layout = QVBoxLayout(dialog)
    if caption:
        label = QLabel(caption, dialog)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(label)
    editor = CodeEditor(dialog, read_only=True)
    editor.set_text(text)
    if mark is not None:
        editor.mark_error_line(mark[0], mark[1])
    layout.addWidget(editor, 1)
    close = QPushButton(QCoreApplication.translate("MainWindow", "Close"), dialog)
    close.clicked.connect(dialog.close)
    layout.addWidget(close, 0, Qt.AlignmentFlag.AlignRight)
    dialog.resize(*size)
    dialog.show()
    return dialog, editor
