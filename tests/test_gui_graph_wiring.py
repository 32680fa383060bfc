"""The graph view wired into the main window, on the TVM-free fake engine: find bar (Ctrl+F, Enter/F3,
Shift+F3, Esc), expand/collapse all, overview setting, group and stub details, the fallback caption when
the function asked for is not in the module, and re-fitting when a new model/function is shown."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QRectF, Qt  # noqa: E402

from tests.conftest import qt_wait  # noqa: E402


def _run_three(win) -> list[str]:
    win.files.new_pipeline(force=True)
    for pid in ("relax.LegalizeOps", "relax.FuseOps", "relax.FuseTIR"):
        win.editor.add_pass(pid)
    assert qt_wait(lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps), 10_000)
    return [s.uid for s in win.ctrl.doc.steps]


def _show(win, uid: str) -> None:
    win.pipeline_view.select_uids([uid])
    key = win.step_model.result(uid).snapshot_key
    gv = win.graph_view
    assert qt_wait(lambda: gv.graph_json() is not None and not gv.is_busy()
                   and any(n["id"] == "n0" for n in gv.graph_json()["nodes"])
                   and win.graphs._shown_graph and win.graphs._shown_graph[0] == key, 10_000)
    nodes = {n["id"] for n in gv.graph_json()["nodes"]}
    expected = {f"n{i}" for i in range(win.ctrl.doc.index_of(uid) + 1)}
    assert qt_wait(lambda: expected <= {n["id"] for n in (gv.graph_json() or {}).get("nodes", [])}, 10_000), nodes


def _fitted(gv) -> bool:
    """The whole graph in view, or (a graph too small to read whole) the legible scale fit-to-view picks."""
    from widgets.graph import lod

    visible = gv.mapToScene(gv.viewport().rect()).boundingRect().adjusted(-2, -2, 2, 2)
    rect = gv.scene().sceneRect()
    legible = lod.fit_scale(rect, QRectF(gv.viewport().rect()), gv._palette)  # noqa: SLF001
    return visible.contains(rect) or abs(gv.current_scale() - legible) < 1e-6


def test_find_bar_next_previous_and_escape(fake_studio, qtbot):
    win = fake_studio
    uids = _run_three(win)
    _show(win, uids[2])
    bar = win.graph_area.find_bar
    assert not bar.isVisible()
    win.act_find.trigger()
    assert bar.isVisible() and bar.edit.hasFocus()
    qtbot.keyClicks(bar.edit, "lv")
    qtbot.keyClick(bar.edit, Qt.Key.Key_Return)
    assert bar.count_label.text() == "1 of 3"
    assert win.graph_view.current_match() == "n0"
    assert win.graph_view.selected_node() == "n0"
    qtbot.keyClick(bar.edit, Qt.Key.Key_Return)  # same text: next
    assert bar.count_label.text() == "2 of 3" and win.graph_view.current_match() == "n1"
    win.act_find_next.trigger()  # F3
    assert bar.count_label.text() == "3 of 3"
    win.act_find_prev.trigger()  # Shift+F3
    assert bar.count_label.text() == "2 of 3" and win.graph_view.current_match() == "n1"
    bar.edit.selectAll()
    qtbot.keyClicks(bar.edit, "no such node")
    qtbot.keyClick(bar.edit, Qt.Key.Key_Return)
    assert bar.count_label.text() == "No matches"
    qtbot.keyClick(bar.edit, Qt.Key.Key_Escape)
    assert not bar.isVisible()


def test_expand_collapse_actions_group_details_and_overview_setting(fake_studio):
    win = fake_studio
    uids = _run_three(win)
    _show(win, uids[2])
    gv = win.graph_view
    assert "m:layers.1.proj" in gv.groups() or any(g.startswith("m:layers") for g in gv.groups()), gv.groups()
    win.act_collapse_all.trigger()
    assert qt_wait(lambda: not gv.is_busy() and not gv.expanded_groups(), 10_000)
    groups = [n for n in gv.view_json()["nodes"] if n.get("kind") == "group"]
    assert groups and "n0" not in gv.node_ids()
    gv.select_node(groups[0]["id"])
    details = win.details.toPlainText()
    assert "module group" in details and "nodes inside" in details
    win.act_expand_all.trigger()
    assert qt_wait(lambda: not gv.is_busy() and "n0" in gv.node_ids(), 10_000)
    assert not [n for n in gv.view_json()["nodes"] if n.get("kind") == "group"]
    gv.select_node("n1")
    assert "fake_prim_1" in win.details.toPlainText()
    was = win.act_overview.isChecked()
    assert not was  # off by default: the minimap would cover nodes
    gv.zoom_by(6.0)  # the graph no longer fits: the minimap, when on, is shown
    win.act_overview.trigger()
    assert str(win.settings.value("graph/overview")).lower() == str(not was).lower()
    assert gv.overview().isVisible() == (not was)


def test_missing_function_falls_back_with_a_caption_once(fake_studio):
    win = fake_studio
    uids = _run_three(win)
    win.graphs._current_function = "forward"  # kept from a model whose function was 'forward'
    _show(win, uids[0])
    assert qt_wait(lambda: "not in this module" in win.graph_caption.text(), 10_000)
    assert "'forward' is not in this module; showing main" in win.graph_caption.text()
    assert win.function_picker.currentText() == "main"
    _show(win, uids[1])  # the next step asks for 'main': no complaint any more
    assert qt_wait(lambda: "Step 2" in win.graph_caption.text(), 10_000)
    assert "not in this module" not in win.graph_caption.text()


def test_graph_is_refitted_for_a_new_model_not_for_another_step(fake_studio):
    win = fake_studio
    uids = _run_three(win)
    _show(win, uids[2])
    gv = win.graph_view
    assert qt_wait(lambda: _fitted(gv), 5_000)
    gv.resetTransform()
    gv.scale(3.0, 3.0)
    assert not _fitted(gv)
    _show(win, uids[1])  # same model and function: the user's zoom stays
    assert not _fitted(gv)
    win.editor.set_model("builtin:cnn")
    assert qt_wait(lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps), 10_000)
    uid = win.ctrl.doc.steps[2].uid
    _show(win, uid)
    assert qt_wait(lambda: _fitted(gv), 5_000)
    assert isinstance(gv.scene().sceneRect(), QRectF)


def test_a_module_lost_with_a_restarted_engine_says_run_again(fake_studio):
    """After the engine was restarted (Stop of a step that did not return), an earlier step's module is gone: the
    caption says to run again instead of showing the engine's "Graph unavailable: module '…'" error."""
    win = fake_studio
    graphs = win.graphs
    graphs._on_graph_failed(("3cb98886dc", None),
                            "module '3cb98886dc' is not in the engine's cache (evicted or from an earlier engine); "
                            "run again")
    text = win.graph_caption.text()
    assert "run the pipeline again" in text and "3cb98886dc" not in text and "unavailable" not in text
    graphs._on_graph_failed(("k", None), "the graph could not be laid out")
    assert win.graph_caption.text().startswith("Graph unavailable: the graph could not be laid out")


def test_function_parameters_follow_the_model(fake_studio):
    """Gradient's ``func_name`` (a function-name parameter) is offered from the module's functions, and a step
    added to a model whose only function is ``forward`` gets ``forward``, not TVM's default ``main``."""
    from widgets.param_editor import _FunctionField

    win = fake_studio
    win.graphs._update_function_picker({"functions": ["forward"], "function": "forward"})
    assert win.pipeline_panel.param_editor.function_names() == ["forward"]
    uid = win.editor.add_pass("relax.Gradient")
    step = next(s for s in win.ctrl.doc.steps if s.uid == uid)
    assert step.params.get("func_name") == "forward"
    win.pipeline_panel.param_editor.set_step(win.ctx.catalogue.get("relax.Gradient").to_json(), step.params)
    field = win.pipeline_panel.param_editor._fields["func_name"]
    assert isinstance(field, _FunctionField) and field.editor.count() == 1 and field.value() == "forward"
    win.graphs._update_function_picker({"functions": ["main", "forward"], "function": "main"})
    assert [field.editor.itemText(i) for i in range(field.editor.count())] == ["main", "forward"]
    uid = win.editor.add_pass("relax.Gradient")  # the model has main now: TVM's default stays
    assert "func_name" not in next(s for s in win.ctrl.doc.steps if s.uid == uid).params


def test_a_graph_held_here_comes_back_as_its_token_only(fake_studio):
    """Asking for a whole graph names the engine's tokens of the graphs held here; a reply that is one of them
    (``graph_held``, no graph sent: a step that left the function as it was) reuses the held copy."""
    graphs = fake_studio.graphs
    graphs.graph_cache.clear()
    graph = {"nodes": [], "edges": [], "graph": {}}
    graphs.graph_cache[("k1", "main")] = {"graph": graph, "graph_token": "t1", "function": "main"}
    assert graphs._held_tokens() == ["t1"]  # noqa: SLF001
    graphs._on_graph(("k2", "main"), {"graph": None, "graph_token": "t1", "graph_held": True,  # noqa: SLF001
                                     "function": "main", "functions": ["main"]})
    assert graphs.graph_cache[("k2", "main")]["graph"] is graph
    assert "graph_held" not in graphs.graph_cache[("k2", "main")]
