"""Issue 11, "profiles are kept per step so two steps can be compared": the Profile panel's *Compare with*
chooser and comparison table (widget with hand-made profiles; app wiring on the TVM-free fake engine, whose
``profiles`` stand for the profiles a real engine keeps). Real profiles of two real modules are compared in
``tests/test_profile.py`` (``diff_profiles`` on the engine's output)."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("pytestqt")

from pipeline_model import build_api  # noqa: E402
from pipeline_model.build_api import Profile, ProfileEntry  # noqa: E402
from pipeline_model.document import PipelineDocument, Step  # noqa: E402
from tests.conftest import PIPELINES_DIR, profiled_build_and_run, qt_wait  # noqa: E402


def _profile(key: str, entries: list[tuple[str, float]], nodes: dict[str, list[str]] | None = None) -> Profile:
    total = sum(t for _n, t in entries)
    return Profile(entries=[ProfileEntry(n, "prim_func", 1, t, t, t / total) for n, t in entries],
                   total_us=total, run_us=total * 1.1, repeat=5, warmup=1, key=key, function="main",
                   nodes=dict(nodes or {}))


# ---- the widget ----------------------------------------------------------------------------------------
def test_profile_view_compare_table(qtbot):
    from widgets.profile_view import ProfileView, format_delta_us, format_ratio

    view = ProfileView()
    qtbot.addWidget(view)
    before = _profile("k0", [("matmul", 70.0), ("add", 20.0), ("relu", 10.0)])
    after = _profile("k1", [("fused_matmul_add", 40.0), ("relu", 12.0)])
    view.set_profile(after)
    assert not view.compare_combo.isEnabled() and view.compare_key() == ""
    chosen: list[str] = []
    view.compare_chosen.connect(chosen.append)
    view.set_compare_choices([("k0", "Model input"), ("k2", "3. FuseOps")])
    assert view.compare_combo.isEnabled() and chosen == []  # filling the chooser is not a choice
    assert view.compare_choices() == [("k0", "Model input"), ("k2", "3. FuseOps")]
    assert view.choose_compare("k0") and chosen == ["k0"] and view.compare_key() == "k0"
    assert not view.choose_compare("nope")

    view.set_comparison(build_api.compare_profiles(before, after), "Model input", "5. FuseTIR")
    assert view.is_comparing() and view.comparison() is not None
    model = view.diff_model()
    assert model.rowCount() == 4 and model.columnCount() == 6
    table = [[model.index(r, c).data() for c in range(6)] for r in range(4)]
    # largest change first; renamed functions are removed / added, never matched
    assert [row[0] for row in table] == ["matmul", "fused_matmul_add", "add", "relu"]
    assert table[0][2] == "–" and table[0][3] == "\u221270 µs" and table[0][4] == "removed"
    assert table[1][1] == "–" and table[1][3] == "+40 µs" and table[1][4] == "added"
    assert table[3][4] == "1.20×" and table[3][5] == "10.0 % → 23.1 %"
    caption = view._caption.text()
    assert caption.startswith("Model input → 5. FuseTIR: calls 100 µs → 52 µs per run (0.52×, \u221248 µs)")
    assert "1 functions in both, 1 added, 2 removed" in caption
    # sorting by ratio: removed < ratios < added
    view.sort_by(4, ascending=True)
    assert [model.row_data(r).name for r in range(4)] == ["add", "matmul", "relu", "fused_matmul_add"]
    activated: list[str] = []
    view.callee_activated.connect(activated.append)
    view.activate_diff_row(3)
    assert activated == ["fused_matmul_add"]
    # clearing the chooser is a choice of "" and the app goes back to the single table
    assert view.choose_compare("") and chosen == ["k0", ""]
    view.set_comparison(None)
    assert not view.is_comparing() and view.table_model().rowCount() == 2 and "2 functions" in view._caption.text()
    # a new profile ends the comparison shown
    view.set_comparison(build_api.compare_profiles(before, after))
    view.set_profile(before)
    assert not view.is_comparing() and model.rowCount() == 0
    assert format_delta_us(0.0) == "0 µs" and format_delta_us(1500.0) == "+1.5 ms"
    assert format_ratio(None) == "–" and format_ratio(0.4234) == "0.42×" and format_ratio(12.34) == "12.3×" and format_ratio(250.0) == "250×"


# ---- the app on the fake engine ------------------------------------------------------------------------
def _all_ran(win) -> bool:
    return all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps)


def _select(win, uid: str) -> None:
    win.pipeline_view.select_uids([uid])
    assert qt_wait(lambda: win.pipeline_view.current_uid() == uid, 5_000)


def test_compare_with_another_step(fake_studio):
    win = fake_studio
    view, ctl = win.profile_view, win.profiles
    steps = [Step("relax.LegalizeOps"), Step("relax.FoldConstant", enabled=False), Step("relax.FuseOps"),
             Step("relax.FuseTIR")]
    win.ctrl.replace_document(PipelineDocument(model="builtin:mlp", steps=steps))
    assert qt_wait(lambda: _all_ran(win), 10_000)
    s1, s2, s3, s4 = (s.uid for s in win.ctrl.doc.steps)
    key = {uid: win.step_model.result(uid).snapshot_key for uid in (s1, s2, s3, s4)}
    assert key[s1] == key[s2] and len(set(key.values())) == 3  # a disabled step keeps its input's module
    input_key = win.inspector.input_key
    assert input_key
    # The engine keeps a profile of the model input (a real one would come from an earlier build or tuning).
    win.fake_client.profiles[input_key] = _profile(input_key, [("matmul", 70.0), ("add", 20.0), ("relu", 10.0)]).to_json()
    # Profiles of this session: step 1 and step 4, each shown when built.
    _select(win, s1)
    ctl.add_profile(_profile(key[s1], [("matmul", 60.0), ("add", 20.0), ("relu", 10.0)]))
    _select(win, s4)
    p4 = _profile(key[s4], [("fused_prim_0", 40.0), ("relu", 12.0)], nodes={"fused_prim_0": ["n0"], "relu": ["n3"]})
    ctl.add_profile(p4)
    assert view.profile() is p4
    # The chooser lists the input (kept by the engine, asked for) and step 1 = 2 (one module), never step 4 itself.
    assert qt_wait(lambda: len(view.compare_choices()) == 2, 10_000), view.compare_choices()
    assert ("profile_get", {}) in win.fake_client.calls
    assert view.compare_choices()[0] == (input_key, "Model input")
    label1 = view.compare_choices()[1][1]
    assert view.compare_choices()[1][0] == key[s1] and label1.startswith("1. ") and " = 2. " in label1
    assert not view.is_comparing()

    # Compare with the input: input is "before", the selected step "after".
    assert view.choose_compare(input_key)
    assert view.is_comparing() and ctl.compare_key == input_key
    cmp = view.comparison()
    assert cmp.before.key == input_key and cmp.after.key == key[s4]
    assert {r.name: r.status for r in cmp.rows} == {"matmul": "removed", "add": "removed", "fused_prim_0": "added",
                                                    "relu": "both"}
    assert view._caption.text().startswith("Model input → 4. ")
    # the graph keeps the heat of the selected step
    assert qt_wait(lambda: (win.graphs.shown_graph() or ("",))[0] == key[s4] and not win.graph_view.is_busy(), 10_000)
    assert qt_wait(lambda: win.graph_view.heat() == p4.node_shares(), 5_000)

    # A step without a profile shows none and no comparison, and keeps the choice for the next profiled step.
    _select(win, s3)
    assert view.profile() is None and not view.is_comparing() and not view.compare_combo.isEnabled()
    _select(win, s1)
    assert view.profile().key == key[s1] and view.is_comparing()
    assert (view.comparison().before.key, view.comparison().after.key) == (input_key, key[s1])
    assert view.compare_key() == input_key
    # A later step chosen: the selected (earlier) step is "before".
    assert view.choose_compare(key[s4])
    assert (view.comparison().before.key, view.comparison().after.key) == (key[s1], key[s4])
    assert view._caption.text().startswith(label1 + " → 4. ")
    # Another step's module changes (step 4 disabled, the pipeline re-runs): its old profile is no choice any more.
    assert [k for k, _ in view.compare_choices()] == [input_key, key[s4]]
    win.editor.toggle_step(s4, False)
    assert qt_wait(lambda: _all_ran(win) and win.step_model.result(s4).snapshot_key != key[s4], 10_000)
    assert qt_wait(lambda: [k for k, _ in view.compare_choices()] == [input_key], 5_000), view.compare_choices()
    assert not view.is_comparing() and ctl.compare_key == ""
    win.ctrl.undo_stack.undo()
    assert qt_wait(lambda: _all_ran(win) and win.step_model.result(s4).snapshot_key == key[s4], 10_000)
    assert qt_wait(lambda: [k for k, _ in view.compare_choices()] == [input_key, key[s4]], 5_000)
    assert view.choose_compare(key[s4]) and view.is_comparing()
    # Clearing the chooser returns to the single-profile table.
    assert view.choose_compare("")
    assert not view.is_comparing() and ctl.compare_key == "" and view.table_model().rowCount() == 3
    # Choosing the compared step itself drops the choice (nothing to compare with).
    assert view.choose_compare(key[s4])
    _select(win, s4)
    assert not view.is_comparing() and ctl.compare_key == "" and view.compare_key() == ""

    # The model changes: the comparison and its choices are gone with the profiles.
    assert view.choose_compare(input_key) and view.is_comparing()
    win.editor.set_model("builtin:transformer")
    assert qt_wait(lambda: not view.is_comparing() and view.profile() is None, 5_000)
    assert ctl.compare_key == "" and view.compare_choices() == [] and not ctl.profiles
    win.fake_client.profiles.clear()


def test_new_document_resets_the_comparison(fake_studio):
    win = fake_studio
    view, ctl = win.profile_view, win.profiles
    win.ctrl.replace_document(PipelineDocument(model="builtin:mlp", steps=[Step("relax.LegalizeOps"),
                                                                            Step("relax.FuseOps")]))
    assert qt_wait(lambda: _all_ran(win), 10_000)
    first, second = (s.uid for s in win.ctrl.doc.steps)
    k1, k2 = (win.step_model.result(u).snapshot_key for u in (first, second))
    _select(win, first)
    ctl.add_profile(_profile(k1, [("a", 10.0)]))
    _select(win, second)
    ctl.add_profile(_profile(k2, [("a", 5.0)]))
    assert view.choose_compare(k1) and view.is_comparing()
    assert view.comparison().ratio == pytest.approx(0.5)
    win.files.new_pipeline(force=True)
    assert not view.is_comparing() and view.compare_choices() == [] and ctl.compare_key == ""
    assert view.profile() is None and not ctl.profiles


# ---- end to end on the real engine ---------------------------------------------------------------------
@pytest.mark.e2e
def test_compare_real_profiles_of_two_steps(studio):
    """Step 1's module profiled by the engine alone (the GUI never saw it: it must ask the engine), the final
    module by a profiled Build & Run; the chooser offers step 1 and the comparison shows FuseOps/FuseTIR's
    renamed functions as added/removed."""
    win = studio
    view = win.profile_view
    win.ctrl.undo_stack.setClean()
    assert win.files.open_pipeline(os.path.join(PIPELINES_DIR, "fusion_walkthrough.json"), remember=False)
    assert qt_wait(lambda: _all_ran(win) and not win.act_stop.isEnabled(), 240_000)
    first, last = win.ctrl.doc.steps[0].uid, win.ctrl.doc.steps[-1].uid
    k_first, k_last = (win.step_model.result(u).snapshot_key for u in (first, last))
    cut = win.ctrl.doc.clone()
    cut.steps = cut.steps[:1]
    answers: list = []
    request = win.ctx.engine.submit_fn("profile", lambda client, _ev: build_api.profile(
        client, cut, settings=build_api.ProfileSettings(warmup=1, repeat=2)))
    request.finished.connect(answers.append)
    request.failed.connect(answers.append)
    assert qt_wait(lambda: bool(answers), 300_000)
    assert isinstance(answers[0], Profile) and answers[0].key == k_first, answers[0]
    # The GUI must learn of step 1's profile from the engine: forget it if an earlier ask (the shared window
    # may show a step whose profile an earlier test stored in the engine) already brought it.
    win.profiles.profiles.pop(k_first, None)
    win.profiles._asked.discard(k_first)  # noqa: SLF001

    _select(win, last)
    profiled_build_and_run(win)
    assert view.profile() is not None and view.profile().key == k_last
    assert qt_wait(lambda: k_first in dict(view.compare_choices()), 60_000), view.compare_choices()
    assert view.choose_compare(k_first) and view.is_comparing()
    cmp = view.comparison()
    assert cmp.before.key == k_first and cmp.after.key == k_last
    status = {r.name: r.status for r in cmp.rows}
    assert any(n.startswith("fused_") and s == build_api.ADDED for n, s in status.items()), status
    assert build_api.REMOVED in status.values()
    assert [abs(r.delta_us) for r in cmp.rows] == sorted((abs(r.delta_us) for r in cmp.rows), reverse=True)
    assert view._caption.text().startswith("1. ")
    # the graph keeps the heat of the selected (final) step
    assert qt_wait(lambda: win.graph_view.heat() == view.profile().node_shares() and bool(win.graph_view.heat()),
                   60_000)
    assert view.choose_compare("") and not view.is_comparing()
