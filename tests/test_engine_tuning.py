"""Issue 5 end to end through the real engine (shared ``engine`` fixture): the default tuning work
directory next to the pipeline file and its reuse, ``stop_tuning`` (tuning ends early as a successful
step and the apply step uses what was measured), the DLight and fusion step reports, and the plain
pre-run message for a codegen this TVM build lacks."""

from __future__ import annotations

import os

import pytest

from pipeline_model.consent import Consent
from pipeline_model.document import PipelineDocument, Step
from pipeline_model.engine import protocol
from pipeline_model.engine.results import CHANGED, FAILED, UNCHANGED
from pipeline_model.fileformat import load_pipeline, save_pipeline
from tests.tuning_fixtures import QUICK_SEARCH, TUNED_BUDGET, copy_tuned_work_dir

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPES = os.path.join(ROOT, "resources", "pipelines")


def _tuning_pipeline(tmp_path, name: str, **tune_params) -> PipelineDocument:
    """``tuning_mlp_cpu.json`` saved as ``tmp_path/name`` with other tuning parameters (no work_dir)."""
    doc = load_pipeline(os.path.join(PIPES, "tuning_mlp_cpu.json"))
    doc.steps[4].params.update(tune_params)
    assert not doc.build.get("work_dir") and not doc.steps[4].params.get("work_dir")
    path = str(tmp_path / name)
    save_pipeline(doc, path)
    return load_pipeline(path)


def test_protocol_stop_tuning_message():
    from pipeline_model.engine import messages

    msg = messages.Control(7, protocol.CMD_STOP_TUNING)
    assert msg.to_json() == {"id": 7, "method": "stop_tuning"}
    assert protocol.decode_client(protocol.encode(msg)) == msg


def test_run_args_default_work_dir_next_to_pipeline(tmp_path):
    from pipeline_model.engine.client import EngineClient
    from pipeline_model.work_dirs import default_work_dir

    doc = _tuning_pipeline(tmp_path, "mine.json")
    args = EngineClient.run_args(doc)
    assert args["work_dir"] == str(tmp_path / "mine.tuning")
    assert args["work_dir"] == default_work_dir(doc.path, doc.model, doc.target)
    doc.build = {"work_dir": "elsewhere"}  # relative to the pipeline file's folder
    assert EngineClient.run_args(doc)["work_dir"] == str(tmp_path / "elsewhere")
    unsaved = PipelineDocument(model="builtin:mlp")
    assert EngineClient.run_args(unsaved)["work_dir"] == default_work_dir(None, "builtin:mlp", unsaved.target)


@pytest.mark.slow
def test_default_work_dir_is_reused_on_rerun(engine, tuned_mlp, tmp_path):
    """A saved pipeline without work_dir tunes in ``<name>.tuning`` next to it; a run (fresh engine
    cache) whose default work dir already holds a database for the same tasks and budget takes it over:
    no new trial, and the apply step uses those records. (The session's real tuning run filled it.)"""
    doc = _tuning_pipeline(tmp_path, "reuse.json", max_trials_global=TUNED_BUDGET, num_trials_per_iter=1)
    work_dir = tmp_path / "reuse.tuning"
    copy_tuned_work_dir(tuned_mlp, str(work_dir))
    engine.request("cache_clear", {})
    events = []
    again = engine.run(doc, on_event=lambda name, data: events.append((name, data)))
    assert again.ok, (again.error, [s.error for s in again.steps])
    summary = again.steps[4].report["tuning"]
    assert summary["work_dir"] == str(work_dir)
    assert summary["measured"] == 0 and summary["done"] == 0, summary
    assert summary["tasks"] and all(t["reused"] and t["status"] == "skipped" for t in summary["tasks"]), summary
    tuned_apply = tuned_mlp.result.steps[5].report["apply_database"]["applied"]
    assert again.steps[5].report["apply_database"]["applied"] == tuned_apply and tuned_apply
    assert again.steps[5].report["apply_database"]["work_dir"] == str(work_dir)
    assert any(name == "tuning_progress" for name, _ in events)
    # ("re-tune" stays an explicit parameter: tests/test_tuning.py checks that it measures again)


@pytest.mark.slow
def test_stop_tuning_ends_step_early_and_apply_uses_records(engine, tmp_path):
    per_iter = 2
    doc = _tuning_pipeline(tmp_path, "stop.json", max_trials_global=500, num_trials_per_iter=per_iter, **QUICK_SEARCH)
    sent: dict = {}

    def on_event(name: str, data: dict) -> None:
        if name == "tuning_progress" and int(data.get("done") or 0) > 0 and "done" not in sent:
            sent["done"] = int(data["done"])
            engine.stop_tuning()  # from the event thread, as the GUI's worker does

    result = engine.run(doc, on_event=on_event)
    assert "done" in sent, "no trial was measured"
    assert not result.cancelled and result.ok, (result.error, [s.error for s in result.steps])
    tune, apply = result.steps[4], result.steps[5]
    assert tune.state == UNCHANGED, tune.error
    summary = tune.report["tuning"]
    assert summary["stopped"] and summary["measured"] > 0 and summary["done"] < summary["total"]
    # the stop ends the tuning in the round it arrived in (counted in trials, not in seconds)
    assert sent["done"] <= summary["done"] <= sent["done"] + per_iter, (sent, summary["done"])
    assert "stopped early" in summary["message"]
    assert summary["work_dir"] == str(tmp_path / "stop.tuning")
    assert apply.state == CHANGED and apply.report["apply_database"]["applied"]
    assert '"tirx.is_scheduled": True' in result.final_script  # the applied schedules are in the final module
    # the stop was for that step only: a later request tunes normally (flag not sticky)
    assert not apply.report.get("tuning")


def test_cancel_still_cancels_a_tuning_run(engine, tmp_path):
    doc = _tuning_pipeline(tmp_path, "cancel.json", max_trials_global=500, num_trials_per_iter=2)
    state = {"sent": False}

    def on_event(name: str, data: dict) -> None:
        if name == "tuning_progress" and not state["sent"]:
            state["sent"] = True
            engine.cancel()

    result = engine.run(doc, on_event=on_event)
    assert state["sent"] and result.cancelled
    assert result.steps[5].state in ("cancelled", "not_run")


def test_dlight_step_report_filled_by_the_run(engine):
    doc = PipelineDocument(model="builtin:mlp", target={"kind": "cuda", "arch": "sm_80"},
                           steps=[Step("relax.LegalizeOps"), Step("dlight.ApplyDefaultSchedule", params={"rules": ["gpu.Matmul", "gpu.Fallback"]})])
    events = []
    result = engine.run(doc, on_event=lambda name, data: events.append((name, data)))
    assert result.ok, result.error
    report = result.steps[1].report["dlight"]
    assert report["gpu"] and report["rules"] == ["gpu.Matmul", "gpu.Fallback"]
    assert set(report["scheduled"].values()) <= {"gpu.Matmul", "gpu.Fallback"} and report["scheduled"]
    assert not report["unscheduled"] and not report["warnings"]
    assert result.steps[1].state == CHANGED and len(result.steps[1].nested) == 0  # one pass, like the stock one
    # without Fallback, the unscheduled PrimFuncs are named with a warning (a GPU build would fail)
    doc.steps[1].params["rules"] = ["gpu.Matmul"]
    events.clear()
    partial = engine.run(doc, on_event=lambda name, data: events.append((name, data)))
    report = partial.steps[1].report["dlight"]
    assert report["unscheduled"] and len(report["warnings"]) == len(report["unscheduled"])
    assert any(name == "warning" and "no DLight rule applied" in data["message"] for name, data in events)


def test_fusion_report_and_missing_codegen_said_before_the_run(engine, repo_root):
    pattern = os.path.join(repo_root, "resources", "patterns", "matmul_add_relu.py")
    doc = PipelineDocument(model="builtin:mlp", steps=[Step("relax.FuseOpsByPattern", params={"pattern_source": "file", "pattern_file": pattern})])
    with engine.consented(Consent.everything()):
        result = engine.run(doc)
    assert result.ok, result.error
    fusion = result.steps[0].report["fusion"]
    assert [g["composite"] for g in fusion["groups"]] == ["user.matmul_add_relu"]
    assert len(fusion["groups"][0]["nodes"]) == 3 and fusion["groups"][0]["call"]

    import tvm

    if tvm.get_global_func("relax.ext.cublas", True) is not None:
        pytest.skip("this TVM build has cuBLAS")
    doc = PipelineDocument(model="builtin:mlp", steps=[
        Step("relax.FuseOpsByPattern", params={"pattern_source": "table", "table_prefix": "cublas", "annotate_codegen": True}),
        Step("relax.RunCodegen")])
    events = []
    result = engine.run(doc, on_event=lambda name, data: events.append((name, data)))
    first = [name for name, _ in events].index("step_started")
    warnings = [data["message"] for name, data in events[:first] if name == "warning"]
    assert warnings and "relax.ext.cublas" in warnings[0] and "step 1" in warnings[0]
    assert result.steps[0].state == CHANGED and result.steps[0].report["fusion"]["groups"]
    failed = result.steps[1]
    assert failed.state == FAILED and "no relax.ext.cublas codegen" in failed.error
    assert "Check failed" not in failed.error and "Error:" not in failed.error


# ---------------------------------------------- keep_wins (issue 35): one real apply step on the tuned MLP
def test_real_apply_step_names_the_kept_and_default_schedules(engine, tuned_mlp, tmp_path):
    """(In this file, whose worker already has the session's tuned MLP.) The session's tuned MLP work folder, the apply step with keep_wins through the engine: every PrimFunc the
    database gave a schedule is named with its in-model verdict and what it kept."""
    from pipeline_model.passkinds.metaschedule.report import tuning_line
    from tests.tuning_fixtures import TUNE_STEP, tuning_document

    work = copy_tuned_work_dir(tuned_mlp, str(tmp_path / "wd"))
    doc = tuning_document()
    doc.build = {"work_dir": work}
    doc.steps[TUNE_STEP + 1].params["keep_wins"] = ["app.CPUMatmul", "app.CPUConv2d", "app.CPUParallel"]
    result = engine.run(doc)
    assert result.ok, (result.error, [s.error for s in result.steps])
    info = result.steps[TUNE_STEP + 1].report["apply_database"]
    report = info["keep"]
    judged = {d["name"] for d in report["functions"]} | set(report["same"])
    assert judged == set(info["applied"]) and "fused_matmul_add_relu" in judged
    assert sorted(report["kept_tuned"] + report["kept_default"]) == sorted(judged)
    for d in report["functions"]:
        assert d["kept"] in ("tuned", "default") and (d["kept"] == "tuned") == (d["verdict"] == "faster"
                                                                               and not d.get("overruled"))
        if d["verdict"] == "missing":  # a computation on the weights alone (the MLP's weight transpose): lifted
            assert d["name"].startswith("transpose") and d["kept"] == "default", d  # and run once, not timed
            continue
        assert d["default_us"] > 0 and d["tuned_us"] > 0
    assert report["whole"] and report["whole"][0]["verdict"] in ("faster", "slower", "no_difference")
    assert any(line.startswith("fused_matmul_add_relu: ") and "kept" in line for line in report["lines"])
    assert tuning_line({"apply_database": info}).startswith("tuned schedule kept for ")
