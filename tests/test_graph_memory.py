"""What a laid-out graph holds per node (issue 33: the 50,000-node decoder expanded whole held ~1.15 GB in
the GUI process). Structural checks, no sizes or times: the layout leaves no cyclic garbage (the view lays
out with the collector paused and freezes what is left, so a cycle would live for good), the view graph
shares the function's nodes instead of copying them, detail tiles make their paths only when painted, and
the layout cache keeps to its node budget."""

from __future__ import annotations

import copy
import gc

import pytest

from pipeline_model import graph_hierarchy as gh
from pipeline_model import ir_graph as ig
from widgets.graph.prepare import prepare_full
from widgets.graph_view import GraphView


@pytest.fixture(scope="module")
def decoder_json():
    """The decoder's graph with 4 layers."""
    pytest.importorskip("tvm")
    from pipeline_model.engine.graph_extract_tvm import extract_graph
    from tests.test_graph_hierarchy import decoder_mod

    return ig.graph_to_json(extract_graph(decoder_mod(4), "forward"))


def _all_modules(data):
    return frozenset(g for g, info in gh.group_tree(data).items() if info["kind"] == "module")


def _detail_tiles(p):
    return [t for band in p.bands for t in band.tiles.values()]


def test_expanded_layout_leaves_no_cyclic_garbage_and_shares_the_nodes(qtbot, decoder_json):
    data = decoder_json
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        p = prepare_full(1, data, frozenset(), _all_modules(data), 7.0, 40.0)
        # the container tree of the compound layout was unlinked: no cycle of the layout's own objects is left
        # for the collector (counted by type: other threads of the test process may leave garbage of their own)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        leaked = [o for o in gc.garbage if type(o).__module__.startswith(("pipeline_model.layout", "widgets.graph"))]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()
    assert leaked == [], {type(o).__name__ for o in leaked}
    originals = {n["id"]: n for n in data["nodes"]}
    shared = [n for n in p.data["nodes"] if originals.get(n["id"]) is n]
    own = [n for n in p.data["nodes"] if n["id"] not in originals]
    assert len(shared) + len(own) == len(p.data["nodes"])  # no copy of a function node
    assert len(shared) > 0.9 * len(data["nodes"]) and all(n.get("stub") or n["kind"] == "group" for n in own)
    assert all(p.attrs[n["id"]] is n for n in p.data["nodes"])
    assert all("frames" not in n for n in data["nodes"])  # the function's nodes were not written to
    assert not p.layout.edges  # the tiles hold the polylines
    assert len(set(map(id, p.subs))) < len(p.subs) / 4  # equal shape texts are one string


def test_detail_tiles_make_their_paths_when_painted(qtbot, decoder_json):
    from PySide6.QtCore import QRectF

    from widgets.graph.tiles import visible

    view = GraphView()
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    qtbot.waitExposed(view)
    with qtbot.waitSignal(view.graph_shown, timeout=20000):
        view.set_graph(decoder_json, expanded=_all_modules(decoder_json))
    p = view._prepared  # noqa: SLF001 - the tile index itself
    tiles = _detail_tiles(p)
    view.fit_to_view()
    view.viewport().repaint()
    assert not view.detail_shown() and all(t.edges is None and t.boxes is None for t in tiles)
    assert all(t.edges is not None and t.boxes is not None for band in p.coarse for t in band.tiles.values())
    view.reset_zoom()
    node = next(n["id"] for n in decoder_json["nodes"] if n.get("op") == "relax.nn.softmax")
    view.centerOn(view.node_rect(node).center())
    view.viewport().repaint()
    seen = QRectF(view.mapToScene(view.viewport().rect()).boundingRect())
    built = [t for t in tiles if t.edges is not None]
    assert built and len(built) <= len(visible(p.bands, p.band_starts, p.band_margin, seen)) < len(tiles)
    # recoloured: the boxes are made again in the new colours when next painted
    view.set_highlight({node})
    assert all(t.boxes is None for t in tiles)
    img = view.viewport().grab().toImage()
    rect = view.node_rect(node)
    colour = img.pixelColor(view.mapFromScene(rect.left() + 6, rect.center().y()))
    want = view.node_fill(node)
    assert want != view.node_fill(next(n["id"] for n in decoder_json["nodes"] if n.get("op") == "relax.matmul"))
    assert abs(colour.red() - want.red()) + abs(colour.green() - want.green()) + abs(colour.blue() - want.blue()) < 12


def test_layout_cache_keeps_to_its_node_budget(qtbot, monkeypatch):
    monkeypatch.setattr(GraphView, "CACHE_NODES", 500)
    view = GraphView()
    qtbot.addWidget(view)
    graphs = [ig.synthetic_graph_json(300) for _ in range(3)]
    first = None
    for k, data in enumerate(graphs):
        with qtbot.waitSignal(view.graph_shown, timeout=20000):
            view.set_graph(data, key=(f"k{k}", "f"), expanded=())
        first = first or view._prepared  # noqa: SLF001
    assert first is not None
    qtbot.waitUntil(lambda: not first.ids and first.bands is None, timeout=20000)  # freed off the GUI thread
    cached = view._cache  # noqa: SLF001 - what the cache holds
    assert sum(len(p.ids) for p in cached.values() if p is not view._prepared) <= 500  # noqa: SLF001
    assert view.has_layout(("k2", "f")) and not view.has_layout(("k0", "f"))
    view.set_graph(graphs[2], key=("k2", "f"))
    assert view.last_from_cache  # the one shown stays cached
    with qtbot.waitSignal(view.graph_shown, timeout=20000):
        view.set_graph(graphs[0], key=("k0", "f"))
    assert not view.last_from_cache and view.node_ids()  # laid out again


def test_engine_gives_the_same_graph_one_token_and_the_gui_keeps_one_copy(fake_studio):
    pytest.importorskip("tvm")
    from types import SimpleNamespace

    from pipeline_model.engine import handlers_graph
    from tests.test_graph_hierarchy import _fused_mlp

    mod = _fused_mlp()
    ctx = SimpleNamespace(cache={"mem-a": mod, "mem-b": mod, "mem-c": _fused_mlp()})
    a, b, c = (handlers_graph.handle_graph({"key": k}, ctx) for k in ("mem-a", "mem-b", "mem-c"))
    assert a["graph"] is b["graph"] and a["graph_token"] == b["graph_token"]  # a step that changed nothing
    assert c["graph"] is not a["graph"] and c["graph_token"] != a["graph_token"]
    graphs = fake_studio.graphs
    copies = [dict(r, graph=copy.deepcopy(r["graph"])) for r in (a, b, c)]  # as decoded: one copy per reply
    for key, reply in zip(("mem-a", "mem-b", "mem-c"), copies):
        graphs._on_graph((key, None), reply)  # noqa: SLF001 - the reply as the engine client hands it over
    cache = graphs.graph_cache
    assert cache[("mem-b", None)]["graph"] is cache[("mem-a", None)]["graph"]
    assert cache[("mem-c", None)]["graph"] is copies[2]["graph"] and cache[("mem-b", None)]["key"] == "mem-b"
