"""The app's wiring of the environment report, PassContext, not-run steps, callee highlights, profiles and
pipeline comparison — GUI logic on the TVM-free fake engine (``fake_studio``). What the fake cannot do
(builds, profiles, comparisons) is checked end to end in ``tests/test_gui_wire_e2e.py``; here those requests
are checked for what the GUI sends and how it shows a refusal, and the views are fed hand-made inputs."""

from __future__ import annotations

import json
from typing import Optional

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402

from app.graph_controller import callee_changed_node_ids  # noqa: E402
from app.step_inspector import changed_function_names  # noqa: E402
from pipeline_model.build_api import (  # noqa: E402
    CheckResult, CompareRow, LatencyStats, MultiCompareResult, Profile, ProfileEntry,
)
from pipeline_model.diff import diff_snapshots  # noqa: E402
from pipeline_model.document import PipelineDocument, Step  # noqa: E402
from pipeline_model.engine.results import FAILED, NOT_RUN  # noqa: E402
from pipeline_model.fileformat import save_pipeline  # noqa: E402
from tests.conftest import qt_wait  # noqa: E402
from widgets.graph.items.nodes import heat_label  # noqa: E402
from widgets.run_panel import build_run_html  # noqa: E402


def _all_ran(win) -> bool:
    return all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps)


def _fresh(win, steps: list[Step]) -> None:
    win.ctrl.replace_document(PipelineDocument(model="builtin:mlp", steps=steps))
    assert qt_wait(lambda: _all_ran(win), 10_000)


# ---- Help ▸ Environment ---------------------------------------------------------------------------
def test_environment_dialog_asks_the_engine_and_refreshes(fake_studio):
    win = fake_studio
    assert win.help.act_env in win.help.menu.actions()
    before = sum(1 for c, _ in win.fake_client.calls if c == "env")
    dialog = win.help.show_environment()
    assert qt_wait(lambda: dialog.report() is not None, 10_000)
    report = dialog.report()
    assert report.engine["tvm"]["version"] == "fake" and not report.engine_error
    assert report.local["python"]  # local facts gathered in the GUI process
    assert "fake" in dialog.plain_text() and dialog.copy_button.isEnabled()
    dialog.refresh_button.click()
    assert dialog.report() is None  # loading again
    assert qt_wait(lambda: dialog.report() is not None, 10_000)
    assert sum(1 for c, _ in win.fake_client.calls if c == "env") == before + 2
    dialog.close()


def test_environment_dialog_shows_an_engine_failure(fake_studio, monkeypatch):
    win = fake_studio
    from pipeline_model.engine.client import EngineError

    def refuse(cmd, args=None, on_event=None):
        raise EngineError("engine gone for this test")

    monkeypatch.setattr(win.fake_client, "request", refuse)
    dialog = win.help.show_environment()
    assert qt_wait(lambda: dialog.report() is not None, 10_000)
    assert dialog.report().engine is None and "engine gone for this test" in dialog.report().engine_error
    assert "engine gone for this test" in dialog.problems_label.text()
    dialog.close()


# ---- PassContext ------------------------------------------------------------------------------------
def test_pass_context_edit_is_undoable_saved_and_reruns(fake_studio, tmp_path):
    win = fake_studio
    _fresh(win, [Step("relax.LegalizeOps"), Step("relax.FuseOps")])
    win.ctrl.undo_stack.setClean()
    fuse = win.ctrl.doc.steps[1].uid
    default_key = win.step_model.result(fuse).snapshot_key
    dialog = win.pass_context.show_dialog()
    editor = dialog.editor
    assert qt_wait(lambda: editor.key_combo.findText("relax.FuseOps.max_depth") >= 0, 10_000)  # from the env reply
    runs = sum(1 for c, _ in win.fake_client.calls if c == "run")
    editor.key_combo.setEditText("relax.FuseOps.max_depth")
    editor.value_edit.setText("1")
    editor.add_config_button.click()
    want = {"opt_level": 3, "config": {"relax.FuseOps.max_depth": 1}, "disabled_pass": []}
    assert win.ctrl.doc.pass_context == want
    assert win.ctrl.modified and win.act_undo.isEnabled()
    assert win.step_model.result(fuse) is None  # everything re-runs from step 1
    assert qt_wait(lambda: _all_ran(win), 10_000)
    run_calls = [a for c, a in win.fake_client.calls if c == "run"]
    assert len(run_calls) > runs and run_calls[-1]["pass_context"] == want
    assert win.step_model.result(fuse).snapshot_key != default_key
    path = tmp_path / "pc.json"
    assert win.files._save_to(str(path))
    assert json.loads(path.read_text(encoding="utf-8"))["pass_context"] == want
    win.act_undo.trigger()
    assert win.ctrl.doc.pass_context == {} and editor.config_table.rowCount() == 0
    assert qt_wait(lambda: _all_ran(win), 10_000)
    assert win.step_model.result(fuse).snapshot_key == default_key
    win.act_redo.trigger()
    assert editor.config_table.rowCount() == 1 and editor.config_table.item(0, 1).text() == "1"
    # setting the same value again is no edit
    count = win.ctrl.undo_stack.count()
    assert not win.pass_context.set_settings(dict(want))
    assert win.ctrl.undo_stack.count() == count
    dialog.close()
    win.ctrl.undo_stack.setClean()


# ---- not-run steps, callee highlights ----------------------------------------------------------------
def test_steps_after_a_failure_say_not_run_and_show_no_diff(fake_studio):
    win = fake_studio
    bad = Step("custom.python", params={"source": "def f(mod):\n    return (\n"})
    _fresh(win, [Step("relax.LegalizeOps"), bad, Step("relax.FuseOps")])
    last = win.ctrl.doc.steps[2].uid
    assert win.step_model.result(bad.uid).state == FAILED
    assert win.step_model.result(last).state == NOT_RUN
    win.pipeline_view.select_uids([last])
    dv = win.diff_view
    assert "not run (an earlier step failed: step 2 (custom.python))" in dv.left_title.text()
    assert dv.module_diff is None and not dv.rows
    assert "not_run" not in dv.left_title.text()
    assert "showing the last good module" in win.graph_caption.text()
    # the graph shown is the last good module (after LegalizeOps), without highlights (there is no diff)
    first_key = win.step_model.result(win.ctrl.doc.steps[0].uid).snapshot_key
    assert _graph_of(win, first_key, {"x", "n0", "layers.0.proj.weight"}, highlighted=set())


BEFORE = '''# from tvm.script import ir as I
@I.ir_module
class Module:
    @T.prim_func
    def add(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = A[i] + T.float32(1)

    @T.prim_func
    def mul(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = A[i] * T.float32(2)

    @R.function
    def main(x: R.Tensor((4,), "float32")):
        lv = R.call_tir(cls.add, (x,), out_sinfo=R.Tensor((4,), "float32"))
        gv = R.call_tir(cls.mul, (lv,), out_sinfo=R.Tensor((4,), "float32"))
        return gv
'''


def test_callers_of_changed_prim_funcs_are_found():
    after = BEFORE.replace("B[i] = A[i] + T.float32(1)", 'T.func_attr({"op_pattern": 0})\n            B[i] = A[i] + T.float32(1)')
    names = changed_function_names(diff_snapshots(BEFORE, after))
    assert names == {"add"}
    graph = {"nodes": [{"id": "x", "kind": "param"},
                       {"id": "n0", "kind": "binding", "op": "relax.call_tir", "callee": "add"},
                       {"id": "n1", "kind": "binding", "op": "relax.call_tir", "callee": "mul"}], "edges": []}
    assert callee_changed_node_ids(graph, names) == {"n0"}
    assert callee_changed_node_ids(graph, set()) == set()
    assert changed_function_names(None) == set()


# ---- profile panel, heat overlay ------------------------------------------------------------------------
def test_build_with_profile_sends_profile_settings(fake_studio):
    win = fake_studio
    _fresh(win, [Step("relax.LegalizeOps")])
    win.run_panel.profile_check.setChecked(True)
    try:
        failed: list = []
        win.run_controller.failed.connect(lambda kind, message: failed.append(kind))
        assert win.run_controller.build_and_run()
        assert qt_wait(lambda: bool(failed), 10_000)  # the fake refuses builds, plainly
        args = [a for c, a in win.fake_client.calls if c == "build_run"][-1]
        assert args["profile"] == {"warmup": 1, "repeat": 5}
        assert "does not run 'build_run'" in win.run_panel.status.text()
    finally:
        win.run_panel.profile_check.setChecked(False)


def _graph_of(win, key: str, nodes: set[str], highlighted: Optional[set[str]] = None) -> bool:
    """Wait until the graph view shows the graph of module ``key``: laid out, exactly ``nodes``, and (when
    given) exactly ``highlighted`` highlighted; then let queued layouts finish and check again."""
    def shown() -> bool:
        data = win.graph_view.graph_json() or {}
        return (not win.graph_view.is_busy() and (win.graphs.shown_graph() or ("",))[0] == key
                and {n.get("id") for n in data.get("nodes", [])} == nodes
                and (highlighted is None or set(win.graph_view.highlighted()) == highlighted))
    if not qt_wait(shown, 10_000):
        return False
    qt_wait(lambda: False, 200)
    return shown()


def _profile_for(key: str) -> Profile:
    entries = [ProfileEntry("fake_prim_0", "prim_func", 1, 30.0, 30.0, 0.75),
               ProfileEntry("fake_prim_1", "prim_func", 1, 10.0, 10.0, 0.25)]
    return Profile(entries=entries, total_us=40.0, run_us=45.0, repeat=5, warmup=1, key=key, function="main",
                   nodes={"fake_prim_0": ["n0"], "fake_prim_1": ["n1"]})


def test_profiles_follow_the_step_and_paint_heat(fake_studio):
    win = fake_studio
    _fresh(win, [Step("relax.LegalizeOps"), Step("relax.FuseOps")])
    first, second = (s.uid for s in win.ctrl.doc.steps)
    win.pipeline_view.select_uids([second])
    key = win.step_model.result(second).snapshot_key
    assert qt_wait(lambda: ("profile_get", {"key": key}) in win.fake_client.calls, 10_000)  # asked the engine once
    assert win.profile_view.profile() is None
    assert _graph_of(win, key, {"x", "n0", "n1", "layers.0.proj.weight", "layers.1.proj.weight"})
    win.profiles.add_profile(_profile_for(key))
    assert win.profile_view.profile().key == key
    assert win.profile_view.table_model().rowCount() == 2
    assert win.graph_view.heat() == {"n0": 0.75, "n1": 0.25}
    assert win.graph_view.node_heat("n0") == pytest.approx(0.75) and win.graph_view.heat_visible()
    win.graph_view.grab()  # paints the overlay
    assert heat_label(0.123) == "12.3 %" and heat_label(0.0001) == "<0.1 %"
    # the table's callee selects its caller in the graph
    row = next(r for r in range(2) if win.profile_view.table_model().entry(r).name == "fake_prim_1")
    win.profile_view.activate_row(row)
    assert win.graph_view.selected_node() == "n1"
    # View ▸ Profile Heat Overlay
    win.act_heat.setChecked(False)
    assert not win.graph_view.heat_visible()
    win.act_heat.setChecked(True)
    # another step: its own (no) profile, no heat; back: the kept one
    win.pipeline_view.select_uids([first])
    assert win.profile_view.profile() is None
    assert _graph_of(win, win.step_model.result(first).snapshot_key, {"x", "n0", "layers.0.proj.weight"})
    assert win.graph_view.heat() == {}
    win.pipeline_view.select_uids([second])
    assert win.profile_view.profile().key == key
    assert _graph_of(win, key, {"x", "n0", "n1", "layers.0.proj.weight", "layers.1.proj.weight"}) and win.graph_view.heat() == {"n0": 0.75, "n1": 0.25}
    # a new document: profiles are gone
    win.files.new_pipeline(force=True)
    assert win.profile_view.profile() is None and not win.profiles.profiles


def test_run_panel_shows_the_scaled_check_and_its_warnings():
    check = CheckResult(passed=True, rtol=1e-4, atol=1e-4, max_abs=1e-13, max_rel=0.5, reference="the model as loaded",
                        max_ref=2e-12, max_abs_over_ref=0.05, warnings=["outputs are tiny (max |ref| 2e-12)"])
    from dataclasses import asdict

    text = build_run_html({"label": "x", "function": "main", "device": "cpu", "target": {"kind": "llvm"},
                           "build_ms": 10.0, "weights": "", "check": asdict(check)})
    assert "max |diff| / max |ref| = 0.05" in text.replace("&#x27;", "'")
    assert "outputs are tiny (max |ref| 2e-12)" in text and "Warning" in text


# ---- compare pipelines -----------------------------------------------------------------------------------
def _result(labels: list[str]) -> MultiCompareResult:
    rows = [CompareRow(label=lab, key=str(i), target={"kind": "llvm"}, build_ms=100.0,
                       latency=LatencyStats(median_us=10.0 + i, mean_us=10.0 + i, std_us=1.0, min_us=9.0, max_us=12.0 + i,
                                            runs_us=[10.0 + i], number=10, repeat=5, warmup=1),
                       outputs=[], check=None) for i, lab in enumerate(labels)]
    return MultiCompareResult(function="main", rows=rows, diffs=[], best=0)


def test_compare_dialog_sends_candidates_on_the_current_model_and_uses_one(fake_studio, tmp_path):
    win = fake_studio
    _fresh(win, [Step("relax.LegalizeOps")])
    win.ctrl.doc.target = {"kind": "llvm", "num-cores": 2}
    other = tmp_path / "other.json"
    save_pipeline(PipelineDocument(model="builtin:transformer", steps=[Step("relax.FuseOps")]), str(other))
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json", encoding="utf-8")
    dialog = win.comparer.show_dialog()
    assert "builtin:mlp" in dialog.note.text()
    # one candidate is not enough
    assert not win.comparer.compare()
    assert "two or more" in dialog.status.text()
    win.comparer.add_files([str(bad)])
    assert not win.comparer.compare()
    assert str(bad) in dialog.status.text()  # the unreadable file is named
    dialog.list.item(1).setCheckState(Qt.CheckState.Unchecked)
    win.comparer.add_files([str(other)])
    failures: list = []
    win.comparer.failed.connect(failures.append)
    assert win.comparer.compare()
    assert qt_wait(lambda: bool(failures), 10_000)
    assert "does not run 'compare'" in dialog.status.text() and dialog.compare_button.isEnabled()
    modules = [a for c, a in win.fake_client.calls if c == "compare"][-1]["modules"]
    assert [m["label"] for m in modules] == ["Current document", "other.json"]
    assert all(m["run"]["model"] == "builtin:mlp" and m["run"]["target"] == {"kind": "llvm", "num-cores": 2} for m in modules)
    assert [s["pass"] for s in modules[1]["run"]["steps"]] == ["relax.FuseOps"]
    # "Use this one" on the file's row (the answer is hand-made here: the fake cannot compare)
    dialog.view.set_result(_result(["Current document", "other.json"]))
    assert not win.comparer.use_row(0)  # the current document: nothing to load
    win.ctrl.undo_stack.setClean()
    win.comparer._maybe_save = lambda: False  # the user cancels the unsaved-changes question
    assert not win.comparer.use_row(1) and win.ctrl.doc.path != str(other)
    win.comparer._maybe_save = win.files.maybe_save
    dialog.view.table().selectRow(1)
    dialog.view.use_best()
    assert win.ctrl.doc.path == str(other)
    assert win.ctrl.doc.model == "builtin:mlp" and win.ctrl.doc.target == {"kind": "llvm", "num-cores": 2}
    assert [s.pass_id for s in win.ctrl.doc.steps] == ["relax.FuseOps"]
    win.act_undo.trigger()
    win.act_undo.trigger()
    assert win.ctrl.doc.model == "builtin:transformer"  # the compared model was set as undoable edits
    dialog.close()
    win.ctrl.undo_stack.setClean()


def test_callee_index_gives_the_callers_a_scan_gives() -> None:
    from app.graph_controller import CalleeIndex, callee_changed_node_ids
    from pipeline_model.ir_graph import synthetic_graph_json

    graphs = [synthetic_graph_json(400, legalized=True, seed=s) for s in range(3)]
    index = CalleeIndex(size=2)
    for _round in range(2):
        for g in graphs:
            callees = sorted({str(n["callee"]) for n in g["nodes"] if n.get("callee")})
            assert len(callees) > 3
            for functions in (set(), set(callees[:2]), set(callees[1:4]) | {"not_called"}, set(callees)):
                got = index.callers(g, functions)
                assert got == callee_changed_node_ids(g, functions)
                assert bool(got) == bool(functions)
    assert len(index._index) == 2  # noqa: SLF001 - bounded
