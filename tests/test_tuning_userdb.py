"""The per-user tuning database (reused across pipelines and models by workload) and time-budgeted tuning
through the engine's pass: a model tuned once makes the next model with the same workload cost zero trials."""

from __future__ import annotations

import json
import os

import pytest

from pipeline_model.passkinds.metaschedule import script
from pipeline_model.passkinds.metaschedule.config import TUNE_TIR, TuningConfig, format_progress_line
from pipeline_model.work_dirs import tuning_database_stats, user_tuning_database_dir
from tests.tuning_fixtures import QUICK_SEARCH, lowered, other_model

TARGET = {"kind": "llvm", "num-cores": 2}
SHARED = "fused_matmul_add_relu"  # the first layer: the same workload in the MLP and in the other model


def test_where_the_user_database_lives(tmp_path, monkeypatch):
    monkeypatch.setenv("RPS_TUNING_DB_DIR", str(tmp_path / "db"))
    assert user_tuning_database_dir() == str(tmp_path / "db")
    monkeypatch.setenv("RPS_TUNING_DB_DIR", "off")
    assert user_tuning_database_dir() == ""
    monkeypatch.delenv("RPS_TUNING_DB_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert user_tuning_database_dir() == str(tmp_path / "data" / "relax-pipeline-studio" / "tuning-db")


def test_user_database_safety_rules(tmp_path):
    """Never through a symlink; a database file the app did not create is read but never written to."""
    db = tmp_path / "db"
    db.mkdir()
    assert script.user_database_problem(str(db), True) is None  # empty: fine, the app creates the files
    (db / "database_tuning_record.json").write_text("")
    assert "not created by this app" in script.user_database_problem(str(db), True)
    assert script.user_database_problem(str(db), False) is None  # reading is fine
    added, problem = script.commit_user_records(str(db), None, [], TARGET)
    assert added == 0 and "not created by this app" in problem
    assert (db / "database_tuning_record.json").read_text() == ""
    link = tmp_path / "link"
    link.symlink_to(db, target_is_directory=True)
    assert "symlink" in script.user_database_problem(str(link), False)
    other = tmp_path / "other"
    other.mkdir()
    (other / "database_workload.json").symlink_to(tmp_path / "elsewhere.json")
    assert "symlink" in script.user_database_problem(str(other), False)
    assert script.user_database_problem("", False) == "the user tuning database is off"


def test_a_damaged_user_database_is_not_used(tmp_path):
    """Garbage in the user database: the look-up finds nothing (the task is tuned) instead of failing the step."""
    import tvm
    from tvm.s_tir import meta_schedule as ms

    from pipeline_model.importers import load_tvm
    from pipeline_model.passkinds.metaschedule.builder_tvm import tuning_target

    db = tmp_path / "db"
    db.mkdir()
    (db / "database_workload.json").write_text("this is not json\n")
    (db / "database_tuning_record.json").write_text("[0, nonsense]\n")
    mlp = lowered(load_tvm.load_model("builtin:mlp", None).mod)
    task = tvm.IRModule({"main": mlp[SHARED]})
    (tmp_path / "wd").mkdir()
    work = ms.database.JSONDatabase(work_dir=str(tmp_path / "wd"), module_equality="structural")
    assert script.import_user_records(str(db), work, task, tuning_target(TARGET)) == 0


def test_database_stats_count_records_and_bytes(tmp_path):
    db = tmp_path / "db"
    db.mkdir()
    (db / "database_workload.json").write_text('["w1"]\n["w2"]\n')
    (db / "database_tuning_record.json").write_text('[0, 1]\n[0, 2]\n[1, 3]\n')
    stats = tuning_database_stats(str(db))
    assert stats["exists"] and stats["workloads"] == 2 and stats["records"] == 3
    assert stats["bytes"] == os.path.getsize(db / "database_workload.json") + os.path.getsize(db / "database_tuning_record.json")
    assert tuning_database_stats(str(tmp_path / "none"))["exists"] is False


def test_the_session_follows_the_user_database_parameter(tmp_path, monkeypatch):
    from pipeline_model.passkinds.metaschedule.session_tvm import TuningSession
    from pipeline_model.passkinds.metaschedule.tasks_tvm import _user_db_dir

    monkeypatch.setenv("RPS_TUNING_DB_DIR", str(tmp_path / "db"))
    assert _user_db_dir(TuningSession(TuningConfig())) == str(tmp_path / "db")
    assert _user_db_dir(TuningSession(TuningConfig(user_database=False))) == ""
    own_space = TuningSession(TuningConfig())
    own_space.space_tag = ":fn123"  # a user's own search space is kept apart
    assert _user_db_dir(own_space) == ""


def _tune(mod, work_dir, params, events=None):
    import tvm

    from pipeline_model.passkinds.metaschedule import pass_tvm

    report: dict = {}
    emit = (lambda name, data: events.append(dict(data))) if events is not None else None
    tune = pass_tvm.make_tuning_pass(TUNE_TIR, params, TARGET, work_dir, emit=emit, report=report)
    with tvm.target.Target(TARGET), tvm.transform.PassContext(opt_level=3):
        tune(mod)
    return report["tuning"]


@pytest.mark.slow
def test_a_workload_tuned_once_costs_the_next_model_zero_trials(tmp_path, monkeypatch):
    """Tune the MLP's first layer (2 trials) with the user database on; a second model with the same layer,
    in another work directory, then gets it from the database (zero trials, status and source say so) and
    its apply step uses it; a time-budgeted step leaves it out of its rounds."""
    import tvm

    from pipeline_model.importers import load_tvm
    from pipeline_model.passkinds.metaschedule.report import tuning_html
    from pipeline_model.passkinds.metaschedule.tasks_tvm import apply_database

    db = str(tmp_path / "userdb")
    monkeypatch.setenv("RPS_TUNING_DB_DIR", db)
    mlp = lowered(load_tvm.load_model("builtin:mlp", None).mod)
    first = _tune(mlp, str(tmp_path / "mlp.tuning"),
                  {"functions": [SHARED], "max_trials_global": 2, "num_trials_per_iter": 2, "search_population": 64, **QUICK_SEARCH})
    tuned = {t["name"]: t for t in first["tasks"]}
    assert tuned[SHARED]["trials"] >= 1 and tuned[SHARED]["source"] == "tuned", first["tasks"]
    assert first["user_database"]["path"] == db and first["user_database"]["added"] >= 1
    stats = tuning_database_stats(db)
    assert stats["records"] >= 1 and stats["workloads"] >= 1
    assert SHARED not in first["user_database"]["imported"]

    other = lowered(other_model(str(tmp_path)))
    work = str(tmp_path / "other.tuning")
    second = _tune(other, work, {"functions": [SHARED], "max_trials_global": 2, "num_trials_per_iter": 2, "search_population": 64, **QUICK_SEARCH})
    task = {t["name"]: t for t in second["tasks"]}[SHARED]
    assert second["done"] == 0 and second["measured"] == 0, second
    assert task["reused"] and task["status"] == "from user database" and task["source"] == "user database"
    assert second["user_database"]["imported"] == [SHARED]
    html = tuning_html(second, {}, "")
    assert "From the user database" in html and SHARED in html and db in html
    applied_mod, info = apply_database(other, TARGET, work)
    assert SHARED in info["applied"], info
    assert applied_mod[SHARED].attrs["tirx.is_scheduled"]
    assert isinstance(applied_mod, tvm.IRModule)

    # A time-budgeted step on the other model: the shared layer comes from the database, never into the
    # rounds; every other PrimFunc is weighed (none left out), tuned or named as not reached.
    events: list = []
    budget = _tune(other, str(tmp_path / "budget.tuning"), {"time_budget_s": 5.0, "min_trials": 1,
                                                           "num_trials_per_iter": 1, "search_population": 64, **QUICK_SEARCH}, events)
    # before its rounds the step looks every PrimFunc up (no total yet): the progress says so, not "0/0 trials"
    lookup = [e for e in events if e.get("phase") == "lookup"]
    assert lookup and events[0].get("phase") == "lookup" and all(e["total"] == 0 for e in lookup), events[:3]
    assert format_progress_line(lookup[0]).startswith("tuning: looking the PrimFuncs up")
    assert events[-1]["phase"] == "" and any(e["total"] > 0 for e in events) and budget["phase"] == ""
    plan = budget["budget"]
    assert plan["reused"] == [SHARED] and SHARED not in plan["weights"]
    prims = {"fused_matmul1_tir_sigmoid", "transpose"}
    assert set(plan["weights"]) == prims
    assert plan["rounds"][0]["kind"] == "calibration" and plan["rounds"][0]["allocation"] == {n: 1 for n in prims}
    reached = {n for n, k in plan["trials"].items() if k > 0}
    assert reached | set(plan["not_reached"]) == prims
    by_name = {t["name"]: t for t in budget["tasks"]}
    assert all(by_name[n]["status"] == "not reached" for n in plan["not_reached"])
    assert "Time budget" in tuning_html(budget, {}, "")


@pytest.mark.slow
def test_later_rounds_profile_the_module_with_the_tuned_schedules(tuned_mlp, tmp_path):
    """``reprofile`` applies the work directory's database to the step's input and asks the engine for a fresh
    profile of that module (``fresh=True``, never the stored profile of the untuned input)."""
    from pipeline_model.importers import load_tvm
    from pipeline_model.passkinds.metaschedule.budget_tvm import _reprofiler
    from pipeline_model.passkinds.metaschedule.builder_tvm import tuning_target
    from tests.tuning_fixtures import copy_tuned_work_dir

    work = copy_tuned_work_dir(tuned_mlp, str(tmp_path / "wd"))
    mlp = lowered(load_tvm.load_model("builtin:mlp", None).mod)
    seen = []

    def profile(mod, fresh=False):
        seen.append((mod, fresh))
        return {"entries": [{"name": SHARED, "total_us": 12.5}, {"name": "transpose", "total_us": 40.0},
                            {"name": "vm.builtin.alloc", "total_us": 3.0}]}, "measured"

    assert _reprofiler(mlp, tuning_target(TARGET), work, {SHARED}, lambda mod: ({}, "stored")) is None
    reprofile = _reprofiler(mlp, tuning_target(TARGET), work, {SHARED, "transpose"}, profile)
    assert reprofile() == {SHARED: 12.5, "transpose": 40.0}
    (mod, fresh), = seen
    assert fresh and mod[SHARED].attrs["tirx.is_scheduled"]  # the tuned schedules were applied first


def test_a_record_whose_trace_does_not_replay_on_the_workload_is_never_copied(tmp_path, monkeypatch):
    """A record's trace names blocks (``get_sblock("lv67_red")``); filed under a workload it does not replay on
    (``lv99_red``), a database no longer loads (``parallel_for_dynamic error``: a Llama tuned after the other bench
    models was handed such records and failed its tuning step before any trial). Such a record is skipped when
    records are copied (user database to work folder and back); a record that replays is imported."""
    import tvm
    from tvm.s_tir import meta_schedule as ms
    from tvm.s_tir.meta_schedule.arg_info import ArgInfo
    from tvm.s_tir.meta_schedule.database import TuningRecord
    from tvm.script import tirx as T

    from pipeline_model.passkinds.metaschedule.builder_tvm import tuning_target

    @T.prim_func(s_tir=True)
    def first(x: T.Buffer((4, 32), "float32"), lv67_red: T.Buffer((4,), "float32")):
        for i, k in T.grid(4, 32):
            with T.sblock("lv67_red"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    lv67_red[vi] = T.float32(0)
                lv67_red[vi] = lv67_red[vi] + x[vi, vk]

    @T.prim_func(s_tir=True)
    def second(x: T.Buffer((4, 32), "float32"), lv99_red: T.Buffer((4,), "float32")):
        for i, k in T.grid(4, 32):
            with T.sblock("lv99_red"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    lv99_red[vi] = T.float32(0)
                lv99_red[vi] = lv99_red[vi] + x[vi, vk]

    target = tuning_target(TARGET)
    args = ArgInfo.from_prim_func(first)

    def search_record(database, mod, block):  # a schedule as MetaSchedule's search records it
        sch = tvm.s_tir.Schedule(mod)
        sch.split(sch.get_loops(sch.get_sblock(block))[1], [None, 8])
        sch.enter_postproc()
        database.commit_tuning_record(TuningRecord(sch.trace, database.commit_workload(mod), [1e-6], target, args))

    def opens(folder):
        return ms.database.JSONDatabase(work_dir=str(folder), module_equality="structural", allow_missing=False)

    db = tmp_path / "db"
    db.mkdir()
    search_record(ms.database.JSONDatabase(work_dir=str(db), module_equality="structural"), tvm.IRModule({"main": first}),
                  "lv67_red")
    records = opens(db).get_top_k(opens(db).commit_workload(tvm.IRModule({"main": first})), 10)
    assert len(records) == 1 and script.is_search_record(records[0])
    (tmp_path / "wd").mkdir()
    work = ms.database.JSONDatabase(work_dir=str(tmp_path / "wd"), module_equality="structural")
    later = tvm.IRModule({"main": second})
    assert not script._replays(records[0].trace, later) and script._replays(records[0].trace, tvm.IRModule({"main": first}))
    assert script._copy_records(records, work, later) == 0
    assert not opens(tmp_path / "wd").get_top_k(opens(tmp_path / "wd").commit_workload(later), 10)  # it loads
    # The full bench of 2026-11-29 again: the block is named only after EnterPostproc (MetaSchedule's
    # post-processing, RewriteReductionBlock's DecomposeReduction on "lv67_red"); the part before it replays on
    # lv99_red, but the JSON database replays the whole trace when it loads, so the record is not copied either.
    sch = tvm.s_tir.Schedule(tvm.IRModule({"main": first}))
    sch.enter_postproc()
    sch.decompose_reduction(sch.get_sblock("lv67_red"), sch.get_loops(sch.get_sblock("lv67_red"))[1])
    post = TuningRecord(sch.trace, ms.database.Workload(tvm.IRModule({"main": first})), [1e-6], target, args)
    assert not script._replays(post.trace, later) and script._replays(post.trace, tvm.IRModule({"main": first}))
    assert script._copy_records([post], work, later) == 0
    assert not opens(tmp_path / "wd").get_top_k(opens(tmp_path / "wd").commit_workload(later), 10)
    # A work folder an earlier version wrote such a record into: the step says which file and line, and how to
    # start afresh (MetaSchedule's own error was "parallel_for_dynamic error with (not rendered)").
    broken = tmp_path / "broken"
    broken.mkdir()
    good = TuningRecord(records[0].trace, ms.database.Workload(tvm.IRModule({"main": first})), [1e-6], target, args)
    (broken / "database_workload.json").write_text(
        json.dumps(ms.database.Workload(tvm.IRModule({"main": first})).as_json()) + "\n"
        + json.dumps(ms.database.Workload(later).as_json()) + "\n")
    (broken / "database_tuning_record.json").write_text(
        json.dumps([0, good.as_json()]) + "\n" + json.dumps([1, post.as_json()]) + "\n")
    assert script.unloadable_records(str(broken)) == [(2, "its schedule does not replay on its workload")]
    with pytest.raises(script.TuningConfigError, match=r"database_tuning_record.json does not load \(line 2: .*retune"):
        script.open_work_database(str(broken))
    # The record replays on its own layer: imported from the user database.
    (tmp_path / "wd2").mkdir()
    work2 = ms.database.JSONDatabase(work_dir=str(tmp_path / "wd2"), module_equality="structural")
    assert script.import_user_records(str(db), work2, tvm.IRModule({"main": first}), target) == 1
    # The user database is read once while its files stay the same (a step looks each PrimFunc up in it), and
    # read again once they change.
    opened = []
    real = ms.database.JSONDatabase
    read = script.checked_memory_database  # the user database is read with limits, into memory

    def counting(folder, warn):
        opened.append(folder)
        return read(folder, warn)

    monkeypatch.setattr(script, "checked_memory_database", counting)
    script.open_user_database.__dict__.pop("cache", None)
    for _ in range(3):
        assert script.import_user_records(str(db), work2, tvm.IRModule({"main": first}), target) == 1
    assert opened == [str(db)]
    search_record(real(work_dir=str(db), module_equality="structural"), tvm.IRModule({"main": first}), "lv67_red")
    assert script.import_user_records(str(db), work2, tvm.IRModule({"main": first}), target) == 2
    assert opened == [str(db), str(db)]
    assert len(opens(tmp_path / "wd2").get_top_k(opens(tmp_path / "wd2").commit_workload(tvm.IRModule({"main": first})), 10)) == 1
