"""Issue 18: panes that fit. The default layout leaves the graph at least half the window's width and
shows at least five steps at 1024×700 and 1920×1080 (English and Chinese); the user's arrangement is
remembered; View ▸ Reset Layout brings the default back."""

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
        again.act_reset_layout.trigger()
        qt_wait(lambda: False, 200)
        assert again.dockWidgetArea(again.palette_dock) == Qt.DockWidgetArea.RightDockWidgetArea
        _check_fits(again, (1024, 700))
    finally:
        again.ctrl.undo_stack.setClean()
        again.close()
