"""Hierarchy of a Relax function graph (Model Explorer style) and the view graph built from it (TVM-free).

Levels: function -> dataflow block (node attribute ``group``) -> groups -> bindings. Groups come from the
model's own structure:

* **module groups** (id ``m:<path>``, e.g. ``m:layers.3.self_attn``): a parameter named like a module path
  (``layers.3.self_attn.q_proj.weight``) belongs to ``layers.3.self_attn.q_proj``; a binding that consumes
  weights (directly or through weight-only bindings such as ``permute_dims(weight)``) belongs to the deepest
  common prefix of their paths; every other binding joins the path its producers and consumers agree on most
  (a prefix covering most of them, deeper wins ties, producers before consumers). Containers such as
  ``layers`` (whose children are numbered) never decide where a binding goes; a container becomes a group of
  its own (``layers ×32``, with ``container: True``) when it holds at least two numbered groups and no value
  leaves it and comes back (collapsed, it is one box: the 32-layer decoder reads ``x → layers → norm``).
* **call groups** (id ``c:<node id>``): a call of a Relax function whose graph the engine attached under
  ``graph["callees"]`` (fused/composite functions) can be expanded in place to show the callee's bindings.

:func:`annotate_modules` writes ``module`` on every node; :func:`build_view` turns the full graph into the
graph a view lays out for a set of expanded groups: collapsed groups become one node (``kind`` ``group``)
with their input/output edges, op and weight counts and the values going in and out (``inputs``/``outputs``:
name and shape each), expanded call groups are inlined, and shared inputs and weights used by
several consumers get a per-use **stub** (``stub: True``, ``stub_of``) next to each later consumer instead
of one long edge per use, so the layered layout needs no dummy node per layer crossed.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Collection, Iterable, Optional

from pipeline_model.layout import shape_text

__all__ = [
    "MODULE_PREFIX",
    "CALL_PREFIX",
    "annotate_modules",
    "group_tree",
    "all_group_ids",
    "groups_of",
    "build_view",
    "collapsed_rep",
    "find_nodes",
    "default_expansion",
]

MODULE_PREFIX = "m:"
CALL_PREFIX = "c:"
#: A source (param/constant) with at least this many consumers gets per-use stubs.
STUB_MIN_USES = 3
#: Functions up to this many nodes are shown fully expanded by default.
EXPAND_ALL_LIMIT = 400


def _edges(data: dict[str, Any]) -> list[dict[str, Any]]:
    return data.get("edges", data.get("links", [])) or []


def _param_path(name: str) -> Optional[str]:
    """``layers.3.self_attn.q_proj.weight`` -> ``layers.3.self_attn.q_proj``; names without a dot -> None."""
    if "." not in name:
        return None
    path = name.rsplit(".", 1)[0]
    return path or None


class _Prefixes:
    """Candidate group prefixes of module paths (containers excluded), cached."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.containers: set[str] = set()
        for path in paths:
            parts = path.split(".")
            for k in range(1, len(parts)):
                if parts[k].isdigit():
                    self.containers.add(".".join(parts[:k]))
        self._cache: dict[str, list[str]] = {}
        # best() by its argument: a layer's bindings ask for the same few label lists again and again
        # (82k calls, ~20 distinct lists per layer in the 800-layer decoder)
        self._best: dict[tuple[str, ...], Optional[str]] = {}
        self._deepest: dict[str, str] = {}  # path -> its deepest prefix ("" for none)

    def of(self, path: str) -> list[str]:
        """Non-container prefixes of ``path``, outermost first (``path`` itself included)."""
        hit = self._cache.get(path)
        if hit is None:
            parts = path.split(".")
            hit = [p for p in (".".join(parts[:k]) for k in range(1, len(parts) + 1)) if p not in self.containers]
            self._cache[path] = hit
        return hit

    def common(self, paths: list[str]) -> Optional[str]:
        """Deepest non-container prefix shared by all ``paths`` (None if none)."""
        if not paths:
            return None
        first = self.of(paths[0])
        if len(paths) == 1:
            return first[-1] if first else None
        shared = set(first)
        for p in paths[1:]:
            shared &= set(self.of(p))
            if not shared:
                return None
        return max(shared, key=len)

    def best(self, paths: list[str]) -> Optional[str]:
        """The prefix covering most of ``paths`` (deeper wins ties, then the earliest path)."""
        if not paths:
            return None
        first = paths[0]
        if len(paths) == 1 or paths.count(first) == len(paths):  # 60 % of the calls: one path
            return self.deepest(first)
        key = tuple(paths)
        if key in self._best:
            return self._best[key]
        found = self._best[key] = self._best_of(paths)
        return found

    def deepest(self, path: str) -> Optional[str]:
        """``best([path])``: the deepest non-container prefix of ``path`` (None if none)."""
        hit = self._deepest.get(path)
        if hit is None:
            of = self.of(path)
            hit = self._deepest[path] = of[-1] if of else ""
        return hit or None

    def _best_of(self, paths: list[str]) -> Optional[str]:
        # plain dicts, each distinct path's prefixes once (a prefix list holds no duplicates)
        per_path: dict[str, int] = {}
        for path in paths:
            per_path[path] = per_path.get(path, 0) + 1
        cover: dict[str, int] = {}
        first_seen: dict[str, int] = {}
        for k, (path, times) in enumerate(per_path.items()):
            for pre in self.of(path):
                if pre in cover:
                    cover[pre] += times
                else:
                    cover[pre] = times
                    first_seen[pre] = k
        if not cover:
            return None
        return max(cover, key=lambda pre: (cover[pre], pre.count(".") + 1, -first_seen[pre]))


def annotate_modules(data: dict[str, Any]) -> dict[str, Any]:
    """Write ``module`` (a dotted module path or None) on every node of a graph JSON, in place; returns it.

    See the module docstring for the rules. Linear in nodes + edges (nodes are handled by position: a
    50,000-node function is annotated in about half a second).
    """
    nodes = data.get("nodes", [])
    count = len(nodes)
    index = {n["id"]: i for i, n in enumerate(nodes)}
    preds: list[list[int]] = [[] for _ in range(count)]
    succs: list[list[int]] = [[] for _ in range(count)]
    get = index.get
    for e in _edges(data):
        s, t = get(e.get("source")), get(e.get("target"))
        if s is not None and t is not None:
            preds[t].append(s)
            succs[s].append(t)
    kinds = [n.get("kind") for n in nodes]
    # weights and weight-only bindings carry a weight path; bindings consuming them are anchored
    wpath: list[Optional[str]] = [_param_path(str(n.get("name") or "")) if kind == "param" else None
                                  for n, kind in zip(nodes, kinds)]
    pre = _Prefixes(p for p in wpath if p)
    anchor: list[Optional[str]] = [None] * count
    for i in range(count):
        if wpath[i]:
            anchor[i] = wpath[i]
            continue
        if kinds[i] != "binding":
            continue
        ins = preds[i]
        if len(ins) == 1:  # most bindings: one input (common() of one path, without the lists)
            w = wpath[ins[0]]
            if w:
                anchor[i] = wpath[i] = pre.deepest(w)
            continue
        wins = [w for p in ins if (w := wpath[p])]
        if not wins:
            continue
        common = pre.common(wins)
        if common is None:
            continue
        anchor[i] = common
        if len(wins) == len(ins):
            wpath[i] = common
    # labels flowing up from consumers (reverse order), then the final label in order
    down: list[Optional[str]] = [None] * count
    best, deepest = pre.best, pre.deepest
    for i in range(count - 1, -1, -1):
        out = succs[i]
        if len(out) == 1:  # most nodes: one consumer (best() of one path, without the list)
            s = out[0]
            x = anchor[s] or down[s]
            if x:
                down[i] = deepest(x)
        elif out:
            labels = [x for s in out if (x := anchor[s] or down[s])]
            if labels:
                down[i] = best(labels)
    final: list[Optional[str]] = [None] * count
    for i in range(count):
        if anchor[i]:
            final[i] = anchor[i]
            continue
        if kinds[i] != "binding":
            continue
        ins = preds[i]
        if len(ins) == 1 and not (final[ins[0]] and down[i]):  # one label at most: no list
            one = final[ins[0]] or down[i]
            final[i] = deepest(one) if one else None
            continue
        members = [m for p in ins if (m := final[p])]
        if down[i]:
            members.append(down[i])  # type: ignore[arg-type]
        if members:
            final[i] = deepest(members[0]) if len(members) == 1 else best(members)
    # bindings fed by no labelled producer (e.g. reshape(cos)) sit with their consumers
    for i in range(count - 1, -1, -1):
        if anchor[i] or kinds[i] != "binding" or any(final[p] for p in preds[i]):
            continue
        up_labels = [m for s in succs[i] if (m := final[s])]
        if up_labels:
            final[i] = best(up_labels)
    # constants (one node per use) sit with their consumer
    for i in range(count):
        if kinds[i] == "constant" and succs[i]:
            final[i] = final[succs[i][0]]
    for n, module in zip(nodes, final):
        n["module"] = module
    data.setdefault("graph", {})["containers"] = sorted(pre.containers)
    return data


def _ensure_modules(data: dict[str, Any]) -> None:
    nodes = data.get("nodes", [])
    if nodes and "module" not in nodes[0]:
        annotate_modules(data)


def group_tree(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Groups of a graph JSON: id -> ``{"label", "parent", "kind" ("module"/"call"), "size"}``.

    Module groups hold at least two nodes; ``size`` counts the nodes inside (nested ones included).
    """
    _ensure_modules(data)
    containers = set((data.get("graph") or {}).get("containers") or [])
    size: Counter[str] = Counter()
    # nodes per module path first (one C-level count over a 50k-node function), then per prefix
    per_path = Counter(n.get("module") for n in data.get("nodes", []))
    for path, count in per_path.items():
        if not path:
            continue
        inner: list[str] = []  # counted for the containers that become groups, after the other prefixes
        end = path.find(".")
        while end >= 0:  # each prefix by slicing at the next dot (9,600 paths in the 800-layer decoder)
            p = path[:end]
            if p in containers:
                inner.append(p)
            else:
                size[p] += count
            end = path.find(".", end + 1)
        if path not in containers:
            size[path] += count
        for c in inner:
            size[c] += count
    grouped = _container_groups(data, containers, size)
    out: dict[str, dict[str, Any]] = {}
    for path, count in size.items():
        if count < 2 or (path in containers and path not in grouped):
            continue
        parent = None
        end = path.rfind(".")
        while end >= 0:  # the prefixes, deepest first
            cand = path[:end]
            if (size.get(cand, 0) >= 2 and cand not in containers) or cand in grouped:
                parent = MODULE_PREFIX + cand
                break
            end = path.rfind(".", 0, end)
        out[MODULE_PREFIX + path] = {"label": path, "parent": parent, "kind": "module", "size": count}
        if path in grouped:
            out[MODULE_PREFIX + path]["container"] = grouped[path]
    callees = (data.get("graph") or {}).get("callees") or {}
    if callees:
        for n in data.get("nodes", []):
            callee = n.get("callee")
            if callee and callee in callees and n.get("callee_kind") == "relax_function":
                chain = _chain(n.get("module"), out)  # = groups_of(data, n["id"]) without its O(n) index
                out[CALL_PREFIX + n["id"]] = {"label": str(callee), "parent": chain[-1] if chain else None,
                                              "kind": "call", "size": len(callees[callee].get("nodes", []))}
    return out


def _container_groups(data: dict[str, Any], containers: set[str], size: Counter[str]) -> dict[str, int]:
    """The containers that are groups: container path -> number of numbered child groups (at least two),
    for each container no value leaves and re-enters (collapsed, it must not sit on a cycle)."""
    out: dict[str, int] = {}
    for c in sorted(containers):
        children = {p for p in size if p.startswith(c + ".") and p.count(".") == c.count(".") + 1
                    and p.rsplit(".", 1)[1].isdigit() and size[p] >= 2}
        if len(children) >= 2 and not _leaves_and_returns(data, c + "."):
            out[c] = len(children)
    return out


def _leaves_and_returns(data: dict[str, Any], prefix: str) -> bool:
    """True when a path of edges goes from a node whose module starts with ``prefix`` through nodes outside
    it back into it (linear in nodes and edges)."""
    inside = {n["id"] for n in data.get("nodes", []) if (n.get("module") or "").startswith(prefix)}
    succs: dict[str, list[str]] = {}  # of the nodes outside only (one pass over a 50k-node function's edges)
    todo: list[str] = []
    for e in _edges(data):
        s, t = e["source"], e["target"]
        if s in inside:
            if t not in inside:
                todo.append(t)
        else:
            succs.setdefault(s, []).append(t)
    seen: set[str] = set()
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        for t in succs.get(node, ()):
            if t in inside:
                return True
            if t not in seen:
                todo.append(t)
    return False


def all_group_ids(data: dict[str, Any]) -> list[str]:
    """Ids of every group (module and call groups)."""
    return list(group_tree(data))


def _chain(path: Optional[str], tree: dict[str, dict[str, Any]]) -> list[str]:
    """Module group ids containing a node of module ``path``, outermost first."""
    if not path:
        return []
    parts = path.split(".")
    return [gid for gid in (MODULE_PREFIX + ".".join(parts[:k]) for k in range(1, len(parts) + 1)) if gid in tree]


def groups_of(data: dict[str, Any], node_id: str, _tree: Optional[dict[str, dict[str, Any]]] = None) -> list[str]:
    """The groups a node of the full graph sits in, outermost first (what to expand to show it).

    ``node_id`` may name a node inlined from a call (``<call id>/<callee node id>``): the call's groups and
    the call group itself come first.
    """
    tree = _tree if _tree is not None else group_tree(data)
    by_id = {n["id"]: n for n in data.get("nodes", [])}
    if node_id in by_id:
        return _chain(by_id[node_id].get("module"), tree)
    if "/" in node_id:
        call_id = node_id.split("/", 1)[0]
        if call_id in by_id:
            return _chain(by_id[call_id].get("module"), tree) + [CALL_PREFIX + call_id]
    return []


def collapsed_rep(data: dict[str, Any], tree: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Node id -> the view node showing it with no group expanded (``build_view(data, ())``'s
    ``graph["rep"]``: its outermost group, or itself), without building that view."""
    by_module: dict[Any, Optional[str]] = {}
    rep: dict[str, str] = {}
    for n in data.get("nodes", []):
        module = n.get("module")
        if module not in by_module:
            by_module[module] = _outermost(module, tree)
        nid = n["id"]
        rep[nid] = by_module[module] or nid
    return rep


def _outermost(path: Optional[str], tree: dict[str, dict[str, Any]]) -> Optional[str]:
    """``_chain(path, tree)[0]`` (None for an empty chain), stopping at the first group found."""
    if not path:
        return None
    end = path.find(".")
    while True:
        gid = MODULE_PREFIX + (path if end < 0 else path[:end])
        if gid in tree:
            return gid
        if end < 0:
            return None
        end = path.find(".", end + 1)


def default_expansion(data: dict[str, Any]) -> frozenset[str]:
    """Every module group when the function is small (<= ``EXPAND_ALL_LIMIT`` nodes), else none."""
    if len(data.get("nodes", [])) <= EXPAND_ALL_LIMIT:
        return frozenset(g for g, info in group_tree(data).items() if info["kind"] == "module")
    return frozenset()


def _inline_calls(data: dict[str, Any], expanded: Collection[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Nodes and edges with the expanded call groups replaced by their callee's bindings."""
    nodes = list(data.get("nodes", []))
    edges = list(_edges(data))
    callees = (data.get("graph") or {}).get("callees") or {}
    calls = [g[len(CALL_PREFIX):] for g in expanded if g.startswith(CALL_PREFIX)]
    if not calls or not callees:
        return nodes, edges
    by_id = {n["id"]: n for n in nodes}
    todo = {c for c in calls if c in by_id and by_id[c].get("callee") in callees}
    if not todo:
        return nodes, edges
    arg_src: dict[str, dict[int, str]] = {c: {} for c in todo}
    consumers: dict[str, list[dict[str, Any]]] = {c: [] for c in todo}
    kept_edges: list[dict[str, Any]] = []
    for e in edges:
        s, t = e.get("source"), e.get("target")
        if t in todo:
            for idx in e.get("indices") or [e.get("index", 0) or 0]:
                arg_src[t].setdefault(int(idx), str(s))
            continue
        if s in todo:
            consumers[s].append(e)
            continue
        kept_edges.append(e)
    out_nodes: list[dict[str, Any]] = []
    for n in nodes:
        cid = n["id"]
        if cid not in todo:
            out_nodes.append(n)
            continue
        sub = callees[n["callee"]]
        sub_nodes = sub.get("nodes", [])
        params = [s["id"] for s in sub_nodes if s.get("kind") == "param"]
        param_src = {p: arg_src[cid].get(k) for k, p in enumerate(params)}
        outputs = {s["id"] for s in sub_nodes if s.get("kind") == "output"}
        for s in sub_nodes:
            sid = s["id"]
            if sid in outputs or (sid in param_src and param_src[sid] is not None):
                continue
            item = dict(s)
            item["id"] = f"{cid}/{sid}"
            item["module"] = n.get("module")
            item["group"] = n.get("group")
            item["inlined_from"] = cid
            item["call_group"] = CALL_PREFIX + cid
            out_nodes.append(item)
        results: list[str] = []
        for e in _edges(sub):
            s, t = e["source"], e["target"]
            if t in outputs:
                known = param_src.get(s)
                results.append(known if known is not None else f"{cid}/{s}")
                continue
            src = param_src.get(s) or f"{cid}/{s}"
            kept_edges.append({**e, "source": src, "target": f"{cid}/{t}"})
        for e in consumers[cid]:
            for r in results:
                kept_edges.append({**e, "source": r})
    return out_nodes, kept_edges


def _group_node(gid: str, tree: dict[str, dict[str, Any]], first: dict[str, Any], frames: list[str]) -> dict[str, Any]:
    """The view node of a collapsed group ``gid``, placed like its first member."""
    info = tree[gid]
    name = info["label"]
    label = _short_label(gid, tree) if frames else name  # inside its parent's frame: relative to it
    if info.get("container"):
        label = f"{label} \u00d7{info['container']}"  # layers ×32
    return {
        "id": gid, "kind": "group", "name": name, "op": None, "callee": None,
        "callee_kind": None, "composite": None, "label": label, "shape": None, "dtype": None,
        "type_text": "", "attrs": {}, "group": first.get("group"), "is_dataflow": first.get("is_dataflow", False),
        "group_id": gid, "group_kind": info["kind"], "size": info["size"], "module": first.get("module"),
        "frames": frames, "ops": 0, "weights": 0, "inputs": [], "outputs": [],
    }


class _ViewNodes:
    """The nodes of a view: each full-graph node shown as itself (with the expanded groups around it as
    ``frames``) or by the outermost collapsed group that contains it (one ``kind: "group"`` node each)."""

    def __init__(self, nodes: list[dict[str, Any]], tree: dict[str, dict[str, Any]], expanded: frozenset[str]) -> None:
        self.rep: dict[str, str] = {}  # full-graph id -> view id
        self.group_nodes: dict[str, dict[str, Any]] = {}
        self.order: list[str] = []  # view ids in the order they first appear
        self.view_nodes: dict[str, dict[str, Any]] = {}
        chain_cache: dict[Any, tuple[Optional[str], list[str]]] = {}
        rep, group_nodes, view_nodes, order = self.rep, self.group_nodes, self.view_nodes, self.order
        for n in nodes:  # one pass over a 50k-node function: its per-node steps inline
            key = (n.get("module"), n.get("call_group"))
            hit = chain_cache.get(key)
            if hit is None:
                chain = _chain(key[0], tree)
                if key[1]:
                    chain = chain + [key[1]]
                collapsed = next((g for g in chain if g not in expanded), None)
                open_frames = chain if collapsed is None else chain[: chain.index(collapsed)]
                hit = chain_cache[key] = (collapsed, open_frames)
            collapsed, open_frames = hit
            nid = n["id"]
            if collapsed is None:  # shown as itself
                rep[nid] = nid
                item = dict(n)
                item["frames"] = open_frames
                view_nodes[nid] = item
                order.append(nid)
                continue
            rep[nid] = collapsed
            gnode = group_nodes.get(collapsed)
            if gnode is None:
                gnode = group_nodes[collapsed] = _group_node(collapsed, tree, n, open_frames)
                view_nodes[collapsed] = gnode
                order.append(collapsed)
            elif gnode["group"] is None and n.get("group") is not None:
                gnode["group"], gnode["is_dataflow"] = n.get("group"), n.get("is_dataflow", False)
            kind = n.get("kind")
            if kind == "binding":
                gnode["ops"] += 1
            elif kind == "param":
                gnode["weights"] += 1


def _port(node: dict[str, Any], shown_as: Optional[dict[str, Any]]) -> dict[str, Any]:
    """An input or output of a collapsed group: the value's name (a collapsed neighbour's label stands for
    the values it makes), its shape text and its type."""
    name = node.get("name") or node.get("id")
    if shown_as is not None and shown_as.get("kind") == "group":
        name = shown_as.get("label")
    return {"id": node.get("id"), "name": str(name), "shape": shape_text(node), "type_text": node.get("type_text", "")}


def _view_edges(vn: _ViewNodes, nodes: list[dict[str, Any]], edges: list[dict[str, Any]],
                ) -> dict[tuple[str, str], dict[str, Any]]:
    """Edges between representatives (self-loops and duplicates dropped, the first edge of a pair kept; an
    edge between two nodes shown as themselves is the graph's own edge dict, shared, never written to);
    each collapsed group lists its ``inputs`` and ``outputs`` (the values crossing its border, once each),
    and one with a single output takes that output's shape."""
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    outs: dict[str, dict[str, None]] = {}
    ins: dict[str, dict[str, None]] = {}
    rep, group_nodes = vn.rep, vn.group_nodes
    for e in edges:
        s, t = str(e.get("source")), str(e.get("target"))
        rs, rt = rep.get(s), rep.get(t)
        if rs is None or rt is None or rs == rt:
            continue
        if rs in group_nodes:
            outs.setdefault(rs, {})[s] = None
        if rt in group_nodes:
            ins.setdefault(rt, {})[s] = None
        k = (rs, rt)
        if k not in seen:
            idx = e.get("index", 0) or 0
            if rs == s and rt == t and len(e) == 4 and e.get("index") == idx and e.get("indices"):  # the edge itself
                seen[k] = e
            else:
                seen[k] = {"source": rs, "target": rt, "index": idx, "indices": list(e.get("indices") or [idx])}
    by_full = {n["id"]: n for n in nodes}
    view_nodes = vn.view_nodes
    for gid, srcs in ins.items():  # computed values first (the data flow), then function inputs and weights
        ordered = sorted(srcs, key=lambda s: by_full[s].get("kind") in ("param", "constant"))
        group_nodes[gid]["inputs"] = [_port(by_full[s], view_nodes.get(rep[s])) for s in ordered]
    for gid, srcs in outs.items():
        g = group_nodes[gid]
        g["outputs"] = [_port(by_full[s], None) for s in srcs]
        if len(srcs) == 1:
            src = by_full[next(iter(srcs))]
            g["shape"], g["dtype"], g["type_text"] = src.get("shape"), src.get("dtype"), src.get("type_text", "")
    return seen


def _add_stubs(vn: _ViewNodes, seen: dict[tuple[str, str], dict[str, Any]], stub_min_uses: int) -> dict[str, list[str]]:
    """Per-use stubs for shared sources: a param/constant with ``stub_min_uses`` or more consumers keeps its
    edge to the first consumer (in view order); each other consumer gets a stub node feeding it instead,
    except a collapsed group, which names the input in its box (its ``inputs``) and gets no edge.
    Returns the stub ids to place before each consumer."""
    by_source: dict[str, list[str]] = {}
    for (s, t) in seen:
        by_source.setdefault(s, []).append(t)
    position = {nid: k for k, nid in enumerate(vn.order)}
    stubs_before: dict[str, list[str]] = {}
    view_nodes = vn.view_nodes
    for s, targets in by_source.items():
        src = view_nodes[s]
        if src.get("kind") not in ("param", "constant") or len(targets) < stub_min_uses:
            continue
        targets.sort(key=position.__getitem__)
        for t in targets[1:]:  # the first consumer keeps the edge
            edge = seen.pop((s, t))
            if view_nodes[t].get("kind") == "group":
                continue
            sid = f"{s}@{t}"
            stub = dict(src)
            stub.update({"id": sid, "stub": True, "stub_of": s, "frames": view_nodes[t].get("frames", []),
                         "group": view_nodes[t].get("group")})
            view_nodes[sid] = stub
            stubs_before.setdefault(t, []).append(sid)
            seen[(sid, t)] = {**edge, "source": sid}
    return stubs_before


def build_view(data: dict[str, Any], expanded: Collection[str] = (), *, stub_min_uses: int = STUB_MIN_USES,
               tree: Optional[dict[str, dict[str, Any]]] = None) -> dict[str, Any]:
    """The graph JSON a view lays out for the groups in ``expanded`` (ids from :func:`group_tree`).

    A node inside a collapsed group is represented by the outermost collapsed group (a ``kind: "group"``
    node with ``group_id``, ``size``, ``label``, ``ops`` (bindings inside), ``weights`` (parameters inside),
    ``inputs`` and ``outputs`` (``{"id", "name", "shape", "type_text"}`` of each value crossing its border;
    a shared input used by several groups has an edge to the first only, the others name it)); edges are mapped to the representatives (self-loops and
    duplicates dropped). Nodes get ``frames``: the expanded module/call groups around them, outermost first
    (``graph["frame_labels"]`` names them). Params/constants with ``stub_min_uses`` or more consumers keep
    their edge to the first consumer and get a stub node (``stub: True``, ``stub_of``) before each other one.
    ``graph["rep"]`` maps each full-graph node id to the view node that shows it.
    """
    _ensure_modules(data)
    tree = tree if tree is not None else group_tree(data)
    expanded = frozenset(expanded)
    nodes, edges = _inline_calls(data, expanded)
    vn = _ViewNodes(nodes, tree, expanded)
    seen = _view_edges(vn, nodes, edges)
    stubs_before = _add_stubs(vn, seen, stub_min_uses)
    out_nodes: list[dict[str, Any]] = []
    for nid in vn.order:
        for sid in stubs_before.get(nid, ()):
            out_nodes.append(vn.view_nodes[sid])
        out_nodes.append(vn.view_nodes[nid])
    graph_attrs = {k: v for k, v in (data.get("graph") or {}).items() if k not in ("callees",)}
    graph_attrs["frame_labels"] = {g: _short_label(g, tree) for g in expanded if g in tree}
    graph_attrs["rep"] = vn.rep
    graph_attrs["expanded"] = sorted(expanded)
    view: dict[str, Any] = {k: data[k] for k in ("format", "version") if k in data}  # absent stays absent
    view.update({
        "directed": True,
        "multigraph": False,
        "graph": graph_attrs,
        "nodes": out_nodes,
        "edges": list(seen.values()),
    })
    return view


def share_full_nodes(view: dict[str, Any], full: dict[str, Any]) -> None:
    """Replace, in ``view`` (of :func:`build_view` for ``full``), each copy of a node of ``full`` shown as
    itself by that node, without its ``frames``: call it once the view is laid out (only the layout reads
    ``frames``), so a laid-out view holds no second copy of the function's nodes (a 50,000-node function
    expanded whole: ~35 MB). Collapsed groups, stubs and inlined callee nodes are the view's own."""
    originals = {n["id"]: n for n in full.get("nodes", [])}
    nodes = view.get("nodes", [])
    for k, n in enumerate(nodes):
        o = originals.get(n.get("id"))
        if o is not None and o is not n and len(n) == len(o) + ("frames" not in o) and "frames" in n:
            nodes[k] = o


def _short_label(gid: str, tree: dict[str, dict[str, Any]]) -> str:
    """A group's label relative to its parent group (``self_attn`` inside ``layers.3``)."""
    info = tree[gid]
    parent = tree.get(info.get("parent") or "")
    label = str(info["label"])
    if (info["kind"] == "module" and parent and parent["kind"] == "module" and not parent.get("container")
            and label.startswith(parent["label"] + ".")):
        return label[len(parent["label"]) + 1:]
    return label


def _search_text(n: dict[str, Any]) -> str:
    parts = [n.get("id"), n.get("name"), n.get("op"), n.get("callee"), n.get("label"), n.get("composite"),
             n.get("module"), shape_text(n), n.get("type_text")]
    return "\n".join(str(p) for p in parts if p).lower()


def find_nodes(data: dict[str, Any], text: str, *, include_callees: bool = True) -> list[str]:
    """Ids of the nodes whose name, op, callee, module path or shape contains ``text`` (case-insensitive),
    in graph order. With ``include_callees``, nodes of attached callee graphs match too, as
    ``<call id>/<callee node id>`` (once per call site)."""
    needle = str(text or "").strip().lower()
    if not needle:
        return []
    out: list[str] = []
    callees = (data.get("graph") or {}).get("callees") or {}
    callee_hits: dict[str, list[str]] = {}
    for n in data.get("nodes", []):
        if needle in _search_text(n):
            out.append(n["id"])
        callee = n.get("callee")
        if include_callees and callee in callees and n.get("callee_kind") == "relax_function":
            hits = callee_hits.get(callee)
            if hits is None:
                hits = callee_hits[callee] = [s["id"] for s in callees[callee].get("nodes", [])
                                              if s.get("kind") == "binding" and needle in _search_text(s)]
            out.extend(f"{n['id']}/{sid}" for sid in hits)
    return out
