"""The stages of the layered layout, in the order :func:`pipeline_model.layout.compute_layout` chains them
(after Model Explorer's ``graph_processor``): :func:`read_nodes` -> :func:`break_cycles` ->
:func:`assign_layers` -> :func:`insert_dummies` -> :func:`reduce_crossings` (ordering) -> :func:`assign_x`
(Brandes-Köpf coordinates) -> :func:`assign_y` -> :func:`route_edges` -> :func:`block_frames` and
:func:`nested_frames`. Each stage reads the previous stages' results (small dataclasses of index lists:
node ``i`` is the ``i``-th node of the input, dummy nodes follow the real ones) and returns its own."""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Mapping

from pipeline_model.layout.brandes_koepf import bk_coordinates
from pipeline_model.layout.crossings import count_crossings_between
from pipeline_model.layout.model import (
    DUMMY_GAP,
    DUMMY_WIDTH,
    FRAME_LABEL,
    FRAME_PAD,
    LAYER_GAP,
    MARGIN,
    NODE_GAP,
    Frame,
    GraphLayout,
    node_box_height,
    node_width,
)



@dataclass
class _Nodes:
    """The real nodes: ids in insertion order, their attributes, box sizes and dataflow group."""

    items: list[tuple[Hashable, Any]]
    ids: list[Hashable]
    index: dict[Hashable, int]
    width: list[float]
    height: list[float]
    group: list[Any]
    pin: list[Any] | None = None  # node attribute ``pin``: "top" (first layer) or "bottom" (last layer)


@dataclass
class _Dag:
    """The graph made acyclic: ``edges`` in input order as ``(u, v, reversed)`` (parallel pairs after a
    reversal kept, for polylines), ``pairs`` the distinct DAG edges, ``preds``/``succs`` over them."""

    edges: list[tuple[int, int, bool]]
    pairs: set[tuple[int, int]]
    preds: list[list[int]]
    succs: list[list[int]]
    reversed_count: int


@dataclass
class _Layers:
    """Each real node's layer (0 at the top, no empty layer), the sources, and the number of layers."""

    layer: list[int]
    is_source: list[bool]
    count: int


@dataclass
class _Proper:
    """The proper layered graph: real nodes then dummy nodes (one per layer an edge crosses), with
    their layer, width and neighbours one layer up/down; ``chains`` maps a DAG edge to its dummies."""

    node_layer: list[int]
    widths: list[float]
    up: list[list[int]]
    down: list[list[int]]
    chains: dict[tuple[int, int], list[int]]

    @property
    def total(self) -> int:
        """Real and dummy nodes."""
        return len(self.node_layer)


def read_nodes(g: Any, sizes: Mapping[Hashable, tuple[float, float]] | None, char_width: float,
               node_height: float) -> _Nodes:
    """Stage 0: the nodes of ``g`` with their box sizes (``sizes`` or :func:`node_width`) and groups."""
    node_items = list(g.nodes(data=True))
    ids = [n for n, _ in node_items]
    n_real = len(ids)
    width = [0.0] * n_real
    height = [node_height] * n_real
    group: list[Any] = [None] * n_real
    for i, (n, data) in enumerate(node_items):
        if sizes is not None and n in sizes:
            width[i], height[i] = sizes[n]
        else:
            width[i] = node_width(data, char_width)
            height[i] = node_box_height(data, node_height)
        group[i] = data.get("group")
    pin = [d.get("pin") if hasattr(d, "get") else None for _n, d in node_items]
    return _Nodes(node_items, ids, {n: i for i, n in enumerate(ids)}, width, height, group,
                  pin if any(pin) else None)


def break_cycles(g: Any, nodes: _Nodes) -> _Dag:
    """Stage 1: cycle breaking -- an iterative DFS in insertion order; its back edges are reversed.
    Self loops are dropped."""
    n_real = len(nodes.ids)
    index = nodes.index
    succ: list[list[int]] = [[] for _ in range(n_real)]
    edge_list: list[tuple[int, int]] = []
    for u, v in g.edges():
        iu, iv = index[u], index[v]
        if iu == iv:
            continue
        succ[iu].append(iv)
        edge_list.append((iu, iv))
    state = [0] * n_real  # 0 new, 1 on stack, 2 done
    back: set[tuple[int, int]] = set()
    for root in range(n_real):
        if state[root]:
            continue
        stack = [(root, 0)]
        state[root] = 1
        while stack:
            node, k = stack[-1]
            out = succ[node]
            if k < len(out):
                stack[-1] = (node, k + 1)
                nxt = out[k]
                if state[nxt] == 0:
                    state[nxt] = 1
                    stack.append((nxt, 0))
                elif state[nxt] == 1:
                    back.add((node, nxt))
            else:
                state[node] = 2
                stack.pop()
    dag_edges: list[tuple[int, int, bool]] = []
    seen_pairs: set[tuple[int, int]] = set()
    for u, v in edge_list:
        rev = (u, v) in back
        a, b = (v, u) if rev else (u, v)
        dag_edges.append((a, b, rev))  # a pair parallel after reversal: kept for polylines, not for ordering
        seen_pairs.add((a, b))
    preds: list[list[int]] = [[] for _ in range(n_real)]
    succs: list[list[int]] = [[] for _ in range(n_real)]
    for a, b in seen_pairs:
        preds[b].append(a)
        succs[a].append(b)
    return _Dag(dag_edges, seen_pairs, preds, succs, len(back))


def assign_layers(nodes: _Nodes, dag: _Dag) -> _Layers:
    """Stage 2: layering -- Kahn's order (insertion order among ready nodes), longest path from the
    non-source nodes, each dataflow group in its own band of layers; then every node is pulled down next
    to its first use (reverse topological order, so whole chains such as weight -> permute_dims -> matmul
    follow their consumer; a grouped node stays in its group's band) and empty layers are dropped. A node
    pinned ``top`` stays in the first layer, one pinned ``bottom`` goes below every other."""
    n_real = len(nodes.ids)
    group, preds, succs = nodes.group, dag.preds, dag.succs
    indeg = [len(p) for p in preds]
    heap = [i for i in range(n_real) if indeg[i] == 0]
    heapq.heapify(heap)
    layer = [0] * n_real
    is_source = [indeg[i] == 0 for i in range(n_real)]
    current_seg: Any = object()
    seg_max = -1
    closed_max = -1
    topo: list[int] = []
    while heap:
        i = heapq.heappop(heap)
        topo.append(i)
        if not is_source[i]:
            seg = ("g", group[i]) if group[i] is not None else ("u",)
            if seg != current_seg:
                closed_max = max(closed_max, seg_max)
                current_seg = seg
                seg_max = -1
            lv = closed_max + 1
            for p in preds[i]:
                if not is_source[p] and layer[p] + 1 > lv:
                    lv = layer[p] + 1
            if lv < 1:
                lv = 1
            layer[i] = lv
            if lv > seg_max:
                seg_max = lv
        for s in succs[i]:
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(heap, s)
    pin = nodes.pin or [None] * n_real
    for i in reversed(topo):
        out = succs[i]
        if pin[i] == "top":
            layer[i] = 0
            continue
        if not out:
            if is_source[i]:
                layer[i] = 0
            continue
        target = min(layer[s] for s in out) - 1
        if target <= layer[i]:
            continue
        if group[i] is not None and any(group[s] != group[i] for s in out):
            continue
        layer[i] = target
    if nodes.pin:
        bottom = max(layer[i] for i in range(n_real) if pin[i] != "bottom") + 1
        for i in range(n_real):
            if pin[i] == "bottom":
                layer[i] = bottom
    used = sorted(set(layer))
    remap = {lv: k for k, lv in enumerate(used)}
    return _Layers([remap[lv] for lv in layer], is_source, len(used))


def insert_dummies(nodes: _Nodes, dag: _Dag, layers: _Layers) -> _Proper:
    """Stage 3: the proper layered graph -- a chain of dummy nodes on every edge that spans several
    layers (created in sorted edge order)."""
    n_real = len(nodes.ids)
    up: list[list[int]] = [list() for _ in range(n_real)]
    down: list[list[int]] = [list() for _ in range(n_real)]
    node_layer = list(layers.layer)
    widths = list(nodes.width)
    chains: dict[tuple[int, int], list[int]] = {}
    for a, b in sorted(dag.pairs):
        span = node_layer[b] - node_layer[a]
        prev = a
        chain: list[int] = []
        for lv in range(node_layer[a] + 1, node_layer[a] + span):
            d = len(node_layer)
            node_layer.append(lv)
            widths.append(DUMMY_WIDTH)
            up.append([])
            down.append([])
            chain.append(d)
            down[prev].append(d)
            up[d].append(prev)
            prev = d
        down[prev].append(b)
        up[b].append(prev)
        chains[(a, b)] = chain
    return _Proper(node_layer, widths, up, down, chains)


def _barycenter_sweep(rows: list[list[int]], pos: list[float], nbrs: list[list[int]], downward: bool) -> None:
    """Reorder each layer (top to bottom or bottom to top) by the mean position of its neighbours in the
    layer before (a node without any keeps its position); ties keep the current order."""
    n_layers = len(rows)
    rng = range(1, n_layers) if downward else range(n_layers - 2, -1, -1)
    for lv in rng:
        row = rows[lv]
        keyed = []
        for k, i in enumerate(row):
            ns = nbrs[i]
            if ns:
                s = 0.0
                for j in ns:
                    s += pos[j]
                bary = s / len(ns)
            else:
                bary = pos[i]
            keyed.append((bary, k, i))
        keyed.sort()
        row[:] = [i for _, _, i in keyed]
        for k, i in enumerate(row):
            pos[i] = float(k)


def reduce_crossings(proper: _Proper, n_layers: int, sweeps: int, check: Callable[[], None],
                     ) -> tuple[list[list[int]], int, int]:
    """Stage 4: ordering -- real nodes in insertion order and dummies in creation order to start with, then
    alternating barycenter sweeps (down, up, ...); the ordering with the fewest crossings seen is kept, so
    crossings never increase. Returns the rows and the crossings before and after."""
    total = proper.total
    node_layer, up, down = proper.node_layer, proper.up, proper.down
    rows: list[list[int]] = [[] for _ in range(n_layers)]
    for i in range(total):
        rows[node_layer[i]].append(i)
    pos = [0.0] * total
    for row in rows:
        for k, i in enumerate(row):
            pos[i] = float(k)
    layer_pairs: list[list[tuple[int, int]]] = [[] for _ in range(max(0, n_layers - 1))]
    for i in range(total):
        lv = node_layer[i]
        for d in down[i]:
            layer_pairs[lv].append((i, d))
    busy_pairs = [pairs for pairs in layer_pairs if len(pairs) > 1]

    def crossings() -> int:
        return sum(count_crossings_between(pos, pairs) for pairs in busy_pairs)

    best = before = crossings()
    best_rows = [list(r) for r in rows]
    if best > 0:
        for it in range(sweeps):
            check()
            downward = it % 2 == 0
            _barycenter_sweep(rows, pos, up if downward else down, downward)
            c = crossings()
            if c < best:
                best = c
                best_rows = [list(r) for r in rows]
            if best == 0:
                break
    return best_rows, before, best


def assign_x(rows: list[list[int]], proper: _Proper, n_real: int, is_source: list[bool]) -> list[float]:
    """Stage 5: coordinates -- Brandes & Köpf over the alignment candidates both ends prefer: a node joined
    to a dummy chain aligns with it (long skip edges stay straight) and sources (parameters, constants) never
    pull the main chain sideways. Then a residual stream runs straight down and each block hangs beside it,
    and the four alignments agree on which chain runs straight (else two of them follow the skip edge, two
    the branch, and the balanced result is a staircase)."""
    total = proper.total
    up, down = proper.up, proper.down
    is_dummy = [i >= n_real for i in range(total)]

    def preferred(nbrs: list[int], use_sources: bool) -> list[int]:
        dummies = [j for j in nbrs if j >= n_real]
        if dummies:
            return dummies
        real = [j for j in nbrs if not (is_source[j] and not use_sources)]
        return real if real else nbrs

    up_pref = [preferred(up[i], False) for i in range(total)]
    down_pref = [preferred(down[i], True) for i in range(total)]
    up_sets = [set(ns) for ns in up_pref]
    up_main = [[u for u in up_pref[v] if v in set(down_pref[u])] for v in range(total)]
    down_main = [[v for v in down_pref[u] if u in up_sets[v]] for u in range(total)]

    def gap_of(a: int, b: int) -> float:
        return DUMMY_GAP if (is_dummy[a] or is_dummy[b]) else NODE_GAP

    return bk_coordinates(rows, up_main, down_main, proper.widths, n_real, gap_of)


def assign_y(nodes: _Nodes, node_layer: list[int], n_layers: int, row_h: float,
             layer_h: list[float] | None = None) -> list[float]:
    """Stage 6: each layer's centre ordinate (layers ``row_h`` tall, or each its ``layer_h``); two
    consecutive layers of different dataflow groups get room for the frames between them."""
    layer_y = [0.0] * n_layers
    groups_in_layer: list[set[Any]] = [set() for _ in range(n_layers)]
    for i in range(len(nodes.ids)):
        if nodes.group[i] is not None:
            groups_in_layer[node_layer[i]].add(nodes.group[i])
    heights = layer_h if layer_h is not None else [row_h] * n_layers
    y_acc = MARGIN + FRAME_LABEL + (heights[0] if n_layers else row_h) / 2.0
    for lv in range(n_layers):
        if lv > 0:
            y_acc += (heights[lv - 1] + heights[lv]) / 2.0 + LAYER_GAP
            prev_groups, cur_groups = groups_in_layer[lv - 1], groups_in_layer[lv]
            if prev_groups and cur_groups and prev_groups != cur_groups:
                y_acc += 2 * FRAME_PAD + FRAME_LABEL  # room between the frames of two dataflow blocks
        layer_y[lv] = y_acc
    return layer_y


def route_edges(result: GraphLayout, nodes: _Nodes, dag: _Dag, proper: _Proper, xs: list[float],
                layer_y: list[float]) -> None:
    """Stage 7: edge routing -- a polyline per input edge from the bottom of its source box through its
    dummy nodes to the top of its target box (reversed edges drawn in their own direction)."""
    ids, height, node_layer = nodes.ids, nodes.height, proper.node_layer
    for a, b, rev in dag.edges:
        pts = [(xs[a], layer_y[node_layer[a]] + height[a] / 2.0)]
        for d in proper.chains.get((a, b), ()):
            pts.append((xs[d], layer_y[node_layer[d]]))
        pts.append((xs[b], layer_y[node_layer[b]] - height[b] / 2.0))
        if rev:
            pts.reverse()
            result.edges[(ids[b], ids[a])] = pts
        else:
            result.edges[(ids[a], ids[b])] = pts


def block_frames(result: GraphLayout, nodes: _Nodes, xs: list[float], layer_y: list[float],
                 node_layer: list[int], graph_attrs: Mapping, dag: _Dag | None = None) -> None:
    """Stage 8a: a frame around each dataflow group's nodes, labelled from ``graph["groups"]``; a function
    input (no producer, no group) that feeds the group and was placed within its layers is drawn inside
    (``dag`` given), so no frame cuts through one."""
    labels: dict[Any, str] = {}
    for grp in graph_attrs.get("groups", []) or []:
        if isinstance(grp, Mapping) and "id" in grp:
            labels[grp["id"]] = str(grp.get("label", grp["id"]))
    width, height = nodes.width, nodes.height
    boxes: dict[Any, list[float]] = {}
    for i in range(len(nodes.ids)):
        grp = nodes.group[i]
        if grp is None:
            continue
        cx, cy = xs[i], layer_y[node_layer[i]]
        x0, x1 = cx - width[i] / 2.0, cx + width[i] / 2.0
        y0, y1 = cy - height[i] / 2.0, cy + height[i] / 2.0
        box = boxes.get(grp)
        if box is None:
            boxes[grp] = [x0, y0, x1, y1]
        else:
            box[0] = min(box[0], x0)
            box[1] = min(box[1], y0)
            box[2] = max(box[2], x1)
            box[3] = max(box[3], y1)
    if dag is not None and boxes:
        _take_inputs(boxes, nodes, xs, layer_y, node_layer, dag)
    for grp, (x0, y0, x1, y1) in boxes.items():
        result.frames.append(Frame(group=grp, label=labels.get(grp, f"dataflow block {grp}"), x0=x0 - FRAME_PAD,
                                   y0=y0 - FRAME_PAD - FRAME_LABEL, x1=x1 + FRAME_PAD, y1=y1 + FRAME_PAD))


def _take_inputs(boxes: dict[Any, list[float]], nodes: _Nodes, xs: list[float], layer_y: list[float],
                 node_layer: list[int], dag: _Dag) -> None:
    """Grow each block's box over the group-less inputs that feed it and sit within its rows."""
    for i in range(len(nodes.ids)):
        if nodes.group[i] is not None or dag.preds[i]:
            continue
        cy = layer_y[node_layer[i]]
        for s in dag.succs[i]:
            box = boxes.get(nodes.group[s])
            if box is None or not box[1] <= cy <= box[3]:
                continue
            w, h = nodes.width[i], nodes.height[i]
            box[0], box[1] = min(box[0], xs[i] - w / 2.0), min(box[1], cy - h / 2.0)
            box[2], box[3] = max(box[2], xs[i] + w / 2.0), max(box[3], cy + h / 2.0)
            break


def nested_frames(result: GraphLayout, node_items: list, xs: list[float], layer_y: list[float],
                   node_layer: list[int], width: list[float], height: list[float], graph_attrs: Mapping) -> None:
    """Stage 8b: frames of the groups named by the nodes' ``frames`` attribute: innermost first, each
    padded around its nodes and its child frames."""
    boxes: dict[Any, list[float]] = {}
    parent: dict[Any, Any] = {}
    depth: dict[Any, int] = {}
    for i, (_n, data) in enumerate(node_items):
        chain = data.get("frames") if hasattr(data, "get") else None
        if not chain:
            continue
        for k, fid in enumerate(chain):
            depth.setdefault(fid, k)
            if k:
                parent.setdefault(fid, chain[k - 1])
        cx, cy = xs[i], layer_y[node_layer[i]]
        x0, x1 = cx - width[i] / 2.0, cx + width[i] / 2.0
        y0, y1 = cy - height[i] / 2.0, cy + height[i] / 2.0
        fid = chain[-1]
        box = boxes.get(fid)
        if box is None:
            boxes[fid] = [x0, y0, x1, y1]
        else:
            box[0], box[1], box[2], box[3] = min(box[0], x0), min(box[1], y0), max(box[2], x1), max(box[3], y1)
    if not depth:
        return
    labels = dict(graph_attrs.get("frame_labels") or {})
    pad = FRAME_PAD * 0.6
    for fid in sorted(depth, key=lambda f: -depth[f]):
        box = boxes.get(fid)
        if box is None:
            continue
        fr = Frame(group=fid, label=str(labels.get(fid, fid)), x0=box[0] - pad, y0=box[1] - pad - FRAME_LABEL * 0.8,
                   x1=box[2] + pad, y1=box[3] + pad, kind="nested", depth=depth[fid])
        result.frames.append(fr)
        up = parent.get(fid)
        if up is not None:
            pbox = boxes.get(up)
            if pbox is None:
                boxes[up] = [fr.x0, fr.y0, fr.x1, fr.y1]
            else:
                pbox[0], pbox[1] = min(pbox[0], fr.x0), min(pbox[1], fr.y0)
                pbox[2], pbox[3] = max(pbox[2], fr.x1), max(pbox[3], fr.y1)
