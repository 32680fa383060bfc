"""DiffView: large diffs are put into the editors piece by piece (TVM-free, generated TVMScript-like texts).

Speed is measured by ``python -m bench.bench_diff_view --synthetic 50000``; these tests check that a
piecewise fill ends up complete and correct, and that newer requests, ``clear`` and error mode win over a
fill under way.
"""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QGuiApplication, QPalette

from pipeline_model import diff as D
from widgets.code_editor import CodeEditor
from widgets.diff_view import DiffView, diff_colors


def _module(functions: int, changed_every: int = 0, first_changed: int = 0, tag: str = "") -> str:
    """A TVMScript-like module of ``functions`` PrimFuncs of 14 lines; with ``changed_every``, every such
    function from ``first_changed`` on gets a changed line and an extra line (``tag`` in the changes)."""
    lines = ["# from tvm.script import ir as I", "# from tvm.script import tir as T", "", "@I.ir_module",
             "class Module:"]
    for k in range(functions):
        body = ["    @T.prim_func(private=True)",
                f'    def f{k}(A: T.Buffer((T.int64({k + 8}),), "float32"), B: T.Buffer((T.int64({k + 8}),), '
                '"float32")):',
                '        T.func_attr({"tir.noalias": True})']
        for j in range(5):
            body += [f"        for i in range(T.int64({k + 8 + j})):",
                     f"            B[i] = A[i] * T.float32({j + 1}) + T.float32({k})"]
        body.append("")
        if changed_every and k >= first_changed and (k - first_changed) % changed_every == 0:
            body[4] = body[4].replace("T.float32(", f"T.float16({tag}")
            body.insert(3, f"        T.evaluate({k})  # added{tag}")
        lines += body
    return "\n".join(lines) + "\n"


def _rows_text(rows: list[D.DiffRow], side: str) -> str:
    return "\n".join(getattr(r, f"{side}_text") for r in rows)


@pytest.fixture
def view(qtbot):
    v = DiffView()
    qtbot.addWidget(v)
    v.resize(1000, 600)
    v.show()
    # Force a many-turn fill on a few thousand rows: diffed on the worker, 60 rows per piece, one piece a turn.
    v.async_lines = 200
    v.fill_chunk_rows = 60
    v.fill_budget_ms = 0.0
    return v


def _watch_counts(editor: CodeEditor) -> list[int]:
    counts: list[int] = []
    editor.blockCountChanged.connect(counts.append)
    return counts


def test_large_diff_is_filled_in_pieces_complete_and_correct(view, qtbot) -> None:
    before, after = _module(220), _module(220, changed_every=9, first_changed=100)
    expected = D.diff_snapshots(before, after)
    counts = _watch_counts(view.right)
    ready: list[int] = []  # rows in the editors when the diff was ready
    view.diff_ready.connect(lambda: ready.append(view.right.blockCount()))
    with qtbot.waitSignal(view.diff_shown, timeout=30_000):
        view.set_snapshots(before, after, "before", "after")
        assert view.is_busy()
    assert len(ready) == 1 and ready[0] < len(view.rows)  # before the rows came in
    assert not view.is_busy() and not view.is_filling()
    rows = view.rows
    assert rows == expected.rows() and len(rows) > 3000
    # it came in pieces: the editors grew through intermediate sizes
    assert any(60 < c < len(rows) for c in counts)
    assert view.left.blockCount() == view.right.blockCount() == len(rows)
    assert view.left.toPlainText() == _rows_text(rows, "left")
    assert view.right.toPlainText() == _rows_text(rows, "right")
    colors = diff_colors(False)
    for i in (0, len(rows) // 2, len(rows) - 1):
        assert view.left.document().findBlockByNumber(i).text() == rows[i].left_text
        assert view.right.document().findBlockByNumber(i).text() == rows[i].right_text
        assert view.left.line_number_of_block(i) == rows[i].left_no
        assert view.right.line_number_of_block(i) == rows[i].right_no
    for i, row in enumerate(rows):  # every row's tint, the last pieces' included
        if row.tag == D.REPLACE:
            assert view.left.line_background(i) == colors["removed"] and view.right.line_background(i) == colors["added"]
        elif row.tag == D.INSERT:
            assert view.left.line_background(i) == colors["pad"] and view.right.line_background(i) == colors["added"]
        elif row.tag == D.DELETE:
            assert view.left.line_background(i) == colors["removed"] and view.right.line_background(i) == colors["pad"]
        else:
            assert view.left.line_background(i) is None and view.right.line_background(i) is None
    assert sum(r.tag == D.INSERT for r in rows) >= 10
    # scrolled to the first change (reached only after several pieces), both sides together
    first_change = next(i for i, r in enumerate(rows) if r.tag not in (D.EQUAL, D.GAP))
    assert first_change > 1000
    bar_l, bar_r = view.left.verticalScrollBar(), view.right.verticalScrollBar()
    assert bar_l.value() == first_change - 3 == bar_r.value()
    assert bar_l.maximum() == bar_r.maximum() > first_change
    # the visible lines are highlighted, far ones on demand
    first, _last = view.right.visible_block_range()
    assert view.right.highlighter.is_block_highlighted(first)
    assert view.right.document().findBlockByNumber(first).layout().formats()
    bar_r.setValue(bar_r.maximum())
    assert bar_l.value() == bar_l.maximum()
    qtbot.wait(10)
    view.right.repaint()
    end_first, _ = view.right.visible_block_range()
    assert view.right.highlighter.is_block_highlighted(end_first)
    # selection and copy take the whole text
    view.right.selectAll()
    assert view.right.textCursor().selectedText().replace("\u2029", "\n") == _rows_text(rows, "right")
    # the function chooser and hide-unchanged work on the big diff (re-rendered in pieces too)
    name = next(f.name for f in expected.functions if f.status == D.CHANGED)
    with qtbot.waitSignal(view.diff_shown, timeout=30_000):
        view.set_hide_unchanged(True)
    assert view.rows == expected.rows(hide_unchanged=True)
    assert view.right.toPlainText() == _rows_text(view.rows, "right")
    view.select_function(name)  # a few rows: at once
    assert view.rows == expected.function(name).rows
    assert view.right.toPlainText() == _rows_text(view.rows, "right")


def test_a_newer_diff_during_a_fill_wins(view, qtbot) -> None:
    old_before, old_after = _module(260), _module(260, changed_every=5, tag="1.0+")
    new_before, new_after = _module(200), _module(200, changed_every=7, first_changed=3, tag="2.0+")
    view.set_snapshots(old_before, old_after, "old", "old")
    qtbot.waitUntil(lambda: view.is_filling() and view.module_diff is not None and view.right.blockCount() > 120,
                    timeout=30_000)
    assert view.right.blockCount() < len(view.rows)  # still filling
    shown: list[bool] = []
    view.diff_shown.connect(lambda: shown.append(True))
    view.set_snapshots(new_before, new_after, "new", "new")
    assert view.rows == [] and view.module_diff is None
    qtbot.waitUntil(lambda: bool(shown), timeout=30_000)
    qtbot.wait(100)  # nothing of the old fill comes back
    assert shown == [True]
    expected = D.diff_snapshots(new_before, new_after).rows()
    assert view.rows == expected
    assert view.right.toPlainText() == _rows_text(expected, "right")
    assert view.left.toPlainText() == _rows_text(expected, "left")
    assert "1.0+" not in view.right.toPlainText() and "2.0+" in view.right.toPlainText()
    assert view.right_title.text() == "new"


def test_a_newer_small_diff_during_a_fill_wins(view, qtbot) -> None:
    view.set_snapshots(_module(260), _module(260, changed_every=5), "old", "old")
    qtbot.waitUntil(lambda: view.is_filling() and view.right.blockCount() > 120, timeout=30_000)
    small_before, small_after = _module(3), _module(3, changed_every=2)
    view.set_snapshots(small_before, small_after, "small", "small")  # diffed and shown at once
    expected = D.diff_snapshots(small_before, small_after).rows()
    assert view.rows == expected and view.right.toPlainText() == _rows_text(expected, "right")
    qtbot.wait(100)
    assert view.right.toPlainText() == _rows_text(expected, "right") and not view.is_filling()


def test_clear_during_a_fill_leaves_it_empty(view, qtbot) -> None:
    view.set_snapshots(_module(260), _module(260, changed_every=5), "a", "b")
    qtbot.waitUntil(lambda: view.is_filling() and view.right.blockCount() > 120, timeout=30_000)
    shown: list[bool] = []
    view.diff_shown.connect(lambda: shown.append(True))
    view.clear()
    qtbot.wait(150)
    assert view.left.toPlainText() == "" and view.right.toPlainText() == ""
    assert view.rows == [] and view.module_diff is None
    assert not view.is_busy() and not view.is_filling() and shown == []


def test_big_texts_are_dropped_in_turns_of_their_own(view, qtbot, monkeypatch) -> None:
    import widgets.diff_view as dv

    monkeypatch.setattr(dv, "CLEAR_ALONE_BLOCKS", 500)  # these editors count as big
    with qtbot.waitSignal(view.diff_shown, timeout=30_000):
        view.set_snapshots(_module(220), _module(220, changed_every=9))
    assert view.right.blockCount() > 3000
    cleared: list[int] = []  # editors' sizes seen at each emptying
    view.left.blockCountChanged.connect(lambda n: cleared.append(n))
    view.clear()
    assert view.is_filling() and view.left.blockCount() > 3000  # not in this call
    qtbot.waitUntil(lambda: not view.is_filling(), timeout=30_000)
    assert view.left.toPlainText() == "" and view.right.toPlainText() == "" and cleared == [1]
    # a new big diff after a big one: emptied first (turns of their own), then diffed and put in
    with qtbot.waitSignal(view.diff_shown, timeout=30_000):
        view.set_snapshots(_module(230), _module(230, changed_every=7))
    with qtbot.waitSignal(view.diff_shown, timeout=30_000):
        view.set_snapshots(_module(220), _module(220, changed_every=9))
    expected = D.diff_snapshots(_module(220), _module(220, changed_every=9)).rows()
    assert view.rows == expected and view.right.toPlainText() == _rows_text(expected, "right")


def test_error_mode_during_a_fill_shows_the_whole_last_good_ir(view, qtbot) -> None:
    view.set_snapshots(_module(260), _module(260, changed_every=5), "a", "b")
    qtbot.waitUntil(lambda: view.is_filling() and view.right.blockCount() > 120, timeout=30_000)
    good = _module(240)  # > async_lines lines: put in by pieces as well
    view.set_error("3 · FuseTIR", "TVMError: boom", good)
    assert view.in_error_mode and view.rows == []
    qtbot.waitUntil(lambda: not view.is_filling(), timeout=30_000)
    assert view.left.toPlainText() == good
    assert view.left.line_number_of_block(10) == 11 and view.left.line_background(10) is None
    assert not view.is_busy() and view.in_error_mode


def test_user_scroll_during_a_fill_is_kept(view, qtbot) -> None:
    before, after = _module(260), _module(260, changed_every=9, first_changed=200)
    view.set_snapshots(before, after)
    qtbot.waitUntil(lambda: view.is_filling() and view.right.blockCount() > 300, timeout=30_000)
    view.right.verticalScrollBar().setValue(40)  # the user scrolls before the first change is reached
    qtbot.waitUntil(lambda: not view.is_busy(), timeout=30_000)
    assert view.left.verticalScrollBar().value() == 40 == view.right.verticalScrollBar().value()


def test_dark_palette_tints_of_a_filled_diff(view, qtbot) -> None:
    dark = QPalette(QGuiApplication.palette())
    dark.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    dark.setColor(QPalette.ColorRole.Window, QColor("#2a2a2a"))
    dark.setColor(QPalette.ColorRole.Text, QColor("#dddddd"))
    view.setPalette(dark)
    with qtbot.waitSignal(view.diff_shown, timeout=30_000):
        view.set_snapshots(_module(220), _module(220, changed_every=9))
    colors = diff_colors(True)
    last_insert = max(i for i, r in enumerate(view.rows) if r.tag == D.INSERT)
    assert view.right.line_background(last_insert) == colors["added"]
    assert view.left.line_background(last_insert) == colors["pad"]


def test_code_editor_append_text_keeps_numbers_tints_and_selection(qtbot) -> None:
    ed = CodeEditor(read_only=True)
    qtbot.addWidget(ed)
    ed.resize(500, 300)
    ed.show()
    ed.set_text("a = 1\nb = 2", pieces_follow=True)
    ed.set_line_numbers([5, None], largest=9)
    ed.set_line_backgrounds({1: QColor("red")})
    cursor = ed.textCursor()
    cursor.setPosition(0)
    cursor.setPosition(3, cursor.MoveMode.KeepAnchor)
    ed.setTextCursor(cursor)
    ed.append_text("c = 3\nd = 4", notify=False)
    ed.extend_line_numbers([7, 8])
    ed.add_line_backgrounds({3: QColor("green")})
    ed.appended()
    assert ed.toPlainText() == "a = 1\nb = 2\nc = 3\nd = 4" and ed.blockCount() == 4
    assert [ed.line_number_of_block(i) for i in range(4)] == [5, None, 7, 8]
    assert ed.line_background(1) == QColor("red") and ed.line_background(3) == QColor("green")
    assert ed.line_background(2) is None
    assert ed.textCursor().selectedText() == "a ="
    assert not ed.document().isUndoAvailable()
    # the lines appended in view get highlighted
    qtbot.wait(10)
    ed.repaint()
    assert ed.highlighter.is_block_highlighted(3) and ed.document().findBlockByNumber(3).layout().formats()
    # a plain set_text after pieces follows the document as before
    ed.set_text("x = 1")
    assert ed.toPlainText() == "x = 1" and ed.line_number_of_block(0) == 1 and ed.line_background(0) is None


@pytest.mark.parametrize("piecewise", [False, True])
def test_very_long_lines_are_cut_in_the_editors_only(qtbot, piecewise) -> None:
    from widgets.diff_view import MAX_SHOWN_CHARS

    v = DiffView()
    qtbot.addWidget(v)
    v.resize(1000, 600)
    v.show()
    if piecewise:
        v.async_lines = v.process_lines = 200
        v.fill_chunk_rows = 60
    long_line = "    def forward(" + ", ".join(f"w{i}: R.Tensor((512, 512))" for i in range(4000)) + "):"
    assert len(long_line) > 5 * MAX_SHOWN_CHARS
    before = _module(30).replace("class Module:", "class Module:\n" + long_line + "\n        pass", 1)
    after = _module(30, changed_every=5).replace("class Module:", "class Module:\n" + long_line + "\n        pass", 1)
    with qtbot.waitSignal(v.diff_shown, timeout=30_000):
        v.set_snapshots(before, after, "a", "b")
    rows = v.rows
    assert any(r.left_text == long_line for r in rows)  # the diff keeps the whole line
    for side in ("left", "right"):
        editor = getattr(v, side)
        shown = editor.toPlainText().split("\n")
        assert len(shown) == len(rows) == editor.blockCount()
        k = next(i for i, r in enumerate(rows) if getattr(r, f"{side}_text") == long_line)
        assert shown[k].startswith(long_line[:MAX_SHOWN_CHARS]) and len(shown[k]) < MAX_SHOWN_CHARS + 80
        assert f"{len(long_line) - MAX_SHOWN_CHARS:,} more characters not shown" in shown[k]
        others = [t for i, t in enumerate(shown) if i != k]
        assert others == [getattr(r, f"{side}_text") for i, r in enumerate(rows) if i != k]
