"""Layout invariant of the graph view's frames over the bundled models and held-out graphs: for every pair
of frames, either disjoint or nested; no frame meets the box of a node that is not in its group; every
node sits inside the frames of its groups. Checked for the default expansion, everything expanded,
everything collapsed and one layer expanded."""

from __future__ import annotations

import os
from typing import Any

import pytest

from pipeline_model import graph_hierarchy as gh
from pipeline_model.layout import compute_layout
from widgets.graph.adapter import JsonGraph

tvm = pytest.importorskip("tvm")
from tvm.relax.frontend import nn  # noqa: E402
from tvm.relax.frontend.nn import op  # noqa: E402

from pipeline_model.engine.graph_extract_tvm import default_function, extract_graph_json  # noqa: E402
from pipeline_model.importers.load_tvm import load_model  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---- held-out models: GPT-2-like and BERT-like blocks with small random dims
class _GPT2Block(nn.Module):
    def __init__(self, d: int, ffn: int) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp_fc = nn.Linear(d, ffn)
        self.mlp_proj = nn.Linear(ffn, d)
        self.d = d

    def forward(self, x: Any) -> Any:
        h = self.ln_1(x)
        qkv = op.split(self.c_attn(h), 3, axis=-1)
        att = op.softmax(op.matmul(qkv[0], op.permute_dims(qkv[1], [0, 2, 1])), axis=-1)
        x = x + self.c_proj(op.matmul(att, qkv[2]))
        return x + self.mlp_proj(op.gelu(self.mlp_fc(self.ln_2(x))))


class _GPT2(nn.Module):
    def __init__(self, layers: int = 3, d: int = 24, ffn: int = 40, vocab: int = 50) -> None:
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.h = nn.ModuleList([_GPT2Block(d, ffn) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, ids: Any) -> Any:
        x = self.wte(ids)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


class _BertLayer(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d)
        self.value = nn.Linear(d, d)
        self.output = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)
        self.intermediate = nn.Linear(d, 2 * d)
        self.out = nn.Linear(2 * d, d)
        self.norm2 = nn.LayerNorm(d)

    def forward(self, x: Any, mask: Any) -> Any:
        s = op.matmul(self.query(x), op.permute_dims(self.key(x), [0, 2, 1])) + mask
        a = self.norm(x + self.output(op.matmul(op.softmax(s, axis=-1), self.value(x))))
        return self.norm2(a + self.out(op.gelu(self.intermediate(a))))


class _Bert(nn.Module):
    def __init__(self, layers: int = 2, d: int = 16) -> None:
        super().__init__()
        self.layer = nn.ModuleList([_BertLayer(d) for _ in range(layers)])
        self.pooler = nn.Linear(d, d)

    def forward(self, x: Any, mask: Any) -> Any:
        for layer in self.layer:
            x = layer(x, mask)
        return op.tanh(self.pooler(x))


def _held_out(name: str) -> dict[str, Any]:
    if name == "gpt2":
        spec = {"forward": {"ids": nn.spec.Tensor((1, 7), "int32")}}
        mod, _ = _GPT2().export_tvm(spec=spec)
    else:
        spec = {"forward": {"x": nn.spec.Tensor((1, 5, 16), "float32"), "mask": nn.spec.Tensor((1, 5, 5), "float32")}}
        mod, _ = _Bert().export_tvm(spec=spec)
    return extract_graph_json(mod, "forward")


def _bundled(spec: str) -> dict[str, Any]:
    loaded = load_model(spec if spec.startswith("builtin:") else os.path.join(ROOT, spec))
    mod = loaded.mod
    return extract_graph_json(mod, default_function(mod))


MODELS = ["builtin:mlp", "builtin:transformer", "builtin:decoder", "resources/models/cnn_bn.onnx", "gpt2", "bert"]


@pytest.fixture(scope="module", params=MODELS)
def model_graph(request: Any) -> dict[str, Any]:
    name = request.param
    data = _held_out(name) if name in ("gpt2", "bert") else _bundled(name)
    gh.annotate_modules(data)
    return data


def _expansions(data: dict[str, Any]) -> list[frozenset[str]]:
    tree = gh.group_tree(data)
    modules = [g for g, info in tree.items() if info["kind"] == "module"]
    out = [gh.default_expansion(data), frozenset(modules), frozenset()]
    top = [g for g in modules if tree[g]["parent"] is None]
    if top:  # one top-level group (a layer) expanded, with its children
        one = top[len(top) // 2]
        out.append(frozenset(g for g in modules if g == one or g.startswith(one + ".")))
    return out


def _inside(box: tuple[float, float, float, float], fr: Any) -> bool:
    x0, y0, x1, y1 = box
    return fr.x0 <= x0 and x1 <= fr.x1 and fr.y0 <= y0 and y1 <= fr.y1


def _meets(box: tuple[float, float, float, float], fr: Any) -> bool:
    x0, y0, x1, y1 = box
    return x0 < fr.x1 and fr.x0 < x1 and y0 < fr.y1 and fr.y0 < y1


def check_frames(view: dict[str, Any]) -> int:
    """Assert the frame invariant on the layout of a view graph; returns the number of frames."""
    g = JsonGraph(view)
    lay = compute_layout(g)
    has_pred = {v for _u, v in g.edge_list}
    consumer_blocks: dict[str, set[Any]] = {}
    for u, v in g.edge_list:
        consumer_blocks.setdefault(u, set()).add(g.attrs[v].get("group"))
    boxes = {}
    for n, (x, y) in lay.positions.items():
        w, h = lay.sizes[n]
        boxes[n] = (x - w / 2, y - h / 2, x + w / 2, y + h / 2)

    def member(n: str, fr: Any) -> bool:
        a = g.attrs[n]
        if fr.kind == "nested":
            return fr.group in (a.get("frames") or [])
        return a.get("group") == fr.group

    def may_sit_in(n: str, fr: Any) -> bool:
        """A function input or weight (no producer, no block) may be drawn in the block that reads it."""
        a = g.attrs[n]
        return fr.kind == "block" and a.get("group") is None and n not in has_pred \
            and fr.group in consumer_blocks.get(n, ())

    frames = lay.frames
    for i, a in enumerate(frames):
        for b in frames[i + 1:]:
            ab, ba = _inside((b.x0, b.y0, b.x1, b.y1), a), _inside((a.x0, a.y0, a.x1, a.y1), b)
            assert ab or ba or not _meets((b.x0, b.y0, b.x1, b.y1), a), \
                f"frames {a.label!r} and {b.label!r} overlap without nesting"
        for n, box in boxes.items():
            if member(n, a):
                assert _inside(box, a), f"node {n!r} sticks out of its frame {a.label!r}"
            elif may_sit_in(n, a):
                assert _inside(box, a) or not _meets(box, a), f"node {n!r} straddles the frame {a.label!r}"
            else:
                assert not _meets(box, a), f"frame {a.label!r} encloses the foreign node {n!r}"
    return len(frames)


def test_frames_disjoint_or_nested_and_hold_only_their_nodes(model_graph: dict[str, Any]) -> None:
    checked = 0
    for expanded in _expansions(model_graph):
        view = gh.build_view(model_graph, expanded)
        checked += check_frames(view)
    if gh.group_tree(model_graph):
        assert checked > 0  # the test saw frames


def test_frames_of_inlined_fused_calls_too() -> None:
    """The transformer after FuseOps: fused Relax functions expanded in place (call groups) inside the
    module groups."""
    from tvm import relax

    from pipeline_model.engine.graph_extract_tvm import relax_functions

    mod = load_model("builtin:transformer").mod
    for p in (relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps()):
        mod = p(mod)
    data = gh.annotate_modules(extract_graph_json(mod, "forward"))
    names = set(relax_functions(mod))
    data["graph"]["callees"] = {n["callee"]: extract_graph_json(mod, n["callee"]) for n in data["nodes"]
                                if n.get("callee_kind") == "relax_function" and n.get("callee") in names}
    tree = gh.group_tree(data)
    calls = [g for g, info in tree.items() if info["kind"] == "call"]
    assert calls
    modules = [g for g, info in tree.items() if info["kind"] == "module"]
    assert check_frames(gh.build_view(data, modules + calls)) > len(modules)
    assert check_frames(gh.build_view(data, calls[:3])) >= 1


def test_mlp_fc2_frame_does_not_enclose_fc1_bias() -> None:
    data = gh.annotate_modules(_bundled("builtin:mlp"))
    view = gh.build_view(data, gh.default_expansion(data))
    lay = compute_layout(JsonGraph(view))
    fc2 = next(f for f in lay.frames if f.group == "m:fc2")
    x, y = lay.positions["fc1.bias"] if "fc1.bias" in lay.positions else next(
        lay.positions[n["id"]] for n in view["nodes"] if n.get("name") == "fc1.bias")
    assert not (fc2.x0 <= x <= fc2.x1 and fc2.y0 <= y <= fc2.y1)


def test_collapsed_gpt2_reads_as_a_model_summary() -> None:
    data = gh.annotate_modules(_held_out("gpt2"))
    view = gh.build_view(data, ())  # collapsed: embedding -> the blocks (one box) -> norm -> head
    short = ["ids", "m:wte", "m:h", "m:ln_f", "m:lm_head", "output"]
    assert [n["id"] for n in view["nodes"]] == short
    assert {(e["source"], e["target"]) for e in view["edges"]} == set(zip(short, short[1:]))
    assert next(n for n in view["nodes"] if n["id"] == "m:h")["label"] == "h \u00d73"
    view = gh.build_view(data, {"m:h"})
    ids = [n["id"] for n in view["nodes"]]
    chain = ["ids", "m:wte", "m:h.0", "m:h.1", "m:h.2", "m:ln_f", "m:lm_head", "output"]
    assert ids == chain
    edges = {(e["source"], e["target"]) for e in view["edges"]}
    assert edges == set(zip(chain, chain[1:]))  # embedding -> 3 blocks -> norm -> head, nothing else
    by_id = {n["id"]: n for n in view["nodes"]}
    assert by_id["m:h.1"]["weights"] == 12 and by_id["m:h.1"]["inputs"][0]["name"] == "h.0"
    assert by_id["m:lm_head"]["outputs"][0]["shape"].startswith("(1, 7, 50)")
