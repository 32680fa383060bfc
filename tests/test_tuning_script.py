"""One implementation of the MetaSchedule set-up, shared by the engine and exported scripts.

An exported tuning script contains the functions of :mod:`pipeline_model.passkinds.metaschedule.script`
verbatim, the engine calls those very functions, both take their options from one table of defaults
(:class:`~pipeline_model.passkinds.metaschedule.config.TuningConfig`), and ``retune`` deletes only what the
work directory's manifest lists — also when the exported script runs it (it used to delete ``logs/``
whatever was in it).
"""

from __future__ import annotations

import ast
import os
from typing import Any

import pytest

from pipeline_model import emit
from pipeline_model.document import PipelineDocument, Step
from pipeline_model.export import MARKER, export_script
from pipeline_model.fileformat import load_pipeline
from pipeline_model.passkinds.metaschedule import script, script_measure
from pipeline_model.passkinds.metaschedule.config import (
    PASS_ARGUMENTS,
    TUNE_IRMOD,
    TUNE_TIR,
    TUNING_IDS,
    TuningConfig,
    script_options,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPES = os.path.join(ROOT, "resources", "pipelines")
HELPERS_MARK = MARKER  # the full script's helpers follow apply_steps, after this marker


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def _tuning_doc(pass_id: str, params: dict[str, Any]) -> PipelineDocument:
    """A small pipeline: lower the MLP, then one MetaSchedule tuning step with ``params``."""
    steps = [Step(p, {}) for p in ("relax.LegalizeOps", "relax.AnnotateTIROpPattern", "relax.FuseOps",
                                    "relax.FuseTIR")]
    return PipelineDocument(model="builtin:mlp", target={"kind": "llvm", "num-cores": 2},
                            steps=[*steps, Step(pass_id, dict(params))])


def _helpers_namespace(source: str) -> dict[str, Any]:
    """The exported script's helper section and its ``scriptlib/files.py`` section (the writer the manifest uses),
    executed on their own (TVM-free at import, like script.py)."""
    start = source.index(HELPERS_MARK) + len(HELPERS_MARK)  # the code below apply_steps, up to scriptlib's
    end = source.index("\n# ---- scriptlib/", start)
    files_start = source.index("# ---- scriptlib/files.py")
    files_end = source.index("\ndef main(", files_start)
    namespace: dict[str, Any] = {"__name__": "exported_helpers"}
    for part in (source[files_start:files_end], source[start:end]):
        exec(compile(part, "<exported helpers>", "exec"), namespace)  # noqa: S102 - our own export
    return namespace


def _exported_options(source: str) -> dict[str, Any]:
    """The options literal the exported script passes to ``install_meta_schedule_cpu``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "install_meta_schedule_cpu":
            return ast.literal_eval(node.args[1])
    raise AssertionError("no install_meta_schedule_cpu(...) call in the exported script")


def _catalogue_defaults(pass_id: str) -> dict[str, Any]:
    """The parameter defaults the catalogue (and so the GUI) shows for ``pass_id``."""
    from pipeline_model.passkinds.metaschedule import TUNING_PARAMS

    return {p["name"]: p["default"] for p in TUNING_PARAMS[pass_id]}


# ---- retune: the manifest rule in the exported script too -----------------------------------------
def test_exported_retune_leaves_the_users_files_in_place(tmp_path, monkeypatch):
    work = str(tmp_path / "users_folder")
    mine = {os.path.join(work, "logs", "mine.txt"): "user log", os.path.join(work, "notes.md"): "user notes"}
    for path, text in mine.items():
        _write(path, text)
    source = export_script(_tuning_doc(TUNE_TIR, {"max_trials_global": 4, "retune": True}), work_dir=work)
    options = _exported_options(source)
    assert options["retune"] is True
    ns = _helpers_namespace(source)
    registered: list[tuple] = []
    ns["register_tuning_functions"] = lambda tir, relax: registered.append((tir, relax))  # keep TVM's globals
    # What an earlier tuning run (the app's or the script's: the same tracker) wrote is in the manifest.
    with ns["track_work_dir"](work):
        for name in ("database_workload.json", "database_tuning_record.json", "rps_tuning_state.json",
                     os.path.join("logs", "task_0.log")):
            _write(os.path.join(work, name), "tuning data")
    assert "logs/task_0.log" in script.read_manifest(work) and "logs/mine.txt" not in script.read_manifest(work)
    ns["install_meta_schedule_cpu"](work, options)  # the exported step's set-up, retune first
    assert registered, "the exported set-up registers its tune_tir / tune_relax"
    for path, text in mine.items():
        assert _read(path) == text
    for name in ("database_workload.json", "database_tuning_record.json", "rps_tuning_state.json", "logs/task_0.log"):
        assert not os.path.exists(os.path.join(work, name)), name
    assert script.read_manifest(work) == []
    assert "rmtree" not in source and "shutil" not in source


def test_exported_retune_never_deletes_a_database_it_did_not_write(tmp_path):
    work = str(tmp_path / "users_folder")
    user = {os.path.join(work, "logs", "mine.txt"): "user log",
            os.path.join(work, "database_workload.json"): "someone else's workloads"}
    for path, text in user.items():
        _write(path, text)
    source = export_script(_tuning_doc(TUNE_IRMOD, {"retune": True}), work_dir=work)
    ns = _helpers_namespace(source)
    ns["register_tuning_functions"] = lambda tir, relax: None
    # The script ends with one line (a SystemExit carrying the message, no traceback).
    with pytest.raises(SystemExit, match="^error: re-tune: database_workload.json .* was not written by this app") as exc:
        ns["install_meta_schedule_cpu"](work, _exported_options(source))
    assert "\n" not in str(exc.value.code)
    for path, text in user.items():
        assert _read(path) == text
    # The engine's copy (script.py, which the engine calls) follows the same rule.
    with pytest.raises(script.TuningConfigError, match="not written by this app"):
        script.wipe_work_dir(work)
    for path, text in user.items():
        assert _read(path) == text


# ---- one table of defaults ---------------------------------------------------------------------
@pytest.mark.parametrize("pass_id", TUNING_IDS)
def test_exported_and_engine_tuning_use_the_same_options(pass_id, tmp_path, monkeypatch):
    from pipeline_model.passkinds.metaschedule import config as config_module
    from pipeline_model.passkinds.metaschedule import pass_tvm

    params = _catalogue_defaults(pass_id)
    params.pop("work_dir")
    exported = _exported_options(export_script(_tuning_doc(pass_id, params), work_dir=str(tmp_path)))
    seen: list[TuningConfig] = []
    original = config_module.TuningConfig.from_params.__func__  # type: ignore[attr-defined]

    def spy(cls: type, p: dict, where: str = "tuning step") -> TuningConfig:
        seen.append(original(cls, p, where))
        return seen[-1]

    monkeypatch.setattr(config_module.TuningConfig, "from_params", classmethod(spy))
    pass_tvm.make_tuning_pass(pass_id, params, {"kind": "llvm", "num-cores": 2}, str(tmp_path))
    assert len(seen) == 1
    engine = {k: v for k, v in seen[0].to_json().items() if k not in PASS_ARGUMENTS}
    assert exported == engine
    assert exported["num_trials_per_iter"] == 16  # the value the catalogue (and the GUI) shows
    assert set(exported) == set(TuningConfig().to_json()) - set(PASS_ARGUMENTS)


@pytest.mark.parametrize("pass_id", TUNING_IDS)
def test_catalogue_defaults_are_the_config_defaults(pass_id):
    defaults = TuningConfig().to_json()
    shown = _catalogue_defaults(pass_id)
    for name, value in shown.items():
        if name in defaults and name != "max_trials_per_task":  # 0 in the catalogue means None (no limit)
            assert value == defaults[name], name
    assert shown["num_trials_per_iter"] == 16 and shown["max_trials_global"] == 64
    assert script_options({}) == {k: v for k, v in defaults.items() if k not in PASS_ARGUMENTS}


def test_engine_builder_and_runner_are_made_from_the_same_options(monkeypatch):
    from tvm.s_tir import meta_schedule as ms

    from pipeline_model.passkinds.metaschedule import builder_tvm

    # The options are the subject, not TVM's start-up check of its workers (a fresh process importing TVM per
    # runner and stock builder, ~3 s each, one after the other); real tunings start them (tests/test_tuning*.py).
    monkeypatch.setattr(ms.runner.LocalRunner._cls, "_sanity_check", lambda self: None)
    monkeypatch.setattr(ms.builder.LocalBuilder._cls, "_sanity_check", lambda self: None)
    config = TuningConfig(number=3, repeat=2, min_repeat_ms=5, runner_timeout_s=7.0, builder_workers=1,
                          builder_timeout_s=9.0)
    engine_runner = builder_tvm.make_runner(config)
    script_runner = script_measure.tuning_runner(script_options(config.to_json()))
    for runner in (engine_runner, script_runner):
        assert (runner.evaluator_config.number, runner.evaluator_config.repeat,
                runner.evaluator_config.min_repeat_ms) == (3, 2, 5)
        assert runner.timeout_sec == 7.0
    engine_builder = builder_tvm.make_builder(config)
    assert (engine_builder.max_workers, engine_builder.timeout_sec) == (1, 9.0)
    stock = builder_tvm.make_stock_builder(config)
    assert (stock.max_workers, stock.timeout_sec) == (1, 9.0)
    for runner in (engine_runner, script_runner):
        script_measure.close_tuning_tools(engine_builder, runner)


# ---- the same source -------------------------------------------------------------------------------
def test_exported_helpers_are_the_source_of_the_functions_the_engine_calls():
    from pipeline_model.passkinds.metaschedule import builder_tvm, overrides_tvm, pass_tvm, tasks_tvm

    # The engine's modules call script.py's functions themselves, not copies.
    assert builder_tvm.meta_schedule_target is script.meta_schedule_target
    assert builder_tvm.load_tensor_intrinsics is script.load_tensor_intrinsics
    assert builder_tvm.meta_schedule_f_build is script_measure.meta_schedule_f_build
    assert builder_tvm.tuning_builder is script_measure.tuning_builder
    assert builder_tvm.tuning_runner is script_measure.tuning_runner
    assert tasks_tvm.wipe_work_dir is script.wipe_work_dir and pass_tvm.wipe_work_dir is script.wipe_work_dir
    assert tasks_tvm.track_work_dir is script.track_work_dir and pass_tvm.track_work_dir is script.track_work_dir
    assert tasks_tvm.tuning_cores is script_measure.tuning_cores is script.tuning_cores
    assert overrides_tvm.register_tuning_functions is script.register_tuning_functions
    # ... and an exported script holds exactly their source.
    doc = load_pipeline(os.path.join(PIPES, "cpu_tuned_focus.json"))
    source = export_script(doc)
    for helper in (*script.SCRIPT_HELPERS, *script.TARGETED_HELPERS):
        assert emit.helper_source(helper) in source, helper.__name__
    assert script.constants_source() in source
    ns = _helpers_namespace(source)
    for name in script.SCRIPT_CONSTANTS:
        assert ns[name] == getattr(script, name)


# ---- where tuning writes: one rule -----------------------------------------------------------------
def test_where_tuning_writes_is_one_rule(tmp_path):
    from pipeline_model.passkinds.metaschedule import KIND
    from pipeline_model.work_dirs import default_work_dir, run_work_dir

    pipeline = str(tmp_path / "mine.json")
    assert run_work_dir({"pipeline_path": pipeline}) == str(tmp_path / "mine.tuning")
    assert run_work_dir({"work_dir": str(tmp_path / "given")}) == str(tmp_path / "given")
    unsaved = {"model": "builtin:mlp", "target": {"kind": "llvm", "num-cores": 2}}
    assert run_work_dir(unsaved) == default_work_dir(None, "builtin:mlp", {"kind": "llvm", "num-cores": 2})
    # The kind's cache key names the folder the engine's run tunes into (no engine import needed).
    key = KIND.cache_key_extra(TUNE_TIR, {}, {"pipeline_path": pipeline})
    assert key == f"work_dir={tmp_path / 'mine.tuning'}"


# ---- time budget and the user database: the same code in exported scripts ----------------------------
def test_exported_budgeted_step_runs_the_engines_rounds(tmp_path):
    """A time-budgeted step exports the engine's driver and planning helpers verbatim (and the user-database
    helpers every tuning script has); the script's copy plans exactly as the engine does."""
    from pipeline_model.passkinds.metaschedule import plan

    doc = _tuning_doc(TUNE_TIR, {"time_budget_s": 90.0, "min_trials": 3, "num_trials_per_iter": 8})
    source = export_script(doc, work_dir=str(tmp_path))
    for helper in (*script.SCRIPT_HELPERS, *script.TARGETED_HELPERS, *plan.PLAN_HELPERS):
        assert emit.helper_source(helper) in source, helper.__name__
    assert plan.plan_constants_source() in source
    calls = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)
             and getattr(n.func, "id", "") == "budgeted_tuning_pass"]
    assert len(calls) == 1 and ast.literal_eval(calls[0].args[2]) == {"time_budget_s": 90.0, "min_trials": 3}
    options = ast.literal_eval(calls[0].args[3])
    assert options == _exported_options(source) and options["user_database"] is True
    # the engine calls these very functions (not copies)
    from pipeline_model.passkinds.metaschedule import budget_tvm, tasks_tvm

    assert budget_tvm.run_budgeted_tuning is plan.run_budgeted_tuning
    assert budget_tvm.prim_func_costs is plan.prim_func_costs and budget_tvm.task_weights is plan.task_weights
    assert tasks_tvm.import_user_records is script.import_user_records
    assert tasks_tvm.commit_user_records is script.commit_user_records
    ns = _helpers_namespace(source)
    weights = {"conv": 9.0e8, "gelu": 1.0e5, "copy": 1.0}
    done = {"conv": 5, "gelu": 3, "copy": 3}
    assert ns["round_increments"](weights, done, 60, 3) == plan.round_increments(weights, done, 60, 3)
    assert ns["allocate_by_weight"](weights, 10, 3) == plan.allocate_by_weight(weights, 10, 3)


def test_every_exported_tuning_script_uses_the_user_database(tmp_path):
    """``install_meta_schedule_cpu`` looks tasks up in the user database and adds to it (the engine's rule:
    ``user_database`` on by default, off by the step's parameter)."""
    on = export_script(_tuning_doc(TUNE_TIR, {"max_trials_global": 4}), work_dir=str(tmp_path))
    assert _exported_options(on)["user_database"] is True
    for helper in (script.user_tuning_database_dir, script.import_user_records, script.commit_user_records):
        assert emit.helper_source(helper) in on
    off = export_script(_tuning_doc(TUNE_TIR, {"max_trials_global": 4, "user_database": False}),
                        work_dir=str(tmp_path))
    assert _exported_options(off)["user_database"] is False
    ns = _helpers_namespace(on)
    assert ns["USER_DB_TOP_K"] == script.USER_DB_TOP_K
