"""Parts the request dialogs (Find Breaking Step, Compare Pipelines, Reduce Reproducer, Where Values Diverge) are
made of: a Close button box, a status line the user can select text in, and the button that starts the dialog's engine work with its
Stop button."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPushButton, QWidget


def status_label(parent: QWidget, name: str = "", rich: bool = False) -> QLabel:
    """A word-wrapped label whose text can be selected with the mouse (``name``: its object name; ``rich``: the
    text is rich text, e.g. TVM's words in a code font)."""
    label = QLabel(parent)
    if name:
        label.setObjectName(name)
    if rich:
        label.setTextFormat(Qt.TextFormat.RichText)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def close_box(dialog: QDialog) -> QDialogButtonBox:
    """A Close button box that closes ``dialog`` (rejects it)."""
    box = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, dialog)
    box.rejected.connect(dialog.reject)
    return box


def start_stop_buttons(parent: QWidget, start_text: str, start: Any, stop: Any,
                       stop_text: str) -> tuple[QPushButton, QPushButton]:
    """The dialog's default button (``start_text``, clicks emit ``start``) and its Stop button (``stop_text``,
    clicks emit ``stop``; disabled until the work starts)."""
    start_button = QPushButton(start_text, parent)
    start_button.setDefault(True)
    start_button.clicked.connect(start)
    stop_button = QPushButton(stop_text, parent)
    stop_button.setEnabled(False)
    stop_button.clicked.connect(stop)
    return start_button, stop_button
