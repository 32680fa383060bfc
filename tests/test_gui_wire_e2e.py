"""End to end on the real engine: the environment report, PassContext changing FuseOps' output, the callers
of PrimFuncs a step changed, a profiled build's heat overlay, and two pipelines compared (real TVM output)."""

from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("pytestqt")

from tests.conftest import PIPELINES_DIR, profiled_build_and_run, qt_wait  # noqa: E402

pytestmark = pytest.mark.e2e

TUTORIAL = os.path.join(PIPELINES_DIR, "fusion_walkthrough.json")


def _all_ran(win) -> bool:
    return all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps)


def _open_tutorial(win) -> None:
    win.ctrl.undo_stack.setClean()
    assert win.files.open_pipeline(TUTORIAL, remember=False)
    assert qt_wait(lambda: _all_ran(win) and not win.act_stop.isEnabled(), 240_000)


def _step(win, pass_id: str):
    return next(s for s in win.ctrl.doc.steps if s.pass_id == pass_id)


def test_environment_report_from_the_engine(studio):
    dialog = studio.help.show_environment()
    assert qt_wait(lambda: dialog.report() is not None, 120_000)
    report = dialog.report()
    assert report.engine is not None and str(report.engine["tvm"]["version"]).startswith("0.27")
    assert report.engine["pass_configs"].get("relax.FuseOps.max_depth") == "int"
    assert "tvm-ffi" in dialog.plain_text() and "USE_LLVM" in dialog.plain_text()
    dialog.close()


def test_pass_context_changes_fuse_ops_and_is_saved_and_undone(studio, tmp_path):
    win = studio
    _open_tutorial(win)
    fuse = _step(win, "relax.FuseOps").uid
    default_key = win.step_model.result(fuse).snapshot_key
    default_state = win.step_model.result(fuse).state
    win.pipeline_view.select_uids([fuse])
    assert qt_wait(lambda: win.diff_view.module_diff is not None and win.diff_view.module_diff.changed, 60_000)
    dialog = win.pass_context.show_dialog()
    assert qt_wait(lambda: dialog.editor.key_combo.findText("relax.FuseOps.max_depth") >= 0, 60_000)
    dialog.editor.key_combo.setEditText("relax.FuseOps.max_depth")
    dialog.editor.value_edit.setText("1")
    dialog.editor.add_config_button.click()
    assert win.ctrl.doc.pass_context["config"] == {"relax.FuseOps.max_depth": 1}
    assert qt_wait(lambda: _all_ran(win) and not win.act_stop.isEnabled(), 240_000)
    deep = win.step_model.result(fuse)
    # by default FuseOps groups the MLP's ops; with groups of at most one op it leaves the module as it was
    assert default_state == "changed" and deep.state == "unchanged"
    win.pipeline_view.select_uids([fuse])
    assert qt_wait(lambda: win.diff_view.module_diff is not None and not win.diff_view.module_diff.changed, 60_000)
    path = tmp_path / "pc.json"
    assert win.files._save_to(str(path))
    assert json.loads(path.read_text(encoding="utf-8"))["pass_context"]["config"] == {"relax.FuseOps.max_depth": 1}
    win.act_undo.trigger()
    assert win.ctrl.doc.pass_context == {}
    assert qt_wait(lambda: _all_ran(win) and not win.act_stop.isEnabled(), 240_000)
    assert win.step_model.result(fuse).snapshot_key == default_key  # the same module as before (content key)
    dialog.close()
    win.ctrl.undo_stack.setClean()


def test_annotate_op_pattern_highlights_the_call_tir_nodes(studio):
    """AnnotateTIROpPattern changes only PrimFunc attributes: the Relax bindings stay, their callers light up,
    also when the diff is computed on the diff view's worker (as for any real-size model)."""
    win = studio
    _open_tutorial(win)
    step = _step(win, "relax.AnnotateTIROpPattern")
    from widgets.diff_view import ASYNC_LINES

    win.diff_view.async_lines = 0  # every diff on the worker, rows put in by pieces
    try:
        win.pipeline_view.select_uids([step.uid])
        key = win.step_model.result(step.uid).snapshot_key

        def shown() -> bool:
            return (not win.graph_view.is_busy() and (win.graphs.shown_graph() or ("",))[0] == key
                    and win.graph_view.graph_json() is not None and bool(win.graphs._changed_functions))  # noqa: SLF001

        assert qt_wait(shown, 60_000)
    finally:
        win.diff_view.async_lines = ASYNC_LINES
    changed = win.graphs._changed_functions  # noqa: SLF001 - what the diff says changed
    assert changed  # every legalized PrimFunc got its op_pattern
    graph = win.graph_view.graph_json()
    callers = {n["id"] for n in graph["nodes"] if n.get("callee") in changed}
    assert callers and callers <= set(win.graph_view.highlighted()) | {win.graph_view.shown_node(c) for c in callers}


def test_profiled_build_shows_the_table_and_heat_on_the_graph(studio):
    win = studio
    _open_tutorial(win)
    last = win.ctrl.doc.steps[-1].uid
    win.pipeline_view.select_uids([last])
    profiled_build_and_run(win)
    profile = win.profile_view.profile()
    assert profile is not None and profile.entries and profile.key == win.step_model.result(last).snapshot_key
    assert any(e.kind == "prim_func" for e in profile.entries)
    assert qt_wait(lambda: bool(win.graph_view.heat()) and not win.graph_view.is_busy(), 60_000)
    assert sum(win.graph_view.heat().values()) == pytest.approx(sum(profile.node_shares().values()))
    top = profile.entries[0].name
    if profile.nodes.get(top):
        assert win.profiles.select_callers(top) in profile.nodes[top]


def test_compare_two_pipelines(studio):
    win = studio
    _open_tutorial(win)
    dialog = win.comparer.show_dialog()
    win.comparer.add_files([os.path.join(PIPELINES_DIR, "cpu_build_fuse_transpose.json")])
    results: list = []
    win.comparer.finished.connect(results.append)
    win.comparer.failed.connect(results.append)
    assert win.comparer.compare()
    assert qt_wait(lambda: bool(results), 300_000)
    result = results[0]
    assert not isinstance(result, str), result
    assert [r.label for r in result.rows] == ["Current document", "cpu_build_fuse_transpose.json"]
    assert all(r.error is None and r.latency is not None and r.latency.median_us > 0 for r in result.rows)
    assert dialog.view.table().rowCount() == 2 and "Fastest" in dialog.view.best_label_text()
    dialog.close()
