"""The main window: drag and drop, reorder, undo/redo, run + diff, files, crash, close.

GUI logic runs on the TVM-free fake engine (``fake_studio``); the tests marked ``e2e`` check real TVM
output on the session engine (``studio``), and the crash test uses its own engine because it kills it.
"""

from __future__ import annotations

import json
import os


import pytest

pytest.importorskip("pytestqt")
pytestmark = pytest.mark.filterwarnings("ignore:Function.*QDrag.*Event:DeprecationWarning")

from PySide6.QtCore import QModelIndex, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent  # noqa: E402
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox  # noqa: E402

from pipeline_model.engine.results import CHANGED, FAILED  # noqa: E402
from widgets.step_model import MIME_PASS, MIME_STEP, StateRole  # noqa: E402
from tests.conftest import qt_wait  # noqa: E402

RUN_TIMEOUT_MS = 120_000

SEGFAULT_SOURCE = """
import ctypes

def crash(mod):
    ctypes.string_at(0)  # reads address 0: SIGSEGV in the engine process
    return mod
"""


@pytest.fixture(scope="module")
def env_dirs(gui_env):
    """The app's settings/cache folders (the shared per-module ``gui_env``)."""
    return gui_env


@pytest.fixture(scope="module")
def window(fake_studio):
    """The shared per-module main window on the fake engine (``fake_studio`` in conftest)."""
    return fake_studio


def _wait(cond, timeout_ms: int) -> bool:
    return qt_wait(cond, timeout_ms)


def _fresh(window):
    window.ctrl.undo_stack.setClean()
    window.files.new_pipeline(force=True)
    window.session.auto_run = True
    _wait(lambda: window.step_model.rowCount() == 0, 1000)
    return window


@pytest.fixture
def fresh(window):
    """The fake-engine window with an empty, clean pipeline on the tutorial MLP."""
    return _fresh(window)


@pytest.fixture
def real_fresh(studio):
    """The real-engine window (``studio``) with an empty, clean pipeline on the tutorial MLP."""
    return _fresh(studio)


def palette_mime(win, pass_id: str):
    """MIME data exactly as the palette produces it for a drag of ``pass_id``."""
    index = win.palette.model.index_of_pass(pass_id)
    assert index.isValid(), f"{pass_id} not in the palette"
    mime = win.palette.model.mimeData([index])
    assert mime.hasFormat(MIME_PASS)
    return mime


def drop_on_list(win, mime, row: int | None) -> None:
    """Deliver a real QDropEvent on the pipeline list viewport (above ``row``, or below the last row)."""
    view = win.pipeline_view.list
    if row is None or row >= win.pipeline_view.proxy.rowCount():
        pos = QPointF(10, view.viewport().height() - 3)
    else:
        rect = view.visualRect(win.pipeline_view.proxy.index(row, 0))
        pos = QPointF(rect.left() + 10, rect.top() + 2)
    actions = Qt.DropAction.CopyAction | Qt.DropAction.MoveAction
    buttons, mods = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    # The sequence a real drag delivers: enter, move (sets the drop indicator), drop.
    for event in (
        QDragEnterEvent(pos.toPoint(), actions, mime, buttons, mods),
        QDragMoveEvent(pos.toPoint(), actions, mime, buttons, mods),
        QDropEvent(pos, actions, mime, buttons, mods),
    ):
        QApplication.sendEvent(view.viewport(), event)
        assert event.isAccepted(), f"{type(event).__name__} refused"
    QApplication.processEvents()


def pass_ids(win) -> list[str]:
    return [s.pass_id for s in win.ctrl.doc.steps]


@pytest.mark.e2e
def test_palette_lists_searches_and_greys(studio):
    window = studio
    pal = window.palette
    assert len(pal.visible_pass_ids()) >= 50
    pal.search.setText("fusetir")
    assert "relax.FuseTIR" in pal.visible_pass_ids()
    assert "relax.LegalizeOps" not in pal.visible_pass_ids()
    pal.search.setText("")
    unavailable = [s for s in window.ctx.catalogue.catalogue.specs() if not s.available]
    if unavailable:
        index = pal.model.index_of_pass(unavailable[0].id)
        assert not index.flags() & Qt.ItemFlag.ItemIsDragEnabled
        assert not index.flags() & Qt.ItemFlag.ItemIsEnabled  # greyed
        assert "unavailable" in index.data(Qt.ItemDataRole.ToolTipRole)
    pal.show_pass_doc("relax.FuseOps")
    assert "FuseOps" in pal.doc.toPlainText()


def test_drop_from_palette_reorder_undo_redo(fresh):
    win = fresh
    win.session.auto_run = False
    drop_on_list(win, palette_mime(win, "relax.FuseOps"), None)
    drop_on_list(win, palette_mime(win, "relax.FuseTIR"), None)
    assert pass_ids(win) == ["relax.FuseOps", "relax.FuseTIR"]
    # Drop at the top through the model API (same MIME the palette makes).
    win.pipeline_view.proxy.dropMimeData(palette_mime(win, "relax.LegalizeOps"), Qt.DropAction.CopyAction, 0, 0, QModelIndex())
    assert pass_ids(win) == ["relax.LegalizeOps", "relax.FuseOps", "relax.FuseTIR"]
    assert win.windowTitle().split(" — ")[0].endswith("*")
    # Reorder: drag FuseTIR (row 2) above FuseOps (row 1) with the list's own MIME data.
    mime = win.step_model.mimeData([win.step_model.index(2)])
    assert mime.hasFormat(MIME_STEP)
    drop_on_list(win, mime, 1)
    assert pass_ids(win) == ["relax.LegalizeOps", "relax.FuseTIR", "relax.FuseOps"]
    win.act_undo.trigger()
    assert pass_ids(win) == ["relax.LegalizeOps", "relax.FuseOps", "relax.FuseTIR"]
    win.act_redo.trigger()
    assert pass_ids(win) == ["relax.LegalizeOps", "relax.FuseTIR", "relax.FuseOps"]
    # Delete key on the selected step, toggle, duplicate — all undoable.
    win.pipeline_view.select_uids([win.ctrl.doc.steps[1].uid])
    win.pipeline_view.list.setFocus()
    from pytestqt.qtbot import QtBot  # noqa: F401 - ensure pytest-qt is importable

    from PySide6.QtGui import QKeyEvent
    from PySide6.QtCore import QEvent

    QApplication.sendEvent(win.pipeline_view.list, QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_Delete, Qt.KeyboardModifier.NoModifier))
    assert pass_ids(win) == ["relax.LegalizeOps", "relax.FuseOps"]
    win.step_model.setData(win.step_model.index(0), Qt.CheckState.Unchecked, Qt.ItemDataRole.CheckStateRole)
    assert win.ctrl.doc.steps[0].enabled is False
    win.editor.duplicate_steps([win.ctrl.doc.steps[1].uid])
    assert pass_ids(win) == ["relax.LegalizeOps", "relax.FuseOps", "relax.FuseOps"]
    for _ in range(3):
        win.act_undo.trigger()
    assert pass_ids(win) == ["relax.LegalizeOps", "relax.FuseTIR", "relax.FuseOps"]
    assert win.ctrl.doc.steps[0].enabled is True
    while win.ctrl.undo_stack.canUndo():
        win.act_undo.trigger()
    assert pass_ids(win) == [] and not win.ctrl.modified
    assert not win.windowTitle().split(" — ")[0].endswith("*")


@pytest.mark.e2e
def test_run_shows_diff_of_changing_step(real_fresh):
    win = real_fresh
    for pid in ("relax.LegalizeOps", "relax.AnnotateTIROpPattern", "relax.FuseOps", "relax.FuseTIR"):
        win.editor.add_pass(pid)
    first = win.ctrl.doc.steps[0].uid
    win.pipeline_view.select_uids([first])
    # The edit triggers an automatic run; wait for every step to have a result.
    assert _wait(lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps), RUN_TIMEOUT_MS)
    assert win.step_model.index(0).data(StateRole) == CHANGED
    # The step's texts come on demand (the engine prints them when the diff asks).
    assert _wait(lambda: "prim_func" in win.diff_view.right.toPlainText(), 60_000)
    diff = win.diff_view.module_diff
    assert diff is not None and diff.changed
    text = win.diff_view.right.toPlainText()
    assert "T.prim_func" in text or "prim_func" in text  # LegalizeOps produced TensorIR
    assert "prim_func" not in win.diff_view.left.toPlainText()
    assert not win.diff_view.in_error_mode


def test_save_and_reload_round_trip(fresh, tmp_path, monkeypatch):
    win = fresh
    win.session.auto_run = False
    win.editor.add_pass("relax.LegalizeOps")
    win.editor.add_pass("relax.FoldConstant")
    win.editor.toggle_step(win.ctrl.doc.steps[1].uid, False)
    path = str(tmp_path / "mine.json")
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (path, "")))
    win.act_save.trigger()
    assert os.path.exists(path) and not win.ctrl.modified
    assert "*" not in win.windowTitle().split(" — ")[0]
    saved = [s.to_dict() for s in win.ctrl.doc.steps]
    win.files.new_pipeline(force=True)
    assert win.ctrl.doc.steps == []
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (path, "")))
    win.act_open.trigger()
    assert [s.to_dict() for s in win.ctrl.doc.steps] == saved
    assert win.ctrl.doc.path == path and not win.ctrl.modified
    data = json.loads(open(path, encoding="utf-8").read())
    assert data["format"] == "relax-pipeline-studio.pipeline" and data["steps"][1]["enabled"] is False
    from app.settings import recent_files

    assert os.path.abspath(path) in recent_files(win.settings)


def test_bad_file_shows_error_and_keeps_document(fresh, tmp_path, monkeypatch):
    win = fresh
    win.session.auto_run = False
    win.editor.add_pass("relax.LegalizeOps")
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "relax-pipeline-studio.pipeline", "version": 1, "steps": [{"pass": 3}]}')
    shown = []
    monkeypatch.setattr(QMessageBox, "critical", staticmethod(lambda parent, title, text, *a: shown.append(text)))
    assert win.files.open_pipeline(str(bad)) is False
    assert shown and "bad.json" in shown[0]
    assert pass_ids(win) == ["relax.LegalizeOps"]


def test_close_with_unsaved_changes_asks(fresh, monkeypatch):
    win = fresh
    win.session.auto_run = False
    win.editor.add_pass("relax.LegalizeOps")
    asked = []

    def answer(button):
        def question(*args, **kwargs):
            asked.append(args[1] if len(args) > 1 else "")
            return button

        return staticmethod(question)

    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.Cancel))
    assert win.close() is False  # cancelled: the window stays, the document too
    assert asked and win.isVisible() and pass_ids(win) == ["relax.LegalizeOps"]
    # Save offered: a cancelled file dialog also keeps the window open.
    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.Save))
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: ("", "")))
    assert win.close() is False and win.isVisible()
    assert len(asked) == 2


def test_close_discard_closes(env_dirs, qapp, monkeypatch):
    from app.main_window import MainWindow

    win = MainWindow(start_engine=False)
    win.show()
    win.editor.add_pass("relax.LegalizeOps")  # no catalogue yet: still added
    assert win.ctrl.modified
    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.StandardButton.Discard))
    assert win.close() is True
    assert not win.isVisible()


@pytest.mark.e2e
def test_engine_crash_during_run_keeps_document(env_dirs, qapp):
    from app.main_window import MainWindow
    from pipeline_model.document import PipelineDocument, Step

    win = MainWindow()  # its own engine: this test kills it
    win.ctx.trust.override = True
    win.show()
    try:
        assert _wait(lambda: win.ctx.catalogue.catalogue is not None, 120_000)
        crashed = []
        win.worker.engine_crashed.connect(crashed.append)
        doc = PipelineDocument(
            model="builtin:mlp",
            steps=[Step("relax.LegalizeOps"), Step("custom.python", {"source": SEGFAULT_SOURCE}), Step("relax.FoldConstant")],
        )
        win.ctrl.replace_document(doc)
        before = [s.to_dict() for s in win.ctrl.doc.steps]
        assert _wait(lambda: bool(crashed), RUN_TIMEOUT_MS), "no crash reported"
        assert "crash" in crashed[0].lower() and "custom.python" in crashed[0]  # names the step
        assert win.banner.isVisible() and "custom.python" in win.banner.label.text()
        assert _wait(lambda: win.step_model.index(1).data(StateRole) == FAILED, 30_000)
        assert win.step_model.index(0).data(StateRole) == CHANGED  # earlier step intact
        assert [s.to_dict() for s in win.ctrl.doc.steps] == before  # document untouched
        # Select the failed step: error + last good IR.
        win.pipeline_view.select_uids([win.ctrl.doc.steps[1].uid])
        assert win.diff_view.in_error_mode
        assert _wait(lambda: "prim_func" in win.diff_view.left.toPlainText(), 30_000)  # fetched on demand
        # Recovery: remove the crashing step; the restarted engine runs the rest.
        win.editor.delete_steps([win.ctrl.doc.steps[1].uid])
        assert _wait(lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps), RUN_TIMEOUT_MS)
        assert win.step_model.index(0).data(StateRole) == CHANGED
    finally:
        win.ctrl.undo_stack.setClean()
        win.close()


def test_edit_parameter_through_param_editor(fresh):
    win = fresh
    win.session.auto_run = False
    uid = win.editor.add_pass("relax.FuseOps")
    win.pipeline_view.select_uids([uid])
    assert "fuse_opt_level" in win.param_editor.names()
    spin = win.param_editor.editor("fuse_opt_level").editor
    count = win.ctrl.undo_stack.count()
    spin.setValue(1)
    spin.setValue(0)  # consecutive edits of one parameter merge into one undo entry
    assert win.ctrl.doc.step(uid).params == {"fuse_opt_level": 0}
    assert win.ctrl.undo_stack.count() == count + 1
    win.act_undo.trigger()
    assert win.ctrl.doc.step(uid).params == {}
    assert spin.value() != 0  # the form follows undo (back to the spec default)
    win.act_redo.trigger()
    assert spin.value() == 0


def test_param_edit_reruns_debounced_and_drops_stale_results(fresh):
    win = fresh
    uid = win.editor.add_pass("relax.LegalizeOps")
    win.editor.add_pass("relax.FuseOps")
    assert _wait(lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps), RUN_TIMEOUT_MS)
    finished = []
    win.session.run_finished.connect(lambda rev, res: finished.append(rev))
    fuse = win.ctrl.doc.steps[1].uid
    win.pipeline_view.select_uids([fuse])
    spin = win.param_editor.editor("fuse_opt_level").editor
    spin.setValue(1)
    rev_a = win.ctrl.revision
    assert win.session.run_timer.isActive()  # debounced, not started yet
    spin.setValue(0)
    rev_b = win.ctrl.revision
    assert rev_b > rev_a
    assert _wait(lambda: rev_b in finished, RUN_TIMEOUT_MS)
    assert rev_a not in finished  # never delivered: superseded before it ran
    assert win.step_model.result(fuse) is not None and win.step_model.result(uid) is not None
    assert win.step_model.result(uid).cached  # the unchanged prefix came from the engine's cache
    # the fake's module names the params it ran with; the diff of the selected step fetches its text
    assert _wait(lambda: '"fuse_opt_level": 0' in win.diff_view.right.toPlainText(), 10_000)
