"""Showing a step does not lay out the main window again (fake engine).

Every ``QLabel.setText`` in a dock (diff titles, the diff summary, the graph caption, the parameter title, the
engine state in the status bar) used to ask Qt to redo every layout up to the main window: a pass over the
dock areas and what they invalidated on every step selection, several times per selection. These labels are
now ``widgets.stable_label.StableLabel``s; the test counts the ``LayoutRequest`` events the main window and its
docks receive while steps and the input are selected in turn.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QDockWidget, QLabel

from tests.conftest import qt_wait
from tests.test_gui_fake_engine import _run_new_pipeline
from widgets.stable_label import StableLabel


class _LayoutRequests(QObject):
    """Counts LayoutRequest events delivered to the watched widgets, by object name."""

    def __init__(self, widgets) -> None:
        super().__init__()
        self.seen: list[str] = []
        for w in widgets:
            w.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.LayoutRequest:
            self.seen.append(obj.objectName() or type(obj).__name__)
        return False


def _settle(win, ms: int = 150) -> None:
    qt_wait(lambda: not win.diff_view.is_busy() and not win.diff_view.is_filling() and not win.graph_view.is_busy()
            and win.ctx.engine._current is None and not win.ctx.engine._jobs, 10_000)  # noqa: SLF001
    qt_wait(lambda: False, ms)  # posted events (LayoutRequest comes a turn later) are delivered


def test_selecting_steps_does_not_relayout_the_main_window(fake_studio) -> None:
    win = fake_studio
    steps = _run_new_pipeline(win, ("relax.FoldConstant", "relax.LegalizeOps", "relax.FuseOps",
                                    "relax.DeadCodeElimination"))
    uids = [""] + [s.uid for s in steps]  # "": the model input
    for uid in uids:  # everything shown once (first graphs, forms, diffs)
        win.pipeline_view.select_uids([uid] if uid else [])
        _settle(win)
    watched = [win] + win.findChildren(QDockWidget)
    counter = _LayoutRequests(watched)
    try:
        for _round in range(2):
            for uid in uids:
                before = (win.diff_view.left_title.text(), win.graph_caption.text(), win.pipeline_panel.param_title.text())
                win.pipeline_view.select_uids([uid] if uid else [])
                _settle(win)
                after = (win.diff_view.left_title.text(), win.graph_caption.text(), win.pipeline_panel.param_title.text())
                assert after != before  # the texts did change ...
        assert counter.seen == []  # ... and nothing asked the window or a dock to lay itself out again
        # the counter does see a plain label changing width in the status bar
        win.run_label.setText("a status text long enough to change the label's size hint " * 2)
        QApplication.processEvents()
        qt_wait(lambda: bool(counter.seen), 2000)
        assert counter.seen
    finally:
        for w in watched:
            w.removeEventFilter(counter)


def test_stable_label_keeps_its_size_and_elides(qtbot) -> None:
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    host = QWidget()
    qtbot.addWidget(host)
    layout = QVBoxLayout(host)
    label = StableLabel("short")
    layout.addWidget(label)
    host.resize(300, 100)
    host.show()
    qtbot.waitExposed(host)
    qtbot.wait(50)  # what showing it posted
    counter = _LayoutRequests([host])
    hint = label.sizeHint(), label.minimumSizeHint(), label.height()
    long_text = "a very long text that cannot fit in three hundred pixels of width, " * 5
    label.setText(long_text)
    qtbot.wait(50)
    assert counter.seen == []
    assert (label.sizeHint(), label.minimumSizeHint(), label.height()) == hint
    assert label.text() == long_text and label.toolTip() == long_text
    assert label.shown_text().endswith("…") and len(label.shown_text()) < len(long_text)
    label.setText("fits\nwith a newline")
    assert label.text() == "fits with a newline" and label.shown_text() == "fits with a newline"
    assert label.toolTip() == ""
    assert isinstance(label.label, QLabel) and label.label.text() == "fits with a newline"
    assert label.height() >= label.label.fontMetrics().height()


def test_engine_state_keeps_its_room_in_the_status_bar(fake_studio) -> None:
    win = fake_studio
    win.run_label.setText("Run: 3 steps (7.8 ms) · 2 from cache · step 3 failed: division by zero")
    qt_wait(lambda: False, 100)
    engine, run = win.engine_label.geometry(), win.run_label.geometry()
    assert win.engine_label.isVisible() and engine.width() >= 20 * win.engine_label.label.fontMetrics().averageCharWidth()
    assert engine.right() < run.left()  # side by side, not drawn over each other
    assert "Engine" in win.engine_label.text() and win.engine_label.label.property("state") == "ready"


def test_a_growing_stable_label_widens_once_to_its_longest_text(qtbot) -> None:
    from PySide6.QtWidgets import QHBoxLayout, QWidget

    host = QWidget()
    qtbot.addWidget(host)
    layout = QHBoxLayout(host)
    label = StableLabel("Engine: stopped", min_chars=5, grow=True)
    layout.addWidget(label)
    layout.addStretch(1)
    host.resize(800, 40)
    host.show()
    qtbot.waitExposed(host)
    long_text = "Engine ready (TVM 0.27.0.post1)"
    label.setText(long_text)
    qtbot.waitUntil(lambda: label.shown_text() == long_text, timeout=2000)  # widened: shown whole
    width = label.minimumWidth()
    qtbot.wait(50)
    counter = _LayoutRequests([host])
    for text in ("Engine: graph…", "Engine: snapshot…", long_text, "Running pipeline…"):
        label.setText(text)
        qtbot.wait(20)
        assert label.shown_text() == text
    assert counter.seen == [] and label.minimumWidth() == width  # shorter texts: no relayout, no narrowing
