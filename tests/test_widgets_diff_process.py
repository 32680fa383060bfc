"""DiffView with the diff process (``pipeline_model.diff_process``): large diffs are computed in a child
process, give the same rows and texts as in a thread, superseded requests never reach the process, and a
worker that crashes is replaced by the thread path without a word to the user (TVM-free texts)."""

from __future__ import annotations

import sys
import textwrap

import pytest

from pipeline_model import diff as D
from pipeline_model.diff_process import DiffProcess
from tests.test_widgets_diff_fill import _module, _rows_text
from widgets.diff_view import DiffView


@pytest.fixture
def process():
    proc = DiffProcess()
    yield proc
    proc.close()


def _view(qtbot, proc=None) -> DiffView:
    v = DiffView()
    qtbot.addWidget(v)
    v.resize(1000, 600)
    v.show()
    v.async_lines = 200  # a few thousand lines count as large
    v.process_lines = 200
    v.use_diff_process = proc is not None
    v.diff_process = proc
    return v


def _show(qtbot, view: DiffView, before: str, after: str) -> None:
    with qtbot.waitSignal(view.diff_shown, timeout=30_000):
        view.set_snapshots(before, after, "before", "after")
    assert not view.is_busy()


def test_process_path_shows_the_same_diff_as_the_thread_path(qtbot, process) -> None:
    before, after = _module(120), _module(130, changed_every=7, tag="x")
    in_thread = _view(qtbot)
    _show(qtbot, in_thread, before, after)
    view = _view(qtbot, process)
    _show(qtbot, view, before, after)
    assert process.requests_done == 1 and process.failures == 0
    assert view.module_diff == in_thread.module_diff == D.diff_snapshots(before, after)
    assert view.rows == in_thread.rows == D.diff_snapshots(before, after).rows()
    for side in ("left", "right"):
        editor = getattr(view, side)
        assert editor.toPlainText() == getattr(in_thread, side).toPlainText() == _rows_text(view.rows, side)
        other = getattr(in_thread, side)
        numbers = [editor.line_number_of_block(i) for i in range(editor.blockCount())]
        assert numbers == [other.line_number_of_block(i) for i in range(other.blockCount())]
        assert numbers == [getattr(r, f"{side}_no") for r in view.rows]
    assert view.summary_label.text() == in_thread.summary_label.text()
    # the filters work on the assembled diff as on any other
    view.set_hide_unchanged(True)
    qtbot.waitUntil(lambda: not view.is_filling(), timeout=10_000)
    assert view.rows == D.diff_snapshots(before, after).rows(hide_unchanged=True)


def test_superseded_requests_never_reach_the_process(qtbot, tmp_path) -> None:
    # A worker that takes its time to start: the first request is in flight while two more come.
    slow = [sys.executable, "-c", textwrap.dedent("""
        import time
        time.sleep(0.5)
        from pipeline_model.diff_process import main
        main([])
    """)]
    proc = DiffProcess(command=slow)
    try:
        view = _view(qtbot, proc)
        ready: list[int] = []
        view.diff_ready.connect(lambda: ready.append(len(view.rows)))
        first = (_module(100), _module(100, changed_every=3, tag="1"))
        second = (_module(110), _module(110, changed_every=4, tag="2"))
        third = (_module(120), _module(120, changed_every=5, tag="3"))
        view.set_snapshots(*first)
        qtbot.waitUntil(lambda: proc.requests_started == 1, timeout=10_000)
        assert proc.requests_done == 0  # still in flight
        view.set_snapshots(*second)
        with qtbot.waitSignal(view.diff_shown, timeout=30_000):
            view.set_snapshots(*third)
        qtbot.wait(100)
        # the first was computed and dropped, the second never sent: two requests, the third's diff on screen
        assert proc.requests_started == proc.requests_done == 2
        assert len(ready) == 1
        assert view.module_diff == D.diff_snapshots(*third)
        assert view.right.toPlainText() == _rows_text(D.diff_snapshots(*third).rows(), "right")
    finally:
        proc.close()


CRASHING = [sys.executable, "-c", "import os, sys; os.read(0, 16); sys.exit(9)"]


def test_a_crashing_worker_falls_back_to_the_thread_silently(qtbot) -> None:
    proc = DiffProcess(command=CRASHING)
    try:
        view = _view(qtbot, proc)
        before, after = _module(120), _module(120, changed_every=6, tag="c")
        _show(qtbot, view, before, after)
        assert proc.failures == 1 and proc.requests_done == 0  # it did fail ...
        assert view.module_diff == D.diff_snapshots(before, after)  # ... and nothing shows it
        assert view.right.toPlainText() == _rows_text(D.diff_snapshots(before, after).rows(), "right")
        assert "Cannot compare" not in view.summary_label.text() and "changed" in view.summary_label.text()
    finally:
        proc.close()


def test_small_diffs_stay_in_the_view(qtbot, process) -> None:
    view = _view(qtbot, process)
    view.async_lines = view.process_lines = 4000
    view.set_snapshots(_module(10), _module(10, changed_every=2))
    assert view.module_diff is not None and not view.is_busy()
    assert process.requests_started == 0 and not process.is_running()
