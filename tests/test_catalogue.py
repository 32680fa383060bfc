"""Pass catalogue: coverage of tvm.relax.transform, instantiation with defaults, JSON round trip, params."""

from __future__ import annotations

import json

import numpy as np
import pytest

tvm = pytest.importorskip("tvm")

from pipeline_model.catalogue import Catalogue, PassSpec, ParamSpec  # noqa: E402
from pipeline_model.passkinds import catalogue_tvm  # noqa: E402
from pipeline_model.passkinds.catalogue_tvm import EXCLUDED, PassBuildContext, PassConfigError, make_pass  # noqa: E402


@pytest.fixture(scope="module")
def cat() -> Catalogue:
    return catalogue_tvm.build_catalogue()


def test_every_relax_constructor_is_catalogued_or_excluded(cat):
    missing = []
    for name in catalogue_tvm.relax_constructor_names():
        if f"relax.{name}" in cat:
            continue
        if name in EXCLUDED and EXCLUDED[name].strip():
            continue
        missing.append(name)
    assert not missing, f"tvm.relax.transform names neither in the catalogue nor in EXCLUDED: {missing}"
    assert not cat.meta["not_buildable"], cat.meta["not_buildable"]


def test_excluded_table_is_not_stale():
    names = set(catalogue_tvm.relax_constructor_names())
    assert set(EXCLUDED) <= names, set(EXCLUDED) - names


def test_contract_ids_present(cat):
    required = [
        "relax.LegalizeOps", "relax.FuseOps", "relax.FuseTIR", "relax.AnnotateTIROpPattern", "relax.FoldConstant",
        "relax.DeadCodeElimination", "relax.FuseOpsByPattern", "relax.MetaScheduleTuneTIR",
        "relax.MetaScheduleTuneIRMod", "relax.MetaScheduleApplyDatabase", "pipeline.zero",
        "pipeline.default_build", "pipeline.static_shape_tuning", "dlight.ApplyDefaultSchedule", "custom.python",
    ] + [f"stage.{b}.{f}" for b in ("cpu_generic", "cuda") for f in
         ("library_dispatch_passes", "legalize_passes", "dataflow_lower_passes", "finalize_passes")]
    assert [r for r in required if r not in cat] == []
    rules = cat.get("dlight.ApplyDefaultSchedule").param("rules")
    for r in ("gpu.Matmul", "gpu.GEMV", "gpu.Reduction", "gpu.GeneralReduction", "gpu.Fallback", "cpu.GEMV",
              "cpu.Reduction"):
        assert r in rules.choices
    assert cat.get("custom.python").needs_trust
    assert cat.get("pipeline.zero").composite


@pytest.mark.parametrize("target", [{"kind": "llvm"}, {"kind": "cuda", "arch": "sm_80"}], ids=["llvm", "cuda"])
def test_every_spec_builds_with_defaults(cat, target, tmp_path):
    # A model with weights of its own (weights.BindAsConstants refuses to build without them).
    ctx = PassBuildContext(target=target, trust_custom_code=True, work_dir=str(tmp_path),
                           weights=lambda: {"w": np.zeros((2, 2), "float32")})
    failures = {}
    for spec in cat.specs():
        if not spec.available:
            assert spec.unavailable_reason, spec.id
            with pytest.raises(PassConfigError, match="not available"):
                make_pass(spec.id, {}, ctx)
            continue
        try:
            result = make_pass(spec.id, {}, ctx)
        except PassConfigError as exc:
            failures[spec.id] = str(exc)
            continue
        assert isinstance(result, tvm.transform.Pass), spec.id
    assert not failures, failures


def test_json_round_trip(cat):
    data = json.loads(json.dumps(cat.to_json()))
    again = Catalogue.from_json(data)
    assert again.to_json() == cat.to_json()
    assert again.ids() == cat.ids()
    assert again.categories() == cat.categories()
    assert cat.categories()[0] == "Lowering"


def test_pattern_table_codegen_notes(cat):
    spec = cat.get("relax.FuseOpsByPattern")
    prefix = spec.param("table_prefix")
    assert "cublas" in prefix.choices and "cutlass" in prefix.choices
    note = prefix.choice_notes["cublas"]
    if tvm.get_global_func("relax.ext.cublas", True) is None:
        assert "relax.ext.cublas codegen is not in this TVM build" in note
        assert "relax.ext.cublas" in spec.warning


def test_validate_params(cat):
    cleaned, errors = cat.validate_params("relax.FuseOps", {})
    assert cleaned == {"fuse_opt_level": -1} and errors == []
    _, errors = cat.validate_params("relax.FuseOps", {"fuse_opt_level": "x", "bogus": 1})
    assert any("fuse_opt_level" in e and "integer" in e for e in errors)
    assert any("bogus" in e for e in errors)
    _, errors = cat.validate_params("dlight.ApplyDefaultSchedule", {"rules": ["gpu.Nope"]})
    assert errors and "gpu.Nope" in errors[0]
    _, errors = cat.validate_params("relax.TopologicalSort", {"order": "sideways"})
    assert errors
    _, errors = cat.validate_params("no.such", {})
    assert errors == ["unknown pass 'no.such'"]
    with pytest.raises(PassConfigError, match="fuse_opt_level"):
        make_pass("relax.FuseOps", {"fuse_opt_level": True})
    with pytest.raises(PassConfigError, match="unknown pass"):
        make_pass("relax.NoSuchPass", {})


def test_dlight_default_rules_follow_the_target(cat):
    """Issue 33: DLight dropped on an llvm target started with gpu.* rules and scheduled nothing. The
    catalogue's default is the target's, for the form (for_target), the run and the export (validate_params)."""
    cpu, gpu = {"kind": "llvm", "mcpu": "native"}, {"kind": "cuda", "arch": "sm_80"}
    on_cpu, _ = cat.validate_params("dlight.ApplyDefaultSchedule", {}, cpu)
    on_gpu, _ = cat.validate_params("dlight.ApplyDefaultSchedule", {}, gpu)
    assert on_cpu["rules"] and not any(r.startswith("gpu.") for r in on_cpu["rules"])
    assert on_gpu["rules"] and all(r.startswith("gpu.") for r in on_gpu["rules"])
    spec = cat.get("dlight.ApplyDefaultSchedule")
    assert spec.for_target(cpu).param("rules").default == on_cpu["rules"] == spec.defaults(cpu)["rules"]
    assert PassSpec.from_json(json.loads(json.dumps(spec.to_json()))) == spec  # the GUI gets the same defaults
    given, _ = cat.validate_params("dlight.ApplyDefaultSchedule", {"rules": ["gpu.Fallback"]}, cpu)
    assert given["rules"] == ["gpu.Fallback"]  # a value the user set stays


def test_reproducer_piece_takes_the_runs_target_defaults(cat):
    """A reproducer's step is the step as the run built it: DLight's default rules on the run's CPU target."""
    from types import SimpleNamespace

    from pipeline_model.engine.debugging.reproducer_tvm import export_piece

    ctx = SimpleNamespace(catalogue=lambda: cat)
    piece = "\n".join(sum(export_piece("dlight.ApplyDefaultSchedule", {}, 0, ctx, {"kind": "llvm"}).values(), []))
    assert "CPUMatmul" in piece and "gpu.Matmul" not in piece and "dlight.gpu" not in piece


def test_search(cat):
    hits = [s.id for s in cat.search("fuse tir")]
    assert hits[0] == "relax.FuseTIR"
    assert "relax.LegalizeOps" in [s.id for s in cat.search("legalize")]
    assert cat.search("zzzz-not-there") == []


def test_unavailable_spec_round_trips():
    spec = PassSpec("x.Y", "Y", "Custom", "doc", [ParamSpec("a", "int", 1)], available=False,
                    unavailable_reason="relax.ext.foo codegen is not in this TVM build")
    again = PassSpec.from_json(json.loads(json.dumps(spec.to_json())))
    assert again == spec


def test_dlight_schedules_mlp_for_cuda():
    from tvm import relax
    from tvm.script import relax as R

    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((1, 784), "float32"))
    w = relax.Var("w", R.Tensor((784, 256), "float32"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            y = bb.emit(relax.op.nn.relu(relax.op.matmul(x, w)))
            out = bb.emit_output(y)
        bb.emit_func_output(out)
    mod = bb.get()
    ctx = PassBuildContext(target={"kind": "cuda", "arch": "sm_80"})
    target = ctx.tvm_target()
    with target, tvm.transform.PassContext(opt_level=3):
        mod = make_pass("pipeline.zero", {}, ctx)(mod)
        mod = make_pass("dlight.ApplyDefaultSchedule", {}, ctx)(mod)
    scheduled = [gv.name_hint for gv, f in mod.functions.items()
                 if isinstance(f, tvm.tirx.PrimFunc) and f.attrs and "tirx.is_scheduled" in f.attrs]
    assert scheduled, mod.script()


def test_passes_table_groups_and_reasons(cat):
    from pipeline_model.cli.passes_cmd import format_table

    spec = PassSpec("x.Gone", "Gone", "Fusion", "d", available=False, unavailable_reason="relax.ext.foo missing")
    local = Catalogue.from_json(cat.to_json())
    local.add(spec)
    text = format_table(local, "fusion")
    assert text.startswith("== Fusion ==") and "relax.FuseOps " in text
    assert "relax.ext.foo missing" in text and "relax.LegalizeOps" not in text
    assert cat.get("relax.FoldBatchnormToConv2D").title == "Fold Batchnorm To Conv2D"
