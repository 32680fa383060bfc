"""The collapsed graph of a large Relax function, in a compact encoding (TVM-free).

A 50,000-node function (the 800-layer decoder) is ~25 MB of graph JSON, yet its first frame shows seven
boxes (``x``, ``cos``, ``sin``, ``mask``, ``layers ×800``, ``norm``, the output). The engine's ``graph``
command, asked with ``"collapsed": true``, answers a function of more than :data:`COLLAPSE_MIN_NODES`
nodes with :func:`collapsed_summary` instead of the whole graph: the view graph of no expanded group
(:func:`pipeline_model.graph_hierarchy.build_view`: top-level nodes, every outermost group as one node with
its counts and the values going in and out), the whole group tree (so Expand All and the parents of a
group are known before the nodes are), the node count and, against the module before the step, the view
nodes that changed. The view can lay that out at once; the whole graph follows as a second request
(what expanding, find, change colouring inside groups and export read).

Encoding: a list of dicts with mostly the same keys (nodes, group tree entries) is a table
(:func:`encode_table`): ``{"fields": [key, ...], "rows": [[value, ...], ...], "missing": [[[field index, ...],
[row, ...]], ...]}``, each key named once instead of once per node; edges are ``[source row, target row, index,
indices]``. :func:`decode_summary` gives back exactly the view graph and tree that were encoded.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from pipeline_model import graph_hierarchy
from pipeline_model.ir_graph import changed_nodes

__all__ = [
    "COLLAPSE_MIN_NODES",
    "COLLAPSED_FORMAT",
    "COLLAPSED_VERSION",
    "collapsed_summary",
    "decode_summary",
    "encode_table",
    "decode_table",
    "is_collapsed_view",
    "group_tree_of",
    "shown_nodes",
]

#: Functions with more nodes than this are answered collapsed first (when asked so).
COLLAPSE_MIN_NODES = 5000
#: A collapsed view with more nodes than this saves nothing (a model without module structure): the
#: whole graph is answered instead.
COLLAPSED_MAX_VIEW_NODES = 2000
COLLAPSED_FORMAT = "relax-pipeline-studio.collapsed-graph"
COLLAPSED_VERSION = 2
#: Marker on a decoded view graph (``graph["collapsed_of"]``: the whole function's node count): the
#: graph view lays it out as it is, with no groups to build and the whole graph still to come.
COLLAPSED_MARK = "collapsed_of"


def encode_table(items: list[dict[str, Any]]) -> dict[str, Any]:
    """A list of dicts as one table: the union of their keys (first-seen order), one row of values per
    dict, and the dicts lacking some keys grouped by the keys they lack (``missing``: ``[[field index, ...],
    [row, ...]]`` pairs: a group tree's 9,600 entries without ``container`` are one pair, not one entry each)."""
    fields: list[str] = []
    position: dict[str, int] = {}
    for item in items:
        for key in item:
            if key not in position:
                position[key] = len(fields)
                fields.append(key)
    rows: list[list[Any]] = []
    missing: dict[tuple[int, ...], list[int]] = {}
    width = len(fields)
    for r, item in enumerate(items):
        rows.append([item.get(key) for key in fields])
        if len(item) != width:
            missing.setdefault(tuple(k for k, key in enumerate(fields) if key not in item), []).append(r)
    return {"fields": fields, "rows": rows, "missing": [[list(ks), rs] for ks, rs in missing.items()]}


def decode_table(table: dict[str, Any]) -> list[dict[str, Any]]:
    """The dicts of :func:`encode_table` (keys in the table's order, missing ones left out)."""
    fields = [str(f) for f in table.get("fields") or []]
    rows = table.get("rows") or []
    width = len(fields)
    out: list[dict[str, Any]] = []
    for r, row in enumerate(rows):
        if len(row) != width:
            raise ValueError(f"collapsed graph: row {r} has {len(row)} values for {width} fields")
        out.append(dict(zip(fields, row)))
    for keys, where in table.get("missing") or []:
        names = [fields[int(k)] for k in keys if 0 <= int(k) < width]
        for r in where:
            if not 0 <= int(r) < len(out):
                raise ValueError(f"collapsed graph: a missing field names row {r} of {len(out)}")
            item = out[int(r)]
            for name in names:
                item.pop(name, None)
    return out


def shown_nodes(full: dict[str, Any], tree: dict[str, dict[str, Any]],
                rep: Optional[dict[str, str]] = None) -> list[dict[str, Any]]:
    """The nodes of ``full`` whose own fields the collapsed view reads beyond names and edges: those
    shown as themselves, and the values crossing a collapsed group's border (its ``inputs``/``outputs``,
    their shapes and types). ``rep``: :func:`graph_hierarchy.collapsed_rep` when already made."""
    rep = rep if rep is not None else graph_hierarchy.collapsed_rep(full, tree)
    return _shown_nodes(full, rep, _crossing_edges(full, rep))


def _crossing_edges(full: dict[str, Any], rep: dict[str, str]) -> list[dict[str, Any]]:
    """The edges of ``full`` between two different view nodes of the collapsed view (``rep``: full-graph
    id -> view id): the only ones its view edges and group ports come from (the others join a node to
    itself)."""
    get = rep.get
    out = []
    for e in full.get("edges") or []:
        s, t = get(e["source"]), get(e["target"])
        if s != t and s is not None and t is not None:
            out.append(e)
    return out


def _shown_nodes(full: dict[str, Any], rep: dict[str, str], crossing: list[dict[str, Any]]) -> list[dict[str, Any]]:
    wanted = {nid for nid, shown in rep.items() if shown == nid}
    wanted.update(e["source"] for e in crossing)
    return [n for n in full.get("nodes") or [] if n["id"] in wanted]


def _view_members(nodes: list[dict[str, Any]], rep: dict[str, str], crossing: list[dict[str, Any]],
                  ) -> tuple[list[dict[str, Any]], dict[str, list[int]]]:
    """``(members, counts)``: the nodes the collapsed view is made from, in graph order — each node shown as
    itself, each end of a crossing edge, and for each group its first member (its place in the view) and its
    first member in a dataflow block (its block) — and each group's ``[bindings, parameters]`` over all its
    members (``build_view`` of the members counts only those). ``rep``: :func:`graph_hierarchy.collapsed_rep`."""
    ends = {e["source"] for e in crossing}
    ends.update(e["target"] for e in crossing)
    counts: dict[str, list[int]] = {}
    in_block: dict[str, bool] = {}  # group -> a kept member of it is in a block
    members: list[dict[str, Any]] = []
    for n in nodes:
        nid = n["id"]
        group = rep[nid]
        if group == nid:
            members.append(n)
            continue
        count = counts.get(group)
        blocked = n.get("group") is not None
        if count is None:
            count = counts[group] = [0, 0]
            members.append(n)
            in_block[group] = blocked
        elif nid in ends or (blocked and not in_block[group]):
            members.append(n)
            in_block[group] = in_block[group] or blocked
        kind = n.get("kind")
        if kind == "binding":
            count[0] += 1
        elif kind == "param":
            count[1] += 1
    return members, counts


def collapsed_summary(full: dict[str, Any], before: Optional[dict[str, Any]] = None,
                      min_nodes: int = COLLAPSE_MIN_NODES,
                      fill: Optional[Callable[[list[dict[str, Any]]], None]] = None) -> Optional[dict[str, Any]]:
    """The collapsed reply for the whole graph ``full`` (graph JSON with ``module`` on its nodes), or
    ``None`` when the whole graph is the better answer (``min_nodes`` nodes or fewer, or a collapsed view
    that would still be large). ``before``: the graph of the same function before the step; the view nodes
    holding a node that changed are listed in ``changed``. ``full`` may be an outline whose nodes lack
    types and attrs (:func:`pipeline_model.engine.graph_extract_tvm.extract_graph_outline`): ``fill`` is
    then called with the nodes the view reads (:func:`shown_nodes`) before it is built."""
    nodes = full.get("nodes") or []
    if len(nodes) <= min_nodes:
        return None
    tree = graph_hierarchy.group_tree(full)
    shown_as = graph_hierarchy.collapsed_rep(full, tree)
    if fill is not None and len(set(shown_as.values())) > COLLAPSED_MAX_VIEW_NODES:
        return None  # known before reading any node's details
    crossing = _crossing_edges(full, shown_as)
    if fill is not None:
        fill(_shown_nodes(full, shown_as, crossing))
    # the view of the crossing edges only (the others are self-loops of a view node, which it drops) and of
    # the nodes that decide it; each group's counts are over all its members
    members, counts = _view_members(nodes, shown_as, crossing)
    view = graph_hierarchy.build_view({**full, "nodes": members, "edges": crossing}, frozenset(), tree=tree)
    if len(view["nodes"]) > COLLAPSED_MAX_VIEW_NODES:
        return None
    del view["graph"]["rep"]  # of the members only: shown_as is the whole graph's
    for node in view["nodes"]:
        if node.get("kind") == "group":
            node["ops"], node["weights"] = counts[node["id"]]
    changed: list[str] = []
    if before is not None:
        shown = {shown_as.get(n, n) for n in changed_nodes(before, full)}
        changed = [n["id"] for n in view["nodes"] if n["id"] in shown]
    row = {n["id"]: k for k, n in enumerate(view["nodes"])}
    edges = [[row[e["source"]], row[e["target"]], e.get("index", 0), e.get("indices")] for e in view["edges"]]
    return {
        "format": COLLAPSED_FORMAT,
        "version": COLLAPSED_VERSION,
        "node_count": len(nodes),
        "head": {k: view[k] for k in ("format", "version") if k in view},
        "graph": view["graph"],
        "nodes": encode_table(view["nodes"]),
        "edges": edges,
        "tree": encode_table([{"id": gid, **info} for gid, info in tree.items()]),
        "changed": changed,
    }


def decode_summary(summary: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """``(view graph JSON, changed view ids)`` of a :func:`collapsed_summary`. The view graph carries
    ``graph["collapsed_of"]`` (the whole function's node count, see :func:`is_collapsed_view`) and
    ``graph["group_tree"]`` (the whole group tree, see :func:`group_tree_of`). Raises ``ValueError``
    naming what is wrong with a summary of another format or version."""
    if summary.get("format") != COLLAPSED_FORMAT:
        raise ValueError(f"collapsed graph: unknown format {summary.get('format')!r}")
    if summary.get("version") != COLLAPSED_VERSION:
        raise ValueError(f"collapsed graph: unsupported version {summary.get('version')!r}")
    nodes = decode_table(summary["nodes"])
    ids = [n["id"] for n in nodes]
    edges = []
    for k, (s, t, index, indices) in enumerate(summary.get("edges") or []):
        if not (0 <= s < len(ids) and 0 <= t < len(ids)):
            raise ValueError(f"collapsed graph: edge {k} refers to node rows {s} -> {t} of {len(ids)}")
        edges.append({"source": ids[s], "target": ids[t], "index": index, "indices": indices})
    tree = {}
    for entry in decode_table(summary["tree"]):
        gid = entry.pop("id")
        tree[str(gid)] = entry
    graph = dict(summary.get("graph") or {})
    graph[COLLAPSED_MARK] = int(summary.get("node_count") or 0)
    graph["group_tree"] = tree
    view = {**(summary.get("head") or {}), "directed": True, "multigraph": False, "graph": graph,
            "nodes": nodes, "edges": edges}
    return view, [str(c) for c in summary.get("changed") or []]


def group_tree_of(view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The whole function's group tree carried by a collapsed view graph (empty for any other graph)."""
    return dict((view.get("graph") or {}).get("group_tree") or {})


def is_collapsed_view(graph: Any) -> bool:
    """True for a view graph decoded from a collapsed summary (the whole graph is not there yet)."""
    return isinstance(graph, dict) and COLLAPSED_MARK in (graph.get("graph") or {})
