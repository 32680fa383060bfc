"""The collapsed graph of a large function (issue 33): its compact encoding round trip
(:mod:`pipeline_model.graph_collapsed`), and in the main window on the fake engine: the collapsed view is
shown before the whole graph, expanding a group asks for and shows its contents, a search finds a node in a
group whose contents are not here yet, and a reply for a step no longer selected is not shown."""

from __future__ import annotations

import json

import pytest

from pipeline_model import graph_collapsed, graph_hierarchy
from pipeline_model.ir_graph import GRAPH_FORMAT, GRAPH_VERSION
from tests.conftest import qt_wait


def _annotated(layers: int = 40) -> dict:
    """A decoder-like chain: per layer three weighted calls (``layers.<i>.attn.{q,k,o}.weight``), then a norm."""
    nodes = [{"id": "x", "kind": "param", "name": "x", "shape": [1, 8], "dtype": "float32"}]
    edges, prev = [], "x"
    parts = [f"layers.{i}.attn.{p}" for i in range(layers) for p in ("q", "k", "o")] + ["norm"]
    for k, path in enumerate(parts):
        weight, nid = f"{path}.weight", f"lv{k}"
        nodes.append({"id": weight, "kind": "param", "name": weight, "shape": [8, 8], "dtype": "float32"})
        nodes.append({"id": nid, "kind": "binding", "name": nid, "op": "relax.matmul", "shape": [1, 8]})
        edges += [{"source": prev, "target": nid, "index": 0, "indices": [0]},
                  {"source": weight, "target": nid, "index": 1, "indices": [1]}]
        prev = nid
    nodes.append({"id": "output", "kind": "output", "name": "output", "op": "return"})
    edges.append({"source": prev, "target": "output", "index": 0, "indices": [0]})
    return graph_hierarchy.annotate_modules({"format": GRAPH_FORMAT, "version": GRAPH_VERSION, "nodes": nodes,
                                             "edges": edges, "graph": {}})


def test_collapsed_summary_round_trip_is_the_view_graph():
    full = _annotated()
    summary = graph_collapsed.collapsed_summary(full, min_nodes=100)
    assert summary is not None
    wire = json.loads(json.dumps(summary))  # what the engine sends is JSON
    view, changed = graph_collapsed.decode_summary(wire)
    expected = graph_hierarchy.build_view(full, frozenset())
    expected["graph"].pop("rep")
    tree = graph_hierarchy.group_tree(full)
    assert graph_collapsed.is_collapsed_view(view) and not graph_collapsed.is_collapsed_view(expected)
    assert view["graph"].pop("collapsed_of") == len(full["nodes"])
    assert view["graph"].pop("group_tree") == tree
    assert view == json.loads(json.dumps(expected))
    assert changed == []
    assert len(view["nodes"]) < len(full["nodes"]) // 10  # the point: a few boxes for many nodes
    assert any(n.get("kind") == "group" for n in view["nodes"])


def test_collapsed_summary_names_the_groups_holding_changes_and_small_graphs_stay_whole():
    full = _annotated()
    before = json.loads(json.dumps(full))
    inner = next(n for n in full["nodes"] if n.get("kind") == "binding" and n.get("module"))
    inner["op"] = "relax.changed_op"  # one node inside a group changed by the step
    summary = graph_collapsed.collapsed_summary(full, before, min_nodes=100)
    view, changed = graph_collapsed.decode_summary(summary)
    groups = graph_hierarchy.groups_of(full, inner["id"])
    assert changed == [groups[0]]  # the outermost (collapsed) group holding it
    assert graph_collapsed.collapsed_summary(full, min_nodes=len(full["nodes"])) is None
    table = graph_collapsed.encode_table([{"a": 1, "b": None}, {"b": 2}])
    assert graph_collapsed.decode_table(table) == [{"a": 1, "b": None}, {"b": 2}]


def test_a_table_names_each_set_of_missing_keys_once():
    """A group tree's entries mostly lack ``container``: one missing-key group for all of them (was one entry
    per row: ~10k in the 800-layer decoder's summary), decoded back exactly; a bad row is a clear error."""
    items = [{"id": f"m:{k}", "size": k, **({"container": 3} if k % 100 == 0 else {})} for k in range(1000)]
    items.append({"id": "c:x"})
    table = graph_collapsed.encode_table(items)
    assert table["missing"] == [[[2], [k for k in range(1000) if k % 100]], [[1, 2], [1000]]]
    assert graph_collapsed.decode_table(json.loads(json.dumps(table))) == items
    table["missing"][0][1].append(5000)
    with pytest.raises(ValueError, match="row 5000"):
        graph_collapsed.decode_table(table)


@pytest.mark.parametrize("field,value", [("format", "other"), ("version", 99)])
def test_decode_summary_refuses_another_format(field, value):
    summary = graph_collapsed.collapsed_summary(_annotated(), min_nodes=100)
    summary[field] = value
    with pytest.raises(ValueError, match=field):
        graph_collapsed.decode_summary(summary)


# ---- the main window on the fake engine --------------------------------------------------------------
pytest.importorskip("pytestqt")


def _large(win, extra_layers: int = 4) -> list[str]:
    """Three steps run on a fake graph of 1 + 6 + 4 * extra_layers nodes, answered collapsed (> 5 nodes)."""
    client = win.fake_client
    client.collapse_min_nodes = 5
    client.extra_layers = extra_layers
    win.files.new_pipeline(force=True)
    for pid in ("relax.LegalizeOps", "relax.FuseOps", "relax.FuseTIR"):
        win.editor.add_pass(pid)
    assert qt_wait(lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps), 10_000)
    return [s.uid for s in win.ctrl.doc.steps]


def _key(win, uid: str) -> str:
    return win.step_model.result(uid).snapshot_key


def _select_partial(win, uid: str) -> None:
    """Select a step whose whole graph is held back: its collapsed view is shown."""
    key = _key(win, uid)
    win.fake_client.held_whole_graphs.add(key)
    win.fake_client.graph_gate.clear()
    win.pipeline_view.select_uids([uid])
    gv = win.graph_view
    assert qt_wait(lambda: gv.is_partial() and not gv.is_busy() and gv._key is not None  # noqa: SLF001
                   and gv._key[0] == key, 10_000)  # noqa: SLF001
    assert ("graph_collapsed", key) in win.fake_client.calls


def test_collapsed_view_first_then_expanding_a_group_shows_its_contents(fake_studio):
    win = fake_studio
    uids = _large(win)
    _select_partial(win, uids[2])
    gv, client, key = win.graph_view, win.fake_client, _key(win, uids[2])
    shown = gv.node_ids()
    assert "m:layers" in shown and "x0a" not in shown  # the layers as one box; their nodes are not here
    assert gv.groups()["m:layers"].get("container")  # the whole group tree came with the view
    gv.toggle_group("m:layers")  # expanded before the nodes are here: shown so when they are
    assert gv.is_partial() and ("graph", key) in client.calls  # the whole graph was asked for
    client.graph_gate.set()
    assert qt_wait(lambda: not gv.is_partial() and not gv.is_busy(), 10_000)
    assert gv.expanded_groups() == frozenset({"m:layers"})
    shown = set(gv.node_ids())
    assert "m:layers" not in shown and "m:layers.3" in shown  # the layers inside, each collapsed
    gv.toggle_group("m:layers.3")
    assert qt_wait(lambda: not gv.is_busy() and "m:layers.3" in gv.expanded_groups(), 10_000)
    assert {"x0a", "x0b"} <= set(gv.node_ids()) or "m:layers.3.proj" in gv.node_ids()


def test_search_finds_a_node_inside_a_group_not_loaded_yet(fake_studio):
    win = fake_studio
    uids = _large(win)
    _select_partial(win, uids[2])
    gv, bar = win.graph_view, win.graph_area.find_bar
    win.act_find.trigger()
    bar.edit.setText("lv_2_b")
    bar.search.emit("lv_2_b")
    assert bar.count_label.text() == "Searching…" and gv.current_match() is None
    win.fake_client.graph_gate.set()
    assert qt_wait(lambda: gv.current_match() == "x2b" and not gv.is_busy(), 10_000)
    assert qt_wait(lambda: gv.selected_node() == "x2b", 10_000)  # its groups were expanded to show it
    assert bar.count_label.text() == "1 of 1"


def test_a_reply_for_a_step_no_longer_selected_is_not_shown(fake_studio):
    win = fake_studio
    uids = _large(win)
    gv, client = win.graph_view, win.fake_client
    old, new = _key(win, uids[1]), _key(win, uids[2])
    engine = win.ctx.engine
    # The window and its fake client are shared by this file's tests (same steps, same keys): start from the
    # first step shown and nothing held, so that selecting the old step is a change that asks for its graph.
    client.held_graphs.clear()
    client.held_whole_graphs.clear()
    client.graph_gate.set()
    win.pipeline_view.select_uids([uids[0]])
    first = _key(win, uids[0])
    assert qt_wait(lambda: not gv.is_busy() and gv._key is not None and gv._key[0] == first, 10_000)  # noqa: SLF001
    assert qt_wait(lambda: engine._current is None and not engine._jobs, 10_000)  # noqa: SLF001
    win.graphs.on_engine_restarted()  # nothing cached: both steps' graphs are asked for again
    client.held_graphs.add(old)  # the old step's graph is slow: the user selects the next step meanwhile
    client.graph_gate.clear()
    shown: list = []
    gv.graph_shown.connect(lambda: shown.append(gv._key[0] if gv._key else None))  # noqa: SLF001
    asked = len(client.calls)
    win.pipeline_view.select_uids([uids[1]])
    assert qt_wait(lambda: ("graph_collapsed", old) in client.calls[asked:], 10_000)
    win.pipeline_view.select_uids([uids[2]])
    client.graph_gate.set()
    assert qt_wait(lambda: not gv.is_busy() and not gv.is_partial() and gv._key is not None  # noqa: SLF001
                   and gv._key[0] == new, 10_000)  # noqa: SLF001
    qt_wait(lambda: False, 300)  # any late reply of the old step would be shown now
    assert old not in shown and gv._key[0] == new  # noqa: SLF001
    assert (old, None) in win.graphs._collapsed  # noqa: SLF001 - kept (cached), just not shown


@pytest.mark.e2e
def test_engine_graph_command_answers_collapsed_and_whole(monkeypatch):
    """The engine's ``graph`` handler on a real 4-layer decoder: asked collapsed, a function over the
    threshold comes as its summary (the layers one box, the tree whole); asked plainly, as the whole graph."""
    pytest.importorskip("tvm")
    from pipeline_model.engine import handlers_graph
    from tests.test_graph_hierarchy import decoder_mod

    class Ctx:
        cache = {"collapsed-test": decoder_mod(4)}

        def emit(self, name, data):
            pass

    monkeypatch.setattr(graph_collapsed, "COLLAPSE_MIN_NODES", 10)
    reply = handlers_graph.handle_graph({"key": "collapsed-test", "collapsed": True}, Ctx())
    assert reply["graph"] is None and reply["function"] == "forward"
    view, changed = graph_collapsed.decode_summary(json.loads(json.dumps(reply["collapsed"])))
    labels = [n["label"] for n in view["nodes"]]
    assert "layers \u00d74" in labels and "norm" in labels and changed == []
    whole = handlers_graph.handle_graph({"key": "collapsed-test"}, Ctx())["graph"]
    assert view["graph"]["collapsed_of"] == len(whole["nodes"]) > 10
    assert view["graph"]["group_tree"] == graph_hierarchy.group_tree(whole)


def _fused(mod):
    import tvm
    from tvm import relax

    seq = tvm.transform.Sequential([relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(),
                                    relax.transform.FuseOps()])
    return seq(mod)


@pytest.mark.e2e
@pytest.mark.parametrize("model", ["mlp", "decoder", "decoder fused"])
def test_outline_summary_equals_the_summary_of_the_whole_graph(monkeypatch, model):
    """The engine's collapsed reply comes from an outline walk (names and edges; types and attrs read for
    the nodes the collapsed view shows only) and equals the summary of the whole graph, on real builtin
    models (a fused one has call groups); the whole graph is not made for it."""
    pytest.importorskip("tvm")
    from pipeline_model.engine import graph_extract_tvm, handlers_graph
    from pipeline_model.importers.load_tvm import load_model

    mod = load_model(f"builtin:{model.split()[0]}").mod
    if model.endswith("fused"):
        mod = _fused(mod)
    monkeypatch.setattr(graph_collapsed, "COLLAPSE_MIN_NODES", 10)
    function = graph_extract_tvm.default_function(mod)
    whole = handlers_graph._function_graph(mod, function)  # noqa: SLF001
    expected = graph_collapsed.collapsed_summary(whole, None, 10)
    assert expected is not None and len(whole["nodes"]) > 10

    class Ctx:
        cache = {f"outline-{model}": mod}

    reply = handlers_graph.handle_graph({"key": f"outline-{model}", "collapsed": True}, Ctx())
    assert (f"outline-{model}", function) not in handlers_graph._GRAPH_MEMO  # noqa: SLF001
    assert (f"outline-{model}", function) in handlers_graph._OUTLINES  # noqa: SLF001
    assert reply["graph"] is None and reply["collapsed"] == expected
    view, _ = graph_collapsed.decode_summary(json.loads(json.dumps(reply["collapsed"])))
    shown = [n for n in view["nodes"] if n["kind"] != "group"]
    assert shown and all(n["type_text"] for n in shown)  # filled: the outline alone has no types
    # the whole graph asked next is the outline completed: equal to a fresh walk
    assert handlers_graph.handle_graph({"key": f"outline-{model}"}, Ctx())["graph"] == whole
    assert (f"outline-{model}", function) not in handlers_graph._OUTLINES  # noqa: SLF001


@pytest.mark.e2e
def test_a_collapsed_view_too_large_is_answered_whole_from_the_completed_outline(monkeypatch):
    """A function whose collapsed view would still be large (no module structure) is answered with its
    whole graph: the outline walked for the summary is completed, equal to a fresh walk."""
    pytest.importorskip("tvm")
    from pipeline_model.engine import graph_extract_tvm, handlers_graph
    from pipeline_model.importers.load_tvm import load_model

    mod = load_model("builtin:decoder").mod
    monkeypatch.setattr(graph_collapsed, "COLLAPSE_MIN_NODES", 10)
    monkeypatch.setattr(graph_collapsed, "COLLAPSED_MAX_VIEW_NODES", 3)
    function = graph_extract_tvm.default_function(mod)
    whole = handlers_graph._function_graph(mod, function)  # noqa: SLF001

    class Ctx:
        cache = {"outline-too-large": mod}

    reply = handlers_graph.handle_graph({"key": "outline-too-large", "collapsed": True}, Ctx())
    assert "collapsed" not in reply and reply["graph"] == whole
    assert ("outline-too-large", function) not in handlers_graph._OUTLINES  # noqa: SLF001 - completed


@pytest.mark.e2e
def test_a_steps_collapsed_view_never_waits_for_a_detailed_walk(monkeypatch):
    """A step shown after the graph before it was made (the order the GUI asks in) is still answered from
    an outline, its changes left to the whole graphs; a step that kept the function's objects
    (AnnotateTIROpPattern) reuses the summary of the graph before it, with no summary pass at all."""
    pytest.importorskip("tvm")
    from tvm import relax

    from pipeline_model.engine import handlers_graph
    from tests.test_graph_hierarchy import decoder_mod

    before = decoder_mod(4)
    legalized = relax.transform.LegalizeOps()(before)
    annotated = relax.transform.AnnotateTIROpPattern()(legalized)
    assert annotated["forward"].same_as(legalized["forward"])

    class Ctx:
        cache = {"in": before, "legal": legalized, "annot": annotated}

    monkeypatch.setattr(graph_collapsed, "COLLAPSE_MIN_NODES", 10)
    handlers_graph.handle_graph({"key": "in", "collapsed": True}, Ctx())
    assert handlers_graph.handle_graph({"key": "in"}, Ctx())["graph"] is not None  # the graph before: made
    reply = handlers_graph.handle_graph({"key": "legal", "collapsed": True, "before": "in"}, Ctx())
    assert ("legal", "forward") not in handlers_graph._GRAPH_MEMO  # noqa: SLF001 - no detailed walk
    assert ("legal", "forward") in handlers_graph._OUTLINES  # noqa: SLF001
    _, changed = graph_collapsed.decode_summary(reply["collapsed"])
    assert changed == []  # coloured when the whole graphs are there
    whole = handlers_graph.handle_graph({"key": "legal"}, Ctx())["graph"]
    assert reply["collapsed"] == graph_collapsed.collapsed_summary(whole, None, 10)

    def no_summary_pass(*_args):
        raise AssertionError("a summary pass for a step that left the function as it was")

    monkeypatch.setattr(graph_collapsed, "collapsed_summary", no_summary_pass)
    again = handlers_graph.handle_graph({"key": "annot", "collapsed": True, "before": "legal"}, Ctx())
    assert again["collapsed"] == reply["collapsed"]
    # the whole graph of that step: the same object, so a client holding it gets its token only
    token = handlers_graph.handle_graph({"key": "legal"}, Ctx())["graph_token"]
    held = handlers_graph.handle_graph({"key": "annot", "have": [token]}, Ctx())
    assert held["graph"] is None and held["graph_held"] and held["graph_token"] == token
    assert handlers_graph.handle_graph({"key": "annot", "have": ["another"]}, Ctx())["graph"] is whole
