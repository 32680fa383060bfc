"""The layout's stage chain (``pipeline_model.layout``) gives exactly the layouts recorded from the single
330-line ``compute_layout`` it replaced (``tests/data/layout_golden.json``, recorded before the split).

Regenerate the golden file only on purpose: ``.venv/bin/python tests/test_layout_stages.py --record``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import sys
from typing import Any, Callable

import networkx as nx
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from pipeline_model import ir_graph as ig  # noqa: E402
from pipeline_model.layout import compute_layout  # noqa: E402

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "layout_golden.json")


def _random_dag(n: int, p: float, seed: int, *, groups: int = 0, frames: bool = False) -> nx.DiGraph:
    rnd = random.Random(seed)
    g = nx.DiGraph()
    if frames:
        g.graph["frame_labels"] = {"outer": "Outer", "inner0": "Inner 0", "inner1": "Inner 1"}
    if groups:
        g.graph["groups"] = [{"id": k, "label": f"block {k}"} for k in range(groups)]
    for i in range(n):
        attrs: dict[str, Any] = {"kind": "binding", "op": f"relax.op{rnd.randint(0, 99)}",
                                 "shape": [rnd.randint(1, 999)], "dtype": "float32",
                                 "group": (i * groups // n) if groups else None}
        if frames and n // 4 <= i < 3 * n // 4:
            attrs["frames"] = ["outer", f"inner{i % 2}"] if i % 3 else ["outer"]
        g.add_node(f"n{i}", **attrs)
    for i in range(n):
        for j in range(i + 1, min(n, i + 12)):
            if rnd.random() < p:
                g.add_edge(f"n{i}", f"n{j}")
    return g


def _cyclic() -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_edges_from([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "b"), ("a", "d"), ("d", "e")])
    return g


def _two_groups() -> nx.DiGraph:
    g = nx.DiGraph(groups=[{"id": 0, "label": "b0"}, {"id": 2, "label": "b2"}])
    for i in range(6):
        g.add_node(f"a{i}", kind="binding", op="relax.add", group=0)
    g.add_node("p", kind="param", name="p", group=None)
    for i in range(4):
        g.add_node(f"b{i}", kind="binding", op="relax.mul", group=2)
    g.add_edges_from([(f"a{i}", f"a{i + 1}") for i in range(5)])
    g.add_edges_from([("p", "b0"), ("b0", "b1"), ("b1", "b2"), ("b2", "b3"), ("a5", "b3")])
    return g


def _sized() -> tuple[nx.DiGraph, dict[str, Any]]:
    g = _random_dag(60, 0.3, 5)
    sizes = {n: (40.0 + (k % 7) * 13.0, 30.0 + (k % 3) * 5.0) for k, n in enumerate(g.nodes) if k % 2}
    return g, {"sizes": sizes, "char_width": 6.5, "node_height": 30.0, "sweeps": 2}


CASES: dict[str, Callable[[], tuple[Any, dict[str, Any]]]] = {
    "random150": lambda: (_random_dag(150, 0.15, 0), {}),
    "random_groups": lambda: (_random_dag(120, 0.2, 3, groups=3), {}),
    "random_frames": lambda: (_random_dag(90, 0.2, 11, frames=True), {}),
    "sized": _sized,
    "cyclic": lambda: (_cyclic(), {}),
    "two_groups": lambda: (_two_groups(), {}),
    "synthetic400": lambda: (ig.graph_from_json(ig.synthetic_graph_json(400)), {}),
    "synthetic_legalized": lambda: (ig.graph_from_json(ig.synthetic_graph_json(300, legalized=True, seed=2)),
                                    {"sweeps": 6}),
}


def _snapshot(case: str) -> dict[str, Any]:
    g, kwargs = CASES[case]()
    lay = compute_layout(g, **kwargs)
    return json.loads(json.dumps({
        "positions": {str(n): list(p) for n, p in lay.positions.items()},
        "sizes": {str(n): list(s) for n, s in lay.sizes.items()},
        "layers": {str(n): v for n, v in lay.layers.items()},
        "edges": [[str(u), str(v), [list(p) for p in pts]] for (u, v), pts in lay.edges.items()],
        "frames": [dataclasses.asdict(f) for f in lay.frames],
        "layer_rows": [[str(n) for n in row] for row in lay.layer_rows],
        "width": lay.width,
        "height": lay.height,
        "crossings": [lay.crossings_before, lay.crossings_after],
        "dummy_count": lay.dummy_count,
        "reversed_edges": lay.reversed_edges,
    }))


@pytest.mark.parametrize("case", sorted(CASES))
def test_stage_chain_equals_recorded_layout(case: str) -> None:
    with open(GOLDEN, encoding="utf-8") as f:
        golden = json.load(f)[case]
    got = _snapshot(case)
    for key in golden:
        assert got[key] == golden[key], f"{case}: {key} differs from the recorded layout"


if __name__ == "__main__" and "--record" in sys.argv:
    with open(GOLDEN, "w", encoding="utf-8") as out:
        json.dump({case: _snapshot(case) for case in sorted(CASES)}, out, separators=(",", ":"))
    print("recorded", GOLDEN)
