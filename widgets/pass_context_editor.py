"""Editor of a pipeline's PassContext settings (:mod:`pipeline_model.pass_context`).

:class:`PassContextEditor` has an opt-level spin box, a config table (key, value as JSON; known keys with
their types offered in an editable combo box — the app fills them from the engine's ``env`` reply,
``pass_configs``) and a list of disabled passes. It never edits a document: every user edit emits
``settings_changed(dict)`` with the complete new ``pass_context`` JSON (the app wraps it in an undo
command that sets ``PipelineDocument.pass_context``). :meth:`set_settings` shows a value without emitting.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from pipeline_model.pass_context import DEFAULT_OPT_LEVEL, PassContextError, PassContextSettings
from widgets.param_editor import NoWheelSpinBox
from widgets.theme import status_css


class PassContextEditor(QWidget):
    """Opt level, config entries and disabled passes; ``settings_changed(dict)`` on user edits only."""

    settings_changed = Signal(dict)

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self._known: dict[str, str] = {}
        self._updating = False
        self.opt_spin = NoWheelSpinBox(self)
        self.opt_spin.setRange(0, 4)
        self.opt_spin.setValue(DEFAULT_OPT_LEVEL)
        self.opt_spin.setToolTip(self.tr("tvm.transform.PassContext(opt_level=...): passes above it are skipped"))
        self.opt_spin.valueChanged.connect(self._emit)

        self.key_combo = QComboBox(self)
        self.key_combo.setEditable(True)
        self.key_combo.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.key_combo.lineEdit().setPlaceholderText(self.tr("config key, e.g. relax.FuseOps.max_depth"))
        self.value_edit = QLineEdit(self)
        self.value_edit.setPlaceholderText(self.tr("value (JSON: 1, true, \"text\")"))
        self.add_config_button = QPushButton(self.tr("Set"), self)
        self.add_config_button.clicked.connect(self._add_config)
        self.remove_config_button = QPushButton(self.tr("Remove"), self)
        self.remove_config_button.clicked.connect(self._remove_config)
        self.config_table = QTableWidget(0, 2, self)
        self.config_table.setHorizontalHeaderLabels([self.tr("Config key"), self.tr("Value")])
        self.config_table.verticalHeader().hide()
        self.config_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.config_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.config_table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.config_table.itemSelectionChanged.connect(self._config_selected)

        self.pass_edit = QLineEdit(self)
        self.pass_edit.setPlaceholderText(self.tr("pass name, e.g. FoldConstant"))
        self.add_pass_button = QPushButton(self.tr("Disable"), self)
        self.add_pass_button.clicked.connect(self._add_pass)
        self.remove_pass_button = QPushButton(self.tr("Enable again"), self)
        self.remove_pass_button.clicked.connect(self._remove_pass)
        self.disabled_list = QListWidget(self)

        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.PlainText)

        form = QFormLayout()
        form.addRow(self.tr("Opt level"), self.opt_spin)
        config_row = QHBoxLayout()
        config_row.addWidget(self.key_combo, 3)
        config_row.addWidget(self.value_edit, 1)
        config_row.addWidget(self.add_config_button)
        config_row.addWidget(self.remove_config_button)
        pass_row = QHBoxLayout()
        pass_row.addWidget(self.pass_edit, 1)
        pass_row.addWidget(self.add_pass_button)
        pass_row.addWidget(self.remove_pass_button)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(QLabel(self.tr("Config entries"), self))
        layout.addLayout(config_row)
        layout.addWidget(self.config_table, 2)
        layout.addWidget(QLabel(self.tr("Disabled passes"), self))
        layout.addLayout(pass_row)
        layout.addWidget(self.disabled_list, 1)
        layout.addWidget(self.message)

    # ---- data --------------------------------------------------------------------------------
    def set_known_configs(self, configs: dict[str, str]) -> None:
        """Offer these config keys (``{key: type}``, e.g. the engine's ``env`` reply ``pass_configs``)."""
        self._known = dict(configs)
        current = self.key_combo.currentText()
        self.key_combo.clear()
        for key, kind in sorted(self._known.items()):
            self.key_combo.addItem(key, key)
            self.key_combo.setItemData(self.key_combo.count() - 1, kind, Qt.ItemDataRole.ToolTipRole)
        self.key_combo.setEditText(current)

    def set_settings(self, data: Optional[dict[str, Any]]) -> None:
        """Show a ``pass_context`` JSON object (``None``/empty: defaults) without emitting."""
        try:
            settings = PassContextSettings.from_json(data or None)
        except PassContextError as exc:
            self._show_message(str(exc), "error")
            return
        self._updating = True
        try:
            self.opt_spin.setValue(settings.opt_level)
            self.config_table.setRowCount(0)
            for key, value in settings.config.items():
                self._put_row(key, value)
            self.disabled_list.clear()
            self.disabled_list.addItems(settings.disabled_pass)
        finally:
            self._updating = False
        self._show_message("", "info")

    def settings(self) -> dict[str, Any]:
        """The shown settings as a ``pass_context`` JSON object."""
        config = {}
        for row in range(self.config_table.rowCount()):
            key_item, value_item = self.config_table.item(row, 0), self.config_table.item(row, 1)
            config[key_item.text()] = value_item.data(Qt.ItemDataRole.UserRole)
        disabled = [self.disabled_list.item(i).text() for i in range(self.disabled_list.count())]
        return PassContextSettings(self.opt_spin.value(), config, disabled).to_json()

    # ---- edits -------------------------------------------------------------------------------
    def _emit(self, *_: Any) -> None:
        if not self._updating:
            self.settings_changed.emit(self.settings())

    def _show_message(self, text: str, kind: str) -> None:
        self.message.setText(text)
        self.message.setStyleSheet(f"color: {status_css(kind, self.palette())};" if text else "")

    def _put_row(self, key: str, value: Any) -> None:
        for row in range(self.config_table.rowCount()):
            if self.config_table.item(row, 0).text() == key:
                break
        else:
            row = self.config_table.rowCount()
            self.config_table.insertRow(row)
            self.config_table.setItem(row, 0, QTableWidgetItem(key))
            self.config_table.setItem(row, 1, QTableWidgetItem())
        item = self.config_table.item(row, 1)
        item.setText(json.dumps(value))
        item.setData(Qt.ItemDataRole.UserRole, value)

    def _add_config(self) -> None:
        key = self.key_combo.currentText().strip()
        if not key:
            self._show_message(self.tr("Enter a config key."), "error")
            return
        try:
            value = json.loads(self.value_edit.text())
        except ValueError:
            self._show_message(self.tr("{0}: the value is not JSON (numbers, true/false, \"text\")").format(key), "error")
            return
        if value is None:
            self._show_message(self.tr("{0}: the value must not be null").format(key), "error")
            return
        kind = self._known.get(key)
        if self._known and kind is None:
            self._show_message(self.tr("{0} is not a config key this TVM knows; the run will refuse it").format(key),
                               "warning")
        elif kind == "bool" and not isinstance(value, bool):
            self._show_message(self.tr("{0} takes true or false").format(key), "error")
            return
        elif kind == "int" and (isinstance(value, bool) or not isinstance(value, int)):
            self._show_message(self.tr("{0} takes an integer").format(key), "error")
            return
        else:
            self._show_message("", "info")
        self._put_row(key, value)
        self._emit()

    def _remove_config(self) -> None:
        rows = sorted({i.row() for i in self.config_table.selectedItems()}, reverse=True)
        for row in rows:
            self.config_table.removeRow(row)
        if rows:
            self._emit()

    def _config_selected(self) -> None:
        items = self.config_table.selectedItems()
        if items:
            row = items[0].row()
            self.key_combo.setEditText(self.config_table.item(row, 0).text())
            self.value_edit.setText(self.config_table.item(row, 1).text())

    def _add_pass(self) -> None:
        name = self.pass_edit.text().strip()
        existing = [self.disabled_list.item(i).text() for i in range(self.disabled_list.count())]
        if not name or name in existing:
            return
        self.disabled_list.addItem(name)
        self.pass_edit.clear()
        self._emit()

    def _remove_pass(self) -> None:
        rows = sorted((self.disabled_list.row(i) for i in self.disabled_list.selectedItems()), reverse=True)
        for row in rows:
            self.disabled_list.takeItem(row)
        if rows:
            self._emit()
