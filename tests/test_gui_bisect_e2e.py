"""Run ▸ Find Breaking Step… on the real engine (issue 21): the dialog lists the tested steps and the culprit is
selected in the pipeline list."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from tests.conftest import answer_of, qt_wait  # noqa: E402
from tests.debug_fixtures import injected_pipeline  # noqa: E402
from tests.zh_texts import rich_plain  # noqa: E402

pytestmark = pytest.mark.e2e


def test_find_breaking_step_selects_the_culprit(studio, tmp_path):
    win = studio
    path, wrong = injected_pipeline(str(tmp_path), 10, 71, "relax")
    win.ctrl.undo_stack.setClean()
    assert win.files.open_pipeline(path, remember=False)
    assert qt_wait(lambda: not win.act_stop.isEnabled(), 240_000)
    assert win.act_bisect in win.findChildren(type(win.act_bisect))
    win.act_bisect.trigger()
    dialog = win.bisector.dialog
    assert dialog is not None and dialog.isVisible()
    report = answer_of(win.bisector, win.bisector.find, 240_000)
    assert not isinstance(report, str), report
    assert report.culprit_step == wrong
    assert win.pipeline_view.selected_uids() == [win.ctrl.doc.steps[wrong - 1].uid]
    assert dialog.table.rowCount() == len(report.tested) and f"step {wrong}" in rich_plain(dialog.status.text())
    assert dialog.find_button.isEnabled() and not dialog.stop_button.isEnabled()
    dialog.close()


def test_save_reproducer_of_the_failed_step(studio, tmp_path):
    import os
    import subprocess
    import sys

    from pipeline_model.document import PipelineDocument, Step
    from pipeline_model.fileformat import save_pipeline

    win = studio
    source = "def transform(mod):\n    raise ValueError('boom in the GUI')\n"
    doc = PipelineDocument(name="fails", model="builtin:mlp", target={"kind": "llvm"},
                           steps=[Step("relax.LegalizeOps"), Step("custom.python", {"source": source})])
    path = str(tmp_path / "fails.json")
    save_pipeline(doc, path)
    win.ctrl.undo_stack.setClean()
    assert win.files.open_pipeline(path, remember=False)
    assert qt_wait(lambda: win.reproducers.failed_step() is not None and not win.act_stop.isEnabled(), 240_000)
    assert win.reproducers.failed_step()[0] == 1
    done: list = []
    win.reproducers.saved.connect(done.append)
    win.reproducers.failed.connect(done.append)
    folder = str(tmp_path / "repro")
    assert win.reproducers.save(folder)
    assert qt_wait(lambda: bool(done), 120_000)
    assert done[0] == folder
    proc = subprocess.run([sys.executable, os.path.join(folder, "repro.py")], cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "ValueError: boom in the GUI" in proc.stdout, proc.stdout + proc.stderr


def test_where_values_diverge_marks_the_rewritten_binding(studio, tmp_path):
    win = studio
    path, wrong = injected_pipeline(str(tmp_path), 9, 72, "relax")
    win.ctrl.undo_stack.setClean()
    assert win.files.open_pipeline(path, remember=False)
    assert qt_wait(lambda: not win.act_stop.isEnabled(), 240_000)
    win.pipeline_view.select_uids([win.ctrl.doc.steps[wrong - 1].uid])
    reply = answer_of(win.diverger, win.diverger.show_dialog, 240_000)
    assert not isinstance(reply, str), reply
    assert reply["first_divergent"] == "add"
    dialog = win.diverger.dialog
    rows = [dialog.table.item(r, 0).text() for r in range(dialog.table.rowCount())]
    assert dialog.table.currentRow() == rows.index("add") and "add" in dialog.status.text()
    dialog.close()
