"""``ModelDialog``: choose the pipeline's model — a built-in or a file.

Built-ins come from ``pipeline_model.models.BUILTIN_MODELS`` (name → description). Files: TVMScript
``.py`` (an ``@I.ir_module`` class), an ``nn.Module`` ``.py`` (defines ``model`` and ``spec``), ONNX
``.onnx``, a ``torch.export`` archive ``.pt2`` or a torch ``.py``. The dialog only picks a model spec
(``builtin:<name>`` or an absolute path); loading is the engine's job.
"""

from __future__ import annotations

import os
from typing import Optional

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from pipeline_model.importers import file_filter as model_file_filter


FILE_KINDS = (  # translated where shown (QT_TRANSLATE_NOOP marks them for lupdate)
    QT_TRANSLATE_NOOP("ModelDialog", "TVMScript .py — a class decorated with @I.ir_module (or the text of mod.script())"),
    QT_TRANSLATE_NOOP("ModelDialog", "nn.Module .py — defines `model` (tvm.relax.frontend.nn.Module) and `spec` (its export spec)"),
    QT_TRANSLATE_NOOP("ModelDialog", "ONNX .onnx — imported with relax.frontend.onnx.from_onnx, weights kept"),
    QT_TRANSLATE_NOOP("ModelDialog", "PyTorch .pt2 (torch.export archive) or a torch .py with a torch.nn.Module and example inputs"),
)


def builtin_models() -> dict[str, str]:
    """Built-in model names and descriptions (TVM-free)."""
    try:
        from pipeline_model.models import BUILTIN_MODELS
    except ImportError:  # pragma: no cover - partial checkout
        return {"mlp": "", "transformer": ""}
    return {str(k): str(v if isinstance(v, str) else getattr(v, "description", v)) for k, v in BUILTIN_MODELS.items()}


class ModelDialog(QDialog):
    """Pick ``builtin:<name>`` from a list or a model file."""

    def __init__(self, current: str = "", start_dir: str = "", parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Open Model"))
        self.start_dir = start_dir or os.path.expanduser("~")
        self.list = QListWidget(self)
        self.list.setObjectName("builtinModels")
        for name, desc in builtin_models().items():
            item = QListWidgetItem(f"builtin:{name} — {desc}" if desc else f"builtin:{name}")
            item.setData(Qt.ItemDataRole.UserRole, f"builtin:{name}")
            item.setToolTip(desc)
            self.list.addItem(item)
            if current == f"builtin:{name}":
                self.list.setCurrentItem(item)
        self.list.itemDoubleClicked.connect(lambda _item: self.accept())
        self.list.currentItemChanged.connect(self._on_builtin_selected)
        self.path = QLineEdit(self)
        self.path.setObjectName("modelPath")
        self.path.setPlaceholderText(self.tr("a .py, .onnx or .pt2 file"))
        if current and not current.startswith("builtin:"):
            self.path.setText(current)
        self.path.textEdited.connect(lambda _t: self.list.setCurrentItem(None))
        browse = QPushButton(self.tr("Browse…"), self)
        browse.clicked.connect(self.browse)
        file_row = QHBoxLayout()
        file_row.addWidget(self.path, 1)
        file_row.addWidget(browse)
        kinds = QLabel("<br>".join("• " + self.tr(k) for k in FILE_KINDS), self)
        kinds.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(self.tr("<b>Built-in models</b>"), self))
        layout.addWidget(self.list, 1)
        layout.addWidget(QLabel(self.tr("<b>Or a model file</b>"), self))
        layout.addLayout(file_row)
        layout.addWidget(kinds)
        layout.addWidget(buttons)
        self.resize(620, 420)

    def _on_builtin_selected(self, item: Optional[QListWidgetItem], _previous=None) -> None:
        if item is not None:
            self.path.clear()

    def browse(self) -> None:
        """Pick a file with the file dialog."""
        path, _ = QFileDialog.getOpenFileName(self, self.tr("Open model file"), self.path.text() or self.start_dir,
                                              model_file_filter())
        if path:
            self.path.setText(path)
            self.list.setCurrentItem(None)

    def select_builtin(self, name: str) -> bool:
        """Select ``builtin:<name>`` (True when it is in the list)."""
        for row in range(self.list.count()):
            item = self.list.item(row)
            if item.data(Qt.ItemDataRole.UserRole) == f"builtin:{name}":
                self.list.setCurrentItem(item)
                return True
        return False

    def spec(self) -> Optional[str]:
        """The chosen model spec: an absolute file path, ``builtin:<name>``, or None."""
        text = self.path.text().strip()
        if text:
            return os.path.abspath(os.path.expanduser(text))
        item = self.list.currentItem()
        return str(item.data(Qt.ItemDataRole.UserRole)) if item is not None else None
