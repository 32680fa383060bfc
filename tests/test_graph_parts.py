"""Graph replies split into bounded parts and reassembled (pipeline_model.engine.graph_parts)."""

from __future__ import annotations

import json

import pytest

from pipeline_model.engine import graph_parts


def _graph(n: int, callee_nodes: int) -> dict:
    nodes = [{"id": f"n{i}", "kind": "binding", "name": f"lv{i}"} for i in range(n)]
    edges = [{"source": f"n{i}", "target": f"n{i + 1}", "index": 0} for i in range(n - 1)]
    small = {"format": "f", "nodes": [{"id": "a"}], "edges": [], "graph": {"function": "small"}}
    big = {"format": "f", "nodes": [{"id": f"b{i}"} for i in range(callee_nodes)], "edges": [], "graph": {"function": "big"}}
    return {"format": "f", "version": 1, "graph": {"function": "main", "callees": {"small": small, "big": big}},
            "nodes": nodes, "edges": edges}


def test_split_parts_are_bounded_and_assemble_round_trips():
    graph = _graph(2500, 1700)
    skeleton, parts = graph_parts.split_graph(graph, part_items=800)
    parts = [json.loads(json.dumps(p)) for p in parts]  # as they travel
    assert skeleton["nodes"] == [] and "callees" not in skeleton["graph"]
    assert all(len(p.get("items", [])) <= 800 for p in parts)
    assert len([p for p in parts if p.get("field") == "nodes" and "callee" not in p]) == 4
    assert graph_parts.assemble(json.loads(json.dumps(skeleton)), parts) == graph


def test_collector_keeps_only_parts_and_missing_callee_is_an_error():
    parts, on_event = graph_parts.collector()
    on_event("step_started", {"x": 1})
    on_event(graph_parts.EV_GRAPH_PART, {"field": "nodes", "items": [{"id": "a"}]})
    assert parts == [{"field": "nodes", "items": [{"id": "a"}]}]
    skeleton, _ = graph_parts.split_graph(_graph(3, 2))
    with pytest.raises(ValueError, match="small"):
        graph_parts.assemble(skeleton, [])
    assert graph_parts.assemble(None, []) is None
    assert graph_parts.assemble({"nodes": [1]}, []) == {"nodes": [1]}  # an unsplit graph passes through


def test_collected_parts_share_equal_strings_and_still_assemble_the_graph():
    """Each decoded part has its own copies of op names, dtypes, shapes' names and node ids (an edge's
    ends); the collector shares them across parts (a 50k-node graph holds ~1/3 less) without changing it."""
    graph = _graph(1700, 900)
    for k, node in enumerate(graph["nodes"]):
        node.update(op="relax.matmul", shape=[1, "seq_len"], attrs={"out_dtype": "float32", "k": str(k % 3)})
    skeleton, parts = graph_parts.split_graph(graph, part_items=800)
    collected, on_event = graph_parts.collector()
    for part in parts:
        on_event(graph_parts.EV_GRAPH_PART, json.loads(json.dumps(part)))  # as they travel
    whole = graph_parts.assemble(json.loads(json.dumps(skeleton)), collected)
    assert whole == graph
    nodes, edges = whole["nodes"], whole["edges"]
    assert nodes[0]["op"] is nodes[1600]["op"] and nodes[0]["shape"][1] is nodes[1600]["shape"][1]
    assert nodes[0]["attrs"]["out_dtype"] is nodes[1600]["attrs"]["out_dtype"]
    assert edges[799]["target"] is edges[800]["source"]  # n800: one string, though sent in two parts
