"""Tuning, DLight and the cuBLAS custom pass through the real engine (shared ``engine`` fixture)."""

from __future__ import annotations

import os

import pytest

from pipeline_model.consent import Consent
from pipeline_model.engine.results import CHANGED, FAILED, UNCHANGED
from pipeline_model.fileformat import load_pipeline
from tests.tuning_fixtures import TUNE_STEP, TUNED_BUDGET, copy_tuned_work_dir

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPES = os.path.join(ROOT, "resources", "pipelines")


def test_cublas_custom_pass_fails_with_its_own_message(engine):
    doc = load_pipeline(os.path.join(PIPES, "cublas_custom_pass.json"))
    with engine.consented(Consent.everything()):
        result = engine.run(doc)
    assert result.failed_index == 1, result.error
    step = result.steps[1]
    assert step.state == FAILED and "CUBLAS is not enabled" in step.error
    assert result.steps[0].state in (CHANGED, UNCHANGED) and result.steps[0].script
    assert result.last_good_script == result.steps[0].script
    # without trust the custom code does not run at all, and the message says why
    untrusted = engine.run(doc)
    assert untrusted.failed_index == 1 and "not trusted" in untrusted.steps[1].error


@pytest.mark.slow
def test_tuning_pipeline_emits_progress_and_applies(engine, tuned_mlp, tmp_path):
    """The suite's one real end-to-end tuning (the session fixture ``tuned_mlp``: tuning_mlp_cpu.json
    through the engine): live progress, measured trials, the apply step, the database on disk."""
    result, events, doc = tuned_mlp.result, tuned_mlp.events, tuned_mlp.doc
    progress = [d for ev, d in events if ev == "tuning_progress"]
    assert progress, [ev for ev, _ in events]
    last = progress[-1]
    assert last["finished"] and last["done"] > 0 and last["index"] == TUNE_STEP
    assert {"name", "trials", "best_us"} <= set(last["tasks"][0])
    tuning = result.steps[TUNE_STEP].report["tuning"]
    assert tuning["measured"] > 0 and not [e for e in tuning["errors"] if "Timeout" in e]
    assert tuning["work_dir"] == tuned_mlp.work_dir
    assert {t["name"] for t in tuning["tasks"]} >= {"fused_matmul_add_relu", "transpose"}
    assert any(t["best_us"] for t in tuning["tasks"]) and not any(t["reused"] for t in tuning["tasks"])
    applied = result.steps[TUNE_STEP + 1].report["apply_database"]
    assert applied["applied"] and "fused_matmul_add_relu" in applied["applied"]
    assert os.path.getsize(os.path.join(tuned_mlp.work_dir, "database_tuning_record.json")) > 0
    assert result.steps[TUNE_STEP].state == UNCHANGED and result.steps[TUNE_STEP + 1].state == CHANGED

    # the `tune` command on a cached snapshot (the module after FuseTIR) with a tuned work dir:
    # it reuses the database (no new trial), still reports progress, and returns the tuned module
    work = copy_tuned_work_dir(tuned_mlp, str(tmp_path / "wd2"))
    lowered = engine.run(doc, until=TUNE_STEP - 1)
    assert lowered.ok, lowered.error
    tune_events = []
    reply = engine.request("tune", {"key": lowered.steps[TUNE_STEP - 1].snapshot_key, "target": doc.target,
                                    "work_dir": work, "params": {"max_trials_global": TUNED_BUDGET,
                                                                 "num_trials_per_iter": 4}},
                           on_event=lambda ev, data: tune_events.append((ev, data)))
    assert reply["measured"] == 0 and all(t["reused"] for t in reply["tasks"]), reply
    assert reply["tuned_key"] and "fused_matmul_add_relu" in reply["apply_database"]["applied"]
    assert any(ev == "tuning_progress" for ev, _ in tune_events)
    assert "T.func_attr" in engine.snapshot(reply["tuned_key"])
