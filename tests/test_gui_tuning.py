"""MetaSchedule tuning in the window with the real engine: live progress (bar + per-task table) from
``tuning_progress`` events, the Tuning panel's Stop ends tuning early, keeps what was measured and the
run goes on to the apply step; step report rendering (DLight, fusion)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from app.pass_kinds import fusion_call_node_ids, step_report_html  # noqa: E402
from app.step_reports import fused_node_ids  # noqa: E402
from app.undo_commands import AddStepCommand  # noqa: E402
from pipeline_model.document import Step  # noqa: E402
from tests.conftest import qt_wait  # noqa: E402
from widgets.tuning_panel import TuningPanel  # noqa: E402


@pytest.mark.e2e
def test_tuning_progress_and_stop(studio, tmp_path):
    win = studio
    win.ctrl.undo_stack.setClean()
    win.files.new_pipeline(force=True)
    win.session.auto_run = False
    try:
        steps = [Step("relax.LegalizeOps"), Step("relax.AnnotateTIROpPattern"), Step("relax.FuseOps"), Step("relax.FuseTIR"),
                 Step("relax.MetaScheduleTuneTIR", params={"max_trials_global": 64, "num_trials_per_iter": 4, "search_population": 64, "work_dir": str(tmp_path / "db")}),
                 Step("relax.MetaScheduleApplyDatabase", params={"work_dir": str(tmp_path / "db")})]
        win.ctrl.undo_stack.push(AddStepCommand(win.ctrl, 0, steps))
        finished: list = []
        revision = win.ctrl.revision
        win.session.run_finished.connect(lambda rev, res: finished.append(res) if rev == revision else None)
        win.session.run_pipeline()
        panel = win.tuning_panel
        assert qt_wait(lambda: panel.last is not None and int(panel.last.get("done") or 0) >= 1, 180_000), "no tuning progress"
        assert panel.bar.maximum() == int(panel.last["total"]) > 1
        assert panel.stop_button.isEnabled()
        names = panel.task_names()
        assert "fused_matmul_add_relu" in names
        assert "Tuning" in win.run_label.text()
        panel.stop_button.click()
        assert qt_wait(lambda: bool(finished), 60_000), "tuning did not stop"
        assert not panel.stop_button.isEnabled()
        result = finished[0]
        # Stop Tuning is not a cancel: the tuning step succeeds with what was measured, and the run
        # goes on to the apply step, which uses those records.
        assert not result.cancelled and result.ok, (result.error, [s.error for s in result.steps])
        tuned, applied = result.steps[4], result.steps[5]
        assert tuned.state == "unchanged" and tuned.report["tuning"]["stopped"] and tuned.report["tuning"]["measured"] > 0
        assert applied.state == "changed" and applied.report["apply_database"]["applied"]
        assert (tmp_path / "db" / "database_tuning_record.json").stat().st_size > 0
        text = step_report_html(tuned.pass_id, tuned.report, {"kind": "llvm"})
        assert "MetaSchedule" in text and "stopped" in text
    finally:
        win.session.auto_run = True
        win.ctrl.undo_stack.setClean()


def test_tuning_panel_renders_event(qtbot):
    panel = TuningPanel()
    qtbot.addWidget(panel)
    panel.start("step 5: MetaSchedule")
    assert panel.stop_button.isEnabled()
    panel.update_progress({"done": 6, "total": 32, "pass_id": "relax.MetaScheduleTuneTIR", "runner": "local", "work_dir": "/w",
                           "tasks": [{"name": "matmul1", "trials": 4, "best_us": 0.747, "errors": 0, "reused": False, "status": "tuning"},
                                     {"name": "transpose", "trials": 0, "best_us": None, "errors": 1, "reused": True, "status": "skipped"}]})
    assert panel.bar.value() == 6 and panel.bar.maximum() == 32
    assert panel.task_names() == ["matmul1", "transpose"]
    assert panel.table.item(0, 2).text() == "0.747 µs"
    assert panel.table.item(1, 2).text() == "–" and "reused" in panel.table.item(1, 4).text()
    panel.update_progress({"done": 8, "total": 32, "stopped": True, "tasks": []})
    assert not panel.stop_button.isEnabled() and "stopped" in panel.title.text()


def test_tuning_panel_is_busy_while_a_budgeted_step_looks_its_functions_up(qtbot):
    # A time-budgeted step knows no trial total before its first round: a busy bar and what it does, not "0 / 0".
    panel = TuningPanel()
    qtbot.addWidget(panel)
    panel.start("step 5: MetaSchedule")
    panel.update_progress({"done": 0, "total": 0, "phase": "lookup", "pass_id": "relax.MetaScheduleTuneTIR",
                           "elapsed_s": 1.0, "tasks": []})
    assert panel.bar.maximum() == 0 and "looking the PrimFuncs up" in panel.title.text()
    assert "0 / 0" not in panel.title.text() and panel.stop_button.isEnabled()
    panel.update_progress({"done": 0, "total": 16, "phase": "", "pass_id": "relax.MetaScheduleTuneTIR", "tasks": []})
    assert panel.bar.maximum() == 16 and "0 / 16 trials" in panel.title.text()


def test_step_reports_dlight_warning_and_fused_nodes():
    # The documented format of pipeline_model/passkinds/dlight/report_tvm.py.
    report = {"target": "cuda", "gpu": True, "rules": ["gpu.Matmul"], "scheduled": {"matmul": "gpu.Matmul"},
              "unscheduled": ["transpose"], "already_scheduled": [], "no_thread_binding": ["transpose"],
              "warnings": ["transpose: no DLight rule applied, so it has no thread binding"]}
    text = step_report_html("dlight.ApplyDefaultSchedule", {"dlight": report}, {"kind": "cuda", "arch": "sm_80"})
    assert "gpu.Matmul" in text and "transpose: no DLight rule applied" in text and "Warning" in text
    cpu = step_report_html("dlight.ApplyDefaultSchedule",
                           {"dlight": {**report, "target": "llvm", "gpu": False, "warnings": []}}, {"kind": "llvm"})
    assert "Warning" not in cpu and "transpose" in cpu
    graph = {"nodes": [{"id": "a", "composite": "dnnl.matmul_add_relu"}, {"id": "b", "composite": None}, {"id": "c"}]}
    assert fused_node_ids(graph) == {"a"}


@pytest.mark.e2e
def test_dlight_step_report_in_details_with_gpu_warning(studio):
    win = studio
    win.ctrl.undo_stack.setClean()
    win.files.new_pipeline(force=True)
    win.session.auto_run = False
    try:
        from app.undo_commands import SetTargetCommand

        win.ctrl.undo_stack.push(SetTargetCommand(win.ctrl, {"kind": "cuda", "arch": "sm_80"}))
        steps = [Step("relax.LegalizeOps"), Step("dlight.ApplyDefaultSchedule", params={"rules": ["gpu.Matmul"]})]
        win.ctrl.undo_stack.push(AddStepCommand(win.ctrl, 0, steps))
        finished: list = []
        revision = win.ctrl.revision
        win.session.run_finished.connect(lambda rev, res: finished.append(res) if rev == revision else None)
        win.session.run_pipeline()
        assert qt_wait(lambda: bool(finished), 120_000)
        result = finished[0].steps[1]
        assert result.state != "failed", result.error
        report = result.report.get("dlight")
        assert report, "the engine did not fill StepResult.report['dlight']"
        win.pipeline_view.select_uids([steps[1].uid])
        assert qt_wait(lambda: "DLight" in win.details.toPlainText(), 5000)
        text = win.details.toPlainText()
        assert "gpu.Matmul" in text
        assert report["unscheduled"] and report["unscheduled"][0] in text
        assert "Warning" in text
    finally:
        win.session.auto_run = True
        win.ctrl.undo_stack.setClean()


@pytest.mark.e2e
def test_fuse_ops_by_pattern_highlights_fused_nodes(studio, repo_root):
    import os

    win = studio
    win.ctrl.undo_stack.setClean()
    win.files.new_pipeline(force=True)
    win.session.auto_run = False
    try:
        pattern = os.path.join(repo_root, "resources", "patterns", "matmul_add_relu.py")
        step = Step("relax.FuseOpsByPattern", params={"pattern_source": "file", "pattern_file": pattern})
        win.ctrl.undo_stack.push(AddStepCommand(win.ctrl, 0, [step]))
        finished: list = []
        revision = win.ctrl.revision
        win.session.run_finished.connect(lambda rev, res: finished.append(res) if rev == revision else None)
        win.session.run_pipeline()
        assert qt_wait(lambda: bool(finished), 120_000)
        result = finished[0].steps[0]
        assert result.state == "changed", result.error
        win.pipeline_view.select_uids([step.uid])
        key = (result.snapshot_key, None)
        assert qt_wait(lambda: key in win.graphs.graph_cache and not win.graph_view.is_busy(), 60_000)
        graph = win.graphs.graph_cache[key]["graph"]
        fused = fused_node_ids(graph)
        assert fused, "no composite call in the graph after FuseOpsByPattern"
        # the engine's fusion report names the call by its var name; that node is highlighted too
        assert result.report["fusion"]["groups"][0]["composite"] == "user.matmul_add_relu"
        by_report = fusion_call_node_ids(graph, result.report)
        assert by_report and by_report <= fused
        assert qt_wait(lambda: fused <= set(win.graph_view.highlighted()), 10_000)
        assert qt_wait(lambda: "Fused by pattern" in win.details.toPlainText(), 5000)
        assert "user.matmul_add_relu" in win.details.toPlainText()
    finally:
        win.session.auto_run = True
        win.ctrl.undo_stack.setClean()


def test_tuning_panel_stop_sends_once_and_stays_off(qtbot):
    panel = TuningPanel()
    qtbot.addWidget(panel)
    panel.start("step 5: MetaSchedule")
    with qtbot.waitSignal(panel.stop_requested, timeout=1000):
        panel.stop_button.click()
    assert not panel.stop_button.isEnabled() and "Stopping" in panel.footer.text()
    # a round that was measured before the stop took effect does not re-enable Stop
    panel.update_progress({"done": 2, "total": 32, "tasks": []})
    assert not panel.stop_button.isEnabled()
    panel.start("step 7: MetaSchedule")  # the next tuning step can be stopped again
    assert panel.stop_button.isEnabled()
