"""The graph JSON of :func:`pipeline_model.ir_graph.graph_to_json` as the graph the layout reads, and the
node categories the palette colours."""

from __future__ import annotations

import json
from typing import Any

from pipeline_model.ir_graph import GRAPH_FORMAT

#: Node categories, in paint order; a category's index picks its brush and pen in the palette.
CATEGORIES = ("binding", "call", "param", "constant", "output", "group", "stub", "changed")
CAT_INDEX = {c: k for k, c in enumerate(CATEGORIES)}
CHANGED = CAT_INDEX["changed"]
GROUP = CAT_INDEX["group"]


def category(attrs: dict[str, Any]) -> str:
    """The category of a node of the view graph (``changed`` is given by the highlight, not here)."""
    kind = attrs.get("kind")
    if attrs.get("stub"):
        return "stub"
    if kind == "group":
        return "group"
    if kind in ("param", "constant", "output"):
        return str(kind)
    return "call" if attrs.get("callee") else "binding"


def categories(base: list[int], ids: list[str], highlight: frozenset[str]) -> list[int]:
    """Each node's category index, ``changed`` for the highlighted ones."""
    if not highlight:
        return base
    return [CHANGED if n in highlight else c for n, c in zip(ids, base)]


def decode(data: Any) -> dict[str, Any]:
    """Graph JSON given as a dict, or as JSON text/bytes (decoded here, off the GUI thread)."""
    if isinstance(data, (bytes, bytearray, str)):
        data = json.loads(data)
    if not isinstance(data, dict):
        raise ValueError("graph JSON: expected an object with 'nodes' and 'edges'")
    return data


def check_graph_json(full: dict[str, Any]) -> None:
    """Raise ``ValueError`` naming the first problem of a graph JSON (format, node ids, edge ends)."""
    if not isinstance(full.get("nodes"), list):
        raise ValueError("graph JSON: expected an object with 'nodes' and 'edges'")
    if full.get("format", GRAPH_FORMAT) != GRAPH_FORMAT:
        raise ValueError(f"graph JSON: unknown format {full.get('format')!r}")
    known = set()
    for i, node in enumerate(full["nodes"]):
        if not isinstance(node, dict) or "id" not in node:
            raise ValueError(f"graph JSON: nodes[{i}] has no 'id'")
        known.add(node["id"])
    for i, edge in enumerate(full.get("edges", full.get("links", [])) or []):
        src, dst = edge.get("source"), edge.get("target")
        if src not in known or dst not in known:
            raise ValueError(f"graph JSON: edges[{i}] refers to an unknown node ({src!r} -> {dst!r})")


def _edges(data: dict[str, Any]) -> list[dict[str, Any]]:
    return data.get("edges", data.get("links", [])) or []


def neighbours(data: dict[str, Any], node_id: str) -> tuple[list[str], list[str]]:
    """``(inputs, outputs)`` of a node of the graph JSON ``data``, one per neighbour as in
    :class:`JsonGraph` (the first edge of a pair): inputs in argument order, outputs in edge order."""
    ins: list[tuple[Any, int, str]] = []
    outs: list[str] = []
    seen: set[tuple[str, str]] = set()
    for i, edge in enumerate(_edges(data)):
        src, dst = edge.get("source"), edge.get("target")
        if (src != node_id and dst != node_id) or (src, dst) in seen:
            continue
        seen.add((src, dst))
        if dst == node_id:
            ins.append((edge.get("index", 0) or 0, i, src))
        if src == node_id:
            outs.append(dst)
    ins.sort()
    return [src for _, _, src in ins], outs


class JsonGraph:
    """The graph JSON as the minimal graph :func:`pipeline_model.layout.compute_layout` reads
    (``nodes(data=True)``, ``edges()``, ``graph``): no networkx objects to build on the way (that alone cost
    ~100 ms for 5,000 nodes). A node's neighbours: :func:`neighbours` (asked for one node at a time: lists
    for every node cost ~12 MB for a 54,000-node view)."""

    def __init__(self, data: dict[str, Any]) -> None:
        if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
            raise ValueError("graph JSON: expected an object with 'nodes' and 'edges'")
        if data.get("format", GRAPH_FORMAT) != GRAPH_FORMAT:
            raise ValueError(f"graph JSON: unknown format {data.get('format')!r}")
        self.graph: dict[str, Any] = dict(data.get("graph") or {})
        self.node_list: list[tuple[str, dict[str, Any]]] = []
        self.attrs: dict[str, dict[str, Any]] = {}
        for i, node in enumerate(data["nodes"]):
            if not isinstance(node, dict) or "id" not in node:
                raise ValueError(f"graph JSON: nodes[{i}] has no 'id'")
            nid = node["id"]
            self.node_list.append((nid, node))
            self.attrs[nid] = node
        self.edge_list: list[tuple[str, str]] = []
        seen: set[tuple[str, str]] = set()
        for i, edge in enumerate(_edges(data)):
            src, dst = edge.get("source"), edge.get("target")
            if src not in self.attrs or dst not in self.attrs:
                raise ValueError(f"graph JSON: edges[{i}] refers to an unknown node ({src!r} -> {dst!r})")
            if (src, dst) in seen:  # a DiGraph keeps one edge per pair
                continue
            seen.add((src, dst))
            self.edge_list.append((src, dst))

    def nodes(self, data: bool = False) -> list:
        """Node ids, or ``(id, attributes)`` pairs with ``data=True`` (as networkx)."""
        return self.node_list if data else [n for n, _ in self.node_list]

    def edges(self) -> list[tuple[str, str]]:
        """``(source, target)`` pairs, one per pair (as a networkx ``DiGraph``)."""
        return self.edge_list
