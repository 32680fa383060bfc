"""Issue 11, tuning spent where it pays: targeted MetaSchedule tuning (functions chosen from the profile,
trials by time share), the ETA of tuning progress, the user's ScheduleFn search space (trusted code)
and each task's best schedule in the report and the tuning panel."""

from __future__ import annotations

import os
import shutil

import pytest

from pipeline_model.document import Step
from pipeline_model.passkinds.metaschedule.config import TuningProgress, estimate_eta, format_eta, format_progress_line
from pipeline_model.passkinds.metaschedule.focus import SCHEDULE_FN_TEMPLATE, FocusError, focus_settings, is_targeted, shorten
from pipeline_model.passkinds.metaschedule.script import allocate_trials, choose_tuning_functions, load_schedule_fn, plan_targeted_tuning
from tests.tuning_fixtures import QUICK_SEARCH

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPES = os.path.join(ROOT, "resources", "pipelines")

ENTRIES = [  # a profile's entries (largest first), as engine.build.measure.profile_vm makes them
    {"name": "fused_matmul_add_relu", "kind": "prim_func", "total_us": 60.0, "share": 0.6},
    {"name": "transpose", "kind": "prim_func", "total_us": 25.0, "share": 0.25},
    {"name": "vm.builtin.alloc_tensor", "kind": "builtin", "total_us": 10.0, "share": 0.1},
    {"name": "matmul1", "kind": "prim_func", "total_us": 5.0, "share": 0.05},
]
PRIMS = ["transpose", "fused_matmul_add_relu", "transpose1", "matmul1"]


def _settings(**kw):
    return focus_settings(kw, "step 5")


# ------------------------------------------------------------------------------ choice and allocation
def test_top_k_and_share_pick_the_functions_holding_the_time():
    top = choose_tuning_functions(ENTRIES, PRIMS, "top_k", top_k=2)
    assert [c[0] for c in top] == ["fused_matmul_add_relu", "transpose"]
    assert top[0][1] == pytest.approx(0.6)
    share = choose_tuning_functions(ENTRIES, PRIMS, "share", min_share=0.2)
    assert [c[0] for c in share] == ["fused_matmul_add_relu", "transpose"]
    assert [c[0] for c in choose_tuning_functions(ENTRIES, PRIMS, "share", min_share=0.01)] == [
        "fused_matmul_add_relu", "transpose", "matmul1"]  # transpose1 was never measured: share 0
    every = choose_tuning_functions(ENTRIES, PRIMS, "all")
    assert sorted(c[0] for c in every) == sorted(PRIMS)  # builtins are not PrimFuncs of the module


def test_hand_picked_functions_are_always_tuned_and_checked():
    picked = choose_tuning_functions(ENTRIES, PRIMS, "all", functions=["matmul1"])
    assert [c[0] for c in picked] == ["matmul1"]
    both = choose_tuning_functions(ENTRIES, PRIMS, "top_k", top_k=1, functions=["transpose1"])
    assert [c[0] for c in both] == ["fused_matmul_add_relu", "transpose1"]
    with pytest.raises(ValueError, match=r"\['nope'\] are not PrimFuncs.*matmul1"):
        choose_tuning_functions(ENTRIES, PRIMS, "all", functions=["nope"])


def test_trials_follow_the_share_with_a_minimum_each():
    chosen = [("a", 0.4, 40.0), ("b", 0.4, 40.0), ("c", 0.2, 20.0)]
    assert allocate_trials(chosen, 100, 1) == {"a": 40, "b": 40, "c": 20}
    alloc = allocate_trials([("a", 0.9, 1.0), ("b", 0.1, 1.0), ("c", 0.0, 0.0)], 20, 2)
    assert alloc["a"] >= 15 and alloc["b"] >= 2 and alloc["c"] == 2 and sum(alloc.values()) == 20
    assert allocate_trials([("a", 0.0, 0.0), ("b", 0.0, 0.0)], 9, 1) in ({"a": 5, "b": 4}, {"a": 4, "b": 5})
    assert allocate_trials([("a", 0.5, 1.0), ("b", 0.5, 1.0)], 1, 3) == {"a": 3, "b": 3}  # minimums win
    assert allocate_trials([], 10, 1) == {}


def test_plan_budget_and_skipped_functions():
    plan = plan_targeted_tuning(ENTRIES, PRIMS, _settings(focus="top_k", top_k=2, min_trials=1), 8)
    assert plan["budget"] == 16  # max_trials_global per chosen function
    assert [(c["name"], c["trials"]) for c in plan["chosen"]] == [("fused_matmul_add_relu", 11), ("transpose", 5)]
    assert plan["skipped"] == ["matmul1", "transpose1"]
    plan = plan_targeted_tuning(ENTRIES, PRIMS, _settings(focus="share", min_share=0.2, total_trials=10), 64)
    assert plan["budget"] == 10 and sum(c["trials"] for c in plan["chosen"]) == 10


def test_focus_settings_messages_name_the_parameter():
    assert not is_targeted({"max_trials_global": 4}) and not is_targeted({"focus": "all", "functions": []})
    assert is_targeted({"focus": "top_k"}) and is_targeted({"functions": ["f"]})
    assert is_targeted({"schedule_fn": "def schedule(sch): pass"})
    for params, name in (({"focus": "most"}, "focus"), ({"top_k": 0}, "top_k"), ({"min_share": 1.5}, "min_share"),
                         ({"functions": "f"}, "functions"), ({"min_trials": 0}, "min_trials"),
                         ({"total_trials": -1}, "total_trials")):
        with pytest.raises(FocusError, match=f"step 5: parameter '{name}'"):
            focus_settings(params, "step 5")


def test_schedule_fn_loading_and_shortening():
    assert load_schedule_fn(SCHEDULE_FN_TEMPLATE, "<s>").__name__ == "schedule"
    assert load_schedule_fn("def helper(x):\n    return x\n\ndef mine(sch):\n    pass\n", "<s>").__name__ == "mine"
    with pytest.raises(ValueError, match="defines no schedule function"):
        load_schedule_fn("x = 1\n", "<s>")
    text = "x" * 5000
    assert len(shorten(text, 100)) < 200 and "4900 more characters" in shorten(text, 100)
    assert shorten("short", 100) == "short"


# ------------------------------------------------------------------------------------------- ETA
def test_eta_from_trials_done_and_elapsed():
    assert estimate_eta(0, 10, 5.0) is None
    assert estimate_eta(4, 10, 8.0) == pytest.approx(12.0)
    assert estimate_eta(10, 10, 8.0) == 0.0
    assert format_eta(65) == "1m05s" and format_eta(3700) == "1h01m" and format_eta(None) == "?"
    p = TuningProgress(done=4, total=10, eta_s=12.0)
    assert format_progress_line(p.to_json()) == "tuning 4/10 trials, ETA 12s"
    p.finished = True
    assert "ETA" not in format_progress_line(p.to_json())
    plan = TuningProgress(total=6, focus={"focus": "top_k", "chosen": [{"name": "f", "share": 0.7, "trials": 6}]})
    plan.task("f")
    plan.task("g").status = "not targeted"
    assert format_progress_line(plan) == "tuning 0/6 trials (targeted, focus top_k: f 70.0% -> 6); f 0 (-), 1 not targeted"


# ------------------------------------------------------------------------------ kind: report, trust, export
def test_report_lists_chosen_functions_and_best_schedules():
    from pipeline_model.passkinds.metaschedule import tuning_html

    summary = {"done": 3, "total": 3, "finished": True, "work_dir": "/w", "tasks": [{"name": "f", "trials": 3}],
               "focus": {"focus": "top_k", "budget": 3, "chosen": [{"name": "f", "share": 0.6, "trials": 3}],
                         "skipped": ["g"], "profile": {"source": "measured"}},
               "best": {"f": {"trace": "b0 = sch.get_sblock(name=\"matmul\")", "tir": "@T.prim_func\ndef main(): ...",
                              "trace_file": "/w/best/f.trace.py", "tir_file": "/w/best/f.tir.py"}}}
    html = tuning_html(summary, {}, "")
    assert "60.0 %" in html and "Not tuned: g" in html and "measured for this step" in html
    assert "get_sblock" in html and "/w/best/f.tir.py" in html and "@T.prim_func" in html


def test_schedule_fn_is_user_code_for_the_trust_machinery():
    from pipeline_model.passkinds.metaschedule import KIND

    plain = Step(pass_id="relax.MetaScheduleTuneTIR", params={"focus": "top_k"})
    assert KIND.user_code(plain, None, 5) == []
    step = Step(pass_id="relax.MetaScheduleTuneTIR", params={"schedule_fn": SCHEDULE_FN_TEMPLATE})
    refs = KIND.user_code(step, None, 5)
    assert len(refs) == 1 and refs[0].read() == SCHEDULE_FN_TEMPLATE
    assert refs[0].filenames == ("<schedule_fn of step 5>",)


def test_export_of_a_targeted_step_computes_the_same_plan(tmp_path):
    from pipeline_model.export import export_script
    from pipeline_model.fileformat import load_pipeline
    from pipeline_model.passkinds.metaschedule.script import TARGETED_HELPERS

    doc = load_pipeline(os.path.join(PIPES, "tuning_mlp_cpu.json"))
    doc.steps[4].params.update({"focus": "top_k", "top_k": 2, "schedule_fn": SCHEDULE_FN_TEMPLATE})
    source = export_script(doc)
    compile(source, "<exported>", "exec")
    for helper in TARGETED_HELPERS:
        assert f"def {helper.__name__}(" in source
    assert "tune_tir = install_meta_schedule_cpu(WORK_DIR, {" in source
    assert "pass_ = targeted_tuning_pass(tune_tir, WORK_DIR, {'focus': 'top_k', 'top_k': 2" in source
    assert "sample_perfect_tile" in source and "'<schedule_fn of step 5>'" in source
    # the plain step still exports TVM's own pass
    doc.steps[4].params = {"max_trials_global": 4}
    plain = export_script(doc)
    assert "targeted_tuning_pass(" not in plain and "MetaScheduleTuneTIR(work_dir=WORK_DIR" in plain


# ------------------------------------------------------------------------------------------- panel
def test_panel_shows_eta_tooltip_and_full_best_schedule(qtbot, tmp_path):
    from widgets.tuning_panel import TuningPanel

    panel = TuningPanel()
    qtbot.addWidget(panel)
    data = TuningProgress(done=2, total=6, elapsed_s=4.0, eta_s=8.0).to_json()
    data["tasks"] = [{"name": "f", "trials": 2, "best_us": 10.0, "errors": 0, "reused": False, "status": "tuning"}]
    panel.update_progress(data)
    assert "left" in panel.title.text()
    full = tmp_path / "f.tir.py"
    full.write_text("# the whole tuned TensorIR\n" + "x = 1\n" * 500)
    data.update(done=6, eta_s=None, finished=True,
                focus={"chosen": [{"name": "f", "share": 0.75, "trials": 6}]},
                best={"f": {"trace": "b0 = sch.get_sblock(name=\"matmul\")", "tir": "short", "tir_file": str(full)}})
    panel.update_progress(data)
    assert "left" not in panel.title.text()
    tip = panel.table.item(0, 0).toolTip()
    assert "75.0 %" in tip and "get_sblock" in tip
    text = panel.best_schedule_text("f")
    assert "the whole tuned TensorIR" in text and text.count("x = 1") == 500 and "get_sblock" in text
    assert panel.best_schedule_text("other") == ""


# ------------------------------------------------------------------------------------------ TVM part
tvm = pytest.importorskip("tvm")
TARGET = {"kind": "llvm", "num-cores": 2}


@pytest.fixture(scope="module")
def lowered_mlp():
    from tvm import relax

    from pipeline_model.importers import load_tvm

    loaded = load_tvm.load_model("builtin:mlp", None)
    seq = tvm.transform.Sequential([relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(),
                                    relax.transform.FuseOps(), relax.transform.FuseTIR()])
    with tvm.transform.PassContext(opt_level=3):
        return seq(loaded.mod)


def _tune(mod, params, work_dir, **kw):
    from pipeline_model.passkinds.metaschedule import pass_tvm

    report: dict = {}
    tune = pass_tvm.make_tuning_pass("relax.MetaScheduleTuneTIR", params, TARGET, str(work_dir), report=report,
                                       step_number=5, **kw)
    with tvm.target.Target(TARGET), tvm.transform.PassContext(opt_level=3):
        tune(mod)
    return report


def test_schedule_fn_needs_trust_and_names_its_failing_line(lowered_mlp, tmp_path):
    from pipeline_model.passkinds.metaschedule import pass_tvm
    from pipeline_model.passkinds.metaschedule.config import TuningConfigError

    params = {"functions": ["matmul1"], "max_trials_global": 1, "num_trials_per_iter": 1, "search_population": 64,
              "schedule_fn": "def schedule(sch):\n    sch.get_sblock('nope', 'main')\n"}
    with pytest.raises(TuningConfigError, match=r"<schedule_fn of step 5>: custom Python code is not trusted"):
        pass_tvm.make_tuning_pass("relax.MetaScheduleTuneTIR", params, TARGET, str(tmp_path), step_number=5)
    with pytest.raises(TuningConfigError, match=r"<schedule_fn of step 5>: syntax error at line 1"):
        pass_tvm.make_tuning_pass("relax.MetaScheduleTuneTIR", {**params, "schedule_fn": "def (:"}, TARGET,
                                    str(tmp_path), trusted=True, step_number=5)
    with pytest.raises(Exception, match=r"failed on PrimFunc matmul1: line 2: .*Cannot find a block with the name: nope"):
        _tune(lowered_mlp, params, tmp_path / "wd", trusted=True)
    with pytest.raises(TuningConfigError, match="need relax.MetaScheduleTuneTIR"):
        pass_tvm.make_tuning_pass("relax.MetaScheduleTuneIRMod", {"focus": "top_k"}, TARGET, str(tmp_path))


def test_unknown_hand_picked_function_is_named(lowered_mlp, tmp_path):
    with pytest.raises(Exception, match=r"targeted tuning: functions \['nope'\] are not PrimFuncs.*fused_matmul_add_relu"):
        _tune(lowered_mlp, {"functions": ["nope"], "max_trials_global": 1}, tmp_path / "wd")


def test_targeted_run_in_the_engine_tunes_only_the_top_function(engine, tmp_path):
    """A real run: the engine profiles the step's input, tunes only the top PrimFunc with the whole
    budget, reports the plan, the best schedule (trace + TIR, full texts in files) and an ETA while it
    runs; the apply step schedules that function only."""
    from pipeline_model.fileformat import load_pipeline, save_pipeline

    path = tmp_path / "targeted.json"
    shutil.copy(os.path.join(PIPES, "tuning_mlp_cpu.json"), path)
    doc = load_pipeline(str(path))
    doc.steps[4].params = {"focus": "top_k", "top_k": 1, "max_trials_global": 2, "num_trials_per_iter": 1,
                           "search_population": 64, **QUICK_SEARCH}
    save_pipeline(doc, str(path))
    doc = load_pipeline(str(path))
    events = []
    res = engine.run(doc, on_event=lambda name, data: events.append(data) if name == "tuning_progress" else None)
    assert res.ok, (res.error, [s.error for s in res.steps])
    summary = res.steps[4].report["tuning"]
    plan = summary["focus"]
    assert plan["profile"]["source"] in ("measured", "stored") and plan["budget"] == 2
    assert [c["name"] for c in plan["chosen"]] == ["fused_matmul_add_relu"] and plan["chosen"][0]["trials"] == 2
    assert 0 < plan["chosen"][0]["share"] <= 1 and "matmul1" in plan["skipped"]
    statuses = {t["name"]: t["status"] for t in summary["tasks"]}
    assert statuses["matmul1"] == "not targeted" and statuses["fused_matmul_add_relu"] == "done"
    best = summary["best"]["fused_matmul_add_relu"]
    assert "sch.get_sblock" in best["trace"] and "T.prim_func" in best["tir"]
    with open(best["tir_file"], encoding="utf-8") as fh:
        assert len(fh.read()) == best["tir_chars"]
    assert any(e.get("eta_s") is not None for e in events if not e.get("finished"))
    assert res.steps[5].report["apply_database"]["applied"] == ["fused_matmul_add_relu"]
