"""Layered (Sugiyama-style) layout of a directed graph, pure Python (no TVM, no Qt).

Steps: cycle breaking (back edges of a DFS are reversed, so any input works), longest-path layering with
sources pulled down next to their first use and dataflow groups kept in disjoint layer bands, dummy nodes on
edges that span several layers, crossing reduction by barycenter sweeps (the best ordering seen is kept, so
crossings never increase), and coordinate assignment by Brandes & Köpf (four vertical alignments packed
left/right, balanced), where only segments both ends prefer are aligned -- dummy chains first, never a
weight -- so a residual stream runs straight down a deep network instead of drifting sideways. Everything
is O((N + D) log N) per sweep for N nodes and D dummy nodes; a 5,000-node Relax function lays out in about
two hundred milliseconds in CPython.

:func:`compute_layout` chains the stages of :mod:`.stages` and returns the full :class:`GraphLayout` (node
boxes, edge polylines, group frames); :func:`layered_layout` returns only the node centres (the shape the
shared contract names). :mod:`.model` holds the result types, constants and node texts, :mod:`.crossings`
the crossing count, :mod:`.brandes_koepf` the coordinate assignment.
"""

from __future__ import annotations

from typing import Any, Hashable, Mapping

from pipeline_model.layout.compound import compound_layout, has_frames
from pipeline_model.layout.crossings import count_crossings
from pipeline_model.layout.model import (
    CHAR_WIDTH,
    DETAIL_LINE,
    FRAME_PAD,
    GROUP_WORDS,
    MARGIN,
    MIN_NODE_WIDTH,
    NODE_HEIGHT,
    NODE_PADDING,
    Frame,
    GraphLayout,
    LayoutCancelled,
    node_box_height,
    node_details,
    node_text,
    node_width,
    shape_text,
    short_op,
    text_width,
)
from pipeline_model.layout.stages import (
    assign_layers,
    assign_x,
    assign_y,
    block_frames,
    break_cycles,
    insert_dummies,
    nested_frames,
    read_nodes,
    reduce_crossings,
    route_edges,
)

__all__ = [
    "CHAR_WIDTH",
    "DETAIL_LINE",
    "GROUP_WORDS",
    "MIN_NODE_WIDTH",
    "NODE_HEIGHT",
    "NODE_PADDING",
    "Frame",
    "GraphLayout",
    "LayoutCancelled",
    "compute_layout",
    "count_crossings",
    "layered_layout",
    "node_box_height",
    "node_details",
    "node_text",
    "node_width",
    "shape_text",
    "short_op",
    "text_width",
]



def compute_layout(
    g: Any,
    *,
    char_width: float = CHAR_WIDTH,
    node_height: float = NODE_HEIGHT,
    sweeps: int = 4,
    sizes: Mapping[Hashable, tuple[float, float]] | None = None,
    should_stop: Any = None,
) -> GraphLayout:
    """Lay out the directed graph ``g`` (a ``networkx.DiGraph`` or anything with ``nodes(data=True)`` and
    ``edges()``). Node widths come from :func:`node_width` unless ``sizes`` gives them; node attribute
    ``group`` (not None) puts a node in a frame, and ``g.graph["groups"]`` may give frame labels.
    Node attribute ``frames`` (a list of group ids, outermost first) draws nested frames around the nodes of
    each group, labelled from ``g.graph["frame_labels"]``; such a graph is laid out frame by frame
    (:mod:`.compound`), so frames are disjoint or nested and hold only their own nodes. ``should_stop`` (a callable) is polled between
    stages; when it returns True the layout stops with :class:`LayoutCancelled`.
    Deterministic: the same graph (same insertion order) always gives the same layout.

    The stages, in order: :func:`read_nodes`, :func:`break_cycles`, :func:`assign_layers`,
    :func:`insert_dummies`, :func:`reduce_crossings`, :func:`assign_x`, :func:`assign_y`,
    :func:`route_edges`, :func:`block_frames` and the nested frames.
    """
    if has_frames(list(g.nodes(data=True))):
        return compound_layout(g, _flat_layout, char_width=char_width, node_height=node_height, sweeps=sweeps,
                               sizes=sizes, should_stop=should_stop)
    return _flat_layout(g, char_width=char_width, node_height=node_height, sweeps=sweeps, sizes=sizes,
                        should_stop=should_stop)


def _flat_layout(g: Any, *, char_width: float, node_height: float, sweeps: int,
                 sizes: Mapping[Hashable, tuple[float, float]] | None, should_stop: Any,
                 per_layer: bool = False) -> GraphLayout:
    """The layered layout of one level (frames drawn around groups, not laid out as boxes); ``per_layer``
    spaces each layer by its own tallest box (else by the tallest box of all)."""

    def check() -> None:
        if should_stop is not None and should_stop():
            raise LayoutCancelled()

    result = GraphLayout()
    nodes = read_nodes(g, sizes, char_width, node_height)
    n_real = len(nodes.ids)
    if n_real == 0:
        return result
    dag = break_cycles(g, nodes)
    result.reversed_edges = dag.reversed_count
    check()
    layers = assign_layers(nodes, dag)
    proper = insert_dummies(nodes, dag, layers)
    result.dummy_count = proper.total - n_real
    check()
    rows, result.crossings_before, result.crossings_after = reduce_crossings(proper, layers.count, sweeps, check)
    check()
    x = assign_x(rows, proper, n_real, layers.is_source)
    node_layer = proper.node_layer
    widths = proper.widths
    min_x = min(x[i] - widths[i] / 2.0 for i in range(proper.total))
    shift = MARGIN - min_x
    xs = [v + shift for v in x]
    row_h = max(nodes.height) if nodes.height else node_height
    layer_h: list[float] | None = None
    if per_layer:
        layer_h = [0.0] * layers.count
        for i in range(n_real):
            layer_h[node_layer[i]] = max(layer_h[node_layer[i]], nodes.height[i])
    layer_y = assign_y(nodes, node_layer, layers.count, row_h, layer_h)
    for i, n in enumerate(nodes.ids):
        result.positions[n] = (xs[i], layer_y[node_layer[i]])
        result.sizes[n] = (nodes.width[i], nodes.height[i])
        result.layers[n] = node_layer[i]
    result.layer_rows = [[nodes.ids[i] for i in row if i < n_real] for row in rows]
    route_edges(result, nodes, dag, proper, xs, layer_y)
    graph_attrs = getattr(g, "graph", {}) or {}
    block_frames(result, nodes, xs, layer_y, node_layer, graph_attrs, dag)
    nested_frames(result, nodes.items, xs, layer_y, node_layer, nodes.width, nodes.height, graph_attrs)
    right = max((xs[i] + widths[i] / 2.0 for i in range(proper.total)), default=0.0)
    right = max([right] + [fr.x1 for fr in result.frames])
    result.width = right + MARGIN + FRAME_PAD
    last_h = layer_h[-1] if layer_h else row_h
    result.height = layer_y[-1] + last_h / 2.0 + MARGIN + FRAME_PAD if layers.count else 0.0
    return result


def layered_layout(g: Any, **kwargs: Any) -> dict[Hashable, tuple[float, float]]:
    """Node centres of :func:`compute_layout` (y grows downwards, every edge points down on a DAG)."""
    return compute_layout(g, **kwargs).positions
