"""``main.py diverge`` (issue 21): the first diverging node is the binding a wrong step rewrote (or the fused
call holding it)."""

from __future__ import annotations

import argparse
import json
import os

import pytest

from pipeline_model.cli import diverge_cmd
from tests.debug_fixtures import ROOT, injected_pipeline

CNN = os.path.join(ROOT, "resources", "models", "cnn_bn.onnx")


def _diverge(argv: list[str], engine) -> int:
    parser = argparse.ArgumentParser()
    diverge_cmd.add_parser(parser.add_subparsers(dest="command"))
    return diverge_cmd.main(parser.parse_args(["diverge", *argv]), client=engine)


def test_table_marks_the_first_node():
    reply = {"step": 3, "pass_id": "custom.python", "function": "main", "first_divergent": "add", "only_before": ["x"],
             "nodes": [{"name": "mm", "callee": "relax.matmul", "shape": [1, 4], "status": "ok", "max_abs_over_ref": 0.0},
                       {"name": "add", "callee": "relax.subtract", "shape": [1, 4], "status": "diverges",
                        "max_abs_over_ref": 0.5, "first": True},
                       {"name": "lv", "shape": [2], "status": "no counterpart"}]}
    lines = diverge_cmd.table(reply)
    assert lines[2].startswith("> add") and "DIVERGES" in lines[2] and "relax.subtract" in lines[2]
    assert "no counterpart" in lines[3] and lines[-1] == "first diverging node: add"



def test_table_indents_values_inside_a_call_and_names_the_first_inside():
    reply = {"step": 6, "pass_id": "custom.python", "function": "main", "first_divergent": "lv",
             "first_inside": "lv/add", "only_before": [],
             "nodes": [{"name": "lv", "key": "lv", "callee": "fused_matmul_add_relu", "shape": [1, 4],
                        "status": "diverges", "max_abs_over_ref": 0.5, "first": True},
                       {"name": "add", "key": "lv/add", "parent": "lv", "callee": "add", "shape": [1, 4],
                        "status": "diverges", "max_abs_over_ref": 0.5, "first_inside": True}]}
    lines = diverge_cmd.table(reply)
    assert lines[1].startswith("> lv ") and lines[2].startswith("*   add ")
    assert lines[-1] == "first diverging node: lv (inside it: lv/add)"


@pytest.mark.e2e
@pytest.mark.parametrize("seed,level,model", [(51, "relax", "builtin:mlp"), (52, "tir", "builtin:mlp"),
                                              (53, "tir", "builtin:mlp"), (54, "tir", CNN)])
def test_first_diverging_node_is_the_rewritten_binding(engine, tmp_path, capsys, seed, level, model):
    path, wrong = injected_pipeline(str(tmp_path), 10, seed, level, model=model)
    assert _diverge([path, "--trust", "--json", "--step", str(wrong)], engine) == 1
    out = json.loads(capsys.readouterr().out)
    first = next(n for n in out["nodes"] if n.get("first"))
    assert first["name"] == out["first_divergent"]
    if level == "relax":
        assert first["callee"] == "relax.subtract", out
    else:
        assert "relu" in first["callee"] or "relu" in first["name"], out
    before = out["nodes"][: out["nodes"].index(first)]
    assert all(n["status"] in ("ok", "no counterpart") for n in before)


@pytest.mark.e2e
def test_diverge_defaults_to_the_bisect_culprit_and_a_correct_step_is_quiet(engine, tmp_path, capsys):
    path, wrong = injected_pipeline(str(tmp_path), 9, 55, "relax")
    assert _diverge([path, "--trust"], engine) == 1
    text = capsys.readouterr().out
    assert f"step {wrong} (custom.python)" in text and "first diverging node: add" in text
    assert _diverge([path, "--trust", "--step", str(wrong + 1 if wrong < 9 else wrong - 1)], engine) == 0
    assert "no node diverges" in capsys.readouterr().out


def test_run_order_puts_inner_values_before_their_call_and_marks_the_first():
    from pipeline_model.engine.debugging.diverge_tvm import mark_first, run_order

    rows = [{"key": "a", "status": "ok"}, {"key": "lv", "status": "diverges"},
            {"key": "lv/mm", "parent": "lv", "status": "ok"},
            {"key": "lv/mm/buf", "parent": "lv/mm", "status": "diverges"},
            {"key": "lv/add", "parent": "lv", "status": "diverges"}, {"key": "b", "status": "diverges"}]
    assert [r["key"] for r in run_order(rows)] == ["a", "lv/mm/buf", "lv/mm", "lv/add", "lv", "b"]
    assert mark_first(rows) == ("lv", "lv/mm/buf")
    assert rows[1].get("first") and rows[3].get("first_inside") and not rows[5].get("first")
    assert mark_first([{"key": "a", "status": "ok"}, {"key": "b", "status": "no counterpart"}]) == (None, None)


@pytest.mark.e2e
@pytest.mark.parametrize("seed,model,level", [
    (0, "builtin:mlp", "relax"),   # a binding of a module not yet legalized, offset
    (21, "builtin:mlp", "tir"),    # a PrimFunc called inside a fused Relax function (between FuseOps and FuseTIR)
    (9, "builtin:mlp", "tir"),     # a module already lowered for the VM (default_build ran): refused before
    (29, CNN, "tir"),              # lowered, an intermediate buffer of a fused PrimFunc
    (26, CNN, "relax"),            # ONNX model, scaled binding
    (13, "builtin:transformer", "relax"),  # a binding inside a fused Relax function
])
def test_first_node_is_the_rewritten_value_for_seeded_cases(engine, tmp_path, seed, model, level):
    from bench.bench_diverge import diverge_request
    from tests.debug_fixtures import diverge_case

    path, wrong, facts_path = diverge_case(str(tmp_path), seed, model, level)
    reply = engine.request("diverge", diverge_request(path, wrong))
    with open(facts_path, encoding="utf-8") as f:
        facts = json.load(f)
    assert reply["first_divergent"] == facts["expected"][0], (facts, reply["first_divergent"])
    first = [n for n in reply["nodes"] if n.get("first")]
    assert [n["key"] for n in first] == [facts["expected"][0]]
    if facts.get("inside"):
        assert str(reply["first_inside"]).split("/")[-1] == facts["inside"], (facts, reply["first_inside"])
        inner = next(n for n in reply["nodes"] if n["key"] == reply["first_inside"])
        assert inner["status"] == "diverges" and inner["parent"] == reply["first_inside"].rsplit("/", 1)[0]
    order = [n["key"] for n in reply["nodes"]]
    assert all(n["status"] in ("ok", "no counterpart") for n in reply["nodes"][: order.index(first[0]["key"])])


def test_the_two_halves_build_what_default_build_builds():
    """capture_tvm splits tvm.relax.pipeline.default_build in two: together they must lower the same module."""
    import tvm
    from tvm import relax

    from pipeline_model.engine.debugging.capture_tvm import BACK_PASSES, FRONT_PASSES, _sequential
    from pipeline_model.importers.load_tvm import load_model

    mod = load_model("builtin:mlp").mod
    with tvm.target.Target("llvm"):
        fused = relax.transform.FuseOps()(relax.transform.AnnotateTIROpPattern()(relax.transform.LegalizeOps()(mod)))
        for case in (mod, fused):
            halves = _sequential([("transform", n) for n in BACK_PASSES])(_sequential(FRONT_PASSES)(case))
            tvm.ir.assert_structural_equal(halves, relax.get_pipeline("default_build")(case))


@pytest.mark.e2e
def test_correct_fusion_steps_are_quiet(engine, tmp_path):
    """FuseOps makes one function for equal groups (three q/k/v projections call one fused_matmul_add): the
    names inside it are those of the first group only, so they are not matched by name elsewhere."""
    from bench.bench_diverge import diverge_request
    from pipeline_model.document import PipelineDocument, Step
    from pipeline_model.fileformat import save_pipeline

    steps = [Step(p) for p in ("relax.LegalizeOps", "relax.AnnotateTIROpPattern", "relax.FuseOps", "relax.FuseTIR")]
    path = str(tmp_path / "fuse.json")
    save_pipeline(PipelineDocument(name="fuse", model="builtin:transformer", target={"kind": "llvm"}, steps=steps),
                  path)
    for step in (3, 4):
        reply = engine.request("diverge", diverge_request(path, step))
        assert reply["first_divergent"] is None, [n for n in reply["nodes"] if n["status"] == "diverges"]
        assert sum(n["status"] == "ok" for n in reply["nodes"]) >= 20
        inner = [n for n in reply["nodes"] if n.get("parent")]
        assert inner or step == 4


def test_split_gives_the_intermediate_buffers_of_a_fused_primfunc():
    import numpy as np
    import tvm
    from tvm import relax

    from pipeline_model.engine.debugging.split_tvm import has_intermediates, inner_values
    from pipeline_model.importers.load_tvm import load_model

    mod = load_model("builtin:mlp").mod
    with tvm.target.Target("llvm"):
        mod = relax.transform.LegalizeOps()(mod)
        mod = relax.transform.FuseTIR()(relax.transform.FuseOps()(relax.transform.AnnotateTIROpPattern()(mod)))
    func = mod["fused_matmul_add_relu"]
    assert has_intermediates(func) and not has_intermediates(mod["transpose"])
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype("float32") for s in ((1, 784), (784, 256), (256,)))
    out = np.zeros((1, 256), "float32")
    values = inner_values(func, [x, w, b, None], [out], 3, {"kind": "llvm"})
    assert sorted(values) == ["T_add_intermediate", "matmul_intermediate"]
    np.testing.assert_allclose(values["matmul_intermediate"], x @ w, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(values["T_add_intermediate"], x @ w + b, rtol=1e-4, atol=1e-4)
