"""Everything the view shows, prepared off the GUI thread: the view graph for an expansion
(:func:`pipeline_model.graph_hierarchy.build_view`), its layout, the tiles the diagram paints from (and
clicks are found in) and the minimap image (:class:`Prepared`)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, fields
from typing import Any, Mapping, Optional

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage, QPainter

from pipeline_model import graph_collapsed, graph_hierarchy
from pipeline_model.layout import (
    DETAIL_LINE,
    GROUP_WORDS,
    MIN_NODE_WIDTH,
    NODE_PADDING,
    GraphLayout,
    compute_layout,
    node_details,
    node_text,
    text_width,
)
from widgets.graph.adapter import CAT_INDEX, JsonGraph, categories, category, check_graph_json
from widgets.graph.tiles import Band, FramePaint, Rect, TileIndex, box_paths, frame_paths

#: Size of the minimap image (its widget adds a border).
OVERVIEW_W = 150
OVERVIEW_H = 220


@dataclass
class Prepared:
    """What the layout thread hands to the GUI thread. Memory: the view graph ``data`` shares the nodes of
    ``full`` that it shows as themselves (:func:`pipeline_model.graph_hierarchy.share_full_nodes`: without
    the ``frames`` the layout read), ``layout.edges`` is emptied once the tiles hold the polylines, equal
    ``titles``/``subs`` are one string, and detail tiles make their paths when first painted."""

    generation: int
    data: dict[str, Any]
    layout: GraphLayout
    ids: list[str]
    attrs: dict[str, dict[str, Any]]
    titles: list[str]
    subs: list[str]
    rects: list[Rect]  # x0, y0, w, h
    pills: list[bool]
    base_cats: list[int]
    bands: list[Band]
    band_starts: list[float]
    coarse: list[Band]
    coarse_starts: list[float]
    band_margin: float
    frames: list[FramePaint]
    highlight: frozenset[str]
    index: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    full: Optional[dict[str, Any]] = None  # the whole function's graph JSON (the view graph is ``data``)
    tree: dict[str, dict[str, Any]] = field(default_factory=dict)
    expanded: frozenset[str] = frozenset()
    rep: dict[str, str] = field(default_factory=dict)
    full_highlight: frozenset[str] = frozenset()  # highlighted ids of the full graph
    overview: Any = None  # QImage of the whole layout (the minimap)
    overview_scale: float = 1.0
    cache_key: Any = None
    # what ``full_highlight`` was computed from: the ``before`` graph (by identity) and the extra ids
    hl_before: Any = None
    hl_extra: frozenset[str] = frozenset()
    #: A cached layout recoloured by a layout task: ``(generation, full highlight, before, extra)``, applied by
    #: the view on the GUI thread (:func:`apply_highlight_pending`) — the task must not recolour a layout the
    #: view may be painting (it emptied the box paths between making and painting them: a paint error)
    highlight_pending: Optional[tuple[int, frozenset[str], Any, frozenset[str]]] = None
    details: dict[int, list[str]] = field(default_factory=dict)  # a collapsed group's input/output lines
    line_height: float = DETAIL_LINE
    #: A collapsed view the engine sent ahead of the whole graph (``full`` is None; expanding waits for it)
    partial: bool = False
    #: While the whole graph is packed (:mod:`pipeline_model.graph_pack`; ``full`` is None): what stands for
    #: it (:func:`widgets.graph.layout_cache.detach`); expanding and find wait for it as for a collapsed view
    packed: Any = None

    def whole_pending(self) -> bool:
        """True while the whole graph is not here: a collapsed view, or a layout whose graph is packed."""
        return self.partial or self.packed is not None


def release_later(dropped: list[Prepared]) -> None:
    """Free layouts nothing shows any more (dropped from the view's cache) on a thread of their own, piece by
    piece: a 54,000-node layout is ~10^6 objects, and freeing it in one go held the interpreter for 200-600 ms
    (the GUI thread stalled that long); each piece is short, so other threads run in between. The layouts
    are emptied: nothing may use them afterwards."""
    if dropped:
        threading.Thread(target=_release, args=(list(dropped),), name="graph-release", daemon=True).start()


def _release(dropped: list[Prepared]) -> None:
    while dropped:
        p = dropped.pop()
        for band_list in (p.bands, p.coarse):
            for k in range(0, len(band_list), 32):
                for band in band_list[k:k + 32]:
                    band.tiles = {}
                time.sleep(0)
        for name in ("layout", "data", "attrs", "index", "rects", "titles", "subs", "ids", "frames", "rep", "tree"):
            value = getattr(p, name)
            setattr(p, name, type(value)())
            del value
            time.sleep(0)
        for f in fields(p):
            if f.name not in ("generation", "full"):
                setattr(p, f.name, None)
        p.full = None
        time.sleep(0)


def view_highlight(full_ids: frozenset[str], rep: dict[str, str], view_ids: list[str],
                   attrs: dict[str, dict[str, Any]]) -> frozenset[str]:
    """Full-graph highlighted ids -> view ids (a collapsed group is highlighted when a member is, a stub
    when its source is)."""
    if not full_ids:
        return frozenset()
    shown = {rep.get(n, n) for n in full_ids}
    for vid in view_ids:
        src = attrs[vid].get("stub_of")
        if src is not None and src in shown:
            shown.add(vid)
    return frozenset(shown)


def apply_highlight(p: Prepared, full_ids: frozenset[str]) -> None:
    """Recolour a prepared layout for another highlight set (rebuilds the coarse tiles' box paths; the
    detail tiles' are made again when next painted)."""
    p.full_highlight = full_ids
    p.highlight = view_highlight(full_ids, p.rep, p.ids, p.attrs)
    cats = categories(p.base_cats, p.ids, p.highlight)
    for band in p.bands:
        for tile in band.tiles.values():
            tile.boxes = None
    for band in p.coarse:
        for tile in band.tiles.values():
            box_paths(tile, p.rects, p.pills, cats, False)


def apply_highlight_pending(p: Prepared, generation: int) -> None:
    """Apply what a layout task left in ``p.highlight_pending`` for ``generation`` (GUI thread; a pending
    recolouring of another generation is dropped)."""
    pending, p.highlight_pending = p.highlight_pending, None
    if pending is not None and pending[0] == generation:
        apply_highlight(p, pending[1])
        p.hl_before, p.hl_extra = pending[2], pending[3]


def prepare_full(generation: int, full: dict[str, Any], highlight: frozenset[str],
                 expanded: Optional[frozenset[str]], char_width: float, node_height: float,
                 should_stop: Any = None, line_height: float = DETAIL_LINE,
                 words: Mapping[str, str] = GROUP_WORDS) -> Prepared:
    """The view graph of ``full`` for ``expanded`` (None: the default expansion), laid out and prepared."""
    check_graph_json(full)
    if full["nodes"] and "module" not in full["nodes"][0]:
        graph_hierarchy.annotate_modules(full)
    tree = graph_hierarchy.group_tree(full)
    if expanded is None:
        expanded = graph_hierarchy.default_expansion(full)
    expanded = frozenset(g for g in expanded if g in tree)
    view = graph_hierarchy.build_view(full, expanded, tree=tree)
    rep = view["graph"].pop("rep")
    view_attrs = {n["id"]: n for n in view["nodes"]}
    view_hl = view_highlight(highlight, rep, list(view_attrs), view_attrs)
    prepared = prepare(generation, view, view_hl, char_width, node_height, should_stop, line_height, words)
    graph_hierarchy.share_full_nodes(view, full)  # laid out: the view's copies of full-graph nodes go
    for node in view["nodes"]:
        prepared.attrs[node["id"]] = node
    prepared.full = full
    prepared.tree = tree
    prepared.expanded = expanded
    prepared.rep = rep
    prepared.full_highlight = highlight
    prepared.overview, prepared.overview_scale = overview_image(prepared)
    return prepared


def prepare_collapsed(generation: int, view: dict[str, Any], highlight: frozenset[str], char_width: float,
                      node_height: float, should_stop: Any = None, line_height: float = DETAIL_LINE,
                      words: Mapping[str, str] = GROUP_WORDS) -> Prepared:
    """A collapsed view from the engine (:mod:`pipeline_model.graph_collapsed`) laid out as it is: no module
    annotation, no group tree and no view graph to build here; ``highlight`` are ids of its own nodes."""
    check_graph_json(view)
    prepared = prepare(generation, view, highlight, char_width, node_height, should_stop, line_height, words)
    prepared.tree = graph_collapsed.group_tree_of(view)
    prepared.partial = True
    prepared.full_highlight = highlight
    prepared.overview, prepared.overview_scale = overview_image(prepared)
    return prepared


def overview_image(p: Prepared) -> tuple[QImage, float]:
    """A small image of the whole layout (boxes only) for the minimap, painted off the GUI thread."""
    w = max(p.layout.width, 1.0)
    h = max(p.layout.height, 1.0)
    scale = min(OVERVIEW_W / w, OVERVIEW_H / h)
    img = QImage(max(8, int(w * scale) + 1), max(8, int(h * scale) + 1), QImage.Format.Format_ARGB32_Premultiplied)
    img.fill(QColor(0, 0, 0, 0))
    painter = QPainter(img)
    try:
        colours = [QColor("#4a7bd0"), QColor("#8a5cd0"), QColor("#3aa55a"), QColor("#808080"), QColor("#d0603a"),
                   QColor("#2a9d8f"), QColor("#9ab79a"), QColor("#e0a020")]
        cats = categories(p.base_cats, p.ids, p.highlight)
        for i, (x0, y0, bw, bh) in enumerate(p.rects):
            painter.fillRect(QRectF(x0 * scale, y0 * scale, max(1.0, bw * scale), max(1.0, bh * scale)),
                             colours[cats[i]])
    finally:
        painter.end()
    return img, scale


class _NodeBoxes:
    """Per node of the view graph: its two text lines (and a collapsed group's input/output lines), box
    size, category and pill shape."""

    def __init__(self, g: JsonGraph, char_width: float, node_height: float, line_height: float,
                 words: Mapping[str, str]) -> None:
        self.titles: list[str] = []
        self.subs: list[str] = []
        share = {"": ""}.setdefault  # equal texts (op names, shapes: most of 50,000 lines) as one string
        self.details: dict[int, list[str]] = {}
        self.sizes: dict[str, tuple[float, float]] = {}
        self.base_cats: list[int] = []
        self.pills: list[bool] = []
        for i, (n, d) in enumerate(g.node_list):
            title, sub = node_text(d, words)
            title, sub = share(title, title), share(sub, sub)
            self.titles.append(title)
            self.subs.append(sub)
            lines = node_details(d, words) if d.get("kind") == "group" else []
            longest = max([text_width(title), text_width(sub)] + [text_width(line) for line in lines])
            if lines:
                self.details[i] = lines
            self.sizes[n] = (max(MIN_NODE_WIDTH, char_width * longest + NODE_PADDING),
                             node_height + line_height * len(lines))
            self.base_cats.append(CAT_INDEX[category(d)])
            self.pills.append(d.get("kind") in ("param", "output") or bool(d.get("stub")))


def prepare(generation: int, data: dict[str, Any], highlight: frozenset[str], char_width: float,
            node_height: float, should_stop: Any = None, line_height: float = DETAIL_LINE,
            words: Mapping[str, str] = GROUP_WORDS) -> Prepared:
    """Lay out the view graph ``data`` and build what the diagram paints from."""
    g = JsonGraph(data)
    ids = [n for n, _ in g.node_list]
    boxes = _NodeBoxes(g, char_width, node_height, line_height, words)
    sizes = boxes.sizes
    lay = compute_layout(g, char_width=char_width, node_height=node_height, sizes=sizes, should_stop=should_stop)
    positions = lay.positions
    rects: list[Rect] = []
    for n in ids:
        x, y = positions[n]
        w, h = sizes[n]
        rects.append((x - w / 2.0, y - h / 2.0, w, h))
    tiles = TileIndex(sorted({positions[n][1] for n in ids}))
    for i, n in enumerate(ids):
        x, y = positions[n]
        tiles.add_node(i, x, y, rects[i])
    for pts in lay.edges.values():
        tiles.add_edge(pts)
    lay.edges = {}  # the tiles hold the polylines (as flat coordinates): not kept twice
    tiles.finish(rects, boxes.pills, categories(boxes.base_cats, ids, frozenset(highlight)))
    prepared = Prepared(generation, data, lay, ids, g.attrs, boxes.titles, boxes.subs, rects, boxes.pills,
                        boxes.base_cats, tiles.bands, tiles.band_starts, tiles.coarse, tiles.coarse_starts,
                        tiles.margin, frame_paths(lay.frames), frozenset(highlight), {n: i for i, n in enumerate(ids)})
    prepared.details, prepared.line_height = boxes.details, line_height
    return prepared
