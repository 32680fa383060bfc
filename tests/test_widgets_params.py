"""ParamEditor: one typed editor per parameter kind; param_changed on user edits only."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt

from widgets.param_editor import ParamEditor

SPEC = {
    "id": "test.Everything",
    "title": "Everything",
    "category": "Test",
    "doc": "A pass with one parameter of each kind.\n\nSecond paragraph.",
    "params": [
        {"name": "flag", "kind": "bool", "default": False, "doc": "a flag"},
        {"name": "level", "kind": "int", "default": 2, "doc": "an int"},
        {"name": "ratio", "kind": "float", "default": 0.5, "doc": ""},
        {"name": "label", "kind": "str", "default": "abc", "doc": "a name"},
        {"name": "mode", "kind": "choice", "default": "b", "choices": ["a", "b", "c"], "choice_notes": {"c": "slow"}},
        {"name": "names", "kind": "str_list", "default": ["x"]},
        {"name": "rules", "kind": "rule_list", "default": ["gpu.Matmul"],
         "choices": ["gpu.Matmul", "gpu.GEMV", "gpu.Reduction", "gpu.Fallback"]},
        {"name": "patterns", "kind": "file", "default": ""},
        {"name": "source", "kind": "code", "default": "def f(mod):\n    return mod\n"},
        {"name": "config", "kind": "json", "default": {"k": [1, 2]}},
        {"name": "maybe", "kind": "int", "default": None, "nullable": True},
    ],
}


@pytest.fixture
def editor(qtbot):
    w = ParamEditor()
    qtbot.addWidget(w)
    w.set_step(SPEC, {"level": 7, "rules": ["gpu.GEMV", "gpu.Fallback"]})
    w.show()
    return w


@pytest.fixture
def changes(editor):
    got: list[tuple[str, object]] = []
    editor.param_changed.connect(lambda n, v: got.append((n, v)))
    return got


def test_form_has_the_right_editor_per_kind(editor) -> None:
    from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QLineEdit, QListWidget, QPlainTextEdit, QSpinBox

    from widgets.code_editor import CodeEditor

    assert editor.names() == [p["name"] for p in SPEC["params"]]
    assert isinstance(editor.editor("flag").editor, QCheckBox)
    assert isinstance(editor.editor("level").editor, QSpinBox)
    assert isinstance(editor.editor("ratio").editor, QDoubleSpinBox)
    assert isinstance(editor.editor("label").editor, QLineEdit)
    assert isinstance(editor.editor("mode").editor, QComboBox)
    assert isinstance(editor.editor("names").list, QListWidget)
    assert isinstance(editor.editor("rules").add_combo, QComboBox)
    assert isinstance(editor.editor("patterns").editor, QLineEdit) and editor.editor("patterns").browse_button
    assert isinstance(editor.editor("source").editor, CodeEditor)
    assert isinstance(editor.editor("config").editor, QPlainTextEdit)


def test_values_are_params_then_defaults(editor) -> None:
    assert editor.values() == {
        "flag": False, "level": 7, "ratio": 0.5, "label": "abc", "mode": "b", "names": ["x"],
        "rules": ["gpu.GEMV", "gpu.Fallback"], "patterns": "", "source": "def f(mod):\n    return mod\n",
        "config": {"k": [1, 2]}, "maybe": None,
    }


def test_setting_programmatically_emits_nothing(editor, changes) -> None:
    editor.set_step(SPEC, {"flag": True, "level": 3, "mode": "c", "source": "x = 1", "config": [1]})
    editor.set_values({"level": 9, "label": "zz", "names": ["a", "b"]})
    assert changes == []
    assert editor.values()["level"] == 9 and editor.values()["flag"] is True


def test_tooltips_show_doc_and_default(editor) -> None:
    from tests.zh_texts import rich_plain

    tip = rich_plain(editor.editor("level").toolTip())
    assert "an int" in tip and "default 2" in tip
    assert "Second paragraph" in editor.doc_label.toolTip()
    assert "Second paragraph" not in editor.doc_label.text()
    mode = editor.editor("mode").editor
    assert mode.itemData(2, Qt.ItemDataRole.ToolTipRole) == "slow"


def _click_box(qtbot, box) -> None:
    from PySide6.QtCore import QPoint

    qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(8, box.height() // 2))


def test_bool(editor, changes, qtbot) -> None:
    _click_box(qtbot, editor.editor("flag").editor)
    assert changes == [("flag", True)]


def test_int_and_float(editor, changes, qtbot) -> None:
    spin = editor.editor("level").editor
    qtbot.keyClick(spin, Qt.Key.Key_Up)
    assert changes[-1] == ("level", 8)
    dspin = editor.editor("ratio").editor
    dspin.selectAll()
    qtbot.keyClicks(dspin, "1.25")
    qtbot.keyClick(dspin, Qt.Key.Key_Return)
    assert changes[-1] == ("ratio", 1.25)


def test_str_emits_on_editing_finished(editor, changes, qtbot) -> None:
    line = editor.editor("label").editor
    line.selectAll()
    qtbot.keyClicks(line, "fused")
    assert changes == []  # not while typing
    qtbot.keyClick(line, Qt.Key.Key_Return)
    assert changes == [("label", "fused")]


def test_choice(editor, changes) -> None:
    combo = editor.editor("mode").editor
    combo.setCurrentIndex(0)  # what a user pick does
    assert changes == [("mode", "a")]


def test_rule_list_add_remove_reorder(editor, changes, qtbot) -> None:
    field = editor.editor("rules")
    field.add_combo.setCurrentText("gpu.Reduction")
    qtbot.mouseClick(field.add_button, Qt.MouseButton.LeftButton)
    assert changes[-1] == ("rules", ["gpu.GEMV", "gpu.Fallback", "gpu.Reduction"])
    field.list.setCurrentRow(2)
    qtbot.mouseClick(field.up_button, Qt.MouseButton.LeftButton)
    assert changes[-1] == ("rules", ["gpu.GEMV", "gpu.Reduction", "gpu.Fallback"])
    field.list.setCurrentRow(0)
    qtbot.mouseClick(field.down_button, Qt.MouseButton.LeftButton)
    assert changes[-1] == ("rules", ["gpu.Reduction", "gpu.GEMV", "gpu.Fallback"])
    field.list.setCurrentRow(2)
    qtbot.mouseClick(field.remove_button, Qt.MouseButton.LeftButton)
    assert changes[-1] == ("rules", ["gpu.Reduction", "gpu.GEMV"])
    field.list.setCurrentRow(0)
    qtbot.mouseClick(field.up_button, Qt.MouseButton.LeftButton)  # already first: no change
    assert len(changes) == 4


def test_str_list_free_text(editor, changes, qtbot) -> None:
    field = editor.editor("names")
    assert field.add_combo is None
    field.ask_text = lambda: "y"
    qtbot.mouseClick(field.add_button, Qt.MouseButton.LeftButton)
    assert changes[-1] == ("names", ["x", "y"])
    field.list.item(0).setText("renamed")  # in-place edit
    assert changes[-1] == ("names", ["renamed", "y"])


def test_file_browse(editor, changes, qtbot, tmp_path) -> None:
    field = editor.editor("patterns")
    chosen = str(tmp_path / "patterns.py")
    field.choose_file = lambda: chosen
    qtbot.mouseClick(field.browse_button, Qt.MouseButton.LeftButton)
    assert changes == [("patterns", chosen)]
    field.choose_file = lambda: ""  # dialog cancelled
    qtbot.mouseClick(field.browse_button, Qt.MouseButton.LeftButton)
    assert len(changes) == 1


def test_code(editor, changes, qtbot) -> None:
    code = editor.editor("source").editor
    code.moveCursor(code.textCursor().MoveOperation.End)
    qtbot.keyClicks(code, "# hi")
    assert changes[-1] == ("source", "def f(mod):\n    return mod\n# hi")
    assert code.highlighter is not None


def test_json_validated(editor, changes, qtbot) -> None:
    field = editor.editor("config")
    field.editor.setPlainText('{"k": [1, 2')  # as if typed: invalid -> no signal, error shown
    assert changes == [] and "not valid JSON" in field.error_label.text()
    assert "config" not in editor.values()
    field.editor.setPlainText('{"k": [1, 2, 3]}')
    assert changes == [("config", {"k": [1, 2, 3]})] and field.error_label.text() == ""


def test_nullable(editor, changes, qtbot) -> None:
    field = editor.editor("maybe")
    assert field.none_box.isChecked() and not field.inner.isEnabled()
    _click_box(qtbot, field.none_box)
    assert changes[-1] == ("maybe", 0)
    qtbot.keyClick(field.inner.editor, Qt.Key.Key_Up)
    assert changes[-1] == ("maybe", 1)
    _click_box(qtbot, field.none_box)
    assert changes[-1] == ("maybe", None)


def test_read_only_blocks_edits(editor, changes, qtbot) -> None:
    editor.set_read_only(True)
    _click_box(qtbot, editor.editor("flag").editor)
    qtbot.keyClicks(editor.editor("label").editor, "x")
    qtbot.keyClick(editor.editor("label").editor, Qt.Key.Key_Return)
    qtbot.keyClicks(editor.editor("source").editor, "zzz")
    assert not editor.editor("rules").add_button.isEnabled()
    assert changes == []
    assert editor.read_only
    editor.set_step(SPEC, {})  # a new step keeps the read-only mode
    assert not editor.editor("rules").add_button.isEnabled()
    editor.set_read_only(False)
    assert editor.editor("rules").add_button.isEnabled()


def test_no_params_and_clear(qtbot) -> None:
    w = ParamEditor()
    qtbot.addWidget(w)
    w.set_step({"id": "relax.FuseTIR", "title": "FuseTIR", "doc": "", "params": []}, {})
    assert w.names() == [] and "no parameters" in w.empty_label.text()
    w.clear()
    assert w.names() == [] and w.values() == {}


@pytest.mark.e2e
def test_with_real_catalogue_specs(qtbot, engine) -> None:
    """Every spec of the real catalogue (built by TVM introspection in the session engine, the
    catalogue the GUI receives) gives a form of JSON values that equal the spec defaults, and editing
    nothing emits nothing."""
    data = engine.catalogue()
    kinds = {p["kind"] for spec in data["passes"] for p in spec["params"]}
    assert {"bool", "int", "rule_list", "code"} <= kinds
    w = ParamEditor()
    qtbot.addWidget(w)
    got: list = []
    w.param_changed.connect(lambda n, v: got.append(n))
    for spec in data["passes"]:
        w.set_step(spec, {})
        assert w.names() == [p["name"] for p in spec["params"]]
        values = w.values()
        json.dumps(values)
        for p in spec["params"]:
            if p["kind"] in ("bool", "int", "str", "choice", "str_list", "rule_list", "code", "json"):
                assert values[p["name"]] == p["default"], (spec["id"], p["name"])
    assert got == []


def test_a_float_field_shows_small_values_whole(editor, changes) -> None:
    """Issue 33: a float parameter showed 0.000010 for 1e-05 and 0.000000 for 1e-07 (six decimals); it now
    shows the shortest text that reads back as the value, takes scientific notation, and its box is wide
    enough for it."""
    spin = editor.editor("ratio").editor
    for value, text in ((1e-4, "0.0001"), (1e-5, "1e-05"), (1e-7, "1e-07"), (2.5, "2.5"), (3.0, "3")):
        spin.setValue(value)
        assert spin.text() == text and spin.value() == value
        room = spin.lineEdit().width() if spin.isVisible() else spin.minimumWidth() - 30
        assert spin.fontMetrics().horizontalAdvance(text) <= room, (text, room)
    spin.lineEdit().setText("3e-06")
    spin.interpretText()
    assert spin.value() == 3e-06 and changes[-1] == ("ratio", 3e-06)
