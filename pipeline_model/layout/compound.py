"""Compound layout: nested frames that never overlap and never enclose a node of another group.

A graph whose nodes carry ``frames`` (expanded hierarchy groups, outermost first) is laid out recursively,
as Model Explorer lays out its layers: every frame's content (its nodes and its child frames, each child
frame one box) is laid out on its own with the flat layered layout, innermost first; the frame's box then
takes part in its parent's layout like any node. Siblings never overlap (the flat layout separates boxes),
so two frames are either disjoint or nested, and a frame holds exactly its members.

Containers are the dataflow blocks (node attribute ``group``) and the nested frames inside them. A weight
of a group (no producer, ``group`` None, ``frames`` given) is drawn in the block of its first consumer, inside its group's frame (a function input of no group stays outside the blocks). An edge between two containers is routed by the layout of their
innermost common container: from its source out of the source's frame, along that layout's polyline, into
the target's frame.
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Mapping, Optional

from pipeline_model.layout.model import (
    CHAR_WIDTH,
    FRAME_LABEL,
    FRAME_PAD,
    Frame,
    GraphLayout,
    node_box_height,
    node_width,
)

#: A flat layout: ``(graph, sizes, char_width, node_height, sweeps, should_stop) -> GraphLayout``.
FlatLayout = Callable[..., GraphLayout]


class _Box:
    """One container: a dataflow block (``kind`` ``block``) or a nested frame, its members in order of first
    appearance (node ids and child boxes), its own edges and, once laid out, its layout and size."""

    __slots__ = ("kind", "key", "parent", "members", "edges", "layout", "size", "shift", "depth", "ports")

    def __init__(self, kind: str, key: Any, parent: Optional["_Box"]) -> None:
        self.kind = kind
        self.key = key
        self.parent = parent
        self.members: list[Any] = []
        self.edges: dict[tuple[Any, Any], None] = {}
        self.layout: Optional[GraphLayout] = None
        self.size = (0.0, 0.0)
        self.shift = (0.0, 0.0)  # content offset inside the box (from the box's top-left corner)
        self.depth: int = 0 if parent is None or parent.kind != "nested" else parent.depth + 1
        self.ports: dict[tuple[str, Any], _Port] = {}

    def port(self, side: str, source: Any) -> "_Port":
        """The port (``in`` at the top, ``out`` at the bottom) where the value of ``source`` crosses the frame."""
        key = (side, source)
        hit = self.ports.get(key)
        if hit is None:
            hit = self.ports[key] = _Port(side)
            self.members.append(hit)
        return hit


class _Port:
    """Where an edge crosses a frame: a point pinned to the first (``in``) or last (``out``) layer of the
    frame's layout, so the edge runs inside the frame through the layout's own routing (around the boxes)."""

    __slots__ = ("side",)

    def __init__(self, side: str) -> None:
        self.side = side


class _Sub:
    """The graph of one container as the flat layout reads it."""

    def __init__(self, members: list[Any], edges: list[tuple[Any, Any]]) -> None:
        self._items: list[tuple[Any, dict[str, Any]]] = [
            (m, {"pin": "top" if m.side == "in" else "bottom"} if isinstance(m, _Port) else {}) for m in members]
        self._edges = edges
        self.graph: dict[str, Any] = {}

    def nodes(self, data: bool = False) -> list:
        """Members, as ``(id, {})`` pairs with ``data=True``."""
        return self._items if data else [m for m, _ in self._items]

    def edges(self) -> list[tuple[Any, Any]]:
        """The container's edges."""
        return self._edges


def has_frames(node_items: list[tuple[Hashable, Any]]) -> bool:
    """True when some node names nested frames (the compound layout is needed)."""
    return any(hasattr(d, "get") and d.get("frames") for _, d in node_items)


def _paths(node_items: list[tuple[Hashable, Any]], edges: list[tuple[Any, Any]]) -> list[list[tuple[str, Any]]]:
    """Each node's container path (``("b", group)`` then ``("n", frame)`` keys, outermost first); a weight
    of a group (an input outside every block, with frames) takes the block of its first consumer."""
    group = {n: (d.get("group") if hasattr(d, "get") else None) for n, d in node_items}
    has_pred: set[Any] = set()
    first_block: dict[Any, Any] = {}
    for u, v in edges:
        if u == v:
            continue
        has_pred.add(v)
        if u not in first_block and group.get(v) is not None:
            first_block[u] = group[v]
    out: list[list[tuple[str, Any]]] = []
    for n, d in node_items:
        grp = group[n]
        frames = (d.get("frames") if hasattr(d, "get") else None) or []
        if grp is None and frames and n not in has_pred:
            grp = first_block.get(n)
        path = ([("b", grp)] if grp is not None else []) + [("n", f) for f in frames]
        out.append(path)
    return out


def _tree(node_items: list[tuple[Hashable, Any]], paths: list[list[tuple[str, Any]]],
          ) -> tuple[_Box, dict[Any, list[_Box]]]:
    """The container tree (root first) and each node's chain of boxes; a frame keeps the parent it was
    first seen under (a node whose path disagrees stays in the deepest container that agrees)."""
    root = _Box("root", None, None)
    boxes: dict[tuple[str, Any], _Box] = {}
    chains: dict[Any, list[_Box]] = {}
    for (n, _d), path in zip(node_items, paths):
        chain: list[_Box] = []
        parent = root
        for key in path:
            box = boxes.get(key)
            if box is None:
                box = boxes[key] = _Box("block" if key[0] == "b" else "nested", key[1], parent)
                parent.members.append(box)
            elif box.parent is not parent:
                break
            chain.append(box)
            parent = box
        parent.members.append(n)
        chains[n] = chain
    return root, chains


#: A port's box: as narrow as a dummy node, no height.
PORT_SIZE = (8.0, 0.0)


def _add_ports(chain: list[_Box], node: Any, side: str, rep: Any, source: Any = None) -> None:
    """The ports an edge of ``node`` passes through from ``rep`` (a box, else nothing to do) down to
    ``node``'s own container, with their edges: ``out`` ports lead from the node's representative to the
    bottom, ``in`` ports from the top to it (one port per value and frame, shared by its edges)."""
    if not isinstance(rep, _Box):
        return
    k = chain.index(rep)
    value = node if side == "out" else source
    for j in range(k, len(chain)):
        box = chain[j]
        inner = chain[j + 1] if j + 1 < len(chain) else node
        port = box.port(side, value)
        box.edges[(inner, port) if side == "out" else (port, inner)] = None


def _route_key(chain_u: list[_Box], chain_v: list[_Box], u: Any, v: Any,
               root: _Box) -> tuple[_Box, Any, Any]:
    """The innermost common container of two nodes and what stands for each in its layout."""
    k = 0
    while k < len(chain_u) and k < len(chain_v) and chain_u[k] is chain_v[k]:
        k += 1
    lca = chain_u[k - 1] if k else root
    rep_u = chain_u[k] if k < len(chain_u) else u
    rep_v = chain_v[k] if k < len(chain_v) else v
    return lca, rep_u, rep_v


def _all_boxes(root: _Box) -> list[_Box]:
    out = [root]
    k = 0
    while k < len(out):
        out.extend(m for m in out[k].members if isinstance(m, _Box))
        k += 1
    return out


def _labels(graph_attrs: Mapping) -> tuple[dict[Any, str], dict[Any, str]]:
    blocks: dict[Any, str] = {}
    for grp in graph_attrs.get("groups", []) or []:
        if isinstance(grp, Mapping) and "id" in grp:
            blocks[grp["id"]] = str(grp.get("label", grp["id"]))
    return blocks, {k: str(v) for k, v in dict(graph_attrs.get("frame_labels") or {}).items()}


def _label_of(box: _Box, labels: tuple[dict[Any, str], dict[Any, str]]) -> str:
    if box.kind == "block":
        return labels[0].get(box.key, f"dataflow block {box.key}")
    return labels[1].get(box.key, str(box.key))


def _pads(box: _Box) -> tuple[float, float]:
    """(side/bottom padding, top padding with the title) of a frame."""
    if box.kind == "block":
        return FRAME_PAD, FRAME_PAD + FRAME_LABEL
    pad = FRAME_PAD * 0.6
    return pad, pad + FRAME_LABEL * 0.8


def compound_layout(g: Any, flat: FlatLayout, *, char_width: float, node_height: float, sweeps: int,
                    sizes: Mapping[Hashable, tuple[float, float]] | None, should_stop: Any) -> GraphLayout:
    """Lay out ``g`` container by container (innermost first) with ``flat``; see the module docstring."""
    node_items = list(g.nodes(data=True))
    edges = [(u, v) for u, v in g.edges() if u != v]
    size_of: dict[Any, tuple[float, float]] = {}
    for n, d in node_items:
        if sizes is not None and n in sizes:
            size_of[n] = sizes[n]
        else:
            size_of[n] = (node_width(d, char_width), node_box_height(d, node_height))
    root, chains = _tree(node_items, _paths(node_items, edges))
    routes: list[tuple[Any, Any, _Box, Any, Any]] = []
    for u, v in edges:
        lca, ru, rv = _route_key(chains[u], chains[v], u, v, root)
        lca.edges[(ru, rv)] = None
        routes.append((u, v, lca, ru, rv))
        _add_ports(chains[u], u, "out", ru)
        _add_ports(chains[v], v, "in", rv, source=u)
    labels = _labels(getattr(g, "graph", {}) or {})
    boxes = _all_boxes(root)
    try:
        return _lay_out_boxes(boxes, root, routes, chains, size_of, labels, flat, char_width=char_width,
                              node_height=node_height, sweeps=sweeps, should_stop=should_stop)
    finally:
        _unlink(boxes)


def _unlink(boxes: list[_Box]) -> None:
    """Break the container tree's reference cycles (a box and its parent's members, its layout keyed by its
    child boxes), so it is freed as soon as the layout is done: the view lays out with the cyclic collector
    paused and then freezes what is alive (:mod:`pipeline_model.gc_pause`), which made every such tree
    (~800,000 objects, ~90 MB for a 54,000-node graph expanded whole) live for good."""
    for box in boxes:
        box.parent = None
        box.members = []
        box.layout = None
        box.ports = {}
        box.edges = {}


def _lay_out_boxes(boxes: list[_Box], root: _Box, routes: list[tuple[Any, Any, _Box, Any, Any]],
                   chains: dict[Any, list[_Box]], size_of: dict[Any, tuple[float, float]],
                   labels: tuple[dict[Any, str], dict[Any, str]], flat: FlatLayout, *, char_width: float,
                   node_height: float, sweeps: int, should_stop: Any) -> GraphLayout:
    """Each container laid out with ``flat`` (children before parents), then placed and routed."""
    result = GraphLayout()
    for box in reversed(boxes):  # children before parents
        sub_sizes = {m: (m.size if isinstance(m, _Box) else PORT_SIZE if isinstance(m, _Port) else size_of[m])
                     for m in box.members}
        lay = flat(_Sub(box.members, list(box.edges)), sizes=sub_sizes, char_width=char_width,
                   node_height=node_height, sweeps=sweeps, should_stop=should_stop, per_layer=True)
        box.layout = lay
        result.crossings_before += lay.crossings_before
        result.crossings_after += lay.crossings_after
        result.dummy_count += lay.dummy_count
        result.reversed_edges += lay.reversed_edges
        if box is root:
            break
        x0 = min(lay.positions[m][0] - sub_sizes[m][0] / 2.0 for m in box.members)
        x1 = max(lay.positions[m][0] + sub_sizes[m][0] / 2.0 for m in box.members)
        y0 = min(lay.positions[m][1] - sub_sizes[m][1] / 2.0 for m in box.members)
        y1 = max(lay.positions[m][1] + sub_sizes[m][1] / 2.0 for m in box.members)
        side, top = _pads(box)
        label_w = char_width * len(_label_of(box, labels)) + 2 * FRAME_PAD
        inner_w = max(x1 - x0, label_w)
        box.size = (inner_w + 2 * side, (y1 - y0) + side + top)
        box.shift = (side + (inner_w - (x1 - x0)) / 2.0 - x0, top - y0)
    _place(root, 0.0, 0.0, result, size_of, labels)
    _route(routes, result, chains)
    assert root.layout is not None
    result.width, result.height = root.layout.width, root.layout.height
    return result


def _place(root: _Box, dx: float, dy: float, result: GraphLayout, size_of: dict[Any, tuple[float, float]],
           labels: tuple[dict[Any, str], dict[Any, str]]) -> None:
    """Absolute positions of every node, frame and inner edge, from the root down."""
    todo: list[tuple[_Box, float, float]] = [(root, dx, dy)]
    while todo:
        box, ox, oy = todo.pop()
        lay = box.layout
        assert lay is not None
        for m in box.members:
            x, y = lay.positions[m]
            if isinstance(m, _Box):
                w, h = m.size
                fx0, fy0 = ox + x - w / 2.0, oy + y - h / 2.0
                result.frames.append(Frame(group=m.key, label=_label_of(m, labels), x0=fx0, y0=fy0, x1=fx0 + w,
                                           y1=fy0 + h, kind="block" if m.kind == "block" else "nested",
                                           depth=m.depth))
                todo.append((m, fx0 + m.shift[0], fy0 + m.shift[1]))
            elif not isinstance(m, _Port):
                result.positions[m] = (ox + x, oy + y)
                result.sizes[m] = size_of[m]
                result.layers[m] = lay.layers[m]
        result.layer_rows.extend(row for row in ([n for n in r if not isinstance(n, (_Box, _Port))]
                                                 for r in lay.layer_rows) if row)
        for key, pts in lay.edges.items():
            lay.edges[key] = [(px + ox, py + oy) for px, py in pts]


def _route(routes: list[tuple[Any, Any, _Box, Any, Any]], result: GraphLayout,
           chains: dict[Any, list[_Box]]) -> None:
    """Each edge's polyline: through the ports of the frames it leaves, its common container's route,
    through the ports of the frames it enters."""
    for u, v, lca, ru, rv in routes:
        lay = lca.layout
        assert lay is not None
        mid = lay.edges.get((ru, rv))
        if mid is None:
            continue
        out_u, in_v = isinstance(ru, _Box), isinstance(rv, _Box)
        if not out_u and not in_v:
            result.edges[(u, v)] = mid
            continue
        line = list(mid)
        if out_u:
            line = _exit(ru, chains[u], u) + line[1:]
        if in_v:
            line = line[:-1] + _enter(rv, chains[v], v, u)
        result.edges[(u, v)] = line


def _exit(box: _Box, chain: list[_Box], node: Any) -> list[tuple[float, float]]:
    """From ``node`` to the bottom port of ``box`` (through the out ports of the boxes between)."""
    k = chain.index(box)
    line: list[tuple[float, float]] = []
    for j in range(len(chain) - 1, k - 1, -1):  # innermost box first
        b = chain[j]
        inner = chain[j + 1] if j + 1 < len(chain) else node
        assert b.layout is not None
        pts = b.layout.edges.get((inner, b.ports[("out", node)])) or []
        line = list(pts) if not line else line + list(pts[1:])
    return line


def _enter(box: _Box, chain: list[_Box], node: Any, source: Any) -> list[tuple[float, float]]:
    """From the top port of ``box`` to ``node`` (through the in ports of the boxes between)."""
    k = chain.index(box)
    line: list[tuple[float, float]] = []
    for j in range(k, len(chain)):  # outermost box first
        b = chain[j]
        inner = chain[j + 1] if j + 1 < len(chain) else node
        assert b.layout is not None
        pts = b.layout.edges.get((b.ports[("in", source)], inner)) or []
        line = list(pts) if not line else line[:-1] + list(pts)
    return line


__all__ = ["CHAR_WIDTH", "compound_layout", "has_frames"]
