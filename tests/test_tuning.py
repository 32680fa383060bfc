"""MetaSchedule tuning on the CPU: database reuse and numerics of the tuned build, retune, stop, the
stoppable builder, the TuneTIR pass through the overridden global function, and config parsing.

Tests that need a tuned work dir copy the session's one real tuning (``tuned_mlp``,
tests/tuning_fixtures.py); none of the tests here measures candidates again."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline_model.passkinds.metaschedule.config import (
    TuningConfig,
    TuningConfigError,
    TuningProgress,
    format_progress_line,
    has_database,
)
from pipeline_model.work_dirs import default_work_dir
from tests.tuning_fixtures import TUNED_BUDGET, copy_tuned_work_dir


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

    from pipeline_model.importers import load_tvm

    loaded = load_tvm.load_model("builtin:mlp", None)
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
def test_tuned_database_is_reused_and_applied(lowered_mlp, tuned_mlp, tmp_path):
    """A work dir tuned with budget 4 (the session's one real tuning): the same tasks with a budget up
    to 4 are skipped, not tuned again; applying the database schedules the PrimFuncs and the tuned
    build computes what the untuned one does."""
    from pipeline_model.passkinds.metaschedule import tasks_tvm

    work = copy_tuned_work_dir(tuned_mlp, str(tmp_path / "wd"))
    assert has_database(work)
    events = []
    again = tasks_tvm.tune_module(lowered_mlp, TARGET, work, max_trials_global=TUNED_BUDGET,
                                   runner_config=TuningConfig(num_trials_per_iter=4),
                                   on_progress=lambda p: events.append(p.to_json()))
    assert again["done"] == 0 and again["measured"] == 0
    assert {t["name"] for t in again["tasks"]} >= {"fused_matmul_add_relu", "transpose"}
    assert all(t["reused"] and t["status"] == "skipped" for t in again["tasks"]), again["tasks"]
    assert events and all(e["done"] == 0 for e in events)

    tuned, info = tasks_tvm.apply_database(lowered_mlp, TARGET, work)
    assert "fused_matmul_add_relu" in info["applied"], info
    assert tuned[info["applied"][0]].attrs["tirx.is_scheduled"]
    inputs = _inputs(lowered_mlp)
    np.testing.assert_allclose(_run(tuned, inputs), _run(lowered_mlp, inputs), rtol=1e-4, atol=1e-4)


@pytest.mark.slow
def test_stop_keeps_records_and_leaves_tasks_open(lowered_mlp, tuned_mlp, tmp_path):
    """A stopped tuning keeps the records it has (the apply step uses them) and does not mark its
    tasks complete, so a later run with a budget the database already covers takes them up again.
    (Stopping in the middle of measuring is checked through the engine in tests/test_engine_tuning.py
    and in the builder below; here the stop comes at the builder's first poll, so nothing is measured.)"""
    from pipeline_model.passkinds.metaschedule import tasks_tvm

    work = copy_tuned_work_dir(tuned_mlp, str(tmp_path / "wd"))
    # a larger budget than the database's: every task is to be tuned further, and the stop ends that
    # polled once before tuning starts (go on), then by the builder before its first round (stop)
    flag = _StopAfterPolls(2)
    stopped = tasks_tvm.tune_module(lowered_mlp, TARGET, work, max_trials_global=500,
                                     runner_config=TuningConfig(num_trials_per_iter=2, builder_workers=1),
                                     should_stop=flag)
    assert flag.polls == 2 and stopped["stopped"] and stopped["done"] == 0
    assert stopped["tasks"] and not any(t["reused"] for t in stopped["tasks"]), stopped["tasks"]
    assert all(t["status"] == "stopped" for t in stopped["tasks"]), stopped["tasks"]
    assert has_database(work)
    tuned, info = tasks_tvm.apply_database(lowered_mlp, TARGET, work)
    assert "fused_matmul_add_relu" in info["applied"], info  # the records are still there
    # the stopped tasks are open now: even the budget the database covers does not skip them
    again = tasks_tvm.tune_module(lowered_mlp, TARGET, work, max_trials_global=TUNED_BUDGET,
                                   runner_config=TuningConfig(num_trials_per_iter=2), should_stop=lambda: True)
    assert not any(t["reused"] for t in again["tasks"]), again["tasks"]


@pytest.mark.slow
def test_retune_wipes_the_work_dir(lowered_mlp, tuned_mlp, tmp_path):
    """``retune`` starts over: the database, logs and state of the work dir are wiped, no task is
    taken over (stopped before the first round, so nothing new is measured)."""
    from pipeline_model.passkinds.metaschedule import tasks_tvm

    work = copy_tuned_work_dir(tuned_mlp, str(tmp_path / "wd"))
    assert has_database(work)
    fresh = tasks_tvm.tune_module(lowered_mlp, TARGET, work, max_trials_global=TUNED_BUDGET, retune=True,
                                   runner_config=TuningConfig(num_trials_per_iter=2), should_stop=lambda: True)
    assert fresh["done"] == 0 and fresh["tasks"]
    assert not any(t["reused"] for t in fresh["tasks"]), fresh["tasks"]
    assert not has_database(work)
    with pytest.raises(TuningConfigError, match="no tuning database"):
        tasks_tvm.apply_database(lowered_mlp, TARGET, work)


class _StopAfterPolls:
    """A stop flag that turns true at its ``n``-th poll (counts the polls)."""

    def __init__(self, n: int) -> None:
        self.n, self.polls = n, 0

    def __call__(self) -> bool:
        self.polls += 1
        return self.polls >= self.n


def test_stop_during_build_raises_at_the_next_poll(lowered_mlp):
    """The builder polls the stop flag while candidates build (every 0.2 s, one worker here) and raises
    at the first poll that says stop, without building the rest of the round."""
    from tvm.s_tir.meta_schedule.builder import BuilderInput

    from pipeline_model.passkinds.metaschedule import builder_tvm, overrides_tvm

    target = builder_tvm.tuning_target(TARGET)
    mod = overrides_tvm.IRModule_from_func(lowered_mlp["fused_matmul_add_relu"])
    inputs = [BuilderInput(mod, target) for _ in range(20)]
    # polled once before the round starts, then after each wait: stop at the 3rd poll (mid-round)
    flag = _StopAfterPolls(3)
    one_worker = TuningConfig(builder_workers=1, builder_timeout_s=60)
    builder = builder_tvm.make_builder(one_worker, flag)
    # called through the FFI: the exception comes back as TVM's error type with our message
    with pytest.raises((builder_tvm.TuningStopped, RuntimeError), match="stopped while building"):
        builder.build(inputs)
    assert flag.polls == 3  # no poll after the stop: the round ended there, 20 candidates were not built
    # a stop before the round: nothing is built at all
    early = _StopAfterPolls(1)
    with pytest.raises((builder_tvm.TuningStopped, RuntimeError), match="stopped before building"):
        builder_tvm.make_builder(one_worker, early).build(inputs)
    assert early.polls == 1


def test_a_round_is_reported_before_the_cost_model_trains():
    """The session's progress callback runs after the records are stored and the build artifacts removed, and
    before XGBoost's update (the first one imports XGBoost and trains: seconds before the first trial showed)."""
    from pipeline_model.passkinds.metaschedule.session_tvm import TuningSession
    from pipeline_model.passkinds.metaschedule.tasks_tvm import _measure_callbacks

    names = [type(cb).__name__ for cb in _measure_callbacks(TuningSession())]
    assert names[-2:] == ["ProgressCallback", "UpdateCostModel"]
    assert names[:2] == ["AddToDatabase", "RemoveBuildArtifact"] and len(names) == 4


def test_builder_keeps_its_workers_across_rounds(lowered_mlp):
    """One pool of build workers serves every round (TVM's LocalBuilder starts a new one, ~3 s, per round); a
    worker is replaced after a failure, and close() ends the pool (the next round starts another)."""
    import os

    from tvm.s_tir.meta_schedule.builder import BuilderInput

    from pipeline_model.passkinds.metaschedule import builder_tvm, overrides_tvm

    target = builder_tvm.tuning_target(TARGET)
    good = BuilderInput(overrides_tvm.IRModule_from_func(lowered_mlp["fused_matmul_add_relu"]), target)
    bad = BuilderInput(good.mod, tvm.target.Target({"kind": "llvm", "mtriple": "bogus-unknown-none"}))  # fails
    builder = builder_tvm.make_builder(TuningConfig(builder_workers=1, builder_timeout_s=60))
    try:
        builder.warm()  # the workers start now (the session warms them while it makes the runner)
        pool = builder.pool
        first = builder.build([good])
        assert builder.pool is pool
        second = builder.build([bad, good])
        assert builder.pool is pool  # the same workers
        assert [r.error_msg is None for r in first + second] == [True, False, True], [r.error_msg for r in second]
        assert all(os.path.exists(r.artifact_path) for r in (first[0], second[1]))
    finally:
        builder.close()
    assert builder.pool is None
    assert builder.build([good])[0].error_msg is None  # a new pool after close()
    builder.close()


@pytest.mark.slow
def test_tune_tir_pass_uses_override_and_apply_step(lowered_mlp, tuned_mlp, tmp_path):
    """The stock MetaScheduleTuneTIR (via make_tuning_pass) goes through our session (progress per
    PrimFunc, the work dir's database); the apply step then schedules the PrimFuncs. (That it measures
    with our builder is checked by the session's real tuning run, which uses this same pass.)"""
    from pipeline_model.passkinds.metaschedule import pass_tvm

    work = copy_tuned_work_dir(tuned_mlp, str(tmp_path / "wd"))
    events = []
    report: dict = {}
    tune = pass_tvm.make_tuning_pass(
        "relax.MetaScheduleTuneTIR", {"max_trials_global": 2, "num_trials_per_iter": 2}, TARGET, work,
        emit=lambda ev, data: events.append((ev, data)), report=report,
    )
    with tvm.target.Target(TARGET), tvm.transform.PassContext(opt_level=3):
        out = tune(lowered_mlp)
    assert tvm.ir.assert_structural_equal(out, lowered_mlp) is None
    progress = [d for ev, d in events if ev == "tuning_progress"]
    assert progress and progress[-1]["finished"]
    summary = report["tuning"]
    assert summary["work_dir"] == work and summary["measured"] == 0
    assert {t["name"] for t in summary["tasks"]} >= {"fused_matmul_add_relu", "transpose"}
    assert len(summary["tasks"]) == 4 and all(t["reused"] for t in summary["tasks"]), summary["tasks"]
    apply_report: dict = {}
    apply = pass_tvm.make_tuning_pass("relax.MetaScheduleApplyDatabase", {}, TARGET, work, report=apply_report)
    with tvm.target.Target(TARGET), tvm.transform.PassContext(opt_level=3):
        tuned = apply(lowered_mlp)
    assert "fused_matmul_add_relu" in apply_report["apply_database"]["applied"]
    inputs = _inputs(lowered_mlp)
    np.testing.assert_allclose(_run(tuned, inputs), _run(lowered_mlp, inputs), rtol=1e-4, atol=1e-4)


def test_apply_without_database_warns(lowered_mlp, tmp_path):
    from pipeline_model.passkinds.metaschedule import pass_tvm

    events, report = [], {}
    apply = pass_tvm.make_tuning_pass("relax.MetaScheduleApplyDatabase", {}, TARGET, str(tmp_path / "none"),
                                        emit=lambda ev, d: events.append((ev, d)), report=report)
    with tvm.target.Target(TARGET), tvm.transform.PassContext(opt_level=3):
        out = apply(lowered_mlp)
    assert out.same_as(lowered_mlp) or tvm.ir.assert_structural_equal(out, lowered_mlp) is None
    assert "no tuning database" in report["apply_database"]["warning"]
    assert events and events[0][0] == "warning"


def test_bad_tuning_params_fail_at_construction(tmp_path):
    from pipeline_model.passkinds.metaschedule import pass_tvm

    with pytest.raises(TuningConfigError, match="num_trials_per_iter"):
        pass_tvm.make_tuning_pass("relax.MetaScheduleTuneTIR", {"num_trials_per_iter": 0}, TARGET, str(tmp_path))


def test_search_population_reaches_the_search_in_the_engine_and_in_scripts(lowered_mlp, tmp_path, monkeypatch):
    """``search_population``: TVM's own "evolutionary" strategy at its default 512 (plain TVM, nothing of ours),
    an EvolutionarySearch of that population otherwise; the engine's tuning hands it to every task's context
    (seen by a stand-in for TVM's ``tune_tasks``: nothing is measured). Bad values are refused by name."""
    from tvm.s_tir import meta_schedule as ms

    from pipeline_model.passkinds.metaschedule import pass_tvm
    from pipeline_model.passkinds.metaschedule.script_measure import search_strategy
    from pipeline_model.passkinds.metaschedule.session_tvm import TuningSession

    assert search_strategy(512) == "evolutionary"
    small = search_strategy(24)
    assert small.population_size == 24 and small.init_min_unmeasured == 24
    assert search_strategy(200).init_min_unmeasured == 50  # TVM's default random samples
    with pytest.raises(TuningConfigError, match="search_population"):
        pass_tvm.make_tuning_pass("relax.MetaScheduleTuneTIR", {"search_population": 1}, TARGET, str(tmp_path))
    monkeypatch.setenv("RPS_TUNING_DB_DIR", str(tmp_path / "user-db"))
    seen = []

    class Seen(Exception):
        pass

    def tune_tasks(tasks, **_kwargs):
        seen.extend(task.search_strategy for task in tasks)
        raise Seen()

    monkeypatch.setattr(ms.tune, "tune_tasks", tune_tasks)
    monkeypatch.setattr(TuningSession, "tools", lambda self: (None, None))  # no worker processes: nothing is built
    tune = pass_tvm.make_tuning_pass("relax.MetaScheduleTuneTIR", {"max_trials_global": 1, "search_population": 24},
                                     TARGET, str(tmp_path / "wd"))
    with pytest.raises((Seen, RuntimeError)), tvm.target.Target(TARGET), tvm.transform.PassContext(opt_level=3):
        tune(lowered_mlp)
    assert seen and all(isinstance(s, ms.search_strategy.EvolutionarySearch) and s.population_size == 24
                        for s in seen), seen


def test_without_seed_rules_the_database_holds_only_searched_records(tuned_mlp):
    """The suite's one tuning run (tuning_mlp_cpu.json, no seed_rules): no seed in its database, no seeds report
    (here, beside the other users of the session's tuning run, so a test worker tunes it once)."""
    from tvm.s_tir import meta_schedule as ms

    from pipeline_model.passkinds.metaschedule.script import is_search_record

    database = ms.database.JSONDatabase(work_dir=tuned_mlp.work_dir, module_equality="structural",
                                        allow_missing=False)
    records = database.get_all_tuning_records()
    assert records and all(is_search_record(r) for r in records)
    step = tuned_mlp.result.steps[4]
    assert step.report["tuning"].get("seeds") is None
