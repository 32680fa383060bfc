"""Tuning, DLight and the cuBLAS custom pass through the real engine (shared ``engine`` fixture)."""

from __future__ import annotations

import os
import shutil

import pytest

from pipeline_model.engine.results import CHANGED, FAILED, UNCHANGED
from pipeline_model.fileformat import load_pipeline

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPES = os.path.join(ROOT, "resources", "pipelines")


def test_cublas_custom_pass_fails_with_its_own_message(engine):
    doc = load_pipeline(os.path.join(PIPES, "cublas_custom_pass.json"))
    result = engine.run(doc, trust_custom_code=True)
    assert result.failed_index == 1, result.error
    step = result.steps[1]
    assert step.state == FAILED and "CUBLAS is not enabled" in step.error
    assert result.steps[0].state in (CHANGED, UNCHANGED) and result.steps[0].script
    assert result.last_good_script == result.steps[0].script
    # without trust the custom code does not run at all, and the message says why
    untrusted = engine.run(doc, trust_custom_code=False)
    assert untrusted.failed_index == 1 and "not trusted" in untrusted.steps[1].error


@pytest.mark.slow
def test_tuning_pipeline_emits_progress_and_applies(engine, tmp_path):
    path = tmp_path / "tuning_mlp_cpu.json"
    shutil.copy(os.path.join(PIPES, "tuning_mlp_cpu.json"), path)
    doc = load_pipeline(str(path))
    doc.build = {"work_dir": str(tmp_path / "wd")}
    events = []
    result = engine.run(doc, on_event=lambda ev, data: events.append((ev, data)))
    assert result.ok, (result.error, [s.error for s in result.steps])
    progress = [d for ev, d in events if ev == "tuning_progress"]
    assert progress, [ev for ev, _ in events]
    last = progress[-1]
    assert last["finished"] and last["done"] > 0 and last["index"] == 4
    assert {"name", "trials", "best_us"} <= set(last["tasks"][0])
    tuning = result.steps[4].report["tuning"]
    assert tuning["measured"] > 0 and not [e for e in tuning["errors"] if "Timeout" in e]
    applied = result.steps[5].report["apply_database"]
    assert applied["applied"] and "fused_matmul_add_relu" in applied["applied"]
    assert os.path.isfile(tmp_path / "wd" / "database_tuning_record.json")

    # the `tune` command on a cached snapshot (the module after FuseTIR) reuses the database
    tune_events = []
    reply = engine.request("tune", {"key": result.steps[3].snapshot_key, "target": doc.target,
                                    "work_dir": str(tmp_path / "wd2"),
                                    "params": {"max_trials_global": 4, "num_trials_per_iter": 4}},
                           on_event=lambda ev, data: tune_events.append((ev, data)))
    assert reply["measured"] > 0 and reply["tuned_key"] and reply["apply_database"]["applied"]
    assert any(ev == "tuning_progress" for ev, _ in tune_events)
    assert "T.func_attr" in engine.snapshot(reply["tuned_key"])
