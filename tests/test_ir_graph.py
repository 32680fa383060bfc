"""Tests of Relax -> graph extraction, its JSON form and the change detection (pipeline_model.ir_graph)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from pipeline_model import ir_graph as ig

tvm = pytest.importorskip("tvm")
from tvm import relax  # noqa: E402
from tvm.relax.frontend import nn  # noqa: E402
from tvm.script import ir as I  # noqa: E402
from tvm.script import relax as R  # noqa: E402

from pipeline_model.engine import graph_extract_tvm as gx  # noqa: E402


class _MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(256, 10, bias=False)

    def forward(self, x):  # noqa: D401 - nn.Module API
        return self.fc2(self.relu(self.fc1(x)))


@pytest.fixture(scope="module")
def mlp_mod():
    mod, _ = _MLP().export_tvm({"forward": {"x": nn.spec.Tensor((1, 784), "float32")}})
    return mod


def _by_name(g):
    return {d["name"]: (n, d) for n, d in g.nodes(data=True)}


def test_module_imports_without_tvm():
    code = (
        "import sys; import pipeline_model.ir_graph as ig; "
        "d = ig.synthetic_graph_json(200); g = ig.graph_from_json(d); ig.layered_layout(g); "
        "assert ig.changed_nodes(d, d) == set(); assert 'tvm' not in sys.modules, 'tvm imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(__import__("pathlib").Path(__file__).parents[1]))


def test_graph_model_module_names_no_tvm_even_lazily():
    """The TVM side of the graph (extraction) lives in ``engine/graph_extract_tvm.py``; ``ir_graph`` (top
    level of ``pipeline_model``) imports no TVM module anywhere, not even inside a function."""
    import ast
    from pathlib import Path

    tree = ast.parse((Path(__file__).parents[1] / "pipeline_model" / "ir_graph.py").read_text(encoding="utf-8"))
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert not [m for m in names if m.split(".")[0] in ("tvm", "tvm_ffi") or m.endswith("_tvm")]


def test_mlp_graph_before_legalize(mlp_mod):
    assert gx.relax_functions(mlp_mod) == ["forward"]
    g = gx.extract_graph(mlp_mod)
    names = _by_name(g)
    params = [d["name"] for _, d in g.nodes(data=True) if d["kind"] == "param"]
    assert params == ["x", "fc1.weight", "fc1.bias", "fc2.weight"]
    ops = [d["op"] for _, d in g.nodes(data=True) if d["kind"] == "binding"]
    assert ops == ["relax.permute_dims", "relax.matmul", "relax.add", "relax.nn.relu",
                   "relax.permute_dims", "relax.matmul", "var"]
    _, mm = names["matmul"]
    assert mm["shape"] == [1, 256] and mm["dtype"] == "float32"
    assert mm["group"] == 0 and mm["is_dataflow"] is True
    assert "out_dtype" in mm["attrs"]
    assert 'R.Tensor((1, 256), dtype="float32")' == mm["type_text"]
    # data flow: x and permute_dims feed matmul, in argument order
    mm_id = names["matmul"][0]
    assert g.edges[names["x"][0], mm_id]["index"] == 0
    assert g.edges[names["permute_dims"][0], mm_id]["index"] == 1
    outs = [n for n, d in g.nodes(data=True) if d["kind"] == "output"]
    assert len(outs) == 1 and list(g.predecessors(outs[0])) == [names["gv"][0]]
    assert g.nodes[outs[0]]["shape"] == [1, 10]


def test_mlp_graph_after_legalize_has_call_tir_callees(mlp_mod):
    before = ig.graph_to_json(gx.extract_graph(mlp_mod))
    legal = relax.transform.LegalizeOps()(mlp_mod)
    g = gx.extract_graph(legal, "forward")
    calls = [d for _, d in g.nodes(data=True) if d["op"] == "relax.call_tir"]
    assert {d["callee"] for d in calls} == {"transpose", "matmul", "add", "relu", "transpose1", "matmul1"}
    assert all(d["callee_kind"] == "prim_func" and d["label"] == d["callee"] for d in calls)
    # inputs of call_tir are the tuple fields, not the callee
    names = _by_name(g)
    assert set(g.predecessors(names["matmul"][0])) == {names["x"][0], names["permute_dims"][0]}
    after = ig.graph_to_json(g)
    changed = ig.changed_nodes(before, after)
    assert {g.nodes[n]["name"] for n in changed} >= {"matmul", "add", "relu", "permute_dims", "matmul1"}
    assert not any(g.nodes[n]["kind"] == "param" for n in changed)
    assert ig.changed_nodes(after, after) == set()
    text = gx.prim_func_text(legal, "matmul")
    assert "T.prim_func" in text and "784" in text
    with pytest.raises(KeyError, match="no PrimFunc 'nope'.*matmul"):
        gx.prim_func_text(legal, "nope")


def test_symbolic_dim_tuple_constant_and_json_round_trip():
    @I.ir_module
    class Mod:
        @R.function
        def main(x: R.Tensor(("n", 784), "float32"), w: R.Tensor((784, 16), "float32")):
            with R.dataflow():
                y = R.matmul(x, w)
                z = R.add(y, R.const(np.ones((16,), "float32")))
                s = R.split(z, 2, axis=1)
                a = s[0]
                b = s[1]
                c = R.concat((a, b), axis=1)
                t = (c, y)
                R.output(t)
            return t

    g = gx.extract_graph(Mod)
    names = _by_name(g)
    assert names["x"][1]["shape"] == ["n", 784]
    assert names["y"][1]["shape"] == ["n", 16]
    consts = [d for _, d in g.nodes(data=True) if d["kind"] == "constant"]
    assert len(consts) == 1 and consts[0]["shape"] == [16] and consts[0]["dtype"] == "float32"
    assert names["a"][1]["op"] == "tuple_get_item" and names["a"][1]["attrs"]["index"] == "0"
    assert list(g.predecessors(names["a"][0])) == [names["s"][0]]
    # concat takes an inline tuple: edges go straight from the fields
    assert set(g.predecessors(names["c"][0])) == {names["a"][0], names["b"][0]}
    assert names["s"][1]["attrs"]["axis"] == "1"
    assert names["t"][1]["op"] == "tuple" and names["t"][1]["shape"] is None
    data = ig.graph_to_json(g)
    text = json.dumps(data)
    back = ig.graph_from_json(json.loads(text))
    assert list(back.nodes) == list(g.nodes)
    assert set(back.edges) == set(g.edges)
    assert back.nodes[names["x"][0]]["shape"] == ["n", 784]
    assert back.graph["groups"] == [{"id": 0, "label": "dataflow block 0"}]


def test_composite_function_call():
    @I.ir_module
    class Mod:
        @R.function
        def main(x: R.Tensor((2, 8), "float32"), w: R.Tensor((8, 4), "float32"), b: R.Tensor((4,), "float32")):
            with R.dataflow():
                y = R.matmul(x, w)
                z = R.add(y, b)
                r = R.nn.relu(z)
                R.output(r)
            return r

    from tvm.relax.dpl import is_op, wildcard

    pat = is_op("relax.add")(is_op("relax.matmul")(wildcard(), wildcard()), wildcard())
    fused = relax.transform.FuseOpsByPattern([("mylib.matmul_add", pat)], annotate_codegen=False)(Mod)
    assert "main" in gx.relax_functions(fused) and len(gx.relax_functions(fused)) == 2
    g = gx.extract_graph(fused, "main")
    calls = [d for _, d in g.nodes(data=True) if d["op"] == "call"]
    assert len(calls) == 1
    call = calls[0]
    assert call["callee"].startswith("fused_relax_matmul_relax_add")
    assert call["callee_kind"] == "relax_function" and call["composite"] == "mylib.matmul_add"
    names = _by_name(g)
    call_id = next(n for n, d in g.nodes(data=True) if d is call)
    assert set(g.predecessors(call_id)) == {names["x"][0], names["w"][0], names["b"][0]}
    inner = gx.extract_graph(fused, call["callee"])
    assert [d["op"] for _, d in inner.nodes(data=True) if d["kind"] == "binding"] == ["relax.matmul", "relax.add"]
    with pytest.raises(KeyError, match="no Relax function 'nope'"):
        gx.extract_graph(fused, "nope")


def test_changed_nodes_is_by_signature_not_identity():
    a = ig.synthetic_graph_json(300)
    b = json.loads(json.dumps(a))
    # rename every var: signatures ignore binding names
    for n in b["nodes"]:
        if n["kind"] == "binding":
            n["name"] = n["name"] + "_renamed"
    assert ig.changed_nodes(a, b) == set()
    # change one op: that node and its consumers (their inputs' signature) change, nothing else
    target = next(n for n in b["nodes"] if n["op"] == "relax.nn.gelu")
    target["op"] = "relax.nn.silu"
    consumers = {e["target"] for e in b["edges"] if e["source"] == target["id"]}
    assert ig.changed_nodes(a, b) == {target["id"]} | consumers
    assert ig.changed_nodes(None, b) == {n["id"] for n in b["nodes"]}


def test_graph_from_json_rejects_bad_input():
    with pytest.raises(ValueError, match="nodes"):
        ig.graph_from_json({"edges": []})
    with pytest.raises(ValueError, match=r"edges\[0\].*unknown node"):
        ig.graph_from_json({"nodes": [{"id": "a"}], "edges": [{"source": "a", "target": "zz"}]})


def test_engine_graph_and_prim_func_commands(engine, bundled_pipelines):
    from pipeline_model.engine.client import EngineError
    from pipeline_model.fileformat import load_pipeline

    path = next(p for p in bundled_pipelines if p.endswith("fusion_walkthrough.json"))
    doc = load_pipeline(path)
    result = engine.run(doc)
    legalize = result.steps[0]
    assert legalize.snapshot_key
    reply = engine.graph(legalize.snapshot_key)
    assert reply["functions"] == ["forward"] and reply["function"] == "forward"
    g = ig.graph_from_json(reply["graph"])
    callees = {d["callee"] for _, d in g.nodes(data=True) if d.get("callee_kind") == "prim_func"}
    assert "matmul" in callees
    text = engine.prim_func(legalize.snapshot_key, "matmul")
    assert "T.prim_func" in text
    before = engine.graph(result.input_key)["graph"]
    assert ig.changed_nodes(before, reply["graph"])  # LegalizeOps changed the bindings
    fused = engine.graph(result.steps[2].snapshot_key)
    assert len(fused["functions"]) > 1 and fused["function"] == "forward"
    other = next(f for f in fused["functions"] if f != "forward")
    assert engine.graph(result.steps[2].snapshot_key, other)["function"] == other
    with pytest.raises(EngineError, match="not in the engine's cache"):
        engine.graph("no-such-key")
    with pytest.raises(EngineError, match="no PrimFunc"):
        engine.prim_func(legalize.snapshot_key, "nope")


def test_fast_tensor_type_text_matches_the_printer():
    """``type_text`` of plain tensor types is built without the script printer: it must be exactly what
    the printer writes, on a real decoder (symbolic seq_len) before and after legalization and fusion,
    and on 0-d/1-d/int32-dim/no-dtype types."""
    import tvm
    from tvm import tirx

    from pipeline_model.importers.load_tvm import load_model

    mod = load_model("builtin:decoder").mod
    with tvm.target.Target("llvm"), tvm.transform.PassContext(opt_level=3):
        legal = relax.transform.LegalizeOps()(mod)
        fused = relax.transform.FuseTIR()(relax.transform.FuseOps()(relax.transform.AnnotateTIROpPattern()(legal)))
    checked = fast = 0
    for m in (mod, legal, fused):
        for gv, func in m.functions.items():
            if not isinstance(func, relax.Function):
                continue
            types = [p.ty for p in func.params]
            for block in func.body.blocks:
                types += [b.var.ty for b in block.bindings]
            for ty in types:
                _shape, _dtype, text = gx._type_info(ty)
                assert text == gx._text(ty), (gv.name_hint, text, str(ty))
                checked += 1
                fast += isinstance(ty, relax.TensorType) and isinstance(ty.shape, relax.ShapeExpr)
    assert checked > 1000 and fast > 500
    n = tirx.Var("n", "int64")
    extra = [
        relax.TensorType([], "float32"),
        relax.TensorType([7], "float16"),
        relax.TensorType([n, 3], "int8"),
        relax.TensorType([tirx.IntImm("int32", 4), n], "float32"),
        relax.TensorType([n * 2, 3], "float32"),
        relax.TensorType(ndim=2, dtype="float32"),
        relax.TensorType([2, 3], "void"),
    ]
    for ty in extra:
        assert gx._type_info(ty)[2] == gx._text(ty), str(ty)


def test_engine_reuses_a_graph_when_the_step_left_the_relax_functions_alone(mlp_mod):
    """AnnotateTIROpPattern only annotates PrimFuncs: the graph of its module is the one of the module
    before (same objects), while FuseOps (new Relax functions) gets its own."""
    import tvm

    from pipeline_model.engine import handlers_graph as hg

    with tvm.target.Target("llvm"), tvm.transform.PassContext(opt_level=3):
        legal = relax.transform.LegalizeOps()(mlp_mod)
        annotated = relax.transform.AnnotateTIROpPattern()(legal)
        fused = relax.transform.FuseOps()(annotated)
    fn = gx.default_function(legal)
    first = hg._graph_by_objects(legal, fn)
    assert hg._graph_by_objects(annotated, fn) is first
    assert first == hg._function_graph(annotated, fn)  # what a fresh extraction gives
    other = hg._graph_by_objects(fused, fn)
    assert other is not first and other == hg._function_graph(fused, fn)


def test_graph_json_built_directly_matches_the_networkx_round_trip_and_each_type():
    """``extract_graph_json`` (what the engine sends) builds nodes and edges without networkx and reads each
    distinct type once (cached by structural hash): it must equal the networkx form node for node and edge
    for edge, and every node's shape/dtype/type_text must be what its own type gives, also for two symbolic
    variables printed alike and for types that differ only in a symbolic variable."""
    import tvm
    from tvm import tirx

    from pipeline_model.importers.load_tvm import load_model

    mod = load_model("builtin:decoder").mod
    with tvm.target.Target("llvm"), tvm.transform.PassContext(opt_level=3):
        fused = relax.transform.FuseTIR()(relax.transform.FuseOps()(relax.transform.AnnotateTIROpPattern()(
            relax.transform.LegalizeOps()(mod))))
    n1, n2, m = tirx.Var("n", "int64"), tirx.Var("n", "int64"), tirx.Var("m", "int64")
    bb = relax.BlockBuilder()
    a = relax.Var("a", relax.TensorType([n1, 4], "float32"))
    b = relax.Var("b", relax.TensorType([n2, 4], "float32"))
    c = relax.Var("c", relax.TensorType([m, 4], "float16"))
    with bb.function("main", [a, b, c]):
        with bb.dataflow():
            x = bb.emit(relax.op.add(a, a))
            y = bb.emit(relax.op.add(b, b))
            z = bb.emit(relax.op.add(c, c))
            out = bb.emit_output(relax.Tuple([x, y, z]))
        bb.emit_func_output(out)
    checked = 0
    for m_ in (mod, fused, bb.get()):
        for name in gx.relax_functions(m_):
            data = gx.extract_graph_json(m_, name)
            assert ig.graph_to_json(ig.graph_from_json(data)) == data  # networkx's node and edge order
            func = m_[name]
            types = {p.name: p.ty for p in func.params}
            for block in func.body.blocks:
                types.update({bd.var.name: bd.var.ty for bd in block.bindings})
            for node in data["nodes"]:
                if node["kind"] in ("param", "binding") and node["name"] in types:
                    shape, dtype, text = gx._type_info(types[node["name"]])
                    assert (node["shape"], node["dtype"], node["type_text"]) == (shape, dtype, text), node["id"]
                    checked += 1
    assert checked > 2000
