"""``main.py diverge`` matches values by their place in the dataflow, not by name (issue 31): keys are unique
where names repeat (``lv`` in every function ``FuseOps``/``FuseOpsByPattern`` makes), a call's inner rows are its
own, and a wrong rewrite inside a composite or fused function is named first."""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass
from typing import Optional

import pytest

from pipeline_model.cli import diverge_cmd
from pipeline_model.document import PipelineDocument, Step
from pipeline_model.engine.debugging.align import align, inner_first
from pipeline_model.fileformat import save_pipeline
from pipeline_model.resources import resource_path
from tests.debug_fixtures import ROOT, tag_source
from tests.diverge_cases import CNN, DECODER2, decoder2, structure_case

PATTERN = Step("relax.FuseOpsByPattern", {"pattern_source": "table", "table_prefix": "cublas"})
LOWER = ("relax.LegalizeOps", "relax.AnnotateTIROpPattern", "relax.FuseOps", "relax.FuseTIR")


@dataclass
class E:
    """An entry as :func:`align` reads it."""

    key: str
    inputs: tuple[str, ...]
    op: str = "op"
    ty: str = "f32[4]"
    kind: str = "dps"
    returns: Optional[str] = None
    source: Optional[str] = None
    index: int = 0

    @property
    def name(self) -> str:
        return self.key.rsplit("/", 1)[-1].split("#")[0]


def test_align_matches_by_inputs_not_names():
    before = [E("lv", ("param:x",), "call:add"), E("lv#2", ("param:x",), "call:exp", "f32[8]"),
              E("gv", ("lv", "lv#2"), "call:mul")]
    # names swapped and the add rewritten into a subtract: still matched by what they read and their type
    after = [E("lv#2", ("param:x",), "call:subtract"), E("lv", ("param:x",), "call:exp", "f32[8]"),
             E("out", ("lv#2", "lv"), "call:mul")]
    got = align(after, before)
    assert got.counterpart == {"lv#2": "lv", "lv": "lv#2", "out": "gv"} and not got.origins


def test_align_through_fused_calls_and_inserted_operations():
    before = [E("a", ("param:x",), "call:matmul"), E("b", ("a", "param:b"), "call:add"),
              E("c", ("b",), "call:relu")]
    # FuseOps: a call whose inner values read the caller's arguments; the call stands for what it returns
    after = [E("lv", ("param:x", "param:b"), "fn:fused", kind="relax", returns="lv/gv"),
             E("lv/mm", ("param:x",), "call:matmul"), E("lv/add_orig", ("lv/mm", "param:b"), "call:add"),
             E("lv/add", ("lv/add_orig", "const:float32[]:ab"), "call:multiply"),
             E("lv/gv", ("lv/add",), "call:relu")]
    assert [e.key for e in inner_first(after)] == ["lv/mm", "lv/add_orig", "lv/add", "lv/gv", "lv"]
    got = align(after, before)
    assert got.counterpart == {"lv/mm": "a", "lv/add_orig": "b", "lv/add": "b", "lv/gv": "c", "lv": "c"}
    assert got.how["lv/add"] == "inserted" and got.how["lv"] == "output"


def test_align_says_where_the_structure_changed():
    before = [E("a", ("param:x",)), E("b", ("a",))]
    after = [E("a", ("param:x",)), E("n", ("a", "param:y")), E("b", ("n",))]
    got = align(after, before)
    assert got.counterpart == {"a": "a"} and got.origins == ["n"]  # b is downstream of n, not an origin


def test_align_meets_again_after_a_decomposition():
    """batch_norm decomposed into operators (DecomposeOpsForInference): the operators have no counterpart, the
    tuple built in its place and its result are compared with batch_norm's, what follows is matched again."""
    tup = "(f32[4],f32[2])"
    before = [E("bn", ("param:x", "param:m"), "call:batch_norm", tup),
              E("y", ("bn",), "item0", kind="item", source="bn"), E("r", ("y",), "call:relu")]
    after = [E("s", ("param:x", "param:m"), "call:subtract", "f32[8]"), E("d", ("s",), "call:divide"),
             E("t", ("d", "param:m"), "tuple", tup, kind="struct"), E("y", ("t",), "item0", kind="item"),
             E("r", ("y",), "call:relu")]
    got = align(after, before)
    assert got.counterpart == {"d": "y", "t": "bn", "y": "y", "r": "r"}, got.counterpart
    assert got.how["r"] == "inputs" and got.how["y"] == "resync" and got.origins == ["s"]


def test_align_compares_a_value_whose_dtype_the_step_changed():
    """A rewrite that dropped ``out_dtype`` (apache/tvm#20198): the same inputs and shape, another dtype — compared
    (after casting) rather than left without counterpart."""
    before = [E("t", ("param:w",), "call:take", "float16[64,3]"), E("y", ("param:x", "t"), "call:matmul",
                                                                     "float32[2,3]")]
    after = [E("t", ("param:w",), "call:take", "float16[64,3]"), E("y", ("param:x", "t"), "call:matmul",
                                                                    "float16[2,3]")]
    got = align(after, before)
    assert got.counterpart == {"t": "t", "y": "y"} and got.how["y"] == "dtype" and not got.origins


def test_align_matches_the_returned_value_when_the_step_rebuilt_what_computes_it():
    """matmul(x, a + b) rewritten as matmul(x, a) + matmul(x, b) in another dtype: the new matmuls have no
    counterpart, but the function's result is still the result (``result`` rule), so it is compared."""
    before = [E("s", ("param:a", "param:b"), "call:add", "float16[64,3]"),
              E("y", ("param:x", "s"), "call:matmul", "float32[2,3]")]
    after = [E("lv", ("param:x", "param:a"), "call:matmul", "float16[2,3]"),
             E("lv1", ("param:x", "param:b"), "call:matmul", "float16[2,3]"),
             E("y", ("lv", "lv1"), "call:add", "float16[2,3]")]
    got = align(after, before, ("y", "y"))
    assert got.counterpart == {"y": "y"} and got.how["y"] == "result"
    assert got.origins == ["lv", "lv1"]
    assert align(after, before).counterpart == {}  # without the returned values nothing anchors it
    # a returned value of another shape is no counterpart
    assert align(after, [E("y", ("param:x",), "call:matmul", "float32[3,3]")], ("y", "y")).counterpart == {}


def test_likelier_culprit_is_the_unmatched_value_the_first_diverging_one_depends_on():
    from pipeline_model.engine.debugging.diverge_tvm import Side, likelier_culprit

    before = [E("a", ("param:x",)), E("b", ("a",))]
    after = [E("a", ("param:x",)), E("n", ("a", "param:y")), E("c", ("n", "param:y")), E("b", ("a",))]
    got = align(after, before)
    side = Side({}, after, "main", "instrument")
    assert got.origins == ["n"] and "c" not in got.counterpart
    assert likelier_culprit("c", side, got)["key"] == "n"  # c diverging is downstream of the change
    assert likelier_culprit("b", side, got) is None  # b depends on matched values only
    assert likelier_culprit(None, side, got) is None


def _diverge(argv: list[str], engine) -> int:
    parser = argparse.ArgumentParser()
    diverge_cmd.add_parser(parser.add_subparsers(dest="command"))
    return diverge_cmd.main(parser.parse_args(["diverge", *argv]), client=engine)


def test_table_says_no_counterpart_and_the_likelier_culprit():
    reply = {"step": 2, "pass_id": "custom.python", "function": "main", "first_divergent": "lv#2",
             "likelier_culprit": {"key": "lv/n", "node": "lv", "reason": "it is the likelier culprit"},
             "nodes": [{"name": "lv", "key": "lv", "shape": [4], "status": "no counterpart",
                        "note": "no counterpart: the step changed the structure here"},
                       {"name": "lv", "key": "lv#2", "shape": [4], "status": "diverges", "max_abs_over_ref": 1.0,
                        "first": True}]}
    lines = diverge_cmd.table(reply)
    assert lines[1].startswith("  lv ") and "the step changed the structure here" in lines[1]
    assert lines[2].startswith("> lv#2 ")
    assert lines[-1] == "likelier culprit: lv/n - it is the likelier culprit"


def _save(folder, model: str, steps: list[Step], name: str = "p") -> str:
    path = os.path.join(str(folder), f"{name}.json")
    save_pipeline(PipelineDocument(name=name, model=model, target={"kind": "llvm"}, steps=steps), path)
    return path


@pytest.mark.e2e
def test_the_reported_pipeline_names_the_composite_holding_the_subtract(engine, tmp_path, capsys):
    """The issue's report: cuBLAS composites (two top-level ``lv``), then the app's wrong_add_to_subtract.py."""
    wrong = Step("custom.python", {"source": resource_path("custom_passes", "wrong_add_to_subtract.py")
                                   .read_text(encoding="utf-8")})
    path = _save(tmp_path, "builtin:mlp", [PATTERN, wrong, *(Step(p) for p in LOWER)])
    assert _diverge([path, "--step", "2", "--trust", "--json"], engine) == 1
    out = json.loads(capsys.readouterr().out)
    rows = {n["key"]: n for n in out["nodes"]}
    assert len(rows) == len(out["nodes"])
    tops = [n for n in out["nodes"] if not n.get("parent")]
    assert [n["key"] for n in tops[:2]] == ["lv", "lv#2"] and [n["name"] for n in tops[:2]] == ["lv", "lv"]
    assert out["first_divergent"] == "lv" and out["first_inside"] == "lv/add"
    assert "relax_add_relax_nn_relu" in rows["lv"]["callee"] and rows["lv"]["shape"] == [1, 256]
    assert rows["lv/add"]["callee"] == "subtract" and rows["lv/gv"]["shape"] == [1, 256]
    assert rows["lv#2"]["shape"] == [1, 10] and not rows["lv#2"].get("first")
    assert {n["key"] for n in out["nodes"] if n.get("parent") == "lv#2"} == {"lv#2/permute_dims1", "lv#2/gv"}
    assert rows["lv"]["node_id"] == "lv" and rows["lv#2"]["node_id"] == "lv#2"
    assert out["likelier_culprit"] is None
    assert _diverge([path, "--step", "2", "--trust"], engine) == 1
    assert "first diverging node: lv (inside it: lv/add)" in capsys.readouterr().out


def _no_op_rows(engine, folder, model: str) -> dict:
    from bench.bench_diverge import diverge_request

    steps = [PATTERN, *(Step(p) for p in LOWER[:3]), Step("custom.python", {"source": tag_source(1)})]
    reply = engine.request("diverge", diverge_request(_save(folder, model, steps), len(steps)))
    keys = [n["key"] for n in reply["nodes"]]
    assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)
    assert reply["first_divergent"] is None, [n for n in reply["nodes"] if n["status"] == "diverges"]
    assert all(n["status"] == "ok" for n in reply["nodes"]), [n for n in reply["nodes"] if n["status"] != "ok"]
    assert reply["only_before"] == []
    return reply


#: The default suite's models (CI's time budget); the ONNX CNN and the 2-layer decoder are in the heavy tests.
LIGHT = ["builtin:mlp", "builtin:transformer"]
HEAVY = [CNN, DECODER2]


@pytest.mark.e2e
@pytest.mark.parametrize("model", LIGHT + [pytest.param(m, marks=pytest.mark.heavy) for m in HEAVY])
def test_no_two_rows_share_a_key_and_a_no_op_step_is_quiet(engine, tmp_path, model):
    """Composites and fused functions all bind ``lv``/``gv``: after a step that changes nothing every value
    has one key and is compared with itself."""
    reply = _no_op_rows(engine, tmp_path, decoder2(str(tmp_path)) if model == DECODER2 else model)
    assert any(n.get("parent") for n in reply["nodes"])


def _bundled(name: str) -> str:
    return f"builtin:{name[:-3]}" if name.endswith(".py") else os.path.join(ROOT, "resources", "models", name)


BUNDLED = sorted(os.listdir(os.path.join(ROOT, "resources", "models")))


@pytest.mark.e2e
@pytest.mark.heavy
@pytest.mark.parametrize("name", BUNDLED)  # the files (decoder128 is decoder.py with 128 layers: over 300 s twice)
def test_no_two_rows_share_a_key_for_every_bundled_model(engine, tmp_path, name):
    _no_op_rows(engine, tmp_path, _bundled(name))


def _layout_keys(model: str) -> list[str]:
    import tvm
    from tvm import relax
    from tvm.relax.backend import get_patterns_with_prefix
    from tvm.relax.backend.cuda import cublas  # noqa: F401 - registers the cuBLAS pattern table

    from pipeline_model.engine.debugging.capture_tvm import front_half, layout
    from pipeline_model.importers.load_tvm import load_model

    mod = load_model(model).mod
    with tvm.target.Target("llvm"):
        mod = relax.transform.FuseOpsByPattern(get_patterns_with_prefix("cublas"))(mod)
        mod = relax.transform.FuseOps()(relax.transform.AnnotateTIROpPattern()(relax.transform.LegalizeOps()(mod)))
    mod = front_half(mod, {"kind": "llvm"})
    entry = "forward" if any(gv.name_hint == "forward" for gv in mod.get_global_vars()) else "main"
    entries = layout(mod, entry).entries
    names = [e.name for e in entries if e.parent is None]
    assert len(names) > len(set(names)) or model.endswith("onnx") or "decoder" in model  # names do repeat
    return [e.key for e in entries]


@pytest.mark.parametrize("name", [n if n.endswith(".py") else pytest.param(n, marks=pytest.mark.heavy)
                                  for n in BUNDLED if "decoder" not in n])
def test_every_value_has_its_own_key(name):
    """Without running anything: the keys of every value (top level and inside composites/fused calls)."""
    keys = _layout_keys(_bundled(name))
    assert len(keys) == len(set(keys)), sorted({k for k in keys if keys.count(k) > 1})


@pytest.mark.heavy
@pytest.mark.parametrize("name", [n for n in BUNDLED if "decoder" in n])
def test_every_value_has_its_own_key_decoders(name):
    keys = _layout_keys(_bundled(name))
    assert len(keys) == len(set(keys)), sorted({k for k in keys if keys.count(k) > 1})


def _check_case(engine, folder, seed: int, model: str, level: str) -> None:
    from bench.bench_diverge import diverge_request

    path, wrong, facts_path = structure_case(str(folder), seed, model, level)
    reply = engine.request("diverge", diverge_request(path, wrong))
    with open(facts_path, encoding="utf-8") as f:
        facts = json.load(f)
    keys = [n["key"] for n in reply["nodes"]]
    assert len(keys) == len(set(keys))
    assert reply["first_divergent"] == facts["expected"][0], (facts, reply["first_divergent"])
    assert [n["key"] for n in reply["nodes"] if n.get("first")] == facts["expected"][:1]
    if facts.get("inside"):
        assert reply["first_inside"] == facts["inside"] or str(reply["first_inside"]).endswith(
            "/" + facts["inside"]), (facts, reply["first_inside"])
    first = keys.index(facts["expected"][0])
    assert all(n["status"] in ("ok", "no counterpart") for n in reply["nodes"][:first])


#: A few seeded cases (kept small for CI): a composite's inner add rewritten, a fused PrimFunc, the decoder.
SAMPLE = [(1, "builtin:transformer", "relax"), (12, "builtin:mlp", "tir"),
          pytest.param(6, CNN, "relax", marks=pytest.mark.heavy),
          pytest.param(3, DECODER2, "relax", marks=pytest.mark.heavy)]


@pytest.mark.e2e
@pytest.mark.parametrize("seed,model,level", SAMPLE)
def test_a_wrong_value_inside_a_composite_or_fused_call_is_named_first(engine, tmp_path, seed, model, level):
    _check_case(engine, tmp_path, seed, model, level)


@pytest.mark.e2e
@pytest.mark.heavy
@pytest.mark.parametrize("seed", range(24))
def test_structure_cases_heavy(engine, tmp_path, seed):
    from tests.diverge_cases import MODELS

    _check_case(engine, tmp_path, 100 + seed, MODELS[seed % len(MODELS)], ("relax", "tir")[(seed // 4) % 2])
