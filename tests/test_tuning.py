"""MetaSchedule tuning on the CPU for real: measured candidates, numerics of the tuned build, stop,
database reuse, the TuneTIR pass through the overridden global function, and config parsing."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from pipeline_model.tuning import (
    TuningConfig,
    TuningConfigError,
    TuningProgress,
    default_work_dir,
    format_progress_line,
    has_database,
)


def test_config_parsing_messages():
    cfg = TuningConfig.from_params({"max_trials_global": 8, "runner": "rpc", "rpc_port": 9000, "max_trials_per_task": 0})
    assert cfg.max_trials_global == 8 and cfg.runner == "rpc" and cfg.max_trials_per_task is None
    with pytest.raises(TuningConfigError, match="step S: parameter 'cost_model'"):
        TuningConfig.from_params({"cost_model": "magic"}, where="step S")
    with pytest.raises(TuningConfigError, match="'max_trials_global' must be an integer"):
        TuningConfig.from_params({"max_trials_global": "many"})
    with pytest.raises(TuningConfigError, match="rpc_key"):
        TuningConfig.from_params({"runner": "rpc", "rpc_key": " "})


def test_default_work_dir_next_to_pipeline(tmp_path):
    path = tmp_path / "my_pipe.json"
    assert default_work_dir(str(path)) == str(tmp_path / "my_pipe.tuning")
    a = default_work_dir(None, "builtin:mlp", {"kind": "llvm"})
    assert a == default_work_dir(None, "builtin:mlp", {"kind": "llvm"}) != default_work_dir(None, "builtin:mlp", {"kind": "cuda"})


def test_progress_line():
    p = TuningProgress(done=3, total=8)
    p.task("fused_matmul_add_relu").trials = 3
    p.task("fused_matmul_add_relu").best_us = 12.5
    assert format_progress_line(p.to_json()) == "tuning 3/8 trials; fused_matmul_add_relu 3 (12.5 us)"


# ------------------------------------------------------------------------------------------ TVM part
tvm = pytest.importorskip("tvm")


@pytest.fixture(scope="module")
def lowered_mlp():
    """The seed MLP after LegalizeOps, AnnotateTIROpPattern, FuseOps, FuseTIR."""
    from tvm import relax

    from pipeline_model import models_tvm

    loaded = models_tvm.load_model("builtin:mlp", None)
    seq = tvm.transform.Sequential([
        relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(),
        relax.transform.FuseOps(), relax.transform.FuseTIR(),
    ])
    with tvm.transform.PassContext(opt_level=3):
        return seq(loaded.mod)


TARGET = {"kind": "llvm", "num-cores": 2}


def _run(mod, inputs):
    from tvm import relax

    ex = tvm.compile(mod, target=tvm.target.Target(TARGET))
    vm = relax.VirtualMachine(ex, tvm.cpu())
    out = vm["forward"](*[tvm.runtime.tensor(a, tvm.cpu()) for a in inputs])
    return out.numpy()


def _inputs(mod):
    rng = np.random.default_rng(0)
    arrays = []
    for p in mod["forward"].params:
        shape = [int(s) for s in p.ty.shape]
        arrays.append(rng.standard_normal(shape).astype("float32"))
    return arrays


@pytest.mark.slow
def test_tune_measures_builds_and_reuses(lowered_mlp, tmp_path):
    from pipeline_model import tuning_tvm

    work = str(tmp_path / "wd")
    events = []
    summary = tuning_tvm.tune_module(
        lowered_mlp, TARGET, work, max_trials_global=8,
        runner_config=TuningConfig(num_trials_per_iter=4), on_progress=lambda p: events.append(p.to_json()),
    )
    assert summary["measured"] > 0, summary
    assert not [e for e in summary["errors"] if "Timeout" in e], summary["errors"]
    assert events and events[-1]["finished"] and events[-1]["done"] == summary["done"] > 0
    names = {t["name"] for t in summary["tasks"]}
    assert "fused_matmul_add_relu" in names
    assert any(t["best_us"] for t in summary["tasks"])
    assert has_database(work)

    tuned, info = tuning_tvm.apply_database(lowered_mlp, TARGET, work)
    assert info["applied"], info
    assert tuned[info["applied"][0]].attrs["tirx.is_scheduled"]
    inputs = _inputs(lowered_mlp)
    np.testing.assert_allclose(_run(tuned, inputs), _run(lowered_mlp, inputs), rtol=1e-4, atol=1e-4)

    # Re-run: every task is already tuned in this work dir -> no new trials.
    again = tuning_tvm.tune_module(lowered_mlp, TARGET, work, max_trials_global=8,
                                   runner_config=TuningConfig(num_trials_per_iter=4))
    assert again["done"] == 0
    assert all(t["reused"] and t["status"] == "skipped" for t in again["tasks"]), again["tasks"]
    # "re-tune" wipes the database and tunes again.
    fresh = tuning_tvm.tune_module(lowered_mlp, TARGET, work, max_trials_global=2,
                                   runner_config=TuningConfig(num_trials_per_iter=2), retune=True)
    assert fresh["done"] > 0 and not any(t["reused"] for t in fresh["tasks"])


@pytest.mark.slow
def test_stop_returns_quickly_and_keeps_records(lowered_mlp, tmp_path):
    from pipeline_model import tuning_tvm

    work = str(tmp_path / "wd")
    stop = threading.Event()
    stop_at: list[float] = []

    def on_progress(p):
        if p.done > 0 and not stop.is_set():
            stop_at.append(time.perf_counter())
            stop.set()

    summary = tuning_tvm.tune_module(
        lowered_mlp, TARGET, work, max_trials_global=500,
        runner_config=TuningConfig(num_trials_per_iter=8), on_progress=on_progress, should_stop=stop.is_set,
    )
    ended = time.perf_counter()
    assert stop_at, "no trial was measured"
    assert summary["stopped"] and summary["done"] < 500
    assert ended - stop_at[0] < 15.0, f"tuning went on {ended - stop_at[0]:.1f} s after stop"
    assert has_database(work)
    tuned, info = tuning_tvm.apply_database(lowered_mlp, TARGET, work)
    assert info["applied"], info  # the apply step uses what was measured before the stop
    # stopped tasks are not marked complete: a re-run tunes them further
    again_events = []
    stop2 = threading.Event()
    again = tuning_tvm.tune_module(
        lowered_mlp, TARGET, work, max_trials_global=500, runner_config=TuningConfig(num_trials_per_iter=4),
        on_progress=lambda p: (again_events.append(p), stop2.set() if p.done else None), should_stop=stop2.is_set,
    )
    assert not all(t["reused"] for t in again["tasks"])


def test_stop_during_build_raises_promptly(lowered_mlp):
    """The builder polls the stop flag while candidates build (no waiting for the whole round)."""
    from tvm.s_tir.meta_schedule.builder import BuilderInput

    from pipeline_model import tuning_tvm

    target = tuning_tvm.tuning_target(TARGET)
    func = lowered_mlp["fused_matmul_add_relu"]
    mod = tuning_tvm.IRModule_from_func(func)
    flag = {"stop": False}
    builder = tuning_tvm.StoppableLocalBuilder(1, 60, lambda: flag["stop"])
    threading.Timer(0.5, lambda: flag.update(stop=True)).start()
    t0 = time.perf_counter()
    # called through the FFI: the exception comes back as TVM's error type with our message
    with pytest.raises((tuning_tvm.TuningStopped, RuntimeError), match="stopped while building"):
        builder.build([BuilderInput(mod, target) for _ in range(20)])
    assert time.perf_counter() - t0 < 6.0


@pytest.mark.slow
def test_tune_tir_pass_uses_override_and_apply_step(lowered_mlp, tmp_path):
    """The stock MetaScheduleTuneTIR (via make_tuning_pass) measures with our builder and reports
    progress per PrimFunc; the apply step then schedules the PrimFuncs."""
    from pipeline_model import tuning_tvm

    work = str(tmp_path / "wd")
    events = []
    report: dict = {}
    tune = tuning_tvm.make_tuning_pass(
        "relax.MetaScheduleTuneTIR", {"max_trials_global": 2, "num_trials_per_iter": 2}, TARGET, work,
        emit=lambda ev, data: events.append((ev, data)), report=report,
    )
    with tvm.target.Target(TARGET), tvm.transform.PassContext(opt_level=3):
        out = tune(lowered_mlp)
    assert tvm.ir.assert_structural_equal(out, lowered_mlp) is None
    progress = [d for ev, d in events if ev == "tuning_progress"]
    assert progress and progress[-1]["finished"]
    summary = report["tuning"]
    assert summary["measured"] > 0 and summary["total"] == 4 * 2
    assert {t["name"] for t in summary["tasks"]} >= {"fused_matmul_add_relu", "transpose"}
    apply_report: dict = {}
    apply = tuning_tvm.make_tuning_pass("relax.MetaScheduleApplyDatabase", {}, TARGET, work, report=apply_report)
    with tvm.target.Target(TARGET), tvm.transform.PassContext(opt_level=3):
        tuned = apply(lowered_mlp)
    assert "fused_matmul_add_relu" in apply_report["apply_database"]["applied"]
    inputs = _inputs(lowered_mlp)
    np.testing.assert_allclose(_run(tuned, inputs), _run(lowered_mlp, inputs), rtol=1e-4, atol=1e-4)


def test_apply_without_database_warns(lowered_mlp, tmp_path):
    from pipeline_model import tuning_tvm

    events, report = [], {}
    apply = tuning_tvm.make_tuning_pass("relax.MetaScheduleApplyDatabase", {}, TARGET, str(tmp_path / "none"),
                                        emit=lambda ev, d: events.append((ev, d)), report=report)
    with tvm.target.Target(TARGET), tvm.transform.PassContext(opt_level=3):
        out = apply(lowered_mlp)
    assert out.same_as(lowered_mlp) or tvm.ir.assert_structural_equal(out, lowered_mlp) is None
    assert "no tuning database" in report["apply_database"]["warning"]
    assert events and events[0][0] == "warning"


def test_bad_tuning_params_fail_at_construction(tmp_path):
    from pipeline_model import tuning_tvm

    with pytest.raises(TuningConfigError, match="num_trials_per_iter"):
        tuning_tvm.make_tuning_pass("relax.MetaScheduleTuneTIR", {"num_trials_per_iter": 0}, TARGET, str(tmp_path))
