"""DLight report: which PrimFunc got which rule, which none did, GPU warnings (CUDA target, no GPU needed)."""

from __future__ import annotations

import pytest

tvm = pytest.importorskip("tvm")

from pipeline_model.passkinds.dlight import report_tvm as dr  # noqa: E402

CUDA = {"kind": "cuda", "arch": "sm_80"}


@pytest.fixture(scope="module")
def lowered_mlp():
    from pipeline_model.importers import load_tvm
    from tests.tuning_fixtures import lowered

    return lowered(load_tvm.load_model("builtin:mlp", None).mod)


def test_gpu_rules_report_and_scheduled_module(lowered_mlp):
    report: dict = {}
    step = dr.make_reporting_pass(["gpu.Matmul", "gpu.GEMV", "gpu.Reduction", "gpu.Fallback"], report)
    with tvm.target.Target(CUDA), tvm.transform.PassContext(opt_level=3):
        out = step(lowered_mlp)
    info = report["dlight"]
    prim_funcs = sorted(gv.name_hint for gv, f in lowered_mlp.functions_items() if isinstance(f, tvm.tirx.PrimFunc))
    assert sorted(info["scheduled"]) == prim_funcs and info["unscheduled"] == [] and info["warnings"] == []
    assert set(info["scheduled"].values()) <= {"gpu.Matmul", "gpu.GEMV", "gpu.Reduction", "gpu.Fallback"}
    assert info["gpu"] and info["no_thread_binding"] == []
    # the same result as the stock pass
    from tvm.s_tir import dlight as dl

    with tvm.target.Target(CUDA), tvm.transform.PassContext(opt_level=3):
        stock = dl.ApplyDefaultSchedule(dl.gpu.Matmul(), dl.gpu.GEMV(), dl.gpu.Reduction(), dl.gpu.Fallback())(lowered_mlp.clone())
    tvm.ir.assert_structural_equal(out, stock)
    # and the analysis without changing the module agrees
    with tvm.target.Target(CUDA):
        assert dr.dlight_report(lowered_mlp, ["gpu.Matmul", "gpu.GEMV", "gpu.Reduction", "gpu.Fallback"])["scheduled"] == info["scheduled"]


def test_unscheduled_primfunc_warns_on_gpu(lowered_mlp):
    report: dict = {}
    step = dr.make_reporting_pass(["gpu.Matmul"], report)
    with tvm.target.Target(CUDA), tvm.transform.PassContext(opt_level=3):
        step(lowered_mlp)
    info = report["dlight"]
    assert "transpose" in info["unscheduled"]
    assert "transpose" in info["no_thread_binding"]
    assert any(w.startswith("transpose:") and "thread binding" in w for w in info["warnings"])


def test_cpu_target_no_gpu_warning(lowered_mlp):
    info = dr.dlight_report(lowered_mlp, ["cpu.GEMV", "cpu.Reduction"], {"kind": "llvm"})
    assert not info["gpu"] and info["warnings"] == []
    assert set(info["unscheduled"]) | set(info["scheduled"]) >= {"transpose"}


def test_unknown_rule_message():
    with pytest.raises(ValueError, match="unknown DLight rule 'gpu.Nope'"):
        dr.rule_from_name("gpu.Nope")


def test_catalogue_step_matches_stock_pass_and_reports(lowered_mlp):
    """make_pass builds the rules from the shared recipe (what exported scripts run) and applies them
    like the stock ApplyDefaultSchedule: same module, plus the report."""
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds import catalogue_tvm

    rules = ["gpu.Matmul", "gpu.Reduction", "gpu.Fallback"]
    ctx = catalogue_tvm.PassBuildContext(target=CUDA)
    step = catalogue_tvm.make_pass("dlight.ApplyDefaultSchedule", {"rules": rules}, ctx)
    stock = dl.ApplyDefaultSchedule(dl.gpu.Matmul(), dl.gpu.Reduction(), dl.gpu.Fallback())
    with tvm.target.Target(CUDA), tvm.transform.PassContext(opt_level=3):
        ours = step(lowered_mlp.clone())
        theirs = stock(lowered_mlp.clone())
    tvm.ir.assert_structural_equal(ours, theirs)
    report = ctx.report["dlight"]
    assert report["rules"] == rules and set(report["scheduled"]) and not report["unscheduled"]


def test_rule_names_match_the_step_parameters():
    """Reports name rules as the step's ``rules`` parameter does, the app's own ones included."""
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds.dlight.rules.cpu_parallel_tvm import CPUParallel

    assert [dr.rule_name(r) for r in (dl.gpu.Matmul(), dl.cpu.GEMV(), CPUParallel())] == \
        ["gpu.Matmul", "cpu.GEMV", "app.CPUParallel"]
