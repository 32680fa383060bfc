"""Whole graphs packed while not shown (pipeline_model.graph_pack, issue 33): the round trip is exact,
strings are shared again, a graph is emptied only when nothing else holds it."""

from __future__ import annotations

import copy

import pytest

from pipeline_model import graph_pack
from pipeline_model import ir_graph as ig


def _graph() -> dict:
    data = ig.synthetic_graph_json(3000)
    data.setdefault("graph", {})["callees"] = {
        "fused_a": {"nodes": [{"id": "a", "name": "é→x", "shape": [1, 2]}], "edges": [], "graph": {"function": "fused_a"}},
        "fused_b": {"nodes": [{"id": f"b{i}", "name": "b"} for i in range(2000)], "edges": [], "graph": {"function": "b"}},
    }
    return data


def test_pack_unpack_round_trips_and_is_small():
    data = _graph()
    before = copy.deepcopy(data)
    packed = graph_pack.pack(data)
    assert data == before  # not written to
    assert packed.nodes == len(data["nodes"]) and len(packed.blob) < packed.json_bytes / 4
    again = graph_pack.unpack(packed)
    assert again == data and again is not data
    names = [n["type_text"] for n in again["nodes"] if n.get("type_text")]
    assert len({id(s) for s in names}) == len(set(names))  # equal strings are one object again
    for plain in ({"nodes": [{"id": "a"}], "edges": []}, {"nodes": [], "edges": [], "graph": {"function": "f"}}):
        assert graph_pack.unpack(graph_pack.pack(plain)) == plain  # no "graph" or "callees" field added


def test_unpack_of_a_truncated_blob_is_an_error():
    packed = graph_pack.pack(_graph())
    with pytest.raises(ValueError):
        graph_pack.unpack(graph_pack.PackedGraph(packed.blob[: len(packed.blob) // 2], 0, 0))


def test_release_empties_a_graph_only_when_nothing_else_holds_it():
    data = _graph()
    nodes = data["nodes"]
    kept_for_nodes = graph_pack.release(data)  # its node list is held here (``nodes``)
    kept_for_holder = graph_pack.release(data, holders=-1)  # a holder more than the caller says
    same_nodes = data["nodes"] is nodes
    del nodes
    node = data["nodes"][5]
    node_id = str(node["id"])
    released = graph_pack.release(data)
    assert not kept_for_nodes and not kept_for_holder and same_nodes
    assert released and data == {} and node["id"] == node_id  # emptied; a node held elsewhere lives on
    held = [_graph()]
    assert graph_pack.release(held.pop())  # the caller's only reference is the argument
