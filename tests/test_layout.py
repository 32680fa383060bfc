"""Tests of the layered graph layout (pipeline_model.layout)."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from pipeline_model import ir_graph as ig
from pipeline_model.layout import compute_layout, count_crossings, layered_layout


def _random_dag(n: int, p: float, seed: int) -> nx.DiGraph:
    rnd = random.Random(seed)
    g = nx.DiGraph()
    for i in range(n):
        g.add_node(f"n{i}", kind="binding", op=f"relax.op{rnd.randint(0, 99)}", shape=[rnd.randint(1, 999)],
                   dtype="float32", group=None)
    for i in range(n):
        for j in range(i + 1, min(n, i + 12)):
            if rnd.random() < p:
                g.add_edge(f"n{i}", f"n{j}")
    return g


def _assert_no_overlap(lay) -> None:
    by_row: dict[float, list[tuple[float, float]]] = {}
    for n, (x, y) in lay.positions.items():
        w, h = lay.sizes[n]
        by_row.setdefault(y, []).append((x - w / 2, x + w / 2))
    ys = sorted(by_row)
    heights = {h for _, h in lay.sizes.values()}
    for a, b in zip(ys, ys[1:]):
        assert b - a > max(heights), "rows overlap vertically"
    for spans in by_row.values():
        spans.sort()
        for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
            assert a1 <= b0, f"node boxes overlap: {(a0, a1)} and {(b0, b1)}"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_dag_edges_down_no_overlap_fewer_crossings(seed):
    g = _random_dag(150, 0.15, seed)
    lay = compute_layout(g)
    for u, v in g.edges():
        assert lay.positions[u][1] < lay.positions[v][1], f"edge {u}->{v} does not point down"
        pts = lay.edges[(u, v)]
        assert all(p[1] < q[1] for p, q in zip(pts, pts[1:])), "polyline goes up"
        assert pts[0][1] == pytest.approx(lay.positions[u][1] + lay.sizes[u][1] / 2)
        assert pts[-1][1] == pytest.approx(lay.positions[v][1] - lay.sizes[v][1] / 2)
        assert len(pts) == lay.layers[v] - lay.layers[u] + 1  # one bend point per dummy node
    _assert_no_overlap(lay)
    assert lay.crossings_after <= lay.crossings_before
    assert lay.crossings_before > 0 and lay.crossings_after < lay.crossings_before


def test_deterministic():
    g = _random_dag(120, 0.2, 7)
    a = compute_layout(g)
    b = compute_layout(_random_dag(120, 0.2, 7))
    assert a.positions == b.positions and a.edges == b.edges


def test_layered_layout_contract_and_cycles():
    g = nx.DiGraph()
    g.add_edges_from([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])
    pos = layered_layout(g)
    assert set(pos) == {"a", "b", "c", "d"}
    lay = compute_layout(g)
    assert lay.reversed_edges == 1
    assert set(lay.edges) == set(g.edges())
    _assert_no_overlap(lay)


def test_groups_give_frames_and_sources_sit_by_their_use():
    data = ig.synthetic_graph_json(400)
    g = ig.graph_from_json(data)
    lay = compute_layout(g)
    assert len(lay.frames) == 1 and lay.frames[0].label == "dataflow block 0"
    fr = lay.frames[0]
    for n, d in g.nodes(data=True):
        if d.get("group") == 0:
            x, y = lay.positions[n]
            assert fr.x0 < x < fr.x1 and fr.y0 < y < fr.y1
        if d["kind"] == "param":
            # a weight is placed in the layer just above its first consumer
            first = min(lay.layers[s] for s in g.successors(n))
            assert lay.layers[n] == first - 1
    _assert_no_overlap(lay)
    # the drawing must not drift sideways down a deep network
    assert lay.width < 6000


def test_two_groups_get_disjoint_bands():
    g = nx.DiGraph(groups=[{"id": 0, "label": "b0"}, {"id": 2, "label": "b2"}])
    for i in range(6):
        g.add_node(f"a{i}", kind="binding", op="relax.add", group=0)
    g.add_node("p", kind="param", name="p", group=None)
    for i in range(4):
        g.add_node(f"b{i}", kind="binding", op="relax.mul", group=2)
    g.add_edges_from([(f"a{i}", f"a{i + 1}") for i in range(5)])
    g.add_edges_from([("p", "b0"), ("b0", "b1"), ("b1", "b2"), ("b2", "b3"), ("a5", "b3")])
    lay = compute_layout(g)
    f0, f2 = sorted(lay.frames, key=lambda f: f.y0)
    assert (f0.label, f2.label) == ("b0", "b2")
    assert f0.y1 < f2.y0


def test_count_crossings_helper():
    g = nx.DiGraph([("a", "d"), ("b", "c")])
    assert count_crossings(g, [["a", "b"], ["c", "d"]]) == 1
    assert count_crossings(g, [["a", "b"], ["d", "c"]]) == 0


def test_empty_graph():
    lay = compute_layout(nx.DiGraph())
    assert lay.positions == {} and lay.frames == []


def test_deep_residual_network_does_not_drift_sideways():
    """The residual stream of a deep transformer-like stack runs straight down; the width stays that of a
    block, not one that grows with the depth (the old iterated-barycentre placement drifted ~1 px per node)."""
    data = ig.synthetic_graph_json(3000)
    g = ig.graph_from_json(data)
    lay = compute_layout(g)
    adds = [n for n, d in g.nodes(data=True) if d.get("op") == "relax.add"]
    xs = [lay.positions[n][0] for n in adds]
    assert len(xs) > 100
    assert max(xs) - min(xs) < 1.0, "the residual adds are not in one column"
    assert lay.width < 1500
    _assert_no_overlap(lay)
    # every edge still points down, polylines bend only at layers
    for u, v in g.edges():
        assert lay.positions[u][1] < lay.positions[v][1]


def test_weights_stay_near_their_consumer():
    g = ig.graph_from_json(ig.synthetic_graph_json(600))
    lay = compute_layout(g)
    far = 0
    params = [n for n, d in g.nodes(data=True) if d["kind"] == "param" and n != "x"]
    for n in params:
        consumer = next(iter(g.successors(n)))
        if abs(lay.positions[n][0] - lay.positions[consumer][0]) > 400:
            far += 1
    assert far <= len(params) // 10


def test_group_box_words_are_translatable_and_wide_characters_widen_the_box():
    from pipeline_model.layout import node_details, node_text, node_width, text_width

    group = {"kind": "group", "label": "layers.1", "ops": 53, "weights": 9,
             "inputs": [{"name": "cos", "shape": "(seq_len, 64)\u00b7float32"}], "outputs": [{"shape": "(1, 512)"}]}
    assert node_text(group) == ("layers.1", "53 ops \u00b7 9 weights")
    assert node_details(group) == ["in  cos (seq_len, 64)", "out (1, 512)"]
    zh = {"op": "{0} 个算子", "ops": "{0} 个算子", "weight": "{0} 个权重", "weights": "{0} 个权重",
          "in": "输入", "out": "输出", "more": "另有 {0} 个"}
    assert node_text(group, zh)[1] == "53 个算子 \u00b7 9 个权重"
    assert node_details(group, zh)[0] == "输入 cos (seq_len, 64)"
    assert text_width("个算子") == 6 and text_width("ops") == 3
    assert node_width({"kind": "param", "name": "权重" * 20}) > node_width({"kind": "param", "name": "w" * 20})
