"""Issue 32 in the GUI (fake engine): File ▸ Save / Save As never write through a link (a message box names it,
the document stays modified, the link's target is byte-identical); Export Library asks before replacing a file
of the user's (Cancel: nothing is asked of the engine, the file is byte-identical); Run ▸ Reduce Reproducer… on a
hostile folder (a FIFO, a link to /dev/zero, ``[1,2]``, ``{}``, deep nesting) shows one line and returns at once."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QFileDialog, QMessageBox  # noqa: E402

from app.undo_commands import AddStepCommand  # noqa: E402
from pipeline_model import build_api  # noqa: E402
from pipeline_model.document import Step  # noqa: E402
from tests.conftest import qt_wait  # noqa: E402
from tests.test_output_folders import DECOY, _hostile  # noqa: E402


@pytest.fixture
def boxes(monkeypatch):
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(QMessageBox, "critical", staticmethod(lambda _p, title, text, *a, **k: shown.append((title, text))))
    return shown


def _edited(win):
    win.files.new_pipeline(force=True)
    win.ctrl.undo_stack.push(AddStepCommand(win.ctrl, 0, Step("relax.LegalizeOps")))
    assert win.ctx.document.modified


@pytest.mark.parametrize("how", ["save", "save_as", "dangling"])
def test_save_through_a_link_is_refused(fake_studio, boxes, monkeypatch, tmp_path, how):
    win = fake_studio
    decoy = tmp_path / "decoy.txt"
    decoy.write_bytes(DECOY)
    link = tmp_path / "link.json"
    link.symlink_to(decoy if how != "dangling" else tmp_path / "new.txt")
    _edited(win)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(link), "")))
    if how == "save":
        win.ctx.doc.path = str(link)
        assert not win.files.save()
    else:
        assert not win.files.save_as()
    assert len(boxes) == 1 and str(link) in boxes[0][1] and "symbolic link" in boxes[0][1]
    assert "\n" not in boxes[0][1]
    assert win.ctx.document.modified
    assert decoy.read_bytes() == DECOY and sorted(os.listdir(tmp_path)) == ["decoy.txt", "link.json"]


def test_export_library_asks_before_replacing_a_users_file(fake_studio, boxes, monkeypatch, tmp_path):
    win = fake_studio
    _edited(win)
    out = tmp_path / "lib"
    out.mkdir()
    (out / "deploy.py").write_bytes(DECOY)
    asked: list[str] = []
    answer = [QMessageBox.StandardButton.Cancel]
    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda _p, _t, text, *a, **k: asked.append(text)
                                                               or answer[0]))
    exported: list[bool] = []
    monkeypatch.setattr(build_api, "export_library", lambda *a, overwrite=False, **k: exported.append(overwrite))
    assert not win.run_controller.export_library(str(out))
    assert asked and "deploy.py" in asked[0] and win.run_controller.request is None and not exported
    assert (out / "deploy.py").read_bytes() == DECOY
    answer[0] = QMessageBox.StandardButton.Yes  # the user asked: the request says so
    assert win.run_controller.export_library(str(out))
    assert qt_wait(lambda: bool(exported), 10_000) and exported == [True]
    assert qt_wait(lambda: win.run_controller.request is None, 10_000)
    exported.clear()
    os.unlink(out / "deploy.py")
    os.mkfifo(out / "deploy.py")  # never even with the user's yes
    answer[0] = QMessageBox.StandardButton.Yes
    assert not win.run_controller.export_library(str(out))
    assert len(boxes) == 1 and "FIFO" in boxes[0][1] and not exported


@pytest.mark.parametrize("kind", ["fifo", "zero", "list", "empty", "deep"])
def test_reduce_dialog_on_hostile_folders(fake_studio, tmp_path, kind):
    win = fake_studio
    folder = _hostile(tmp_path, kind)
    dialog = win.reducer.show_dialog(str(folder))  # a FIFO used to freeze the window here
    text = dialog.about.text()
    assert text.startswith("Not a reproducer folder") and "\n" not in text and str(folder) in text, text
    assert not win.reducer.start() and win.reducer.request is None
    dialog.close()


def test_save_reproducer_asks_before_replacing_a_users_file(fake_studio, boxes, monkeypatch, tmp_path):
    from types import SimpleNamespace

    win = fake_studio
    _edited(win)
    out = tmp_path / "repro"
    out.mkdir()
    (out / "README.md").write_bytes(DECOY)
    monkeypatch.setattr(win.reproducers, "failed_step",
                        lambda: (0, SimpleNamespace(error="ValueError: boom", traceback="")))
    asked: list[str] = []
    monkeypatch.setattr(QMessageBox, "question", staticmethod(
        lambda _p, _t, text, *a, **k: asked.append(text) or QMessageBox.StandardButton.Cancel))
    calls = len(win.fake_client.calls)
    assert not win.reproducers.save(str(out))
    assert asked and "README.md" in asked[0] and win.reproducers.request is None
    assert not [c for c, _a in win.fake_client.calls[calls:] if c == "save_reproducer"]
    assert sorted(os.listdir(out)) == ["README.md"] and (out / "README.md").read_bytes() == DECOY
