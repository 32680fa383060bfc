"""Tuning that only keeps wins: ``keep_wins`` of ``relax.MetaScheduleApplyDatabase`` (decision with injected
timings, the result text, the exported script, one real run through the engine)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from pipeline_model.emit import helper_source
from pipeline_model.latency_stats import compare_runs
from pipeline_model.passkinds.metaschedule import keep
from pipeline_model.passkinds.metaschedule.report import apply_database_html, keep_line, tuning_line

APP_RULES = ["app.CPUMatmul", "app.CPUConv2d", "app.CPUParallel"]


def _compare(a: list[float], b: list[float]) -> dict[str, Any]:
    return compare_runs(a, b, paired=True).to_json()


def _runs(center: float, n: int = 40, wobble: float = 0.01) -> list[float]:
    """``n`` paired samples around ``center`` (a deterministic ±``wobble`` pattern)."""
    return [center * (1.0 + wobble * ((k % 5) - 2) / 2.0) for k in range(n)]


def _noisy(center: float, period: int = 11, n: int = 40) -> list[float]:
    """Samples spread ±30 % in a pattern of ``period`` (two periods: the pairs' ratios spread too), which covers a
    5 % difference."""
    half = (period - 1) / 2.0
    return [center * (1.0 + 0.3 * ((k * 7 % period) - half) / half) for k in range(n)]


def _timing(funcs: dict[str, list[float]], wall: list[float]) -> dict[str, Any]:
    return {"wall_us": wall, "funcs": funcs}


def test_judge_keeps_only_a_tuned_function_faster_beyond_noise():
    default = _timing({"fast": _runs(200.0), "slow": _runs(100.0), "same": _noisy(100.0)}, _runs(400.0))
    tuned = _timing({"fast": _runs(150.0), "slow": _runs(130.0), "same": _noisy(95.0, 13)}, _runs(380.0))
    out = {d["name"]: d for d in keep.judge_functions(["fast", "slow", "same", "gone"], default, tuned, _compare)}
    assert out["fast"]["verdict"] == "faster" and out["fast"]["kept"] == "tuned"
    assert out["slow"]["verdict"] == "slower" and out["slow"]["kept"] == "default"
    assert out["same"]["verdict"] == "no_difference" and out["same"]["kept"] == "default"
    assert out["gone"]["verdict"] == "missing" and out["gone"]["kept"] == "default"
    assert keep.decision_text(out["fast"]) == "fast: tuned 150.0 µs vs default 200.0 µs, faster beyond noise: tuned kept"
    assert keep.decision_text(out["same"]).endswith("within noise: default kept")
    assert keep.decision_text({**out["slow"], "tuned_us": 1800.0, "default_us": 2000.0}) == (
        "slow: tuned 1.80 ms vs default 2.00 ms, slower beyond noise: default kept")


def test_a_function_that_packs_its_weight_is_judged_under_its_prepacked_name():
    """A default schedule that packs a weight runs as ``<name>_prepacked`` once its packing is split off (as
    deployed); the tuned rival may or may not pack. Each is found under either name and judged: before, every
    packed default schedule (ResNet-18's convolutions) came out "not timed in the model"."""
    default = _timing({"conv_prepacked": _runs(200.0), "mm_prepacked": _runs(100.0)}, _runs(400.0))
    tuned = _timing({"conv": _runs(150.0), "mm_prepacked": _runs(130.0)}, _runs(380.0))
    out = {d["name"]: d for d in keep.judge_functions(["conv", "mm"], default, tuned, _compare)}
    assert out["conv"]["verdict"] == "faster" and out["conv"]["kept"] == "tuned"
    assert out["conv"]["default_us"] == pytest.approx(200.0, rel=0.02)
    assert out["mm"]["verdict"] == "slower" and out["mm"]["kept"] == "default"


# ------------------------------------------------------------------------- keep_faster on a real module
def _lowered_mlp() -> Any:
    import tvm
    from tvm import relax

    from pipeline_model.importers.load_tvm import load_model

    loaded = load_model("builtin:mlp", None)
    mod = loaded.mod if hasattr(loaded, "mod") else loaded[0]
    seq = tvm.transform.Sequential([relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(),
                                    relax.transform.FuseOps(), relax.transform.FuseTIR()])
    with tvm.transform.PassContext(opt_level=3):
        return seq(mod)


def _mlp_case() -> tuple[Any, Any, Any]:
    """(the lowered MLP, it with two "tuned" PrimFuncs — marked scheduled, loops unchanged —, the app rules'
    default schedule function)."""
    import tvm
    from tvm.s_tir import dlight

    from pipeline_model.passkinds.metaschedule.seed_tvm import app_rules

    mod = _lowered_mlp()
    applied = mod.clone()
    for name in ("fused_matmul_add_relu", "transpose"):
        applied.update_func(applied.get_global_var(name), mod[name].with_attr("tirx.is_scheduled", True))
    rules = app_rules(APP_RULES)

    def schedule_default(m: Any) -> Any:
        with tvm.target.Target({"kind": "llvm", "num-cores": 2}):
            return dlight.ApplyDefaultSchedule(*rules)(m)

    return mod, applied, schedule_default


def _scheduled(func: Any) -> bool:
    return bool(func.attrs is not None and func.attrs.get("tirx.is_scheduled", False))


def test_keep_faster_keeps_the_winner_and_leaves_the_loser_to_the_default_schedule():
    mod, applied, schedule_default = _mlp_case()
    calls: list[int] = []

    def measure(mods: list[Any]) -> list[dict[str, Any]]:  # injected: the tuned fused matmul wins, transpose loses
        calls.append(len(mods))
        assert _scheduled(mods[0]["fused_matmul_add_relu"]) and _scheduled(mods[1]["fused_matmul_add_relu"])
        return [_timing({"fused_matmul_add_relu": _runs(180.0), "transpose": _runs(40.0)}, _runs(260.0)),
                _timing({"fused_matmul_add_relu": _runs(60.0), "transpose": _runs(55.0)}, _runs(150.0))]

    out, report = keep.keep_faster(mod, applied, schedule_default, measure, _compare)
    assert calls == [2, 2]  # all tuned, then the mix that was kept
    assert report["kept_tuned"] == ["fused_matmul_add_relu"] and report["kept_default"] == ["transpose"]
    assert _scheduled(out["fused_matmul_add_relu"]) and not _scheduled(out["transpose"])  # the dlight step schedules it
    assert [w["verdict"] for w in report["whole"]] == ["faster", "faster"]
    assert report["lines"][0] == ("fused_matmul_add_relu: tuned 60.0 µs vs default 180.0 µs, faster beyond noise: "
                                  "tuned kept")
    assert "transpose: tuned 55.0 µs vs default 40.0 µs, slower beyond noise: default kept" in report["lines"]
    assert keep_line(report) == (
        "tuned schedule kept for 1 of 2 PrimFunc(s) (faster in the model beyond noise), the default schedule for 1")
    assert tuning_line({"apply_database": {"keep": report}}) == keep_line(report)  # the apply step's result line
    html = apply_database_html({"applied": ["fused_matmul_add_relu", "transpose"], "missing": [], "keep": report}, {}, "")
    assert "faster beyond noise: tuned kept" in html and "slower beyond noise: default kept" in html


def test_a_model_not_faster_beyond_noise_keeps_the_default_everywhere():
    mod, applied, schedule_default = _mlp_case()

    def measure(mods: list[Any]) -> list[dict[str, Any]]:  # every function faster, the whole model within noise
        return [_timing({"fused_matmul_add_relu": _runs(180.0), "transpose": _runs(40.0)}, _noisy(260.0)),
                _timing({"fused_matmul_add_relu": _runs(150.0), "transpose": _runs(30.0)}, _noisy(250.0, 13))]

    out, report = keep.keep_faster(mod, applied, schedule_default, measure, _compare)
    assert report["kept_tuned"] == [] and sorted(report["kept_default"]) == ["fused_matmul_add_relu", "transpose"]
    assert report["whole"][0]["verdict"] == "no_difference"
    assert all(d.get("overruled") for d in report["functions"])
    assert all(line.endswith("(overruled: the whole model is not faster beyond noise)") for line in report["lines"][:2])
    assert not _scheduled(out["fused_matmul_add_relu"]) and not _scheduled(out["transpose"])


def test_a_best_record_that_is_the_default_schedule_is_not_timed():
    mod, _applied, schedule_default = _mlp_case()
    default = schedule_default(mod.clone())
    seeded = mod.clone()
    seeded.update_func(seeded.get_global_var("transpose"), default["transpose"])

    def measure(mods: list[Any]) -> list[dict[str, Any]]:
        raise AssertionError("nothing to time")

    out, report = keep.keep_faster(mod, seeded, schedule_default, measure, _compare)
    assert report["same"] == ["transpose"] and report["kept_default"] == ["transpose"] and report["kept_tuned"] == []
    assert out.same_as(mod)


# ------------------------------------------------------------------------------------------ exported script
def test_variants_are_timed_as_deployed_builds_run_with_their_weights_prepared_once():
    """The in-model timing builds each variant as the pipeline deploys it: what runs on the weights alone (the
    MLP's weight transpose, a default schedule's weight packing) is lifted into ``main_transform_params`` and
    run once, outside the timed calls. Timed as they stood at the apply step, the default schedules repacked
    their weights at every call and the tuned GPT-2 ``.onnx`` was kept "faster" (612 us vs 1.02 ms) and built
    1.25x slower than the default."""
    from pipeline_model.engine.build.profile import time_variants

    mod, _applied, schedule_default = _mlp_case()
    default_built = schedule_default(mod.clone())
    assert "transpose" in default_built.script()  # called by main at every run before lifting
    timed = time_variants([default_built, default_built], {"kind": "llvm", "num-cores": 2})
    for variant in timed:
        assert "fused_matmul_add_relu_prepacked" in variant["funcs"], sorted(variant["funcs"])  # packing split off
        assert not any(name.startswith("transpose") for name in variant["funcs"]), sorted(variant["funcs"])
        assert len(variant["wall_us"]) == keep.KEEP_ROUNDS * keep.KEEP_RUNS_PER_ROUND


def test_exported_apply_step_runs_the_engines_decision_and_statistics(tmp_path):
    from pipeline_model.export import export_script
    from pipeline_model.fileformat import load_pipeline
    from pipeline_model.latency_stats import bootstrap_paired_interval

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    doc = load_pipeline(os.path.join(root, "resources", "pipelines", "tuning_mlp_cpu.json"))
    doc.steps[5].params["keep_wins"] = APP_RULES
    script = export_script(doc, work_dir=str(tmp_path))
    for func in (keep.keep_faster, keep.time_in_place, keep.judge_functions, compare_runs, bootstrap_paired_interval):
        assert helper_source(func) in script
    assert "pass_ = keep_wins_pass([CPUMatmul(), CPUConv2d(), CPUParallel()])(pass_)" in script
    assert "class CPUMatmul(" in script
    assert helper_source(keep.steady_state) in script and "def prepacked_vm(" in script  # timed as deployed
    compile(script, "<script>", "exec")


@pytest.mark.parametrize("bad", [["app.Nope"]])
def test_unknown_keep_wins_rule_is_one_clear_line(bad):
    from pipeline_model.passkinds.metaschedule.config import APPLY_DATABASE
    from pipeline_model.passkinds.metaschedule.pass_tvm import make_tuning_pass
    from pipeline_model.passkinds.metaschedule.script import TuningConfigError

    with pytest.raises(TuningConfigError, match=r"keep_wins names unknown rules \['app.Nope'\]"):
        make_tuning_pass(APPLY_DATABASE, {"keep_wins": bad}, {"kind": "llvm"}, "/tmp/x", step_number=6,
                         measure_fn=lambda mods: [])
