"""Main-window polish: a failing custom step / pattern file points at its line
(source editor mark, error location, traceback details), the node details panel wraps, the target has
one source of truth (the Build & Run panel's choices, undoable), and a dark palette stays readable.

Tests that check the engine's real errors and tracebacks are ``e2e`` (session engine, ``studio``);
the details panel and the target's source of truth run on the TVM-free fake engine (``fake_studio``)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtGui import QColor, QImage, QPalette  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication, QComboBox  # noqa: E402

from pipeline_model.document import PipelineDocument, Step  # noqa: E402
from pipeline_model.engine.results import FAILED, STATES  # noqa: E402
from tests.conftest import qt_wait  # noqa: E402

RUN_TIMEOUT_MS = 120_000

#: Fails at line 6 (IndexError), called from line 10.
RUNTIME_SOURCE = '''import tvm


def helper(mod):
    names = [gv.name_hint for gv in mod.functions]
    return names[100]


def broken(mod):
    helper(mod)
    return mod
'''

#: The pattern file fails at line 4 (NameError).
BAD_PATTERNS = '''from tvm.relax.dpl import is_op, wildcard

x = wildcard()
patterns = [("user.bad", is_op("relax.matmul")(x, undefined_name))]
'''


def _quiet(window):
    """``window`` with auto re-run off (tests run explicitly), restored afterwards."""
    window.ctrl.undo_stack.setClean()
    window.session.auto_run = False
    window.session.run_timer.stop()
    yield window
    window.session.run_timer.stop()
    window.session.auto_run = True
    window.ctrl.undo_stack.setClean()


@pytest.fixture
def win(studio):
    """The real-engine module window with auto re-run off, restored afterwards."""
    yield from _quiet(studio)


@pytest.fixture
def fake_win(fake_studio):
    """The fake-engine module window with auto re-run off, restored afterwards."""
    yield from _quiet(fake_studio)


def _load(win, steps: list[Step]) -> None:
    win.ctrl.replace_document(PipelineDocument(model="builtin:mlp", name="polish", steps=steps))
    win.session.run_timer.stop()


def _run_until_result(win, uid: str):
    win.session.run_pipeline()
    assert qt_wait(lambda: win.step_model.result(uid) is not None and win.act_stop.isEnabled() is False, RUN_TIMEOUT_MS)
    return win.step_model.result(uid)


@pytest.mark.e2e
def test_failed_custom_step_is_selected_and_its_line_marked(win, qtbot):
    legalize, custom = Step("relax.LegalizeOps"), Step("custom.python", params={"source": RUNTIME_SOURCE})
    _load(win, [legalize, custom])
    win.pipeline_view.select_uids([legalize.uid])  # the user looks at another step
    assert win.pipeline_view.current_uid() == legalize.uid
    result = _run_until_result(win, custom.uid)
    assert result.state == FAILED

    # the failing step is selected, its source shows the line of the innermost user frame
    assert win.pipeline_view.current_uid() == custom.uid
    editor = win.inspector.source_editor()
    assert editor is not None and editor.error_line == 6
    assert [s.cursor.blockNumber() for s in editor.extraSelections()] == [5]
    assert "IndexError" in editor.toolTip()
    # the error pane: where, what, and the traceback behind "Details" (user frames first)
    dv = win.diff_view
    assert dv.in_error_mode and dv.error_location is not None
    assert (dv.error_location.file, dv.error_location.line) == ("<custom step 2>", 6)
    assert dv.location_label.isVisible() and "IndexError" in dv.location_label.text()
    assert dv.details_button.isVisible()
    dv.set_details_shown(True)
    tb = dv.traceback_view.toPlainText()
    assert tb.startswith("In your code") and '"<custom step 2>", line 10, in broken' in tb
    assert tb.index("<custom step 2>") < tb.index("Full traceback:") < tb.index("runner.py")
    dv.set_details_shown(False)
    # "show the line in the editor": the cursor goes to the line
    editor.setTextCursor(editor.cursorForPosition(editor.rect().topLeft()))
    editor.moveCursor(editor.textCursor().MoveOperation.End)
    dv.location_label.linkActivated.emit("location")
    assert editor.textCursor().blockNumber() == 5

    # fixing the code clears the mark once the step runs again
    win.editor.set_step_params(custom.uid, {"source": "def fine(mod):\n    return mod\n"})
    win.session.run_timer.stop()
    assert editor.error_line is None  # the result is stale: no old mark on new code
    result = _run_until_result(win, custom.uid)
    assert result.state != FAILED and win.inspector.source_editor().error_line is None
    assert not win.diff_view.in_error_mode


@pytest.mark.e2e
def test_syntax_error_marks_line_and_typing_keeps_the_cursor(win):
    custom = Step("custom.python", params={"source": "def f(mod):\n    return mod\n"})
    _load(win, [custom])
    win.pipeline_view.select_uids([custom.uid])
    editor = win.inspector.source_editor()
    # typing in the source editor: each keystroke is an undo command echoed back to the form; the
    # cursor must stay where the user types
    editor.moveCursor(editor.textCursor().MoveOperation.End)
    QTest.keyClicks(editor, "x = (")
    win.session.run_timer.stop()
    assert win.ctrl.doc.step(custom.uid).params["source"].endswith("x = (")
    assert editor.textCursor().position() == len(editor.toPlainText())
    result = _run_until_result(win, custom.uid)
    assert result.state == FAILED and "syntax error at line 3" in (result.error or "")
    assert editor.error_line == 3
    assert win.diff_view.error_location.message.startswith("SyntaxError")


@pytest.mark.e2e
def test_pattern_file_error_points_into_the_file(win, tmp_path):
    path = tmp_path / "bad_patterns.py"
    path.write_text(BAD_PATTERNS, encoding="utf-8")
    step = Step("relax.FuseOpsByPattern", params={"pattern_source": "file", "pattern_file": str(path)})
    _load(win, [Step("relax.LegalizeOps"), step])
    win.pipeline_view.select_uids([step.uid])
    result = _run_until_result(win, step.uid)
    assert result.state == FAILED
    loc = win.diff_view.error_location
    assert loc is not None and not loc.is_custom_source
    assert (loc.file, loc.line) == (str(path), 4) and "NameError" in loc.message
    assert "bad_patterns.py line 4" in win.diff_view.location_label.text()
    win.diff_view.location_label.linkActivated.emit("location")
    assert win.inspector.user_file_dialog.isVisible()
    assert win.inspector.user_file_editor.error_line == 4 and win.inspector.user_file_editor.toPlainText() == BAD_PATTERNS
    win.inspector.user_file_dialog.close()


def test_node_details_panel_wraps_and_keeps_a_minimum_width(fake_win):
    win = fake_win
    from app.panels import DETAILS_MIN_WIDTH

    details = win.details
    win.graphs.show_details_placeholder()
    text = details.toPlainText()
    assert "Click a node to see its op, attributes and input/output types." in text
    assert "TensorIR" in text
    # the splitter cannot squeeze it below its minimum; at that width nothing needs a scroll bar
    win.graph_split.setSizes([5000, 1])
    QApplication.processEvents()
    assert details.minimumWidth() == DETAILS_MIN_WIDTH and details.width() >= DETAILS_MIN_WIDTH
    assert details.horizontalScrollBar().maximum() == 0
    assert details.document().size().height() > 3 * details.fontMetrics().height()  # wrapped lines
    # long type texts without spaces wrap too
    details.setHtml("<p>output: <code>R.Tuple(" + "R.Tensor((1,2,3,4),dtype=\"float32\")," * 12 + ")</code></p>")
    QApplication.processEvents()
    assert details.horizontalScrollBar().maximum() == 0
    win.graph_split.setSizes([900, 280])
    win.graphs.show_details_placeholder()


def test_target_has_one_source_of_truth(fake_win):
    win = fake_win
    _load(win, [Step("relax.LegalizeOps")])
    # no target combo of its own in the pipeline dock: a label and a "Change…" menu
    combos = win.pipeline_dock.widget().findChildren(QComboBox)
    assert not any(c.findData({"kind": "cuda", "arch": "sm_80"}) >= 0 for c in combos)
    assert not hasattr(win, "target_picker")
    assert win.target_label.text() == "llvm" and win.target_button.text() == "Change…"
    assert qt_wait(lambda: bool(win.run_controller.devices), 60_000)
    win._fill_target_menu()
    actions = [a for a in win.target_menu.actions() if not a.isSeparator()]
    texts = [a.text() for a in actions]
    panel = win.run_panel.target_combo
    assert texts[: panel.count()] == [panel.itemText(i) for i in range(panel.count())]
    assert texts[-2:] == ["Edit as JSON…", "Show in Build && Run Panel"]
    # picking the CPU device target: an undo command; label and run panel follow; undo restores
    cpu = win.run_controller.devices[0]["target"]
    assert cpu != {"kind": "llvm"}
    depth = win.ctrl.undo_stack.count()
    actions[texts.index(panel.itemText(panel.findData(cpu)))].trigger()
    win.session.run_timer.stop()
    assert win.ctrl.doc.target == cpu and win.ctrl.undo_stack.count() == depth + 1
    assert win.target_label.text() == panel.currentText().split(" — ")[-1] or cpu["kind"] in win.target_label.text()
    assert panel.currentData() == cpu
    win.ctrl.undo_stack.undo()
    win.session.run_timer.stop()
    assert win.ctrl.doc.target == {"kind": "llvm"} and win.target_label.text() == "llvm"
    assert panel.currentData() == {"kind": "llvm"}
    # a target set in the run panel shows in the dock
    win.run_panel.target_chosen.emit(dict(cpu))
    win.session.run_timer.stop()
    assert win.ctrl.doc.target == cpu and '"num-cores"' in win.target_label.toolTip()
    win.ctrl.undo_stack.undo()
    win.session.run_timer.stop()
    # "Edit as JSON…" is the run panel's advanced editor
    actions[texts.index("Edit as JSON…")].trigger()
    assert win.run_controller.target_dialog is not None and win.run_controller.target_dialog.isVisible()
    win.run_controller.target_dialog.reject()


def _light_pixel_share(image: QImage) -> float:
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    light = total = 0
    for y in range(0, image.height(), 4):
        for x in range(0, image.width(), 4):
            total += 1
            light += image.pixelColor(x, y).lightness() > 200
    return light / max(1, total)


@pytest.mark.e2e
def test_dark_palette_keeps_everything_readable(win):
    from app.appearance import dark_palette
    from app.application import make_application
    from widgets.diff_view import diff_colors
    from widgets.highlight import palette_is_dark
    from widgets.step_model import state_colour
    from widgets.theme import contrast_ratio, muted_colour, status_colour

    app = QApplication.instance()
    old_palette, old_sheet = app.palette(), app.styleSheet()
    legalize, custom = Step("relax.LegalizeOps"), Step("custom.python", params={"source": RUNTIME_SOURCE})
    _load(win, [legalize, custom, Step("relax.FuseOps")])
    _run_until_result(win, custom.uid)
    win.graphs.show_details_placeholder()
    try:
        make_application([])  # the app's style sheet (with it Qt does not pass palette changes on by itself)
        QApplication.processEvents()
        app.setPalette(dark_palette())  # the desktop switches to dark while the window is open
        for _ in range(3):
            QApplication.processEvents()
        pal = app.palette()
        base, window, text = (pal.color(r) for r in (QPalette.ColorRole.Base, QPalette.ColorRole.Window, QPalette.ColorRole.Text))
        assert palette_is_dark(pal)
        # step states (icons: 3:1 against the list's base), status texts (4.5:1 on base and window)
        for state in STATES:
            assert contrast_ratio(state_colour(state, pal), base) >= 3.0, state
        for kind in ("error", "ok", "warning", "info"):
            for bg in (base, window):
                assert contrast_ratio(status_colour(kind, pal), bg) >= 4.5, kind
        # diff tints and the error line keep the text readable
        for tint in diff_colors(True).values():
            assert contrast_ratio(text, tint) >= 4.5
        editor = win.inspector.source_editor()
        assert editor is not None and editor.error_line == 6
        assert contrast_ratio(text, editor.error_color()) >= 4.5
        # the custom source (and the diff) switch to the dark highlighting style
        assert editor.highlighter.is_dark and win.diff_view.left.highlighter.is_dark
        QApplication.processEvents()
        formats = editor.document().findBlockByNumber(0).layout().formats()  # "import tvm"
        assert formats and contrast_ratio(QColor(formats[0].format.foreground().color()), base) >= 4.0  # light style: 3.2
        # the details hint follows the palette change by itself
        assert win.graphs.details_kind == "placeholder"
        hint = muted_colour(pal, 0.45)
        assert hint.name() in win.details.toHtml() and contrast_ratio(hint, base) >= 4.5
        # the whole window: no big light areas (hard-coded light backgrounds) left, in the failed
        # state (error pane, marked source) and in a changed step (graph highlights, diff tints)
        win.pipeline_view.select_uids([custom.uid])
        win.diff_view.set_details_shown(True)
        QApplication.processEvents()
        assert _light_pixel_share(win.grab().toImage()) < 0.06
        win.pipeline_view.select_uids([legalize.uid])
        assert qt_wait(lambda: not win.graph_view.is_busy(), 10_000)
        QApplication.processEvents()
        share = _light_pixel_share(win.grab().toImage())
        assert share < 0.06, share
        # the graph's background is the dark base
        assert win.graph_view.grab().toImage().pixelColor(3, 3).lightness() < 80
    finally:
        win.diff_view.set_details_shown(False)
        app.setPalette(old_palette)
        app.setStyleSheet(old_sheet)
        QApplication.processEvents()
    assert not palette_is_dark(app.palette()) or palette_is_dark(old_palette)
    assert QColor(win.details.palette().color(QPalette.ColorRole.Base)) == old_palette.color(QPalette.ColorRole.Base)
