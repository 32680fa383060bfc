"""Values inside a fused call on the graph (issue 31): rows of a ``diverge`` reply inside a call (key
``<call>/<binding>``) colour that binding while the graph expands the call in place, and the first diverging
value inside the first node is marked first then; two calls whose bindings are both named ``lv`` stay apart."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from app.diverge_controller import first_inside_node, node_errors  # noqa: E402
from widgets.graph_view import GraphView  # noqa: E402


def _node(node_id: str, kind: str, op=None, callee=None, name=None) -> dict:
    return {"id": node_id, "kind": kind, "name": name or node_id.split("#")[0], "op": op, "callee": callee,
            "callee_kind": "relax_function" if callee else None, "composite": None, "label": callee or op or node_id,
            "shape": [1, 4], "dtype": "float32", "type_text": 'R.Tensor((1, 4), dtype="float32")', "attrs": {},
            "group": 0 if kind == "binding" else None, "is_dataflow": kind == "binding"}


def _graph(nodes: list[dict], edges: list[tuple[str, str, int]], callees=None) -> dict:
    graph = {"function": "forward", "groups": [{"id": 0, "label": "dataflow block 0"}]}
    if callees:
        graph["callees"] = callees
    return {"format": "relax-pipeline-studio.graph", "version": 1, "directed": True, "multigraph": False,
            "graph": graph, "nodes": nodes,
            "edges": [{"source": s, "target": t, "index": i, "indices": [i]} for s, t, i in edges]}


def _module() -> dict:
    """forward(x, w): lv = f(x, w) (add -> relu inside); lv#2 = g(lv) (both bindings named lv)."""
    f = _graph([_node("a", "param"), _node("b", "param"), _node("add", "binding", "relax.subtract"),
                _node("gv", "binding", "relax.nn.relu"), _node("output", "output", "return")],
               [("a", "add", 0), ("b", "add", 1), ("add", "gv", 0), ("gv", "output", 0)])
    g = _graph([_node("c", "param"), _node("gv", "binding", "relax.matmul"), _node("output", "output", "return")],
               [("c", "gv", 0), ("gv", "output", 0)])
    return _graph([_node("x", "param"), _node("w", "param"), _node("lv", "binding", "call", "f"),
                   _node("lv#2", "binding", "call", "g", name="lv"), _node("output", "output", "return")],
                  [("x", "lv", 0), ("w", "lv", 1), ("lv", "lv#2", 0), ("lv#2", "output", 0)], {"f": f, "g": g})


REPLY = {"step": 2, "pass_id": "custom.python", "function": "forward", "first_divergent": "lv",
         "first_inside": "lv/add", "rtol": 1e-4, "atol": 1e-4, "nodes": [
             {"name": "lv", "key": "lv", "node_id": "lv", "status": "diverges", "max_abs_over_ref": 0.5,
              "shape": [1, 4], "first": True},
             {"name": "add", "key": "lv/add", "parent": "lv", "status": "diverges", "max_abs_over_ref": 0.5,
              "shape": [1, 4], "first_inside": True},
             {"name": "gv", "key": "lv/gv", "parent": "lv", "status": "diverges", "max_abs_over_ref": 0.4,
              "shape": [1, 4]},
             {"name": "T_add_intermediate", "key": "lv/gv/T_add_intermediate", "parent": "lv/gv", "via": "split",
              "status": "ok", "max_abs_over_ref": 0.0, "shape": [1, 4]},
             {"name": "lv", "key": "lv#2", "node_id": "lv#2", "status": "diverges", "max_abs_over_ref": 0.3,
              "shape": [1, 4]},
             {"name": "gv", "key": "lv#2/gv", "parent": "lv#2", "status": "no counterpart", "shape": [1, 4]}]}


def test_rows_inside_a_call_name_the_bindings_of_the_expanded_call():
    errors, first = node_errors(REPLY)
    assert set(errors) == {"lv", "lv/add", "lv/gv", "lv#2", "lv#2/gv"} and first == "lv"
    assert errors["lv/add"].status == "diverges" and errors["lv#2/gv"].status == "no counterpart"
    assert "the step changed the structure here" in errors["lv#2/gv"].tooltip
    assert first_inside_node(REPLY) == "lv/add"
    culprit = dict(REPLY, likelier_culprit={"key": "lv#2/gv", "node": "lv#2", "reason": "r"})
    assert "likelier culprit: lv#2/gv" in node_errors(culprit)[0]["lv"].tooltip


def test_expanded_call_shows_its_values_and_the_first_inside(qtbot):
    view = GraphView()
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    qtbot.waitExposed(view)
    with qtbot.waitSignal(view.graph_shown, timeout=20000):
        view.set_graph(_module(), key=("k", "forward"))
    errors, first = node_errors(REPLY)
    view.set_node_errors(errors, first, 2e-4, reveal=False, first_inside=first_inside_node(REPLY))
    shown = set(view.node_ids())
    if "lv" in shown:  # collapsed calls: the calls carry their own rows, the ring is on the first call
        assert view.node_error_mark("lv").status == "diverges" and view.node_error_mark("lv#2") is not None
        assert not any(n.startswith("lv/") for n in shown)
        with qtbot.waitSignal(view.graph_shown, timeout=20000):
            view.set_expanded({"c:lv", "c:lv#2"})
    shown = set(view.node_ids())
    assert {"lv/add", "lv/gv", "lv#2/gv"} <= shown and "lv" not in shown
    assert view.node_error_mark("lv/add").status == "diverges"
    assert view.node_error_mark("lv#2/gv").status == "no counterpart"
    item = view._scene.diagram
    assert item.first_error == view._prepared.index["lv/add"]
