"""``ModelDialog``: choose the pipeline's model — a built-in or a file.

Built-ins come from ``pipeline_model.models.BUILTIN_MODELS`` (name → description). Files: TVMScript
``.py`` (an ``@I.ir_module`` class), an ``nn.Module`` ``.py`` (defines ``model`` and ``spec``), ONNX
``.onnx``, a ``torch.export`` archive ``.pt2`` or a torch ``.py``. The dialog only picks a model spec
(``builtin:<name>`` or an absolute path); loading is the engine's job.
"""

from __future__ import annotations

import os
import re
from typing import Optional

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt
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
from pipeline_model.importers.dims import DimsError, format_dims, join_spec, parse_dims, split_spec
from widgets.doc_text import own_html


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
        self.about = QLabel("", self)  # the selected built-in model's description, its code in a code font
        self.about.setObjectName("builtinAbout")
        self.about.setWordWrap(True)
        for name, desc in builtin_models().items():
            item = QListWidgetItem(f"builtin:{name}")
            item.setData(Qt.ItemDataRole.UserRole, f"builtin:{name}")
            shown = own_html(QCoreApplication.translate("models", desc)) if desc else ""
            item.setData(Qt.ItemDataRole.UserRole + 1, shown)
            item.setToolTip(f"<p>{shown}</p>" if shown else "")
            self.list.addItem(item)
            if split_spec_quiet(current) == f"builtin:{name}":
                self.list.setCurrentItem(item)
        self.list.itemDoubleClicked.connect(lambda _item: self.accept())
        self.list.currentItemChanged.connect(self._on_builtin_selected)
        current_item = self.list.currentItem()
        self.about.setText(str(current_item.data(Qt.ItemDataRole.UserRole + 1) or "") if current_item else "")
        self.path = QLineEdit(self)
        self.path.setObjectName("modelPath")
        self.path.setPlaceholderText(self.tr("a .py, .onnx or .pt2 file"))
        try:
            current, current_dims = split_spec(current)
        except DimsError:
            current_dims = {}
        if current and not current.startswith("builtin:"):
            self.path.setText(current)
        self.path.textEdited.connect(lambda _t: self.list.setCurrentItem(None))
        browse = QPushButton(self.tr("Browse…"), self)
        browse.clicked.connect(self.browse)
        file_row = QHBoxLayout()
        file_row.addWidget(self.path, 1)
        file_row.addWidget(browse)
        self.dims = QLineEdit(format_dims(current_dims, " "), self)
        self.dims.setObjectName("modelDims")
        self.dims.setPlaceholderText(self.tr("e.g. seq=8 batch=1 — pin symbolic dimensions of a dynamic model"))
        self.dims.setToolTip(self.tr("Symbolic dimensions (a dynamic batch or sequence axis) fixed to a value when "
                                     "the model loads, as ONNX Runtime's free-dimension overrides do"))
        self.dims_error = QLabel("", self)
        self.dims_error.setObjectName("modelDimsError")
        self.dims_error.setStyleSheet("color: #c0392b;")
        self.dims_error.setVisible(False)
        dims_row = QHBoxLayout()
        dims_row.addWidget(QLabel(self.tr("Pinned dimensions:"), self))
        dims_row.addWidget(self.dims, 1)
        kinds = QLabel("<br>".join("• " + own_html(self.tr(k)) for k in FILE_KINDS), self)
        kinds.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(self.tr("<b>Built-in models</b>"), self))
        layout.addWidget(self.list, 1)
        layout.addWidget(self.about)
        layout.addWidget(QLabel(self.tr("<b>Or a model file</b>"), self))
        layout.addLayout(file_row)
        layout.addLayout(dims_row)
        layout.addWidget(self.dims_error)
        layout.addWidget(kinds)
        layout.addWidget(buttons)
        self.resize(620, 420)

    def _on_builtin_selected(self, item: Optional[QListWidgetItem], _previous=None) -> None:
        self.about.setText(str(item.data(Qt.ItemDataRole.UserRole + 1) or "") if item is not None else "")
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

    def accept(self) -> None:
        """Close when the pinned dimensions parse; else say what is wrong and stay open."""
        for item in [p for p in re.split(r"[,\s]+", self.dims.text()) if p]:
            try:
                parse_dims([item])
            except DimsError:
                self.dims_error.setText(self.tr("Pinned dimensions: '{item}' is not NAME=DIM (e.g. seq=8; DIM a "
                                                "positive integer)").format(item=item))
                self.dims_error.setVisible(True)
                return
        super().accept()

    def spec(self) -> Optional[str]:
        """The chosen model spec: an absolute file path or ``builtin:<name>`` with the pinned dimensions
        (``|dims:…``, see :mod:`pipeline_model.importers.dims`), or None."""
        text = self.path.text().strip()
        if text:
            base: Optional[str] = os.path.abspath(os.path.expanduser(text))
        else:
            item = self.list.currentItem()
            base = str(item.data(Qt.ItemDataRole.UserRole)) if item is not None else None
        if base is None:
            return None
        try:
            return join_spec(base, parse_dims(self.dims.text()))
        except DimsError:
            return base


def split_spec_quiet(spec: str) -> str:
    """The base of a model spec (its pins dropped; a spec whose pins do not parse is returned whole)."""
    try:
        return split_spec(spec)[0]
    except DimsError:
        return spec
