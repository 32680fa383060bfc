"""Hierarchy of Relax graphs (module groups from weight names, call groups), per-use stubs, find, and the
built-in Llama-style decoder (TVM side: extraction; the rest is TVM-free)."""

from __future__ import annotations

import os
import runpy

import pytest

from pipeline_model import graph_hierarchy as gh
from pipeline_model import ir_graph as ig
from pipeline_model.layout import compute_layout

tvm = pytest.importorskip("tvm")
from tvm import relax  # noqa: E402

from pipeline_model.engine import graph_extract_tvm as gx  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DECODER = os.path.join(ROOT, "resources", "models", "decoder.py")


def decoder_mod(layers: int):
    """The built-in decoder's module with ``layers`` layers (the file's classes, LAYERS overridden)."""
    ns = runpy.run_path(DECODER)
    ns["Decoder"].__init__.__globals__["LAYERS"] = layers
    mod, _ = ns["Decoder"]().export_tvm(spec=ns["spec"])
    return mod


@pytest.fixture(scope="module")
def dec4():
    mod = decoder_mod(4)
    return mod, gh.annotate_modules(ig.graph_to_json(gx.extract_graph(mod, "forward")))


def _node(data, op, module_prefix):
    return [n for n in data["nodes"] if n.get("op") == op and str(n.get("module") or "").startswith(module_prefix)]


def test_decoder_builtin_loads_with_symbolic_seq_len():
    from pipeline_model.models import BUILTIN_MODELS
    from pipeline_model.importers.load_tvm import load_model

    assert {"decoder", "decoder128"} <= set(BUILTIN_MODELS)
    mod = load_model("builtin:decoder").mod
    func = mod["forward"]
    names = [p.name for p in func.params]
    assert names[:4] == ["x", "cos", "sin", "mask"]
    assert "layers.31.self_attn.q_proj.weight" in names and "layers.32.mlp.up_proj.weight" not in names
    assert "seq_len" in str(func.params[0].ty) and "seq_len" in str(func.params[3].ty)
    # every layer uses the shared rotary tables and mask
    data = ig.graph_to_json(gx.extract_graph(mod, "forward"))
    uses = sum(1 for e in data["edges"] if e["source"] == "mask")
    assert uses == 32
    # the 128-layer variant is decoder.py's code with another LAYERS: one file, a layer count
    from pipeline_model.models import ModelSpecError, builtin_model_path, builtin_model_source, model_key

    assert builtin_model_path("decoder128") == DECODER
    a, b = builtin_model_source("decoder").splitlines(), builtin_model_source("decoder128").splitlines()
    assert [(x, y) for x, y in zip(a, b) if x != y] == [("LAYERS = 32", "LAYERS = 128")] and len(a) == len(b)
    assert "LAYERS = 5" in builtin_model_source("decoder", layers=5).splitlines()
    assert model_key("builtin:decoder") != model_key("builtin:decoder128")
    with pytest.raises(ModelSpecError, match="LAYERS"):
        builtin_model_source("mlp", layers=2)


def test_grouping_from_weight_names(dec4):
    _mod, data = dec4
    mods = {n["id"]: n["module"] for n in data["nodes"]}
    assert mods["layers.2.self_attn.q_proj.weight"] == "layers.2.self_attn.q_proj"
    assert mods["x"] is None and mods["cos"] is None
    assert {n["module"] for n in _node(data, "relax.nn.rms_norm", "")} >= {"layers.0.input_layernorm", "norm"}
    assert len(_node(data, "relax.nn.softmax", "layers.")) == 4
    assert all(n["module"].endswith(".self_attn") for n in _node(data, "relax.nn.softmax", ""))
    assert all(n["module"].endswith(".mlp") for n in _node(data, "relax.nn.silu", ""))
    # unlabelled bindings join their producers/consumers: rotary reshape of cos, residual adds
    reshapes_of_cos = [e["target"] for e in data["edges"] if e["source"] == "cos"]
    assert all(mods[t].endswith(".self_attn") for t in reshapes_of_cos)
    adds = [n for n in data["nodes"] if n.get("op") == "relax.add" and n["module"] and n["module"].count(".") == 1]
    assert {n["module"] for n in adds} == {f"layers.{i}" for i in range(4)}
    tree = gh.group_tree(data)
    # a container of numbered children that no value leaves and re-enters is a group of its own (issue 33:
    # the collapsed decoder reads x -> layers x4 -> norm); it never decides where a binding goes
    assert tree["m:layers"]["container"] == 4 and tree["m:layers"]["parent"] is None
    assert tree["m:layers.1"]["parent"] == "m:layers"
    assert tree["m:layers.1.self_attn.k_proj"]["parent"] == "m:layers.1.self_attn"
    assert tree["m:layers.1.self_attn"]["parent"] == "m:layers.1"


def test_a_container_collapses_into_one_box_unless_a_value_leaves_and_returns(dec4):
    import copy

    _mod, data = dec4
    view = gh.build_view(data, ())
    shown = {n["id"]: n for n in view["nodes"]}
    assert set(shown) == {"x", "cos", "sin", "mask", "m:layers", "m:norm", "output"}
    assert shown["m:layers"]["label"] == "layers \u00d74"
    edges = {(e["source"], e["target"]) for e in view["edges"]}
    assert ("x", "m:layers") in edges and ("m:layers", "m:norm") in edges
    # expanded, its layers keep their whole names (not "0", "1" relative to the container)
    view = gh.build_view(data, {"m:layers"})
    assert {n["label"] for n in view["nodes"] if n["kind"] == "group"} >= {"layers.0", "layers.3", "norm"}
    # a value that leaves the container and comes back (a binding between two layers outside them):
    # collapsing the container would make a cycle, so it is no group
    cut = copy.deepcopy(data)
    add = next(n for n in cut["nodes"] if n.get("op") == "relax.add" and n["module"] == "layers.1")
    add["module"] = None
    assert "m:layers" not in gh.group_tree(cut) and gh.group_tree(cut)["m:layers.1"]["parent"] is None


def test_collapsed_groups_keep_their_edges(dec4):
    _mod, data = dec4
    view = gh.build_view(data, {"m:layers"})
    ids = {n["id"] for n in view["nodes"]}
    assert {"m:layers.0", "m:layers.3", "m:norm"} <= ids
    assert not any(n["kind"] == "binding" and n["id"] != "output" for n in view["nodes"])
    edges = {(e["source"], e["target"]) for e in view["edges"]}
    assert ("x", "m:layers.0") in edges and ("m:layers.0", "m:layers.1") in edges
    assert ("m:layers.3", "m:norm") in edges and ("m:norm", "output") in edges
    grp = next(n for n in view["nodes"] if n["id"] == "m:layers.2")
    assert grp["kind"] == "group" and grp["size"] > 50 and grp["shape"] == [1, "seq_len", 512]
    # expanding one layer shows its sub-modules, collapsed, wired to the neighbouring layers
    view = gh.build_view(data, {"m:layers", "m:layers.2"})
    ids = {n["id"] for n in view["nodes"]}
    assert "m:layers.2" not in ids and {"m:layers.2.self_attn", "m:layers.2.mlp"} <= ids
    edges = {(e["source"], e["target"]) for e in view["edges"]}
    assert ("m:layers.1", "m:layers.2.input_layernorm") in edges
    assert any(s == "m:layers.2.mlp" for s, _t in edges)
    assert all(n["frames"] == ["m:layers", "m:layers.2"] for n in view["nodes"] if n["id"].startswith("m:layers.2."))
    # a full-graph node maps to the group that shows it
    assert view["graph"]["rep"]["softmax"] == "m:layers.0"
    assert gh.groups_of(data, "softmax2") == ["m:layers", "m:layers.2", "m:layers.2.self_attn"]


def test_shared_inputs_get_per_use_stubs(dec4):
    _mod, data = dec4
    view = gh.build_view(data, gh.all_group_ids(data))
    stubs = [n for n in view["nodes"] if n.get("stub")]
    cos_uses = sum(1 for e in data["edges"] if e["source"] == "cos")
    assert sum(1 for n in stubs if n["stub_of"] == "cos") == cos_uses - 1
    assert sum(1 for e in view["edges"] if e["source"] == "cos") == 1
    for s in stubs:
        assert sum(1 for e in view["edges"] if e["source"] == s["id"]) == 1
    # a weight used once gets no stub
    assert not any(n["stub_of"].endswith(".weight") for n in stubs)
    assert gh.build_view(data, (), stub_min_uses=10**9)["nodes"]  # stubs can be turned off


def test_layout_work_is_near_linear_with_stubs():
    def dummies(layers: int, stubs: bool, frames: bool = False) -> tuple[int, int]:
        data = ig.graph_to_json(gx.extract_graph(decoder_mod(layers), "forward"))
        view = gh.build_view(data, gh.all_group_ids(data), stub_min_uses=3 if stubs else 10**9)
        if not frames:  # the flat layered layout (frames drawn around, not laid out as boxes)
            for n in view["nodes"]:
                n["frames"] = []
        lay = compute_layout(ig.graph_from_json(view))
        return lay.dummy_count, len(view["nodes"])

    d4, n4 = dummies(4, True)
    d16, n16 = dummies(16, True)
    assert d16 <= 4.5 * d4 and n16 <= 4.5 * n4  # 4x the layers: about 4x the work
    u4, _ = dummies(4, False)
    u16, _ = dummies(16, False)
    assert u16 > 8 * u4  # without stubs: a dummy per layer crossed, quadratic in depth
    assert d16 * 3 < u16
    # laid out frame by frame (the view's layout of expanded groups): linear too
    c4, _ = dummies(4, True, frames=True)
    c16, _ = dummies(16, True, frames=True)
    assert c16 <= 4.5 * c4


def test_find_by_name_op_callee_and_shape(dec4):
    _mod, data = dec4
    assert len(gh.find_nodes(data, "SOFTMAX")) == 4
    assert gh.find_nodes(data, "softmax2") == ["softmax2"]
    assert "layers.1.mlp.up_proj.weight" in gh.find_nodes(data, "mlp.up_proj")
    assert all(n in {m["id"] for m in data["nodes"]} for n in gh.find_nodes(data, "1376"))
    assert gh.find_nodes(data, "1376") and gh.find_nodes(data, "") == []


def _fused_mlp():
    from tvm.relax.frontend import nn

    class MLP(nn.Module):
        def __init__(self):
            self.fc1 = nn.Linear(784, 256)
            self.relu = nn.ReLU()
            self.fc2 = nn.Linear(256, 10, bias=False)

        def forward(self, x):
            return self.fc2(self.relu(self.fc1(x)))

    mod, _ = MLP().export_tvm({"forward": {"x": relax.frontend.nn.spec.Tensor((1, 784), "float32")}})
    seq = tvm.transform.Sequential([relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(),
                                    relax.transform.FuseOps()])
    return seq(mod)


def test_fused_function_graph_and_call_expanded_in_place():
    from pipeline_model.engine import handlers_graph

    mod = _fused_mlp()
    fused = [n for n in gx.relax_functions(mod) if n.startswith("fused_")]
    assert fused
    inner = gx.extract_graph(mod, fused[0])  # any Relax function, fused ones included
    assert any(d.get("callee_kind") == "prim_func" for _n, d in inner.nodes(data=True))
    data = handlers_graph._function_graph(mod, "forward")
    assert set(data["graph"]["callees"]) >= set(fused[:1])
    call = next(n for n in data["nodes"] if n.get("callee") == fused[0])
    tree = gh.group_tree(data)
    assert tree["c:" + call["id"]]["kind"] == "call"
    view = gh.build_view(data, {"c:" + call["id"]} | set(gh.default_expansion(data)))
    ids = {n["id"] for n in view["nodes"]}
    assert call["id"] not in ids
    inlined = [n for n in view["nodes"] if n.get("inlined_from") == call["id"]]
    assert inlined and all(n["frames"][-1] == "c:" + call["id"] for n in inlined)
    # the call's consumers now read the callee's result, its inputs feed the callee's bindings
    srcs = {e["source"] for e in view["edges"]}
    tgts = {e["target"] for e in view["edges"]}
    assert any(s.startswith(call["id"] + "/") for s in srcs) and any(t.startswith(call["id"] + "/") for t in tgts)
    assert "x" in {e["source"] for e in view["edges"] if e["target"].startswith(call["id"] + "/")}
    # find reaches inside calls
    assert any(m.startswith(call["id"] + "/") for m in gh.find_nodes(data, "matmul"))


def test_engine_graph_falls_back_to_default_function():
    from types import SimpleNamespace

    from pipeline_model.engine import handlers_graph

    mod = _fused_mlp()
    ctx = SimpleNamespace(cache={"k1": mod})
    reply = handlers_graph.handle_graph({"key": "k1", "function": "no_such_function"}, ctx)
    assert reply["missing"] and reply["function"] == "forward" and reply["requested"] == "no_such_function"
    assert reply["graph"]["nodes"] and "module" in reply["graph"]["nodes"][0]
    fused = next(n for n in reply["functions"] if n.startswith("fused_"))
    reply = handlers_graph.handle_graph({"key": "k1", "function": fused}, ctx)
    assert not reply["missing"] and reply["function"] == fused


def test_collapsed_group_is_a_real_node_with_ops_inputs_outputs_and_edges(dec4):
    _mod, data = dec4
    view = gh.build_view(data, {"m:layers"})
    by_id = {n["id"]: n for n in view["nodes"]}
    layer = by_id["m:layers.1"]
    inside = [n for n in data["nodes"] if str(n.get("module") or "").startswith("layers.1.")
              or n.get("module") == "layers.1"]
    assert layer["label"] == "layers.1" and layer["kind"] == "group"
    assert layer["ops"] == sum(1 for n in inside if n["kind"] == "binding") > 10
    assert layer["weights"] == sum(1 for n in inside if n["kind"] == "param") == 9
    names = [p["name"] for p in layer["inputs"]]
    assert names[0] == "layers.0" and {"cos", "sin", "mask"} <= set(names)  # the previous layer, shared inputs
    assert layer["inputs"][0]["shape"].startswith("(1, seq_len, 512)")
    assert [p["shape"] for p in layer["outputs"]] == ["(1, seq_len, 512)\u00b7float32"]
    edges = {(e["source"], e["target"]) for e in view["edges"]}
    assert ("m:layers.0", "m:layers.1") in edges and ("m:layers.1", "m:layers.2") in edges
    # a shared input has one edge (to the first layer): the other layers name it, no stub lines
    assert ("cos", "m:layers.0") in edges and not any(n.get("stub") for n in view["nodes"])
    assert sum(1 for s, _t in edges if s == "cos") == 1
    # the box says it: title, op count, inputs and outputs with shapes
    from pipeline_model.layout import node_details, node_text

    title, sub = node_text(layer)
    assert title == "layers.1" and sub.startswith(f"{layer['ops']} ops \u00b7 9 weights")
    lines = node_details(layer)
    assert lines[0].startswith("in  layers.0 (1, seq_len, 512)") and lines[-1] == "out (1, seq_len, 512)"
    # inside an expanded parent, a collapsed group is named relative to it
    inner = gh.build_view(data, {"m:layers", "m:layers.1"})
    attn = next(n for n in inner["nodes"] if n["id"] == "m:layers.1.self_attn")
    assert attn["label"] == "self_attn" and attn["name"] == "layers.1.self_attn"


def test_details_of_a_collapsed_layer_list_its_inputs_and_outputs_with_shapes(dec4):
    from app.step_reports import group_details_html

    _mod, data = dec4
    view = gh.build_view(data, {"m:layers"})
    layer = next(n for n in view["nodes"] if n["id"] == "m:layers.2")
    html = group_details_html(layer, view, gh.group_tree(data))
    for text in ("layers.1  (1, seq_len, 512)", "cos  (seq_len, 64)", "mask", f"{layer['ops']} ops, 9 weights",
                 "(1, seq_len, 512)\u00b7float32  \u2192 layers.3"):
        assert text in html, text


def test_a_port_line_elides_the_name_never_the_shape():
    """Issue 33: a collapsed group's input line was cut mid-shape ("(1, seq_len, 5…"): the name is elided in its
    middle instead, the shape stays whole."""
    from pipeline_model.layout import node_details
    from pipeline_model.layout.model import DETAIL_CHARS

    group = {"kind": "group", "inputs": [{"name": "layers.0.self_attn.o_proj.weight_transposed", "shape": "(1, seq_len, 512)"},
                                         {"name": "x", "shape": "(1, seq_len, 512)\u00b7float32"}],
             "outputs": [{"name": "y", "shape": "(1, seq_len, 512)"}]}
    lines = node_details(group)
    assert all(line.endswith("(1, seq_len, 512)") and len(line) <= DETAIL_CHARS for line in lines), lines
    assert lines[0].startswith("in  layers.0.se") and "\u2026" in lines[0] and lines[0].split()[1].endswith("transposed")
    assert lines[1] == "in  x (1, seq_len, 512)" and lines[2] == "out (1, seq_len, 512)"
