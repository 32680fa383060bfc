"""GUI logic on the TVM-free fake engine (``tests/fake_engine.py``): request handles, stale-result
guard, runs → step states/diff/graph, undo, trust, error lines. Results are the fake's; these tests
check what the GUI does with them. End-to-end tests with TVM are in the other ``test_gui_*`` files."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QDialog  # noqa: E402

from app.engine_worker import QtEngineWorker  # noqa: E402
from app.consent_service import ConsentDialog  # noqa: E402
from pipeline_model.document import PipelineDocument, Step  # noqa: E402
from pipeline_model.engine.results import CHANGED, FAILED, UNCHANGED  # noqa: E402
from tests.conftest import qt_wait  # noqa: E402
from tests.fake_engine import FakeEngineClient  # noqa: E402
from widgets.step_model import StateRole  # noqa: E402


@pytest.fixture
def worker(qapp, tmp_path):
    client = FakeEngineClient(step_delay_s=0.05)
    w = QtEngineWorker(cache_dir=str(tmp_path), client_factory=lambda: client, close_client=False)
    w.fake = client
    w.start()
    yield w
    w.shutdown()


def _doc() -> PipelineDocument:
    return PipelineDocument(model="builtin:mlp", steps=[Step("relax.LegalizeOps"), Step("relax.FoldConstant")])


def test_each_request_answers_on_its_own_handle(worker, qtbot):
    run = worker.submit_run(_doc(), revision=1)
    with qtbot.waitSignal(run.finished, timeout=10_000) as got:
        pass
    result = got.args[0]
    assert [s.state for s in result.steps] == [CHANGED, UNCHANGED]
    key = result.steps[0].snapshot_key
    a, b = worker.submit_graph(key), worker.submit_graph("no-such-key")
    answers: list = []
    a.finished.connect(lambda v: answers.append(("a", v)))
    a.failed.connect(lambda m: answers.append(("a-failed", m)))
    b.finished.connect(lambda v: answers.append(("b", v)))
    b.failed.connect(lambda m: answers.append(("b-failed", m)))
    assert qt_wait(lambda: len(answers) == 2, 10_000)
    kinds = dict(answers)
    assert kinds["a"]["function"] == "main" and "b-failed" in kinds and "no-such-key" in kinds["b-failed"]
    assert a.done and b.done


def test_stale_run_is_dropped_and_cancel_stops(worker, qtbot):
    delivered: list = []
    old = worker.submit_run(_doc(), revision=5)
    old.finished.connect(lambda r: delivered.append(5))
    worker.set_revision(6)
    new = worker.submit_run(_doc(), revision=6)
    new.finished.connect(lambda r: delivered.append(6))
    assert qt_wait(lambda: 6 in delivered, 10_000)
    assert delivered == [6]
    long_doc = PipelineDocument(model="builtin:mlp", steps=[Step("relax.LegalizeOps") for _ in range(40)])
    run = worker.submit_run(long_doc, revision=7)
    started: list = []
    run.step_started.connect(lambda i, uid: started.append(i))
    assert qt_wait(lambda: bool(started), 10_000)
    with qtbot.waitSignal(run.finished, timeout=10_000) as got:  # listening before the cancel: the
        run.cancel()  # worker thread may finish the cancelled run before the next line would connect
    ran = [s for s in got.args[0].steps if s.state != "not_run"]  # the rest come back not_run, as from the engine
    assert got.args[0].cancelled and len(ran) < 40 and len(got.args[0].steps) == 40


def test_queued_request_cancel_fails_it_without_running(worker, qtbot):
    long_doc = PipelineDocument(model="builtin:mlp", steps=[Step("relax.LegalizeOps") for _ in range(10)])
    run = worker.submit_run(long_doc, revision=1)
    assert qt_wait(lambda: worker.busy, 10_000)
    queued = worker.submit_fn("devices", lambda client, _ev: client.request("devices", {}))
    with qtbot.waitSignal(queued.failed, timeout=5000) as got:
        queued.cancel()
    assert got.args[0] == "cancelled"
    assert ("devices", {}) not in worker.fake.calls
    with qtbot.waitSignal(run.finished, timeout=20_000):
        pass


def test_window_runs_edits_and_undoes_on_the_fake(fake_studio):
    win = fake_studio
    win.files.new_pipeline(force=True)
    for pid in ("relax.LegalizeOps", "relax.FoldConstant", "relax.FuseOps"):
        win.editor.add_pass(pid)
    assert qt_wait(lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps), 10_000)
    assert [win.step_model.index(i).data(StateRole) for i in range(3)] == [CHANGED, UNCHANGED, CHANGED]
    first = win.ctrl.doc.steps[0].uid
    win.pipeline_view.select_uids([first])
    # The run carried keys, not texts: the diff asks the engine for both texts (loading…, then the diff).
    assert qt_wait(lambda: "# after relax.LegalizeOps" in win.diff_view.right.toPlainText(), 10_000)
    assert "# after" not in win.diff_view.left.toPlainText()
    key = (win.step_model.result(first).snapshot_key, None)
    assert qt_wait(lambda: key in win.graphs.graph_cache, 10_000)
    assert "Run: 3 step(s)" in win.run_label.text()
    finished: list = []
    win.session.run_finished.connect(lambda rev, res: finished.append(rev))
    win.act_undo.trigger()
    assert [s.pass_id for s in win.ctrl.doc.steps] == ["relax.LegalizeOps", "relax.FoldConstant"]
    assert qt_wait(lambda: win.ctrl.revision in finished, 10_000)
    assert win.step_model.result(first).cached  # the unchanged prefix came from the (fake) cache


def _run_new_pipeline(win, pass_ids) -> list:
    """A new document with these steps, run on the fake engine (adding a pass runs it); the steps."""
    win.files.new_pipeline(force=True)
    for pid in pass_ids:
        win.editor.add_pass(pid)
    steps = win.ctrl.doc.steps
    assert qt_wait(lambda: all(win.step_model.result(s.uid) is not None for s in steps), 10_000)
    return list(steps)


def test_a_steps_graph_is_shown_before_its_inputs_graph_arrives(fake_studio):
    """Selecting a step asks for its graph and its input's; the step's graph is shown as soon as it is
    here, and its changes light up when the input's graph arrives (a slow one here)."""
    win = fake_studio
    fake = win.fake_client
    steps = _run_new_pipeline(win, ("relax.FoldConstant", "relax.LegalizeOps"))
    first, second = (win.step_model.result(s.uid) for s in steps)
    win.pipeline_view.select_uids([steps[0].uid])
    assert qt_wait(lambda: (first.snapshot_key, None) in win.graphs.graph_cache, 10_000)
    win.graphs.graph_cache.clear()
    fake.held_graphs = {first.snapshot_key}
    try:
        win.pipeline_view.select_uids([steps[1].uid])
        gv = win.graph_view
        assert qt_wait(lambda: not gv.is_busy() and gv._key is not None  # noqa: SLF001
                       and gv._key[0] == second.snapshot_key, 10_000)  # noqa: SLF001
        assert (first.snapshot_key, None) not in win.graphs.graph_cache  # still on its way
        assert gv.highlighted() == frozenset()
    finally:
        fake.graph_gate.set()
    assert qt_wait(lambda: (first.snapshot_key, None) in win.graphs.graph_cache and not gv.is_busy()
                   and gv.highlighted(), 10_000)


def test_step_texts_come_on_demand_for_the_diff(fake_studio):
    """Runs carry snapshot keys, not TVMScript; selecting a step shows "loading…", asks the engine
    for exactly the two texts its diff needs, then shows the diff; texts are not asked twice."""
    win = fake_studio
    fake = win.fake_client
    steps = _run_new_pipeline(win, ("relax.LegalizeOps", "relax.FuseOps"))
    assert [c[1]["scripts"] for c in fake.calls if c[0] == "run"][-1] is False
    first, second = (win.step_model.result(s.uid) for s in steps)
    assert first.script is None and second.script is None and second.snapshot_key

    def snapshot_calls() -> list:
        return [c[1] for c in list(fake.calls) if c[0] == "snapshot"]

    asked_before = len(snapshot_calls())
    win.pipeline_view.select_uids([steps[1].uid])
    assert "Loading" in win.diff_view.left_title.text() or "# after relax.FuseOps" in win.diff_view.right.toPlainText()
    assert qt_wait(lambda: "# after relax.FuseOps" in win.diff_view.right.toPlainText(), 10_000)
    assert "# after relax.FuseOps" not in win.diff_view.left.toPlainText()
    assert "# after relax.LegalizeOps" in win.diff_view.left.toPlainText()
    asked = snapshot_calls()[asked_before:]
    # only the texts this diff needs (the first may be known already: keys are content hashes)
    assert second.snapshot_key in asked and set(asked) <= {first.snapshot_key, second.snapshot_key}
    # Both texts are known now: the first step needs only its input's text; the second none again.
    win.pipeline_view.select_uids([steps[0].uid])
    assert qt_wait(lambda: "# after relax.LegalizeOps" in win.diff_view.right.toPlainText(), 10_000)
    win.pipeline_view.select_uids([steps[1].uid])
    assert "# after relax.FuseOps" in win.diff_view.right.toPlainText()  # at once, from the text cache
    assert second.snapshot_key not in snapshot_calls()[asked_before + len(asked):]


def test_param_typing_is_debounced_and_stale_results_dropped(fake_studio):
    win = fake_studio
    win.files.new_pipeline(force=True)
    uid = win.editor.add_pass("relax.FuseOps")
    assert qt_wait(lambda: win.step_model.result(uid) is not None, 10_000)
    finished: list = []
    win.session.run_finished.connect(lambda rev, res: finished.append(rev))
    win.pipeline_view.select_uids([uid])
    spin = win.param_editor.editor("fuse_opt_level").editor
    spin.setValue(1)
    rev_a = win.ctrl.revision
    assert win.session.run_timer.isActive()
    spin.setValue(0)
    rev_b = win.ctrl.revision
    assert qt_wait(lambda: rev_b in finished, 10_000)
    assert rev_a not in finished
    assert '"fuse_opt_level": 0' in win.fake_client.snapshot(win.step_model.result(uid).snapshot_key)


def test_trust_refusal_and_syntax_error_line(fake_studio, monkeypatch):
    win = fake_studio
    questions: list = []
    monkeypatch.setattr(ConsentDialog, "exec", lambda d: questions.append(d.code_text) or int(QDialog.DialogCode.Rejected))
    win.ctx.consent.override = None
    win.session.auto_run = False
    try:
        custom = Step("custom.python", params={"source": "def f(mod):\n    return mod\nx = (\n"})
        win.ctrl.replace_document(PipelineDocument(model="builtin:mlp", steps=[custom]))
        win.session.run_pipeline()
        assert questions and "def f(mod)" in questions[0]
        assert qt_wait(lambda: win.step_model.result(custom.uid) is not None, 10_000)
        assert win.step_model.result(custom.uid).state == FAILED
        assert "nothing ran" in win.step_model.result(custom.uid).error
        assert "did not allow" in win.step_model.result(custom.uid).error  # the app's words (issue 33)
        assert "--trust" not in win.step_model.result(custom.uid).error
        assert win.fake_client.calls[-1][1]["trusted_hashes"] == []
        win.ctx.consent.override = True
        win.session.run_pipeline()
        assert qt_wait(lambda: "syntax error" in (getattr(win.step_model.result(custom.uid), "error", "") or ""), 10_000)
        win.pipeline_view.select_uids([custom.uid])
        editor = win.inspector.source_editor()
        assert editor is not None and editor.error_line == 3
        assert win.diff_view.in_error_mode
    finally:
        win.ctx.consent.override = True
        win.session.auto_run = True
        win.ctrl.undo_stack.setClean()


def test_devices_and_target_validation_through_handles(fake_studio):
    win = fake_studio
    assert qt_wait(lambda: bool(win.run_controller.devices), 10_000)
    assert win.run_controller.devices[0]["name"] == "fake CPU"
    dialog = win.run_controller.edit_target()
    dialog.set_text('{"kind": "no_such_kind"}')
    dialog.buttons.accepted.emit()
    assert qt_wait(lambda: dialog.status.text().startswith("✗"), 10_000)
    assert "no_such_kind" in dialog.status.text()
    dialog.reject()
