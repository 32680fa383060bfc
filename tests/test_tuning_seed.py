"""Tuning seeded with the app's own DLight schedules (``relax.MetaScheduleTuneTIR`` ``seed_rules``,
``pipeline_model.passkinds.metaschedule.seed``) and ``resources/pipelines/cpu_tuned_app.json``.

Each PrimFunc's app-rule schedule is measured with the step's builder and runner and committed to the tuning
database before the search, so ``MetaScheduleApplyDatabase`` takes, per PrimFunc, the faster of the app's schedule
and a tuned one: the seeds replay to exactly the rule's schedule, a seed that cannot replay is refused, seeds never
reach the per-user database, and exported scripts run the same seeding code. Real builds and measurements, a few
trials at most."""

from __future__ import annotations

import ast
import os
from typing import Any

import pytest

tvm = pytest.importorskip("tvm")

from pipeline_model import emit  # noqa: E402
from pipeline_model.export import export_script  # noqa: E402
from pipeline_model.fileformat import load_pipeline  # noqa: E402
from pipeline_model.passkinds.metaschedule import keep  # noqa: E402
from pipeline_model.passkinds.metaschedule import seed as seed_module  # noqa: E402
from pipeline_model.passkinds.metaschedule.config import (  # noqa: E402
    SEED_RULES,
    TUNE_IRMOD,
    TUNE_TIR,
    TuningConfig,
    script_options,
)
from pipeline_model.passkinds.metaschedule.script import TuningConfigError, is_search_record  # noqa: E402
from tests.tuning_fixtures import QUICK_SEARCH  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPES = os.path.join(ROOT, "resources", "pipelines")
TARGET = {"kind": "llvm", "num-cores": 2}
APP_RULES = ["app.CPUMatmul", "app.CPUConv2d", "app.CPUParallel"]


def _lower(mod: Any) -> Any:
    from tvm import relax

    return tvm.transform.Sequential([relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(),
                                     relax.transform.FuseOps(), relax.transform.FuseTIR()])(mod)


def _mlp() -> Any:
    from pipeline_model.importers.load_tvm import load_model

    loaded = load_model("builtin:mlp", PIPES)
    return _lower(loaded.mod if hasattr(loaded, "mod") else loaded[0])


def _conv() -> Any:
    """A small NCHW convolution with a ReLU (32 output channels: a multiple of every vector width)."""
    from tvm import relax
    from tvm.script import relax as R

    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((1, 8, 12, 12), "float32"))
    w = relax.Var("w", R.Tensor((32, 8, 3, 3), "float32"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            y = bb.emit(relax.op.nn.conv2d(x, w, padding=1))
            out = bb.emit_output(relax.op.nn.relu(y))
        bb.emit_func_output(out)
    return _lower(bb.get())


def _rules() -> list[Any]:
    from pipeline_model.passkinds.metaschedule.seed_tvm import app_rules

    return app_rules(APP_RULES)


def _seed(mod: Any, work_dir: str, rules: list[Any]) -> tuple[dict[str, Any], list, Any, Any]:
    """Seed ``work_dir`` (a fresh JSON database) with ``rules`` for the PrimFuncs of ``mod``, with the engine's
    builder and runner."""
    from tvm.s_tir import meta_schedule as ms

    from pipeline_model.passkinds.metaschedule.builder_tvm import make_builder, make_runner, tuning_target
    from pipeline_model.passkinds.metaschedule.seed_tvm import seed_tasks

    os.makedirs(work_dir, exist_ok=True)
    target = tuning_target(TARGET)
    tasks = seed_tasks(mod)
    database = ms.database.JSONDatabase(work_dir=work_dir, module_equality="structural")
    config = TuningConfig(builder_workers=1)
    info = seed_module.seed_app_schedules(database, tasks, target, rules, make_builder(config), make_runner(config))
    return info, tasks, database, target


def _applied_and_dlight(mod: Any, work_dir: str) -> tuple[Any, Any]:
    """``mod`` with ``work_dir``'s database applied, and ``mod`` scheduled by the app rules (the dlight step)."""
    from tvm import relax
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds.metaschedule.builder_tvm import tuning_target

    with tuning_target(TARGET):
        applied = relax.transform.MetaScheduleApplyDatabase(work_dir=work_dir)(mod.clone())
    with tvm.target.Target(TARGET):  # TVM's ApplyDefaultSchedule changes the module it is given: a copy
        scheduled = dl.ApplyDefaultSchedule(*_rules())(mod.clone())
    return applied, scheduled


# ---------------------------------------------------------------------------------------------- parameters
def test_seed_rules_is_one_default_in_the_catalogue_the_engine_and_scripts():
    from pipeline_model.passkinds.metaschedule import TUNING_PARAMS

    assert TuningConfig().seed_rules == [] and script_options({})["seed_rules"] == []
    spec = next(p for p in TUNING_PARAMS[TUNE_TIR] if p["name"] == "seed_rules")
    assert spec["default"] == TuningConfig().seed_rules and spec["choices"] == list(SEED_RULES) == ["app.CPUInt8", *APP_RULES]
    assert "seed_rules" not in {p["name"] for p in TUNING_PARAMS[TUNE_IRMOD]}
    assert script_options({"seed_rules": ["app.CPUParallel"]})["seed_rules"] == ["app.CPUParallel"]
    with pytest.raises(TuningConfigError, match="seed_rules.*gpu.Matmul"):
        TuningConfig.from_params({"seed_rules": ["gpu.Matmul"]})


def test_only_the_tir_tuning_step_seeds():
    from pipeline_model.passkinds.metaschedule.pass_tvm import make_tuning_pass

    with pytest.raises(TuningConfigError, match="seed_rules needs relax.MetaScheduleTuneTIR"):
        make_tuning_pass(TUNE_IRMOD, {"seed_rules": ["app.CPUParallel"]}, TARGET, "/tmp/unused")


# ------------------------------------------------------------------------------------------- the seeds
def test_seeds_replay_to_exactly_the_rules_schedule(tmp_path):
    """With only the seeds in the database, applying it gives every seeded PrimFunc the very schedule the dlight
    step gives it; each seed is a measured record that MetaSchedule's search did not make."""
    mod = _mlp()
    work = str(tmp_path / "wd")
    info, tasks, database, target = _seed(mod, work, _rules())
    seeded = {n for n, e in info["tasks"].items() if e["status"] == "seeded"}
    assert seeded and not [e for e in info["tasks"].values() if e["status"] == "skipped"], info
    assert seeded | set(info["no_rule"]) == {n for n, _ in tasks}
    for name, workload in tasks:
        records = database.get_top_k(database.commit_workload(workload), 10) if database.has_workload(workload) else []
        if name in seeded:
            assert len(records) == 1 and not is_search_record(records[0])
            secs = [float(x) for x in records[0].run_secs]
            assert 0 < secs[0] < 1.0 and info["tasks"][name]["us"] == pytest.approx(secs[0] * 1e6, rel=1e-3)
        else:
            assert not records
    applied, scheduled = _applied_and_dlight(mod, work)
    for name in seeded:
        assert applied[name].attrs["tirx.is_scheduled"]
        tvm.ir.assert_structural_equal(applied[name].without_attr("tirx.is_scheduled"),
                                       scheduled[name].without_attr("tirx.is_scheduled"))
    # a second seeding finds the seeds in place: nothing measured again
    again, *_ = _seed(mod, work, _rules())
    assert {n for n, e in again["tasks"].items() if e["status"] == "present"} == seeded, again


def test_the_convolution_seed_replays_with_its_packing_stage(tmp_path):
    """The conv rule's trace (cache_read, transform_layout, the weight-packing annotation) replays: the applied
    schedule is the rule's, structurally equal: the rule marks the packing stage with 1, as a trace's JSON reads
    back a True, so keep_wins' ``same_as_default`` finds the seed is the default schedule and times nothing."""
    mod = _conv()
    work = str(tmp_path / "wd")
    info, _tasks, _db, _target = _seed(mod, work, _rules())
    conv = [n for n, e in info["tasks"].items() if e["rule"] == "CPUConv2d"]
    assert len(conv) == 1 and info["tasks"][conv[0]]["status"] == "seeded", info
    applied, scheduled = _applied_and_dlight(mod, work)
    got, want = (m[conv[0]].without_attr("tirx.is_scheduled") for m in (applied, scheduled))
    assert "meta_schedule.layout_rewrite_preproc" in want.script()
    assert seed_module.same_schedule(tvm.IRModule({"main": got}), tvm.IRModule({"main": want}))
    assert keep.same_as_default([conv[0]], applied, scheduled) == [conv[0]]
    # the packing stage is still found by SplitLayoutRewritePreproc after the database is applied
    from tvm import relax

    split = relax.transform.SplitLayoutRewritePreproc()(applied)
    assert len([f for _, f in split.functions_items() if isinstance(f, tvm.tirx.PrimFunc)]) > \
        len([f for _, f in applied.functions_items() if isinstance(f, tvm.tirx.PrimFunc)])


def test_a_seed_whose_trace_does_not_replay_is_refused(tmp_path):
    """A rule whose schedule was made on another function is committed only for the workload its trace replays to
    the same schedule on (the function it was made on); elsewhere the trace names a block the workload has not, or
    replays to another schedule, and the report says why."""
    from tvm.s_tir import dlight as dl

    from tvm.s_tir.meta_schedule.tune_context import _normalize_mod

    mod = _mlp()
    other = _normalize_mod(mod["transpose"])  # the transpose workload, as MetaSchedule tunes it

    class Elsewhere(dl.ScheduleRule):
        def apply(self, func, target, _tunable):
            sch = tvm.s_tir.Schedule(other)
            sch.parallel(sch.get_loops(sch.get_sblock("T_transpose"))[0])
            return sch

    info, tasks, database, _target = _seed(mod, str(tmp_path / "wd"), [Elsewhere()])
    assert {n for n, _ in tasks} == set(info["tasks"]) and info["tasks"]["transpose"]["status"] == "seeded"
    refused = {n: e for n, e in info["tasks"].items() if n != "transpose"}
    assert refused and all(e["status"] == "skipped" and "replay" in e["reason"] for e in refused.values()), info
    assert any("does not replay" in e["reason"] for e in refused.values())
    for name, workload in tasks:
        held = database.has_workload(workload) and database.get_top_k(database.commit_workload(workload), 1)
        assert bool(held) == (name == "transpose")
    from pipeline_model.passkinds.metaschedule.report import seeds_html

    html = seeds_html(info)
    assert f"1 PrimFunc(s) seeded, {len(refused)} refused" in html and "does not replay" in html


def test_a_seed_whose_weight_packing_is_not_a_plain_copy_is_skipped_not_fatal(tmp_path):
    """``app.CPUMatmul`` pads columns no full vector divides (Llama's 344) with zeros as it packs the weight: a
    packing stage MetaSchedule cannot take apart (it removes such a stage as done beforehand and checks that it is
    a plain copy). That seed is skipped with the reason; it failed the whole tuning step (Llama's tuned column:
    "Check failed: (load) is false"). Only the schedule is made: nothing is built or run for the AVX2 target."""
    from tvm import relax

    from tvm.s_tir import meta_schedule as ms

    from pipeline_model.passkinds.metaschedule.builder_tvm import tuning_target
    from pipeline_model.passkinds.metaschedule.seed_tvm import seed_tasks

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((32, 64), "float32"))
    w = relax.Var("w", relax.TensorType((64, 36), "float32"))  # 36 columns: 8-float vectors pad them to 40
    with bb.function("main", [x, w]):
        with bb.dataflow():
            out = bb.emit_output(relax.op.matmul(x, w))
        bb.emit_func_output(out)
    mod = _lower(bb.get())
    target = tuning_target({"kind": "llvm", "mcpu": "haswell", "num-cores": 2})
    (name, workload), = seed_tasks(mod)
    rule, sch = seed_module.rule_schedule(_rules(), workload, target)
    assert rule == "CPUMatmul" and "layout_rewrite_preproc" in sch.mod.script() and "T.if_then_else" in sch.mod.script()
    database = ms.database.JSONDatabase(work_dir=str(tmp_path), module_equality="structural")
    info = seed_module.seed_app_schedules(database, [(name, workload)], target, _rules(), None, None)  # no builds
    entry = info["tasks"][name]
    assert entry["status"] == "skipped" and "weight packing" in entry["reason"], entry
    assert not database.has_workload(workload) or not database.get_top_k(database.commit_workload(workload), 1)


# ------------------------------------------------------------------------------------- a seeded tuning step
def test_seeded_step_applies_the_faster_schedule_and_keeps_seeds_out_of_the_user_database(tmp_path, monkeypatch):
    """The engine's step seeds, tunes one trial per PrimFunc and reports per PrimFunc which record is best; the
    applied module has the app's schedule exactly where the seed is the best record, a faster measured one
    elsewhere. The per-user database gets the tuned records only."""
    from pipeline_model.passkinds.metaschedule.overrides_tvm import install_overrides
    from pipeline_model.passkinds.metaschedule.pass_tvm import make_tuning_pass

    user_db = tmp_path / "user-db"
    monkeypatch.setenv("RPS_TUNING_DB_DIR", str(user_db))
    install_overrides()
    mod = _mlp()
    work = str(tmp_path / "wd")
    report: dict[str, Any] = {}
    params = {"max_trials_global": 1, "num_trials_per_iter": 1, "builder_workers": 1, "seed_rules": APP_RULES,
              "search_population": 64, **QUICK_SEARCH}
    step = make_tuning_pass(TUNE_TIR, params, TARGET, work, report=report)
    step(mod)
    seeds = report["tuning"]["seeds"]
    entries = {n: e for n, e in seeds["tasks"].items() if e["status"] == "seeded"}
    assert entries and sum(seeds["outcome"].values()) == len(entries)
    applied, scheduled = _applied_and_dlight(mod, work)
    assert seeds["outcome"]["app"] == sum(1 for e in entries.values() if e["best"] == "app")
    for name, entry in entries.items():
        if entry["best"] == "app":  # the seed is the best record: the dlight step's schedule, exactly
            assert entry["best_us"] == entry["us"]
            tvm.ir.assert_structural_equal(applied[name].without_attr("tirx.is_scheduled"),
                                           scheduled[name].without_attr("tirx.is_scheduled"))
        else:  # a searched record measured faster (its schedule may still coincide with the app's)
            assert entry["best"] == "tuned" and entry["best_us"] <= entry["us"], (name, entry)
    from tvm.s_tir import meta_schedule as ms

    users = ms.database.JSONDatabase(work_dir=str(user_db), module_equality="structural", allow_missing=False)
    records = users.get_all_tuning_records()
    assert records and all(is_search_record(r) for r in records)


# ------------------------------------------------------------------------------------------ exported scripts
def _seeded_doc(**params: Any) -> Any:
    doc = load_pipeline(os.path.join(PIPES, "tuning_mlp_cpu.json"))
    doc.steps[4].params.update(max_trials_global=1, num_trials_per_iter=1, builder_workers=1,
                               seed_rules=["app.CPUMatmul", "app.CPUParallel"], **params)
    return doc


def test_exported_seeded_step_holds_the_engines_seeding_code_and_the_rule_classes(tmp_path):
    from pipeline_model.passkinds.dlight.rules import rule_sources
    from pipeline_model.passkinds.metaschedule import seed_tvm

    assert seed_tvm.seed_app_schedules is seed_module.seed_app_schedules  # the engine calls the shared code
    assert seed_tvm.seed_outcome is seed_module.seed_outcome
    for params in ({}, {"time_budget_s": 30.0, "min_trials": 1}):
        source = export_script(_seeded_doc(**params), work_dir=str(tmp_path))
        for helper in seed_module.SEED_HELPERS:
            assert emit.helper_source(helper) in source, helper.__name__
        assert rule_sources("app.CPUMatmul")[-1] in source and rule_sources("app.CPUParallel")[-1] in source
        assert "class CPUConv2d(" not in source  # only the rules the step names
        calls = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)
                 and getattr(n.func, "id", "") == "seed_tuning_pass"]
        assert len(calls) == 1 and ast.unparse(calls[0].args[3]) == "[CPUMatmul(), CPUParallel()]"
    plain = export_script(load_pipeline(os.path.join(PIPES, "tuning_mlp_cpu.json")), work_dir=str(tmp_path))
    assert "seed_tuning_pass" not in plain and "class CPUMatmul(" not in plain


def test_cpu_tuned_app_is_the_default_pipeline_with_seeded_tuning_after_fuse_tir():
    from pipeline_model.passkinds.metaschedule.focus import focus_settings, is_budgeted

    app = load_pipeline(os.path.join(PIPES, "cpu_tuned_app.json"))
    base = load_pipeline(os.path.join(PIPES, "cpu_build.json"))
    ids = [s.pass_id for s in app.steps]
    fuse = ids.index("relax.FuseTIR")
    assert ids[fuse + 1:fuse + 3] == [TUNE_TIR, "relax.MetaScheduleApplyDatabase"]
    assert ids[:fuse + 1] + ids[fuse + 3:] == [s.pass_id for s in base.steps]
    for mine, theirs in zip([s for s in app.steps if s.pass_id not in (TUNE_TIR, "relax.MetaScheduleApplyDatabase")],
                            base.steps):
        assert mine.params == theirs.params and mine.enabled
    assert app.target == base.target and app.name and app.description and "seed_rules" in app.description
    tune = app.steps[fuse + 1]
    assert tune.params["seed_rules"] == APP_RULES and is_budgeted(tune.params)
    assert focus_settings(tune.params)["time_budget_s"] == 600.0
    assert TuningConfig.from_params(tune.params).user_database  # the per-user database, as the other tuned pipelines
    assert len({s.uid for s in app.steps}) == len(app.steps)


def test_tuning_panel_says_which_schedules_won(qtbot):
    from widgets.tuning_panel import TuningPanel

    panel = TuningPanel()
    qtbot.addWidget(panel)
    seeds = {"rules": ["CPUConv2d"], "tasks": {"conv": {"status": "seeded"}, "copy": {"status": "seeded"}},
             "no_rule": ["mean"]}
    event = {"done": 4, "total": 8, "pass_id": TUNE_TIR, "work_dir": "/tmp/wd", "tasks": [], "seeds": seeds}
    panel.update_progress(event)
    assert panel.footer.text() == "Database: /tmp/wd · 2 app schedules seeded"
    panel.update_progress({**event, "finished": True, "seeds": {**seeds, "outcome": {"app": 1, "tuned": 1}}})
    assert panel.footer.text().endswith("best schedule: the app's for 1 PrimFunc(s), a tuned one for 1")
    panel.update_progress({k: v for k, v in event.items() if k != "seeds"})
    assert panel.footer.text() == "Database: /tmp/wd"
