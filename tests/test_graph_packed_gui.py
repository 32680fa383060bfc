"""Whole graphs packed while not needed, in the main window on the fake engine (issue 33, GUI RSS): after
visiting every step only the graph shown (and its "before" graph while its changes are coloured) is decoded;
a step shown again is painted at once from its cached layout, coloured as before, and once its graph is
decoded again it expands, finds and shows node details as on its first show."""

from __future__ import annotations

import copy

import pytest

pytest.importorskip("pytestqt")

from pipeline_model.graph_pack import PackedGraph  # noqa: E402
from tests.conftest import qt_wait  # noqa: E402


@pytest.fixture
def packing(fake_studio):
    """Three steps on a fake graph of 1 + 6 + 4 * 4 nodes, answered collapsed first, every graph packable."""
    win = fake_studio
    client, graphs = win.fake_client, win.graphs
    client.collapse_min_nodes, client.extra_layers = 5, 4
    graphs.PACK_MIN_NODES = 1
    win.files.new_pipeline(force=True)
    for pid in ("relax.LegalizeOps", "relax.FuseOps", "relax.FuseTIR"):
        win.editor.add_pass(pid)
    assert qt_wait(lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps), 10_000)
    yield win
    del graphs.PACK_MIN_NODES  # the class's again
    client.collapse_min_nodes, client.extra_layers = 5, 0


def _settled(win) -> bool:
    graphs, gv = win.graphs, win.graph_view
    timers = (graphs._trim_timer, graphs._unpack_timer)  # noqa: SLF001
    return (not any(t.isActive() for t in timers) and graphs._packer.wait(0)  # noqa: SLF001
            and not graphs._packing and not graphs._unpacking  # noqa: SLF001
            and not gv.is_busy() and not gv.is_partial() and win.ctx.engine._current is None)  # noqa: SLF001


def _show(win, uid: str) -> str:
    """Select a step ("": the input) and wait until its whole graph is shown and packing is done: its key."""
    key = win.step_model.result(uid).snapshot_key if uid else win.inspector.input_key
    if uid:
        win.pipeline_view.select_uids([uid])
    else:
        win.inspector.show_step("")
    gv = win.graph_view
    assert qt_wait(lambda: gv._key is not None and gv._key[0] == key and _settled(win), 10_000)  # noqa: SLF001
    return key


def _decoded(win) -> list[dict]:
    graphs = {id(r["graph"]): r["graph"] for r in win.graphs.graph_cache.values() if isinstance(r.get("graph"), dict)}
    return list(graphs.values())


def test_only_the_graphs_needed_stay_decoded(packing):
    win = packing
    uids = [s.uid for s in win.ctrl.doc.steps]
    coloured = {}
    for uid in ["", *uids]:
        key = _show(win, uid)
        coloured[key] = win.graph_view.highlighted()
        assert len(_decoded(win)) <= 2, [len(g["nodes"]) for g in _decoded(win)]
    cache = win.graphs.graph_cache
    packed = {id(r["graph"]) for r in cache.values() if isinstance(r.get("graph"), PackedGraph)}
    assert len(packed) >= 2 and len(_decoded(win)) == 1  # the last step's; its "before" is coloured against
    assert _decoded(win)[0] is win.graph_view.graph_json()
    client = win.fake_client
    asked = len(client.calls)
    gv = win.graph_view
    for uid in ["", *uids]:  # shown again: from the cached layout, as coloured before, nothing asked again
        key = win.step_model.result(uid).snapshot_key if uid else win.inspector.input_key
        if uid:
            win.pipeline_view.select_uids([uid])
        else:
            win.inspector.show_step("")
        assert gv._key[0] == key and gv.last_from_cache and not gv.is_busy()  # noqa: SLF001 - painted at once
        assert gv.highlighted() == coloured[key]
        assert qt_wait(lambda: _settled(win), 10_000)
        assert gv.highlighted() == coloured[key] and len(_decoded(win)) <= 2
    assert not [c for c in client.calls[asked:] if c[0].startswith("graph")]  # no graph asked of the engine again


def test_a_step_shown_again_expands_finds_and_details_its_decoded_graph(packing):
    win = packing
    uids = [s.uid for s in win.ctrl.doc.steps]
    first_shown = {}
    for uid in ["", *uids]:
        key = _show(win, uid)
        first_shown[key] = copy.deepcopy(win.graph_view.graph_json())
    key = win.step_model.result(uids[0]).snapshot_key
    assert isinstance(win.graphs.graph_cache[(key, None)]["graph"], PackedGraph)
    gv, bar = win.graph_view, win.graph_area.find_bar
    win.pipeline_view.select_uids([uids[0]])
    assert gv.is_partial() and gv.last_from_cache  # the cached layout, its graph being decoded
    win.act_find.trigger()
    bar.edit.setText("lv_2_b")
    bar.search.emit("lv_2_b")  # searched before the graph is decoded: runs when it is
    assert qt_wait(lambda: gv.current_match() == "x2b" and _settled(win), 10_000)
    assert qt_wait(lambda: gv.selected_node() == "x2b", 10_000) and bar.count_label.text() == "1 of 1"
    graph = win.graphs.graph_cache[(key, None)]["graph"]
    assert graph is gv.graph_json() and graph == first_shown[key]  # as it was before it was packed
    assert "lv_2_b" in win.graph_area.details.toPlainText()  # node details of the match
    win.act_collapse_all.trigger()
    assert qt_wait(lambda: not gv.is_busy() and not gv.expanded_groups(), 10_000)
    win.act_expand_all.trigger()
    assert qt_wait(lambda: not gv.is_busy() and "m:layers" in gv.expanded_groups(), 10_000)
    assert {"x0a", "x3b", "n0"} <= set(gv.node_ids()) or any(g.startswith("m:layers.") for g in gv.node_ids())
