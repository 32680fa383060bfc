"""A form of typed parameter editors generated from a pass spec (``Catalogue.to_json()`` entries).

``ParamEditor.set_step(spec_json, params)`` builds one editor per parameter: bool → check box,
int → spin box, float → double spin box, str → line edit, choice → combo box, str_list/rule_list →
ordered list with add/remove/up/down (rule_list offers the spec's ``choices``), file → line edit
with a browse button, code → :class:`~widgets.code_editor.CodeEditor`, json → text validated as
JSON. ``param_changed(name, value)`` is emitted on user edits only, never for values set by code.
A ``nullable`` parameter gets a "None" check box that sets the value to ``None``.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any, Callable, Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from widgets.code_editor import CodeEditor
from widgets.doc_text import doc_html, is_own, own_html
from widgets.theme import status_css

INT_MIN, INT_MAX = -(2**31), 2**31 - 1


class _WheelNeedsFocus:
    """Mixin: the mouse wheel changes the value only while the editor has keyboard focus; otherwise the
    wheel event goes to the parent (the form scrolls instead of a value changing under the pointer)."""

    def _init_wheel(self) -> None:
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # type: ignore[attr-defined]  # no focus by wheel

    def wheelEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt API
        if self.hasFocus():  # type: ignore[attr-defined]
            super().wheelEvent(event)  # type: ignore[misc]
        else:
            event.ignore()


class NoWheelSpinBox(_WheelNeedsFocus, QSpinBox):
    """A spin box the wheel changes only when it has focus."""

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self._init_wheel()


class NoWheelDoubleSpinBox(_WheelNeedsFocus, QDoubleSpinBox):
    """A double spin box the wheel changes only when it has focus. It shows a value in its shortest form
    (``0.0001``, ``1e-05``, ``2.5``: never ``0.000010`` or ``0.000000`` for 1e-07) and accepts scientific
    notation; it is wide enough for ``-1e-05`` and ``0.0001`` whatever its layout."""

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self._init_wheel()
        self.setDecimals(15)  # the value is kept as typed; the text is textFromValue's
        fm = self.fontMetrics()
        self.setMinimumWidth(max(fm.horizontalAdvance(t) for t in ("-1e-05", "0.0001")) + 40)  # + arrows, frame

    def textFromValue(self, value: float) -> str:  # noqa: N802 - Qt API
        text = repr(float(value))  # the shortest text that reads back as the value
        return text[:-2] if text.endswith(".0") else text

    def valueFromText(self, text: str) -> float:  # noqa: N802 - Qt API
        try:
            return float(text.strip())
        except ValueError:
            return self.value()

    def validate(self, text: str, pos: int) -> object:  # noqa: D102 - Qt API
        from PySide6.QtGui import QValidator

        stripped = text.strip()
        try:
            value = float(stripped)
        except ValueError:
            partial = re.fullmatch(r"[-+]?(\d*\.?\d*([eE][-+]?\d*)?)?", stripped) is not None
            return (QValidator.State.Intermediate if partial else QValidator.State.Invalid, text, pos)
        ok = self.minimum() <= value <= self.maximum()
        return (QValidator.State.Acceptable if ok else QValidator.State.Intermediate, text, pos)


class NoWheelComboBox(_WheelNeedsFocus, QComboBox):
    """A combo box the wheel changes only when it has focus."""

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self._init_wheel()


class _Field(QWidget):
    """One parameter's editor; ``changed`` fires on user edits only."""

    changed = Signal(object)

    def __init__(self, spec: dict[str, Any]) -> None:
        super().__init__()
        self.spec = spec
        self._setting = False

    def set_value(self, value: Any) -> None:
        self._setting = True
        try:
            self._set(value)
        finally:
            self._setting = False

    def _emit(self, *_: Any) -> None:
        if not self._setting:
            value = self.value()
            if value is not _INVALID:
                self.changed.emit(value)

    def _set(self, value: Any) -> None:
        raise NotImplementedError

    def value(self) -> Any:
        raise NotImplementedError

    def set_read_only(self, ro: bool) -> None:
        editor = getattr(self, "editor", None)
        (editor if editor is not None else self).setEnabled(not ro)


class _Invalid:
    def __repr__(self) -> str:
        return "<invalid>"


_INVALID = _Invalid()


class _BoolField(_Field):
    def __init__(self, spec: dict[str, Any]) -> None:
        super().__init__(spec)
        self.editor = QCheckBox()
        QHBoxLayout(self).addWidget(self.editor)
        self.layout().setContentsMargins(0, 0, 0, 0)
        self.editor.toggled.connect(self._emit)

    def _set(self, value: Any) -> None:
        self.editor.setChecked(bool(value))

    def value(self) -> Any:
        return self.editor.isChecked()


class _IntField(_Field):
    def __init__(self, spec: dict[str, Any]) -> None:
        super().__init__(spec)
        self.editor = NoWheelSpinBox()
        self.editor.setRange(INT_MIN, INT_MAX)
        self.editor.setKeyboardTracking(False)
        QHBoxLayout(self).addWidget(self.editor)
        self.layout().setContentsMargins(0, 0, 0, 0)
        self.editor.valueChanged.connect(self._emit)

    def _set(self, value: Any) -> None:
        self.editor.setValue(int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0)

    def value(self) -> Any:
        return self.editor.value()


class _FloatField(_Field):
    def __init__(self, spec: dict[str, Any]) -> None:
        super().__init__(spec)
        self.editor = NoWheelDoubleSpinBox()
        self.editor.setRange(-1e12, 1e12)
        self.editor.setKeyboardTracking(False)
        QHBoxLayout(self).addWidget(self.editor)
        self.layout().setContentsMargins(0, 0, 0, 0)
        self.editor.valueChanged.connect(self._emit)

    def _set(self, value: Any) -> None:
        self.editor.setValue(float(value) if isinstance(value, (int, float)) else 0.0)

    def value(self) -> Any:
        return self.editor.value()


class _TextField(_Field):
    """A field whose value is its editor's text (:meth:`_text`, shown by :meth:`_show`): a change is emitted once,
    when an edit ends with a text other than the last one."""

    _last = ""

    def _text(self) -> str:
        raise NotImplementedError

    def _show(self, text: str) -> None:
        raise NotImplementedError

    def _emit_if_changed(self) -> None:
        if self._text() != self._last:
            self._last = self._text()
            self._emit()

    def _set(self, value: Any) -> None:
        self._last = "" if value is None else str(value)
        self._show(self._last)

    def value(self) -> Any:
        return self._text()


class _StrField(_TextField):
    def __init__(self, spec: dict[str, Any]) -> None:
        super().__init__(spec)
        self.editor = QLineEdit()
        QHBoxLayout(self).addWidget(self.editor)
        self.layout().setContentsMargins(0, 0, 0, 0)
        self.editor.editingFinished.connect(self._emit_if_changed)
        self._last = ""

    def _text(self) -> str:
        return self.editor.text()

    def _show(self, text: str) -> None:
        self.editor.setText(text)

    def set_read_only(self, ro: bool) -> None:
        self.editor.setReadOnly(ro)


class _FunctionField(_TextField):
    """A Relax function's name: an editable list of the model's functions (``ParamEditor.set_function_names``),
    any name may still be typed."""

    def __init__(self, spec: dict[str, Any]) -> None:
        super().__init__(spec)
        self.editor = QComboBox()
        self.editor.setEditable(True)
        self.editor.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        QHBoxLayout(self).addWidget(self.editor)
        self.layout().setContentsMargins(0, 0, 0, 0)
        self.editor.activated.connect(lambda _i: self._emit_if_changed())
        line = self.editor.lineEdit()
        if line is not None:
            line.editingFinished.connect(self._emit_if_changed)
        self._last = ""

    def set_names(self, names: list[str]) -> None:
        """Offer ``names`` (the model's Relax functions), keeping the value."""
        text = self.editor.currentText()
        self.editor.blockSignals(True)
        self.editor.clear()
        self.editor.addItems(names)
        self.editor.setEditText(text)
        self.editor.blockSignals(False)

    def _text(self) -> str:
        return self.editor.currentText()

    def _show(self, text: str) -> None:
        self.editor.setEditText(text)

    def set_read_only(self, ro: bool) -> None:
        self.editor.setEnabled(not ro)


class _ChoiceField(_Field):
    def __init__(self, spec: dict[str, Any]) -> None:
        super().__init__(spec)
        self.editor = NoWheelComboBox()
        self._notes = {str(k): str(v) for k, v in (spec.get("choice_notes") or {}).items()}
        for choice in spec.get("choices") or []:
            self.editor.addItem(str(choice), choice)
            if str(choice) in self._notes:
                self.editor.setItemData(self.editor.count() - 1, self._notes[str(choice)], Qt.ItemDataRole.ToolTipRole)
        # The current choice's note (e.g. whether a pattern table's codegen exists) is always shown under
        # the combo box, not only in a tooltip or after another parameter changes.
        self.note_label = QLabel()
        self.note_label.setWordWrap(True)
        self.note_label.setTextFormat(Qt.TextFormat.PlainText)
        box = QVBoxLayout(self)
        box.addWidget(self.editor)
        box.addWidget(self.note_label)
        box.setContentsMargins(0, 0, 0, 0)
        self.editor.currentIndexChanged.connect(self._update_note)
        self.editor.currentIndexChanged.connect(self._emit)
        self._update_note()

    def _update_note(self, *_: Any) -> None:
        note = self._notes.get(str(self.editor.currentData()), "") if self._notes else ""
        self.note_label.setText(note)
        self.note_label.setVisible(bool(note))
        if note:
            lacking = "no relax.ext." in note or " will fail" in note
            self.note_label.setStyleSheet(f"color: {status_css('warning' if lacking else 'info', self.palette())};")

    def _set(self, value: Any) -> None:
        for i in range(self.editor.count()):
            if self.editor.itemData(i) == value:
                self.editor.setCurrentIndex(i)
                return
        if value is not None:  # a value outside the choices (from a file): show it, keep it
            self.editor.addItem(self.tr("{value} (not a known choice)").format(value=value), value)
            self.editor.setCurrentIndex(self.editor.count() - 1)

    def value(self) -> Any:
        return self.editor.currentData()


class _ListField(_Field):
    """Ordered list of strings with add / remove / up / down (rule_list: pick from choices)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        super().__init__(spec)
        self.choices = [str(c) for c in spec.get("choices") or []]
        self.list = QListWidget()
        self.list.setMaximumHeight(140)
        self.list.setEditTriggers(
            QListWidget.EditTrigger.NoEditTriggers if self.choices else QListWidget.EditTrigger.DoubleClicked
        )
        self.add_combo: Optional[QComboBox] = None
        self.add_button = QPushButton(self.tr("Add"))
        self.remove_button = QPushButton(self.tr("Remove"))
        self.up_button = QPushButton(self.tr("Up"))
        self.down_button = QPushButton(self.tr("Down"))
        buttons = QVBoxLayout()
        if self.choices:
            self.add_combo = QComboBox()
            self.add_combo.addItems(self.choices)
            buttons.addWidget(self.add_combo)
        for b in (self.add_button, self.remove_button, self.up_button, self.down_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)
        self.add_button.clicked.connect(self._add)
        self.remove_button.clicked.connect(self._remove)
        self.up_button.clicked.connect(lambda: self._move(-1))
        self.down_button.clicked.connect(lambda: self._move(1))
        self.list.itemChanged.connect(self._emit)
        #: hook for tests and scripted use: returns the text of a new free-form item, or None
        self.ask_text: Callable[[], Optional[str]] = self._ask_text

    def _ask_text(self) -> Optional[str]:
        text, ok = QInputDialog.getText(self, self.tr("Add item"), f"{self.spec.get('name', 'value')}:")
        return text if ok and text else None

    def _item(self, text: str) -> QListWidgetItem:
        item = QListWidgetItem(text)
        if not self.choices:
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
        return item

    def _add(self) -> None:
        text = self.add_combo.currentText() if self.add_combo is not None else self.ask_text()
        if not text:
            return
        self._setting = True
        self.list.addItem(self._item(text))
        self.list.setCurrentRow(self.list.count() - 1)
        self._setting = False
        self._emit()

    def _remove(self) -> None:
        row = self.list.currentRow()
        if row < 0:
            return
        self.list.takeItem(row)
        self._emit()

    def _move(self, delta: int) -> None:
        row = self.list.currentRow()
        new = row + delta
        if row < 0 or not (0 <= new < self.list.count()):
            return
        self._setting = True
        item = self.list.takeItem(row)
        self.list.insertItem(new, item)
        self.list.setCurrentRow(new)
        self._setting = False
        self._emit()

    def _set(self, value: Any) -> None:
        self.list.clear()
        for v in value or []:
            self.list.addItem(self._item(str(v)))

    def value(self) -> Any:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def set_read_only(self, ro: bool) -> None:
        for w in (self.add_button, self.remove_button, self.up_button, self.down_button, self.add_combo):
            if w is not None:
                w.setEnabled(not ro)
        self.list.setEditTriggers(
            QListWidget.EditTrigger.NoEditTriggers
            if ro or self.choices
            else QListWidget.EditTrigger.DoubleClicked
        )


class _FileField(_StrField):
    def __init__(self, spec: dict[str, Any]) -> None:
        super().__init__(spec)
        self.browse_button = QPushButton(self.tr("Browse…"))
        self.layout().addWidget(self.browse_button)
        self.browse_button.clicked.connect(self._browse)
        #: hook for tests: returns a chosen path or "" (defaults to a QFileDialog)
        self.choose_file: Callable[[], str] = lambda: QFileDialog.getOpenFileName(
            self, self.tr("Choose {name}").format(name=spec.get("name", "file")), self.editor.text()
        )[0]

    def _browse(self) -> None:
        path = self.choose_file()
        if path:
            self.editor.setText(path)
            self._emit_if_changed()

    def set_read_only(self, ro: bool) -> None:
        super().set_read_only(ro)
        self.browse_button.setEnabled(not ro)


class _CodeField(_Field):
    def __init__(self, spec: dict[str, Any]) -> None:
        super().__init__(spec)
        self.editor = CodeEditor()
        self.editor.setMinimumHeight(220)
        QVBoxLayout(self).addWidget(self.editor)
        self.layout().setContentsMargins(0, 0, 0, 0)
        self.editor.textChanged.connect(self._emit)

    def _set(self, value: Any) -> None:
        text = "" if value is None else str(value)
        if text != self.editor.toPlainText():  # same text (echo of the user's own edit): keep the cursor
            self.editor.set_text(text)

    def value(self) -> Any:
        return self.editor.toPlainText()

    def set_read_only(self, ro: bool) -> None:
        self.editor.set_read_only(ro)


class _JsonField(_Field):
    def __init__(self, spec: dict[str, Any]) -> None:
        super().__init__(spec)
        self.editor = QPlainTextEdit()
        self.editor.setMaximumHeight(120)
        self.error_label = QLabel()
        self.error_label.setStyleSheet(f"color: {status_css('error')};")
        self.error_label.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.editor)
        layout.addWidget(self.error_label)
        self.editor.textChanged.connect(self._emit)

    def _set(self, value: Any) -> None:
        self.editor.setPlainText(json.dumps(value, indent=1, ensure_ascii=False))
        self.error_label.setText("")

    def value(self) -> Any:
        text = self.editor.toPlainText()
        try:
            value = json.loads(text) if text.strip() else None
        except json.JSONDecodeError as exc:
            self.error_label.setText(self.tr("not valid JSON (line {line}, column {column}): {message}").format(
                line=exc.lineno, column=exc.colno, message=exc.msg))
            return _INVALID
        self.error_label.setText("")
        return value

    @property
    def is_valid(self) -> bool:
        """True when the text parses as JSON."""
        return self.value() is not _INVALID

    def set_read_only(self, ro: bool) -> None:
        self.editor.setReadOnly(ro)


FIELD_TYPES: dict[str, type[_Field]] = {
    "bool": _BoolField,
    "int": _IntField,
    "float": _FloatField,
    "str": _StrField,
    "function": _FunctionField,
    "choice": _ChoiceField,
    "str_list": _ListField,
    "rule_list": _ListField,
    "file": _FileField,
    "code": _CodeField,
    "json": _JsonField,
}


class _NullableField(_Field):
    """Wraps a field with a "None" check box for parameters whose value may be ``None``."""

    def __init__(self, spec: dict[str, Any], inner: _Field) -> None:
        super().__init__(spec)
        self.inner = inner
        self.none_box = QCheckBox(self.tr("None"))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(inner, 1)
        layout.addWidget(self.none_box)
        self.none_box.toggled.connect(self._none_toggled)
        inner.changed.connect(lambda _v: self._emit())

    def _none_toggled(self, checked: bool) -> None:
        self.inner.setEnabled(not checked)
        self._emit()

    def _set(self, value: Any) -> None:
        self.none_box.setChecked(value is None)
        self.inner.setEnabled(value is not None)
        if value is not None:
            self.inner.set_value(value)

    def value(self) -> Any:
        return None if self.none_box.isChecked() else self.inner.value()

    def set_read_only(self, ro: bool) -> None:
        self.none_box.setEnabled(not ro)
        self.inner.set_read_only(ro)


class ParamEditor(QWidget):
    """Form of parameter editors for one step.

    ``set_step(spec_json, params)`` (a pass spec dict from ``Catalogue.to_json()["passes"]`` and the
    step's current params; missing ones show the spec default), ``values()``, ``editor(name)``,
    ``set_read_only(bool)``, ``clear()``. Signal ``param_changed(name, value)`` on user edits only.
    """

    param_changed = Signal(str, object)

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self._fields: dict[str, _Field] = {}
        self._function_names: list[str] = []
        self._spec: Optional[dict[str, Any]] = None
        self._read_only = False
        self.title_label = QLabel()
        self.title_label.setStyleSheet("font-weight: bold;")
        self.title_label.setWordWrap(True)
        self.doc_label = QLabel()
        self.doc_label.setWordWrap(True)
        self.doc_label.setTextFormat(Qt.TextFormat.RichText)
        self.omitted_label = QLabel()
        self.omitted_label.setWordWrap(True)
        self.omitted_label.setTextFormat(Qt.TextFormat.RichText)
        self.omitted_label.hide()
        self.form = QFormLayout()
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.empty_label = QLabel(self.tr("No step selected."))
        layout = QVBoxLayout(self)
        layout.addWidget(self.title_label)
        layout.addWidget(self.doc_label)
        layout.addWidget(self.empty_label)
        layout.addLayout(self.form)
        layout.addWidget(self.omitted_label)
        layout.addStretch(1)
        self.clear()

    def function_names(self) -> list[str]:
        """The model's Relax functions last given to :meth:`set_function_names`."""
        return list(self._function_names)

    def set_function_names(self, names: list[str]) -> None:
        """The model's Relax functions, offered by every function-name parameter (e.g. Gradient's ``func_name``)."""
        self._function_names = list(names)
        for field in self._fields.values():
            inner = getattr(field, "inner", field)
            if isinstance(inner, _FunctionField):
                inner.set_names(self._function_names)

    def clear(self) -> None:
        """Remove every editor (no step selected)."""
        while self.form.rowCount():
            self.form.removeRow(0)
        self._fields = {}
        self._spec = None
        self.title_label.setText("")
        self.doc_label.setText("")
        self.empty_label.setText(self.tr("No step selected."))
        self.empty_label.show()
        self.omitted_label.clear()
        self.omitted_label.hide()

    def set_step(self, spec_json: dict[str, Any], params: dict[str, Any]) -> None:
        """Build the form for ``spec_json`` and show ``params`` (spec defaults for missing ones)."""
        self.clear()
        self._spec = spec_json
        self.title_label.setText(f"{spec_json.get('title') or spec_json.get('id', '')}  ({spec_json.get('id', '')})")
        doc = str(spec_json.get("doc") or "")
        first_paragraph = doc.strip().split("\n\n")[0]
        self.doc_label.setText(own_html(first_paragraph[:600]) if is_own(doc) else
                               f"<code>{html.escape(first_paragraph[:600])}</code>")
        self.doc_label.setToolTip(f"<p>{doc_html(doc)}</p>")
        specs = spec_json.get("params") or []
        if specs:
            self.empty_label.hide()
        else:
            self.empty_label.setText(self.tr("This pass has no parameters."))
        for p in specs:
            name = str(p["name"])
            field_type = FIELD_TYPES.get(str(p.get("kind")), _JsonField)
            field: _Field = field_type(p)
            if isinstance(field, _FunctionField):
                field.set_names(self._function_names)
            if p.get("nullable"):
                field = _NullableField(p, field)
            value = params[name] if name in params else p.get("default")
            field.set_value(value)
            field.changed.connect(lambda v, name=name: self.param_changed.emit(name, v))
            tooltip = self._param_tooltip(p)
            field.setToolTip(tooltip)
            label = QLabel(name + (" *" if p.get("required") else ""))
            label.setToolTip(tooltip)
            self.form.addRow(label, field)
            self._fields[name] = field
        omitted = dict(spec_json.get("omitted_params") or {})
        if omitted:
            lines = [self.tr("Not settable here (TVM's default is used):")]
            no_reason = self.tr("no reason given")
            lines += [f"• <code>{html.escape(name)}</code>: {self._omitted_reason(reason) or html.escape(no_reason)}"
                      for name, reason in sorted(omitted.items())]
            self.omitted_label.setText("<br>".join(lines))
            self.omitted_label.show()
        self.set_read_only(self._read_only)

    def _omitted_reason(self, reason: str) -> str:
        """The catalogue's reason a parameter cannot be set here, in the interface's language (the type
        in it stays as TVM writes it)."""
        match = re.fullmatch(r"needs a Python object(?: \((.*)\))?", reason or "")
        if match is None:
            return f"<code>{html.escape(reason)}</code>"
        return self.tr("needs a Python object ({0})").format(f"<code>{html.escape(match.group(1))}</code>") \
            if match.group(1) else html.escape(self.tr("needs a Python object"))

    def _param_tooltip(self, p: dict[str, Any]) -> str:
        """A parameter's tooltip: its name, kind and default as code in a translated line, then its description
        (TVM's in a code font, see :mod:`widgets.doc_text`)."""
        default_text = json.dumps(p.get("default"), ensure_ascii=False)
        head = self.tr("{name} (kind {kind}, default {default})").format(
            name=f"<code>{html.escape(str(p['name']))}</code>", kind=f"<code>{html.escape(str(p.get('kind')))}</code>",
            default=f"<code>{html.escape(default_text)}</code>")
        tip = str(p.get("doc") or "")
        return f"<p>{head}</p>" + (f"<p>{doc_html(tip)}</p>" if tip else "")

    def set_values(self, params: dict[str, Any]) -> None:
        """Update shown values without rebuilding the form (no ``param_changed``)."""
        for name, field in self._fields.items():
            if name in params:
                field.set_value(params[name])

    def values(self) -> dict[str, Any]:
        """Current values of all (valid) editors."""
        out = {}
        for name, field in self._fields.items():
            value = field.value()
            if value is not _INVALID:
                out[name] = value
        return out

    def editor(self, name: str) -> _Field:
        """The field widget of parameter ``name`` (its ``editor`` attribute is the Qt editor)."""
        return self._fields[name]

    def names(self) -> list[str]:
        """Parameter names in form order."""
        return list(self._fields)

    def set_read_only(self, read_only: bool) -> None:
        """Disable editing (e.g. while a run is in progress or for placeholder steps)."""
        self._read_only = read_only
        for field in self._fields.values():
            field.set_read_only(read_only)

    @property
    def read_only(self) -> bool:
        """Whether editing is disabled."""
        return self._read_only
