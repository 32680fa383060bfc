"""The custom-pass editor never executes code the user is still typing (issue 32, ``app.code_gate``).

Code typed into the editor is the user's own and re-runs without a prompt; an automatic re-run used to run every
intermediate state of it. Now an automatic re-run runs edited code only after a pause, when it parses, and when
the cursor is outside the string or brackets being typed (or the user left the editor): the pause alone never
completes an edit. Run (F5) runs it at once. On the TVM-free fake engine. The pause is simulated by firing the
gate's timer (no wall-clock waits decide anything)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QEvent, Qt  # noqa: E402
from PySide6.QtGui import QFocusEvent  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from app.undo_commands import AddStepCommand  # noqa: E402
from pipeline_model.document import Step  # noqa: E402
from tests.conftest import qt_wait  # noqa: E402
from widgets.code_editor import typing_inside  # noqa: E402

BASE = 'def transform(mod):\n    return mod\n\n\nNAME = "notes.txt"\n'


@pytest.fixture
def editing(fake_studio):
    """A custom step with ``BASE`` as its source, run once, shown in the editor with the cursor inside the string
    literal (right before its closing quote)."""
    win = fake_studio
    win.files.new_pipeline(force=True)
    step = Step("custom.python", {"source": BASE})
    win.ctrl.undo_stack.push(AddStepCommand(win.ctrl, 0, step))
    win.session.run_pipeline()
    assert qt_wait(lambda: BASE in win.fake_client.custom_sources_run, 20_000)
    win.pipeline_view.select_uids([step.uid])
    editor = win.inspector.source_editor(step.uid)
    assert editor is not None
    cursor = editor.textCursor()
    cursor.setPosition(BASE.index('.txt"') + len(".txt"))
    editor.setTextCursor(cursor)
    yield win, editor
    win.session.run_timer.stop()
    win.session.code_gate.timer.stop()


def _pause(win) -> None:
    """What the timers do after the user stops typing: the debounced automatic re-run, then the gate's look."""
    win.session.run_timer.stop()
    win.session.run_pipeline_auto()
    gate = win.session.code_gate
    if gate.timer.isActive():
        gate.timer.stop()
        gate.timer.timeout.emit()


def test_a_pause_inside_a_string_runs_nothing_until_the_cursor_leaves_it(editing):
    win, editor = editing
    fake = win.fake_client
    QTest.keyClicks(editor, ".ba")  # on the way to notes.txt.bak: every state is valid Python
    typed = BASE.replace("notes.txt", "notes.txt.ba")
    assert win.ctrl.doc.steps[0].params["source"] == typed
    request = win.session.request
    _pause(win)
    assert win.session.request is request, "an automatic re-run ran code the user is still typing"
    assert win.session.code_gate.timer.isActive()  # it looks again, the pause alone completes nothing
    QTest.keyClicks(editor, "k")
    _pause(win)
    assert win.session.request is request
    QTest.keyClick(editor, Qt.Key.Key_End)  # the user's move out of the literal completes the edit
    _pause(win)
    assert win.session.request is not request
    done = BASE.replace("notes.txt", "notes.txt.bak")
    assert qt_wait(lambda: done in fake.custom_sources_run, 20_000)
    assert not [s for s in fake.custom_sources_run if "notes.txt.b" in s and s != done]


def test_leaving_the_editor_completes_the_edit(editing):
    win, editor = editing
    QTest.keyClicks(editor, ".bak")
    request = win.session.request
    _pause(win)
    assert win.session.request is request
    editor.focusOutEvent(QFocusEvent(QEvent.Type.FocusOut))  # the user clicked elsewhere
    _pause(win)
    assert win.session.request is not request


def test_code_that_does_not_parse_is_marked_not_run(editing):
    win, editor = editing
    cursor = editor.textCursor()
    cursor.movePosition(cursor.MoveOperation.End)
    editor.setTextCursor(cursor)
    QTest.keyClicks(editor, "os.remove(")
    request = win.session.request
    _pause(win)
    assert win.session.request is request
    assert editor.error_line is not None  # the syntax error is shown where it is, nothing ran


def test_an_explicit_run_runs_it_at_once(editing):
    win, editor = editing
    QTest.keyClicks(editor, ".ba")
    typed = BASE.replace("notes.txt", "notes.txt.ba")
    win.session.run_pipeline()  # Run (F5): the user asked
    assert qt_wait(lambda: typed in win.fake_client.custom_sources_run, 20_000)
    request = win.session.request
    _pause(win)  # settled: nothing pending, an ordinary automatic re-run
    assert not win.session.code_gate.unsettled()
    assert win.session.request is not request


def test_other_edits_do_not_run_the_unfinished_code_either(editing):
    win, editor = editing
    QTest.keyClicks(editor, ".ba")
    request = win.session.request
    win.editor.toggle_step(win.ctrl.doc.steps[0].uid, True)  # any other edit schedules a re-run
    win.session.run_timer.stop()
    win.session.run_pipeline_auto()
    assert win.session.request is request and win.session.code_gate.timer.isActive()


@pytest.mark.parametrize("text, inside", [
    ('os.remove("notes.txt', True), ("os.remove(", True), ('x = """ab', True), ('os.remove("a")', False),
    ("def f(mod):\n    return mod", False), ("", False),
])
def test_typing_inside(text, inside):
    assert typing_inside(text, len(text)) is inside
