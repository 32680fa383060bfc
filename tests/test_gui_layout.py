"""Issue 18: panes that fit. The default layout leaves the graph at least half the window's width and
shows at least five steps at 1024×700 and 1920×1080 (English and Chinese); the user's arrangement is
remembered; View ▸ Reset Layout brings the default back.

Issue 33: the same with a step holding nested passes selected (it stays in view, five steps still show),
numeric fields wide enough for their values, one tab bar per dock group (none left over after a restored
layout), parameter names in the pass docs never cut mid-identifier, every dock back after Reset Layout,
and the graph keeping half the width when a remembered wide layout is shown in a narrow window."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings, Qt  # noqa: E402

from pipeline_model.document import PipelineDocument, Step  # noqa: E402
from tests.conftest import qt_wait  # noqa: E402

SIZES = [(1024, 700), (1920, 1080)]
PASSES = ["relax.LegalizeOps", "relax.AnnotateTIROpPattern", "relax.FoldConstant", "relax.FuseOps", "relax.FuseTIR",
          "relax.DeadCodeElimination", "relax.ToNonDataflow", "relax.CallTIRRewrite"]


def _window(settings: QSettings, size: tuple[int, int]):
    from app.main_window import MainWindow

    win = MainWindow(start_engine=False, settings=settings)
    win.files.replace_document(PipelineDocument(model="builtin:mlp", steps=[Step(p) for p in PASSES]), ask=False)
    win.resize(*size)
    win.show()
    qt_wait(lambda: False, 300)  # the default layout is applied once shown, then settles
    return win


def _visible_steps(win) -> float:
    view = win.pipeline_view.list
    row = view.sizeHintForRow(0)
    assert row > 0
    return view.viewport().height() / row


def _select_nested_step(win) -> str:
    """Give step 7 a result with a dozen nested passes and select it (the nested-pass table opens)."""
    from pipeline_model.engine.results import NestedPassResult, StepResult

    for i, step in enumerate(win.ctrl.doc.steps):
        nested = [NestedPassResult(f"relax.Nested{k}", 1.0, k % 2 == 0, depth=k % 2) for k in range(12)] if i == 6 else []
        win.step_model.set_result(StepResult(index=i, uid=step.uid, pass_id=step.pass_id, title=step.pass_id,
                                             state="changed", nested=nested))
    uid = win.ctrl.doc.steps[6].uid
    win.pipeline_view.select_uids([uid])
    qt_wait(lambda: False, 200)
    return uid


def _check_panes(win, size):
    """Issue 33's checks (see the module docstring)."""
    from PySide6.QtWidgets import QLineEdit, QTabBar

    _select_nested_step(win)
    view = win.pipeline_view
    assert view.nested_box.isVisible()
    assert _visible_steps(win) >= 5, _visible_steps(win)
    assert view.list.viewport().rect().contains(view.list.visualRect(view.list.currentIndex())), "selected step hidden"
    from PySide6.QtCore import QPoint

    list_bottom = view.list.mapTo(win, QPoint(0, view.list.height())).y()
    assert list_bottom <= view.nested_box.mapTo(win, QPoint(0, 0)).y(), "the nested table covers the step list"
    # numeric fields show their values whole
    for edit in (win.run_panel.rtol_spin, win.run_panel.atol_spin):
        assert isinstance(edit, QLineEdit)
        room = edit.width() - edit.textMargins().left() - edit.textMargins().right() - 8
        for text in ("0.0001", "1e-05"):
            assert edit.fontMetrics().horizontalAdvance(text) <= room, (text, edit.width())
    # one visible tab bar per dock group, each inside the window
    bars = [b for b in win.findChildren(QTabBar) if b.parent() is win and b.isVisible()]
    tabs = [tuple(b.tabText(i) for i in range(b.count())) for b in bars]
    assert len(tabs) == len(set(tabs)), tabs
    assert all(win.rect().contains(b.geometry()) for b in bars), [b.geometry() for b in bars]
    # the palette's parameter table keeps identifiers whole
    assert _identifier_lines(win, "relax.MetaScheduleTuneTIR", "max_trials_global") == ["max_trials_global"]


def _identifier_lines(win, pass_id: str, name: str) -> list[str]:
    """The pieces ``name`` is laid out in, in the pass palette's doc pane showing ``pass_id``."""
    import json

    from pipeline_model.catalogue import Catalogue
    from tests.fake_engine import CATALOGUE_FILE

    palette = win.palette
    if palette.model.catalogue is None:
        with open(CATALOGUE_FILE, encoding="utf-8") as handle:
            palette.set_catalogue(Catalogue.from_json(json.load(handle)))
    palette.show_pass_doc(pass_id)
    palette.doc.document().setTextWidth(palette.doc.viewport().width())
    block, pieces = palette.doc.document().begin(), []
    while block.isValid():
        text, at = block.text(), block.text().find(name)
        if at >= 0:
            layout = block.layout()
            for k in range(layout.lineCount()):
                line = layout.lineAt(k)
                lo, hi = max(at, line.textStart()), min(at + len(name), line.textStart() + line.textLength())
                if lo < hi:
                    pieces.append(text[lo:hi])
        block = block.next()
    return pieces


def _check_fits(win, size):
    assert win.width() == size[0] and win.height() == size[1], "the window grew beyond its size"
    assert win.graph_view.isVisible() and win.graph_view.width() >= 0.5 * win.width(), \
        (win.graph_view.width(), win.width())
    assert win.pipeline_view.list.isVisible() and _visible_steps(win) >= 5, _visible_steps(win)
    assert win.graph_view.height() >= 200


@pytest.mark.parametrize("size", SIZES)
def test_default_layout_fits(qapp, gui_env, tmp_path, size):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    win = _window(settings, size)
    try:
        _check_fits(win, size)
        assert win.diff_dock.isVisible()
        _check_panes(win, size)
        _check_fits(win, size)
    finally:
        win.ctrl.undo_stack.setClean()
        win.close()


@pytest.mark.parametrize("size", SIZES)
def test_default_layout_fits_in_chinese(qapp, gui_env, tmp_path, size):
    from app.i18n import install_translator

    translator = install_translator(qapp, "zh_CN")
    assert translator is not None
    try:
        settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
        win = _window(settings, size)
        try:
            assert win.pipeline_dock.windowTitle() != "Pipeline"  # really in Chinese
            _check_fits(win, size)
            _check_panes(win, size)
            _check_fits(win, size)
        finally:
            win.ctrl.undo_stack.setClean()
            win.close()
    finally:
        qapp.removeTranslator(translator)


def test_the_users_layout_is_remembered_and_reset_restores_the_default(qapp, gui_env, tmp_path):
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    win = _window(settings, (1024, 700))
    win.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, win.palette_dock)  # the user's own arrangement
    win.ctrl.undo_stack.setClean()
    win.close()
    again = _window(settings, (1024, 700))
    try:
        assert again.dockWidgetArea(again.palette_dock) == Qt.DockWidgetArea.LeftDockWidgetArea
        docks = (again.palette_dock, again.pipeline_dock, again.diff_dock, again.run_dock, again.profile_dock,
                 again.tuning_dock)
        for dock in (again.run_dock, again.profile_dock, again.palette_dock):
            dock.close()
        again.act_reset_layout.trigger()
        qt_wait(lambda: False, 200)
        assert all(d.toggleViewAction().isChecked() for d in docks), [d.objectName() for d in docks if d.isHidden()]
        assert again.dockWidgetArea(again.palette_dock) == Qt.DockWidgetArea.RightDockWidgetArea
        _check_fits(again, (1024, 700))
    finally:
        again.ctrl.undo_stack.setClean()
        again.close()


def test_a_wide_layout_shown_narrow_leaves_the_graph_half_the_width(qapp, gui_env, tmp_path):
    """Issue 33: the 1920×1080 layout remembered and restored, then the window shrunk to 1024×700 without
    View ▸ Reset Layout: the side docks give way (the palette joins the pipeline's tabs) and the bottom ones
    give back height instead of leaving the graph 46 % of the width; no tab bar is left over from the
    restored state."""
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    wide = _window(settings, (1920, 1080))
    wide.ctrl.undo_stack.setClean()
    wide.close()
    again = _window(settings, (1920, 1080))
    try:
        assert again.dockWidgetArea(again.palette_dock) == Qt.DockWidgetArea.LeftDockWidgetArea  # restored
        again.resize(1024, 700)  # shrunk while open
        qt_wait(lambda: False, 300)
        _check_fits(again, (1024, 700))
        _check_panes(again, (1024, 700))
    finally:
        again.ctrl.undo_stack.setClean()
        again.close()
