"""DiffView, CodeEditor and the pygments highlighter on real TVMScript."""

from __future__ import annotations


import pytest
from PySide6.QtCore import Qt

from pipeline_model import diff as D
from widgets.code_editor import CodeEditor
from widgets.diff_view import DiffView, diff_colors
from widgets.highlight import LAZY_CHARS

tvm = pytest.importorskip("tvm")
from tvm import relax  # noqa: E402
from tvm.relax.frontend import nn  # noqa: E402
from tvm.relax.frontend.nn import op  # noqa: E402


class _MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(256, 10, bias=False)

    def forward(self, x):
        return self.fc2(op.relu(self.fc1(x)))


class _Deep(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(32 + i, 33 + i) for i in range(20)])

    def forward(self, x):
        for layer in self.layers:
            x = op.gelu(layer(x))
        return x


@pytest.fixture(scope="module")
def scripts() -> dict[str, str]:
    mod, _ = _MLP().export_tvm({"forward": {"x": nn.spec.Tensor((1, 784), "float32")}})
    legal = relax.transform.LegalizeOps()(mod)
    deep, _ = _Deep().export_tvm({"forward": {"x": nn.spec.Tensor((1, 32), "float32")}})
    return {
        "input": mod.script(),
        "legal": legal.script(),
        "deep_in": deep.script(),
        "deep_legal": relax.transform.LegalizeOps()(deep).script(),
    }


@pytest.fixture
def view(qtbot):
    v = DiffView()
    qtbot.addWidget(v)
    v.resize(1200, 700)
    v.show()
    return v


def test_side_by_side_texts_numbers_and_tints(view, scripts) -> None:
    view.set_snapshots(scripts["input"], scripts["legal"], "Input", "1 · LegalizeOps")
    assert view.left_title.text() == "Input" and view.right_title.text() == "1 · LegalizeOps"
    rows = view.rows
    assert rows == view.module_diff.rows()
    left = view.left.toPlainText().split("\n")
    right = view.right.toPlainText().split("\n")
    assert len(left) == len(right) == len(rows)  # aligned row by row
    colors = diff_colors(False)
    for i, row in enumerate(rows):
        assert left[i] == row.left_text and right[i] == row.right_text
        assert view.left.line_number_of_block(i) == row.left_no
        assert view.right.line_number_of_block(i) == row.right_no
        if row.tag == D.INSERT:
            assert view.right.line_background(i) == colors["added"]
            assert view.left.line_background(i) == colors["pad"]
        elif row.tag == D.DELETE:
            assert view.left.line_background(i) == colors["removed"]
        elif row.tag == D.REPLACE:
            assert view.left.line_background(i) == colors["removed"]
            assert view.right.line_background(i) == colors["added"]
        else:
            assert view.left.line_background(i) is None and view.right.line_background(i) is None
    assert any(r.tag == D.INSERT for r in rows) and any(r.tag == D.REPLACE for r in rows)
    assert "changed" in view.summary_label.text()
    assert view.left.isReadOnly() and view.right.isReadOnly()


def test_dark_palette_tints_differ() -> None:
    light, dark = diff_colors(False), diff_colors(True)
    assert light["added"] != dark["added"] and dark["added"].lightnessF() < 0.5 < light["added"].lightnessF()


def test_function_filter_and_signal(view, scripts, qtbot) -> None:
    view.set_snapshots(scripts["input"], scripts["legal"], "a", "b")
    combo = view.function_combo
    names = [combo.itemData(i) for i in range(combo.count())]
    assert names[0] == "" and set(names[1:]) == set(view.module_diff.names())
    index = combo.findData("forward")
    with qtbot.waitSignal(view.function_selected, timeout=1000) as blocker:
        combo.activated.emit(index)  # what a user pick emits
    assert blocker.args == ["forward"]
    assert view.rows == view.module_diff.function("forward").rows
    assert "def forward(" in view.left.toPlainText()
    assert "prim_func" not in view.right.toPlainText()
    # programmatic selection does not emit
    got: list = []
    view.function_selected.connect(got.append)
    view.select_function("")
    assert got == [] and view.rows == view.module_diff.rows()
    # the filter survives a new snapshot when the function still exists
    view.select_function("forward")
    view.set_snapshots(scripts["input"], scripts["legal"], "a", "b")
    assert view.rows == view.module_diff.function("forward").rows


def test_hide_unchanged(view, scripts) -> None:
    legal = scripts["legal"]
    changed = legal.replace("T.int64(784)", "T.int64(785)", 1)
    view.set_snapshots(legal, changed)
    d = view.module_diff
    assert len(d.by_status(D.CHANGED)) == 1
    all_rows = len(view.rows)
    view.set_hide_unchanged(True)
    assert 0 < len(view.rows) < all_rows
    assert all(r.tag != D.EQUAL or r.left_text for r in view.rows)
    assert "def forward(" not in view.right.toPlainText()
    view.set_hide_unchanged(False)
    assert len(view.rows) == all_rows


def test_no_change_and_none_sides(view, scripts) -> None:
    view.set_snapshots(scripts["legal"], scripts["legal"])
    assert view.summary_label.text() == "no change"
    view.set_snapshots(None, scripts["input"], "", "Input")
    assert view.left.toPlainText().strip() == ""
    assert view.left.line_number_of_block(0) is None
    view.clear()
    assert view.rows == [] and view.left.toPlainText() == ""


def test_error_mode(view, scripts) -> None:
    view.set_snapshots(scripts["input"], scripts["legal"])
    view.set_error("3 · FuseTIR", "TVMError: Check failed: x\n  at FuseTIR", scripts["legal"])
    assert view.in_error_mode
    assert view.error_text.toPlainText().startswith("TVMError: Check failed")
    assert view.left.toPlainText() == scripts["legal"]
    assert "FuseTIR" in view.right_title.text() and "failed" in view.right_title.text()
    assert "Last good IR" in view.left_title.text()
    assert not view.function_combo.isEnabled()
    view.set_snapshots(scripts["input"], scripts["legal"])
    assert not view.in_error_mode


def test_error_mode_location_link_and_traceback_details(view, scripts, qtbot) -> None:
    from widgets.error_trace import ErrorLocation

    view.show()
    tb = ('Traceback (most recent call last):\n  File "/x/runner.py", line 340, in run_pipeline\n    new_mod = p(mod)\n'
          '  File "<custom step 3>", line 5, in broken\n    raise RuntimeError("boom")\nRuntimeError: boom\n')
    loc = ErrorLocation("<custom step 3>", 5, "RuntimeError: boom")
    view.set_details_shown(False)
    view.set_error("Step 3: Custom", "step 3 (custom.python) failed: boom", scripts["legal"], traceback=tb, location=loc)
    assert view.in_error_mode and view.error_location == loc
    assert view.location_label.isVisible() and "line 5 of &lt;custom step 3&gt;" in view.location_label.text()
    assert "line 5" in view.summary_label.text()
    # the traceback is one click away, the user's frames first
    assert view.details_button.isVisible() and not view.traceback_view.isVisible()
    qtbot.mouseClick(view.details_button, Qt.MouseButton.LeftButton)
    assert view.details_shown and view.traceback_view.isVisible()
    text = view.traceback_view.toPlainText()
    assert text.startswith("In your code") and text.index("<custom step 3>") < text.index("runner.py")
    # the location link asks the owner to show the line
    with qtbot.waitSignal(view.location_activated, timeout=1000) as blocker:
        view.location_label.linkActivated.emit("location")
    assert blocker.args == [loc]
    # the expanded state is kept for the next failure; no traceback, no toggle
    view.set_error("Step 4", "plain engine error", scripts["legal"])
    assert view.details_shown and not view.details_button.isVisible() and not view.traceback_view.isVisible()
    assert not view.location_label.isVisible() and view.error_location is None
    view.set_snapshots(scripts["input"], scripts["legal"])
    assert view.error_location is None and not view.in_error_mode


def test_synchronized_scrolling(view, scripts, qtbot) -> None:
    view.set_snapshots(scripts["deep_in"], scripts["deep_legal"])
    bar_l, bar_r = view.left.verticalScrollBar(), view.right.verticalScrollBar()
    assert bar_l.maximum() > 100 and bar_l.maximum() == bar_r.maximum()
    bar_r.setValue(120)
    assert bar_l.value() == 120
    bar_l.setValue(40)
    assert bar_r.value() == 40
    view.right.horizontalScrollBar().setValue(30)
    assert view.left.horizontalScrollBar().value() == view.right.horizontalScrollBar().value()


def test_highlighter_formats_tokens(qtbot, scripts) -> None:
    ed = CodeEditor(read_only=True)
    qtbot.addWidget(ed)
    ed.set_text(scripts["input"])
    block = ed.document().findBlockByNumber(0)  # "# from tvm.script import ir as I"
    ranges = block.layout().formats()
    assert ranges and ranges[0].start == 0
    comment_color = ranges[0].format.foreground().color()
    kw_block = ed.document().findBlockByNumber(4)  # "class Module:"
    assert "class" in kw_block.text()
    kw_formats = kw_block.layout().formats()
    assert kw_formats and kw_formats[0].format.foreground().color() != comment_color
    # dark style gives other colours
    ed.highlighter.set_dark(True)
    assert ed.highlighter.style_name == "monokai"
    dark_ranges = ed.document().findBlockByNumber(0).layout().formats()
    dark_color = dark_ranges[0].format.foreground().color()
    assert dark_color != comment_color


def test_highlighter_triple_quoted_strings(qtbot) -> None:
    ed = CodeEditor()
    qtbot.addWidget(ed)
    ed.set_text('x = 1\ns = """first\nmiddle line\nend"""\ny = 2\n')
    hl = ed.highlighter
    doc = ed.document()
    middle = doc.findBlockByNumber(2).layout().formats()
    after = doc.findBlockByNumber(4).layout().formats()
    string_fmt = hl.format_for(__import__("pygments.token").token.String.Doc)
    assert middle and middle[0].format.foreground().color() == string_fmt.foreground().color()
    assert all(r.format.foreground().color() != string_fmt.foreground().color() for r in after if r.start == 0)


def test_lazy_highlighting_of_big_modules(qtbot, scripts) -> None:
    text = scripts["deep_legal"]
    assert len(text) > LAZY_CHARS
    ed = CodeEditor(read_only=True)
    qtbot.addWidget(ed)
    ed.resize(800, 400)
    ed.show()
    ed.set_text(text)
    hl = ed.highlighter
    assert hl.is_lazy()
    last = ed.document().blockCount() - 1
    assert hl.is_block_highlighted(0)
    assert not hl.is_block_highlighted(last)  # far away: not lexed yet
    ed.verticalScrollBar().setValue(ed.verticalScrollBar().maximum())
    qtbot.wait(10)
    ed.repaint()
    assert hl.is_block_highlighted(last)
    assert ed.document().findBlockByNumber(last).layout().formats()


def test_code_editor_error_line_and_read_only(qtbot) -> None:
    ed = CodeEditor()
    qtbot.addWidget(ed)
    ed.set_text("a = 1\nb = (\nc = 3\n")
    with qtbot.waitSignal(ed.error_marked) as blocker:
        ed.mark_error_line(2, "SyntaxError: '(' was never closed")
    assert blocker.args == [2, "SyntaxError: '(' was never closed"]
    assert ed.error_line == 2 and ed.textCursor().blockNumber() == 1
    sel = ed.extraSelections()
    assert len(sel) == 1 and sel[0].cursor.blockNumber() == 1
    assert "never closed" in ed.toolTip()
    ed.clear_error()
    assert ed.error_line is None and ed.extraSelections() == []
    assert ed.font().fixedPitch() or ed.font().styleHint() == ed.font().StyleHint.Monospace
    ed.set_read_only(True)
    qtbot.keyClicks(ed, "zzz")
    assert "zzz" not in ed.toPlainText()
    ed.set_read_only(False)
    qtbot.keyClicks(ed, "zzz")
    assert "zzz" in ed.toPlainText()
    assert ed.line_number_of_block(0) == 1
    ed.set_line_numbers([None, 7, 8])
    assert ed.line_number_of_block(0) is None and ed.line_number_of_block(1) == 7


def test_big_module_shows_every_line(view, scripts, qtbot) -> None:
    """A big module's diff is shown whole; its speed is measured by ``python -m bench.bench_diff_view``."""
    before, after = scripts["deep_in"], scripts["deep_legal"]
    view.set_snapshots(before, after, "in", "LegalizeOps")
    qtbot.wait(1)
    assert len(view.rows) >= len(after.splitlines())


def test_mark_error_line_without_scrolling_keeps_the_cursor(qtbot) -> None:
    ed = CodeEditor()
    qtbot.addWidget(ed)
    ed.set_text("\n".join(f"line_{i} = {i}" for i in range(1, 41)))
    cursor = ed.textCursor()
    cursor.setPosition(3)
    ed.setTextCursor(cursor)
    ed.mark_error_line(30, "NameError: x", scroll=False)  # the user is typing: leave the cursor alone
    assert ed.error_line == 30 and ed.textCursor().position() == 3
    assert [s.cursor.blockNumber() for s in ed.extraSelections()] == [29]
    ed.mark_error_line(30, "NameError: x")  # default: go to the line
    assert ed.textCursor().blockNumber() == 29
    ed.clear_error()
    assert ed.error_line is None and ed.extraSelections() == []


def test_large_diff_is_computed_off_the_gui_thread_with_the_same_rows(qtbot, scripts) -> None:
    sync_view = DiffView()
    qtbot.addWidget(sync_view)
    sync_view.set_snapshots(scripts["deep_in"], scripts["deep_legal"], "a", "b")
    assert not sync_view.is_busy()
    view = DiffView()
    qtbot.addWidget(view)
    view.async_lines = 10  # these texts count as large
    with qtbot.waitSignal(view.diff_shown, timeout=30_000):
        view.set_snapshots(scripts["deep_in"], scripts["deep_legal"], "a", "b")
        assert view.is_busy() and view.rows == []
    assert not view.is_busy()
    assert view.rows == sync_view.rows
    assert view.right.toPlainText() == sync_view.right.toPlainText()
    # a newer request wins: the older result is dropped
    view.set_snapshots(scripts["deep_in"], scripts["deep_legal"], "old", "old")
    with qtbot.waitSignal(view.diff_shown, timeout=30_000):
        view.set_snapshots(scripts["input"], scripts["legal"], "new", "new")
    qtbot.wait(50)
    assert view.right.toPlainText() == DiffView_rows_text(scripts["input"], scripts["legal"])


def DiffView_rows_text(before: str, after: str) -> str:  # noqa: N802 - helper named after what it mirrors
    from pipeline_model.diff import diff_snapshots

    return "\n".join(r.right_text for r in diff_snapshots(before, after).rows())
