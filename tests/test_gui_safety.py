"""No lost edits and bounded engine controls in the GUI (issue 9), on the fake engine: every path that
replaces the document asks about unsaved changes (Open Recent, a dropped file), autosave writes a
recovery copy after an edit and removes it when clean, the restore offer restores it (modified, its
path kept), Restart Engine, the engine limits in the preferences, and a bounded close."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl  # noqa: E402
from PySide6.QtGui import QDropEvent  # noqa: E402
from PySide6.QtWidgets import QMessageBox  # noqa: E402

from app import settings as app_settings  # noqa: E402
from app.undo_commands import AddStepCommand  # noqa: E402
from pipeline_model import recovery  # noqa: E402
from pipeline_model.document import PipelineDocument, Step  # noqa: E402
from pipeline_model.fileformat import save_pipeline  # noqa: E402
from tests.conftest import qt_wait  # noqa: E402


@pytest.fixture
def win(fake_studio):
    fake_studio.session.auto_run = False
    fake_studio.files.new_pipeline(force=True)
    yield fake_studio
    fake_studio.session.auto_run = True
    fake_studio.ctrl.undo_stack.setClean()


@pytest.fixture
def answers(monkeypatch):
    """Answers to the unsaved-changes question (pop from the front); records each question."""
    asked: list[str] = []
    queue: list = []

    def question(_parent, _title, text, *_a, **_k):
        asked.append(text)
        return queue.pop(0) if queue else QMessageBox.StandardButton.Cancel

    monkeypatch.setattr(QMessageBox, "question", staticmethod(question))
    return asked, queue


def _edit(win):
    win.ctrl.undo_stack.push(AddStepCommand(win.ctrl, 0, Step("relax.FoldConstant")))
    assert win.ctrl.modified


def _pipeline(tmp_path, name="other.json"):
    path = tmp_path / name
    save_pipeline(PipelineDocument(model="builtin:mlp", name="Other", steps=[Step("relax.LegalizeOps")]), str(path))
    return str(path)


def test_open_recent_asks_about_unsaved_changes(win, answers, tmp_path):
    asked, queue = answers
    path = _pipeline(tmp_path)
    app_settings.add_recent_file(win.settings, path)
    _edit(win)
    win.files.fill_recent_menu(win.recent_menu)
    action = next(a for a in win.recent_menu.actions() if a.text() == os.path.abspath(path))
    action.trigger()  # Cancel: the edited document stays
    assert len(asked) == 1 and win.ctrl.modified and win.ctrl.doc.path != path
    queue.append(QMessageBox.StandardButton.Discard)
    action.trigger()
    assert len(asked) == 2 and win.ctrl.doc.path == path and not win.ctrl.modified


def _drop(win, path):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(path)])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    win.dropEvent(event)
    return event


def test_drop_of_a_pipeline_file_asks_then_opens(win, answers, tmp_path):
    asked, queue = answers
    path = _pipeline(tmp_path, "dropped.json")
    _edit(win)
    _drop(win, path)  # Cancel
    assert len(asked) == 1 and win.ctrl.modified and win.ctrl.doc.path != path
    queue.append(QMessageBox.StandardButton.Discard)
    _drop(win, path)
    assert win.ctrl.doc.path == path and [s.pass_id for s in win.ctrl.doc.steps] == ["relax.LegalizeOps"]
    # Not a pipeline file: ignored.
    other = tmp_path / "notes.txt"
    other.write_text("x")
    before = win.ctrl.doc
    assert not _drop(win, str(other)).isAccepted() and win.ctrl.doc is before


def test_new_and_compare_use_go_through_the_prompt(win, answers, tmp_path):
    asked, _queue = answers
    _edit(win)
    win.files.new_pipeline()  # Cancel
    assert len(asked) == 1 and win.ctrl.modified
    win.comparer._compared = [("other", _pipeline(tmp_path))]
    win.comparer._subject = (win.ctrl.doc.model, dict(win.ctrl.doc.target))
    assert win.comparer.use_row(0) is False and len(asked) == 2 and win.ctrl.modified


def test_autosave_writes_and_removes_the_recovery_copy(win, tmp_path):
    auto = win.autosave
    auto.folder = str(tmp_path / "rec")
    try:
        _edit(win)
        assert auto.timer.isActive(), "no autosave scheduled after an edit"
        assert qt_wait(lambda: auto.path is not None and os.path.exists(auto.path), 10_000)
        saved = recovery.read_recovery(auto.path)
        assert [s.pass_id for s in saved.document.steps] == [s.pass_id for s in win.ctrl.doc.steps]
        path = auto.path
        win.ctrl.undo_stack.undo()  # back to the clean state: nothing to recover
        assert not os.path.exists(path) and auto.path is None
    finally:
        auto.folder = None


def test_restore_offer_restores_modified_with_its_path(win, answers, tmp_path):
    folder = tmp_path / "rec"
    doc = PipelineDocument(model="builtin:mlp", name="Crashed", steps=[Step("relax.LegalizeOps"), Step("relax.FoldConstant")])
    doc.path = str(tmp_path / "crashed.json")
    written = recovery.write_recovery(doc, instance="dead", folder=str(folder))
    # A previous session that is gone: rewrite its pid to one that cannot be alive.
    import json

    data = json.loads(open(written, encoding="utf-8").read())
    data["pid"] = 2 ** 22 + 12345
    open(written, "w", encoding="utf-8").write(json.dumps(data))
    win.autosave.folder = str(folder)
    try:
        assert win.offer_restore(answer=False) is False and not os.path.exists(written)  # Discard removes it
        recovery.write_recovery(doc, instance="dead", folder=str(folder))
        data["saved_at"] = "x"
        open(written, "w", encoding="utf-8").write(json.dumps(data))
        assert win.offer_restore(answer=True) is True
        assert win.ctrl.modified and win.ctrl.doc.path == doc.path
        assert [s.pass_id for s in win.ctrl.doc.steps] == ["relax.LegalizeOps", "relax.FoldConstant"]
        assert not os.path.exists(written)
    finally:
        win.autosave.discard()
        win.autosave.folder = None


def test_restart_engine_and_preferences(win, qtbot):
    fake = win.fake_client
    pid = fake.pid
    with qtbot.waitSignal(win.worker.engine_restarted, timeout=10_000):
        win.act_restart_engine.trigger()
    assert fake.pid != pid and ("restart", None) in fake.calls
    assert win.act_restart_engine in win.menuBar().actions()[2].menu().actions() or any(
        win.act_restart_engine in m.menu().actions() for m in win.menuBar().actions() if m.menu())
    from app.preferences import PreferencesDialog

    dialog = PreferencesDialog(win.settings, win)
    qtbot.addWidget(dialog)
    dialog.timeout.setValue(42)
    dialog.memory.setValue(1234)
    dialog.apply()
    assert app_settings.engine_options(win.settings) == {"step_timeout_s": 42.0, "memory_limit": 1234 * 1024 * 1024}
    fake.step_timeout_s, fake.memory_limit = 600.0, None
    win.worker.apply_client_options()
    assert fake.step_timeout_s == 42.0 and fake.memory_limit == 1234 * 1024 * 1024
    win.settings.remove("engine/step_timeout_s")
    win.settings.remove("engine/memory_limit_mib")
