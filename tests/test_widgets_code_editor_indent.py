"""Issue 18: the custom-pass editor indents like a Python editor (Enter keeps the indentation and adds a
level after ':'; Tab inserts 4 spaces; Shift+Tab and Backspace remove a level)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402

from widgets.code_editor import CodeEditor, next_line_indent  # noqa: E402


@pytest.fixture
def editor(qtbot):
    widget = CodeEditor()
    qtbot.addWidget(widget)
    widget.setFocus()
    return widget


def _type(qtbot, editor, text: str) -> None:
    for ch in text:
        if ch == "\n":
            qtbot.keyClick(editor, Qt.Key.Key_Return)
        elif ch == "\t":
            qtbot.keyClick(editor, Qt.Key.Key_Tab)
        else:
            qtbot.keyClicks(editor, ch)


def test_enter_keeps_and_adds_indentation(qtbot, editor):
    _type(qtbot, editor, "def transform(mod):\nfor x in y:\nprint(x)\nreturn mod")
    assert editor.toPlainText() == "def transform(mod):\n    for x in y:\n        print(x)\n        return mod"
    qtbot.keyClick(editor, Qt.Key.Key_Return)  # after return: one level less
    qtbot.keyClicks(editor, "z = 1")
    assert editor.toPlainText().endswith("\n    z = 1")


def test_tab_inserts_spaces_and_backspace_removes_a_level(qtbot, editor):
    _type(qtbot, editor, "\tx")
    assert editor.toPlainText() == "    x"
    editor.selectAll()
    qtbot.keyClick(editor, Qt.Key.Key_Backtab)
    assert editor.toPlainText() == "x"
    editor.clear()
    _type(qtbot, editor, "if a:\n")
    assert editor.toPlainText() == "if a:\n    "
    qtbot.keyClick(editor, Qt.Key.Key_Backspace)
    assert editor.toPlainText() == "if a:\n"


def test_tab_indents_selected_lines(qtbot, editor):
    editor.setPlainText("a = 1\nb = 2\n")
    editor.selectAll()
    qtbot.keyClick(editor, Qt.Key.Key_Tab)
    assert editor.toPlainText() == "    a = 1\n    b = 2\n"


def test_read_only_viewer_is_not_edited(qtbot):
    viewer = CodeEditor(read_only=True)
    qtbot.addWidget(viewer)
    viewer.setPlainText("x")
    qtbot.keyClick(viewer, Qt.Key.Key_Tab)
    assert viewer.toPlainText() == "x"


def test_next_line_indent_rules():
    assert next_line_indent("    if x:  # comment") == "        "
    assert next_line_indent("        pass") == "    "
    assert next_line_indent("  y = 1") == "  "
    assert next_line_indent("") == ""
