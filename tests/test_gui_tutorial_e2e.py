"""The first hour, end to end on the real engine and the real main window (issue 33): the tutorial pipeline
built by palette drops (FuseOpsByPattern, LegalizeOps, FuseOps, FuseTIR, DLight), run, Build & Run, saved,
reopened, File ▸ Export Python Script…, and the exported script run with ``--build`` to a passing check.

Every step keeps its defaults, so the form, the run, the saved file and the export must all take them from
one place (the catalogue, on the pipeline's target)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("pytestqt")
pytestmark = [pytest.mark.e2e, pytest.mark.filterwarnings("ignore:Function.*QDrag.*Event:DeprecationWarning")]

from PySide6.QtWidgets import QFileDialog, QMessageBox  # noqa: E402

from pipeline_model.engine.results import FAILED  # noqa: E402
from tests.conftest import qt_wait  # noqa: E402
from tests.test_gui_main_window import drop_on_list, palette_mime  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TUTORIAL = ["relax.FuseOpsByPattern", "relax.LegalizeOps", "relax.FuseOps", "relax.FuseTIR",
            "dlight.ApplyDefaultSchedule"]
TIMEOUT_MS = 300_000


def _all_ran(win) -> bool:
    return all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps) and not win.act_stop.isEnabled()


def _build_and_run(win) -> dict:
    got: list = []
    win.run_controller.finished.connect(lambda kind, value: got.append(value))
    win.run_controller.failed.connect(lambda kind, message: got.append(message))
    assert win.run_controller.build_and_run()
    assert qt_wait(lambda: bool(got), TIMEOUT_MS), "no Build & Run answer"
    assert isinstance(got[0], dict), got[0]
    return got[0]


def test_tutorial_dropped_run_built_saved_reopened_and_exported(studio, tmp_path, monkeypatch):
    win = studio
    win.ctrl.undo_stack.setClean()
    win.files.new_pipeline(force=True)
    win.session.auto_run = True
    assert win.ctrl.doc.model == "builtin:mlp"
    for pass_id in TUTORIAL:  # as a drag from the palette onto the end of the list delivers it
        drop_on_list(win, palette_mime(win, pass_id), None)
    assert [s.pass_id for s in win.ctrl.doc.steps] == TUTORIAL
    assert all(s.params == {} for s in win.ctrl.doc.steps)  # every step on the catalogue's defaults

    # the form shows the catalogue's defaults on this (CPU) target
    fuse, dlight = win.ctrl.doc.steps[0], win.ctrl.doc.steps[-1]
    win.pipeline_view.select_uids([fuse.uid])
    spec = win.ctx.catalogue.get("relax.FuseOpsByPattern").for_target(win.ctrl.doc.target)
    assert win.param_editor.values()["table_prefix"] == spec.param("table_prefix").default != ""
    win.pipeline_view.select_uids([dlight.uid])
    rules = win.param_editor.values()["rules"]
    assert rules and not any(r.startswith("gpu.") for r in rules), rules

    assert qt_wait(lambda: _all_ran(win), TIMEOUT_MS)
    results = [win.step_model.result(s.uid) for s in win.ctrl.doc.steps]
    assert not [r.error for r in results if r.state == FAILED]
    dlight_report = (results[-1].report or {}).get("dlight", {})
    assert "app.CPUMatmul" in (dlight_report.get("scheduled") or {}).values(), dlight_report  # fc1, on llvm

    win.pipeline_view.select_uids([dlight.uid])
    win.run_panel.random_radio.setChecked(True)
    built = _build_and_run(win)
    assert built["check"]["passed"] is True, built["check"]

    path = str(tmp_path / "tutorial.json")
    assert win.files._save_to(path)
    saved = json.loads(open(path, encoding="utf-8").read())
    assert [s["pass"] for s in saved["steps"]] == TUTORIAL
    win.ctrl.undo_stack.setClean()
    assert win.files.open_pipeline(path, remember=False)
    assert qt_wait(lambda: _all_ran(win), TIMEOUT_MS)

    script = str(tmp_path / "tutorial_export.py")
    errors: list = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (script, "")))
    monkeypatch.setattr(QMessageBox, "critical", staticmethod(lambda *a, **k: errors.append(a[2])))
    win.files.export_script_dialog()
    assert not errors, errors
    source = open(script, encoding="utf-8").read()
    assert "get_patterns_with_prefix(" in source and "CPUMatmul" in source

    done = subprocess.run([sys.executable, script, "--build", "--quiet"], cwd=str(tmp_path), capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": ""})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    win.ctrl.undo_stack.setClean()
