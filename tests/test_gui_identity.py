"""Issue 18: the document's name follows its file (prompts, the export's default file name, the saved
file), and start-up reopens the pipeline the user had open last (not the bundled walk-through)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QFileDialog, QMessageBox  # noqa: E402

from app import settings as app_settings  # noqa: E402
from app.file_controller import TUTORIAL_PIPELINE, document_name  # noqa: E402
from app.undo_commands import AddStepCommand  # noqa: E402
from pipeline_model.document import PipelineDocument, Step  # noqa: E402


def test_a_saved_pipeline_is_named_after_its_file(fake_studio, tmp_path, monkeypatch):
    win = fake_studio
    win.files.new_pipeline(force=True)
    assert document_name(win.ctrl.doc) == "Untitled pipeline"
    path = tmp_path / "tutorial_mlp.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(path), "")))
    assert win.files.save_as()
    assert document_name(win.ctrl.doc) == "tutorial_mlp"
    assert json.loads(path.read_text())["name"] == "tutorial_mlp"
    assert "tutorial_mlp.json" in win.windowTitle()
    # The unsaved-changes question names it.
    asked: list[str] = []

    def question(_parent, _title, text, *_a, **_k):
        asked.append(text)
        return QMessageBox.StandardButton.Cancel

    monkeypatch.setattr(QMessageBox, "question", staticmethod(question))
    win.ctrl.undo_stack.push(AddStepCommand(win.ctrl, 0, Step("relax.LegalizeOps")))
    assert win.files.maybe_save() is False
    assert "tutorial_mlp" in asked[0] and "Untitled" not in asked[0]
    # The export's default file name follows it too.
    starts: list[str] = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda _p, _t, start, *_a: (starts.append(start), ("", ""))[1]))
    win.files.export_script_dialog()
    assert starts and starts[0].endswith("tutorial_mlp.py"), starts
    win.ctrl.undo_stack.setClean()


def test_start_up_reopens_the_last_document(fake_studio, tmp_path):
    win = fake_studio
    path = tmp_path / "mine.json"
    from pipeline_model.fileformat import save_pipeline

    save_pipeline(PipelineDocument(model="builtin:mlp", steps=[Step("relax.FoldConstant")]), str(path))
    app_settings.set_last_document(win.settings, str(path))
    try:
        win.ctrl.undo_stack.setClean()
        win.files.open_initial(None)
        assert win.ctrl.doc.path and win.ctrl.doc.path.endswith("mine.json")
        # Gone (moved, deleted): the walk-through as on a first start.
        path.unlink()
        win.files.open_initial(None)
        assert win.ctrl.doc.path is None and [s.pass_id for s in win.ctrl.doc.steps] == \
            [s["pass"] for s in json.loads(TUTORIAL_PIPELINE.read_text())["steps"]]
    finally:
        app_settings.set_last_document(win.settings, None)
        win.ctrl.undo_stack.setClean()


def test_closing_remembers_the_open_document(qapp, gui_env, tmp_path):
    from app.main_window import MainWindow
    from pipeline_model.fileformat import save_pipeline

    path = tmp_path / "kept.json"
    save_pipeline(PipelineDocument(model="builtin:mlp"), str(path))
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    win = MainWindow(start_engine=False, settings=settings)
    assert win.files.open_pipeline(str(path), ask=False)
    win.close()
    assert app_settings.last_document(settings) == str(path)
