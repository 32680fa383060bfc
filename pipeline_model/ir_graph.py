"""The graph JSON of a Relax function (its model, below), its networkx form, and graph comparison (TVM-free).

The engine builds the graph JSON from a module (:mod:`pipeline_model.engine.graph_extract_tvm`); the GUI
process uses :func:`graph_from_json`, :func:`changed_nodes` and :func:`layered_layout` on the JSON that the
engine sends.

Graph model (one graph per Relax function):

* nodes -- ``kind`` is ``param`` (function parameter), ``binding`` (one per binding of the function body),
  ``constant`` (one node per use of a tensor constant) or ``output`` (the function's return value).
  Attributes: ``name`` (var name), ``op`` (e.g. ``relax.matmul``; ``call`` for calls of functions,
  ``tuple``/``tuple_get_item``/``var``/``const``/``function``/``if``/``match_cast``/... for other bindings),
  ``callee`` (PrimFunc/function/extern name for ``relax.call_tir``, ``relax.call_dps_packed``, calls of
  GlobalVars or local functions, else None), ``callee_kind`` (``prim_func``, ``relax_function``, ``extern``,
  ``local`` or None), ``composite`` (the callee's ``Composite``/``Codegen`` attribute, else None), ``label``
  (callee or op, what a view shows as title), ``shape`` (list of ints and symbolic names, or None),
  ``dtype`` (str or None), ``type_text`` (the type as TVMScript prints it), ``attrs`` (op attributes and
  non-tensor arguments, as a dict of strings), ``group`` (dataflow block index or None), ``is_dataflow``.
* edges -- data flow ``source -> target`` (a var use, also through tuples and ``TupleGetItem`` arguments);
  ``index`` is the first argument position, ``indices`` all of them.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from pipeline_model.layout import layered_layout  # re-exported: the contract lists it here

if TYPE_CHECKING:
    import networkx as nx  # imported where a graph is built: the GUI imports this module before its first paint

GRAPH_FORMAT = "relax-pipeline-studio.graph"
GRAPH_VERSION = 1

__all__ = [
    "GRAPH_FORMAT",
    "GRAPH_VERSION",
    "graph_to_json",
    "graph_from_json",
    "changed_nodes",
    "node_signatures",
    "synthetic_graph_json",
    "layered_layout",
]


def graph_to_json(g: nx.DiGraph) -> dict[str, Any]:
    """Node-link JSON of a graph made by :func:`extract_graph` (JSON-safe; node order preserved)."""
    nodes = []
    for node_id, data in g.nodes(data=True):
        item = {"id": str(node_id)}
        item.update(data)
        nodes.append(item)
    edges = []
    for src, dst, data in g.edges(data=True):
        item = {"source": str(src), "target": str(dst)}
        item.update(data)
        edges.append(item)
    graph_attrs = {k: v for k, v in g.graph.items()}
    data = {
        "format": GRAPH_FORMAT,
        "version": GRAPH_VERSION,
        "directed": True,
        "multigraph": False,
        "graph": graph_attrs,
        "nodes": nodes,
        "edges": edges,
    }
    # fail here (engine side) rather than in the GUI if something is not JSON-safe
    json.dumps(data)
    return data


def graph_from_json(data: dict[str, Any]) -> nx.DiGraph:
    """Rebuild the DiGraph from :func:`graph_to_json` output (raises ``ValueError`` on malformed input)."""
    if not isinstance(data, dict) or "nodes" not in data:
        raise ValueError("graph JSON: expected an object with 'nodes' and 'edges'")
    if data.get("format", GRAPH_FORMAT) != GRAPH_FORMAT:
        raise ValueError(f"graph JSON: unknown format {data.get('format')!r}")
    import networkx as nx

    g = nx.DiGraph(**dict(data.get("graph") or {}))
    for i, node in enumerate(data["nodes"]):
        if "id" not in node:
            raise ValueError(f"graph JSON: nodes[{i}] has no 'id'")
        attrs = {k: v for k, v in node.items() if k != "id"}
        g.add_node(node["id"], **attrs)
    for i, edge in enumerate(data.get("edges", data.get("links", []))):
        src, dst = edge.get("source"), edge.get("target")
        if src not in g or dst not in g:
            raise ValueError(f"graph JSON: edges[{i}] refers to an unknown node ({src!r} -> {dst!r})")
        attrs = {k: v for k, v in edge.items() if k not in ("source", "target")}
        g.add_edge(src, dst, **attrs)
    return g


def _local_signature(node: dict[str, Any]) -> tuple:
    shape = node.get("shape")
    return (
        node.get("kind"),
        node.get("callee") or node.get("op"),
        tuple(shape) if isinstance(shape, list) else shape,
        node.get("dtype"),
        node.get("name") if node.get("kind") == "param" else None,
    )


def node_signatures(data: dict[str, Any]) -> dict[str, str]:
    """A stable signature per node: (op/callee, shape, dtype) of the node and of its inputs, in argument order.

    The signature ignores var names and identities (except parameter names), so a node that a pass left as
    it was keeps its signature even if it was re-created.
    """
    sha1 = hashlib.sha1
    out: dict[str, str] = {}
    for nid, (own, ins) in _signature_keys(data).items():
        text = repr(own) + "<-" + "|".join(repr(sig) for sig in ins)  # an input missing from the graph: None
        out[nid] = sha1(text.encode("utf-8")).hexdigest()
    return out


def _signature_keys(data: dict[str, Any]) -> dict[str, tuple]:
    """What :func:`node_signatures` hashes, as hashable tuples (node id -> (local signature, local
    signatures of its inputs in argument order)): comparing these within one process needs no printing
    or hashing of text (a 50,000-node pair compares in a fraction of the time)."""
    nodes = {n["id"]: n for n in data.get("nodes", [])}
    inputs: dict[str, list[tuple[int, str]]] = {nid: [] for nid in nodes}
    for edge in data.get("edges", data.get("links", [])):
        dst = edge.get("target")
        if dst in inputs:
            inputs[dst].append((int(edge.get("index", 0) or 0), edge.get("source")))
    local = {nid: _local_signature(n) for nid, n in nodes.items()}
    out: dict[str, tuple] = {}
    for nid in nodes:
        ins = inputs[nid]
        if len(ins) > 1:
            ins.sort(key=lambda t: (t[0], str(t[1])))
        out[nid] = (local[nid], tuple(local.get(src) for _, src in ins))
    _release(inputs)
    return out


def _release(d: dict) -> None:
    """Empty a large dict item by item. Dropped at once (a function returning), its ~10^5 tuples and lists
    are freed in one C-level cascade that holds the GIL for tens of milliseconds (measured: 35 ms at 50,000
    nodes), stalling the GUI thread while the graph view's worker thread compares graphs; freed one item per
    Python step, other threads get the GIL in between."""
    while d:
        d.popitem()


def changed_nodes(before_json: dict[str, Any] | None, after_json: dict[str, Any]) -> set[str]:
    """Ids of nodes of ``after_json`` whose signature (see :func:`node_signatures`) is new.

    Signatures are compared as multisets: if ``before`` had two equal nodes and ``after`` has three, the
    extra one (the last in order) counts as changed. ``before_json`` None means everything is new.
    """
    after = _signature_keys(after_json)
    if before_json is None:
        return set(after)
    # Counted in a Python loop, not with Counter(iterable): that is one C call hashing 50,000 signature
    # tuples (~15-30 ms) that holds the GIL the GUI thread needs; a loop lets other threads in.
    available: dict[tuple, int] = {}
    before = _signature_keys(before_json)
    for sig in before.values():
        available[sig] = available.get(sig, 0) + 1
    _release(before)
    changed: set[str] = set()
    for nid in (n["id"] for n in after_json.get("nodes", [])):
        sig = after[nid]
        if available.get(sig, 0) > 0:
            available[sig] -= 1
        else:
            changed.add(nid)
    _release(available)
    _release(after)
    return changed


def synthetic_graph_json(n_nodes: int = 5000, *, legalized: bool = False, seed: int = 0) -> dict[str, Any]:
    """A realistic Relax-like graph JSON (stacked transformer blocks with weights, residuals, a tuple split)
    of about ``n_nodes`` nodes, in the :func:`graph_to_json` format; for benchmarks and tests of the views.

    ``legalized`` turns every op binding into a ``relax.call_tir`` of a PrimFunc named after the op.
    """
    import random  # noqa: PLC0415

    rnd = random.Random(seed)
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    hidden = 768

    def add(kind: str, name: str, op: str | None, shape: list[Any], inputs: list[str], group: int | None,
            dtype: str = "float32", attrs: dict[str, str] | None = None) -> str:
        callee = None
        callee_kind = None
        if legalized and kind == "binding" and op and op.startswith("relax.") and op != "relax.const":
            callee = op.split(".")[-1] + (f"{len(nodes)}" if rnd.random() < 0.3 else "")
            callee_kind = "prim_func"
            op = "relax.call_tir"
        node_id = name
        dims = ", ".join(str(d) for d in shape)
        nodes.append({
            "id": node_id, "kind": kind, "name": name, "op": op, "callee": callee, "callee_kind": callee_kind,
            "composite": None, "label": callee or op or name, "shape": shape, "dtype": dtype,
            "type_text": f'R.Tensor(({dims}), dtype="{dtype}")', "attrs": dict(attrs or {}),
            "group": group, "is_dataflow": group is not None,
        })
        for k, src in enumerate(inputs):
            edges.append({"source": src, "target": node_id, "index": k, "indices": [k]})
        return node_id

    counter = [0]

    def lv() -> str:
        counter[0] += 1
        return f"lv{counter[0]}"

    x = add("param", "x", None, ["n", hidden], [], None)
    layer = 0
    while len(nodes) < n_nodes - 40:
        p = f"l{layer}_"
        w = {k: add("param", p + k, None, [hidden, hidden] if k.startswith("w") else [hidden], [], None)
             for k in ("ln1_g", "ln1_b", "wq", "wk", "wv", "wo", "ln2_g", "ln2_b", "w1", "w2")}
        g0 = 0
        h = add("binding", lv(), "relax.nn.layer_norm", ["n", hidden], [x, w["ln1_g"], w["ln1_b"]], g0,
                attrs={"axes": "[-1]", "epsilon": "1e-05"})
        q = add("binding", lv(), "relax.matmul", ["n", hidden], [h, w["wq"]], g0)
        k = add("binding", lv(), "relax.matmul", ["n", hidden], [h, w["wk"]], g0)
        v = add("binding", lv(), "relax.matmul", ["n", hidden], [h, w["wv"]], g0)
        q = add("binding", lv(), "relax.reshape", ["n", 12, 64], [q], g0)
        k = add("binding", lv(), "relax.reshape", ["n", 12, 64], [k], g0)
        v = add("binding", lv(), "relax.reshape", ["n", 12, 64], [v], g0)
        q = add("binding", lv(), "relax.permute_dims", [12, "n", 64], [q], g0, attrs={"axes": "[1, 0, 2]"})
        kt = add("binding", lv(), "relax.permute_dims", [12, 64, "n"], [k], g0, attrs={"axes": "[1, 2, 0]"})
        v = add("binding", lv(), "relax.permute_dims", [12, "n", 64], [v], g0, attrs={"axes": "[1, 0, 2]"})
        s = add("binding", lv(), "relax.matmul", [12, "n", "n"], [q, kt], g0)
        c = add("constant", f"const_{layer}", "relax.const", [], [], None)
        s = add("binding", lv(), "relax.divide", [12, "n", "n"], [s, c], g0)
        s = add("binding", lv(), "relax.nn.softmax", [12, "n", "n"], [s], g0, attrs={"axis": "-1"})
        o = add("binding", lv(), "relax.matmul", [12, "n", 64], [s, v], g0)
        o = add("binding", lv(), "relax.permute_dims", ["n", 12, 64], [o], g0)
        o = add("binding", lv(), "relax.reshape", ["n", hidden], [o], g0)
        o = add("binding", lv(), "relax.matmul", ["n", hidden], [o, w["wo"]], g0)
        x = add("binding", lv(), "relax.add", ["n", hidden], [x, o], g0)
        h = add("binding", lv(), "relax.nn.layer_norm", ["n", hidden], [x, w["ln2_g"], w["ln2_b"]], g0)
        h = add("binding", lv(), "relax.matmul", ["n", hidden], [h, w["w1"]], g0)
        h = add("binding", lv(), "relax.nn.gelu", ["n", hidden], [h], g0)
        if layer % 3 == 0:
            t = add("binding", lv(), "relax.split", [], [h], g0, attrs={"indices_or_sections": "2", "axis": "1"})
            nodes[-1]["shape"] = None
            nodes[-1]["dtype"] = None
            nodes[-1]["type_text"] = "T.Tuple(R.Tensor((n, 384)), R.Tensor((n, 384)))"
            a = add("binding", lv(), "tuple_get_item", ["n", hidden // 2], [t], g0, attrs={"index": "0"})
            b = add("binding", lv(), "tuple_get_item", ["n", hidden // 2], [t], g0, attrs={"index": "1"})
            h = add("binding", lv(), "relax.concat", ["n", hidden], [a, b], g0, attrs={"axis": "1"})
        h = add("binding", lv(), "relax.matmul", ["n", hidden], [h, w["w2"]], g0)
        x = add("binding", lv(), "relax.add", ["n", hidden], [x, h], g0)
        layer += 1
    add("output", "output", "return", ["n", hidden], [x], None)
    return {
        "format": GRAPH_FORMAT,
        "version": GRAPH_VERSION,
        "directed": True,
        "multigraph": False,
        "graph": {"function": "main", "groups": [{"id": 0, "label": "dataflow block 0"}]},
        "nodes": nodes,
        "edges": edges,
    }
