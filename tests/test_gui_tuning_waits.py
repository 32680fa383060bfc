"""Issue 18: a MetaSchedule tuning step dropped into the pipeline does not start tuning at once with the
default budget: automatic re-runs stop before it and the status bar says it waits for Run; Run starts it,
and after that an edit of its budget re-runs it (restarts the tuning). The Tuning panel says what the
budget means (TuneTIR's max_trials_global counts per PrimFunc)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from app.undo_commands import SetParamCommand  # noqa: E402
from tests.conftest import qt_wait  # noqa: E402

TUNE = "relax.MetaScheduleTuneTIR"


def _runs(win) -> list[dict]:
    return [c[1] for c in win.fake_client.calls if c[0] == "run"]


def _settle(win, count: int) -> None:
    assert qt_wait(lambda: len(_runs(win)) >= count and not win.act_stop.isEnabled(), 20_000)
    qt_wait(lambda: False, 100)


def test_a_dropped_tuning_step_waits_for_run(fake_studio):
    win = fake_studio
    win.ctrl.undo_stack.setClean()
    win.files.new_pipeline(force=True)
    win.session.auto_run = True
    start = len(_runs(win))
    win.editor.add_pass("relax.LegalizeOps")
    _settle(win, start + 1)
    before = len(_runs(win))
    uid = win.editor.add_pass(TUNE)
    qt_wait(lambda: False, 400)
    runs = _runs(win)[before:]
    assert all(r["until"] == 0 for r in runs), runs  # the tuning step (index 1) was not run
    assert "F5" in win.statusBar().currentMessage()
    # Run starts it...
    win.session.run_pipeline()
    _settle(win, before + len(runs) + 1)
    assert _runs(win)[-1]["until"] is None
    # ...and then a budget edit re-runs it (the tuning restarts with the new budget).
    count = len(_runs(win))
    win.ctrl.undo_stack.push(SetParamCommand(win.ctrl, uid, "max_trials_global", 8))
    _settle(win, count + 1)
    assert _runs(win)[-1]["until"] is None
    win.ctrl.undo_stack.setClean()


def test_a_tuning_step_first_in_the_pipeline_does_not_start(fake_studio):
    win = fake_studio
    win.ctrl.undo_stack.setClean()
    win.files.new_pipeline(force=True)
    qt_wait(lambda: not win.act_stop.isEnabled(), 5_000)
    before = len(_runs(win))
    win.editor.add_pass(TUNE)
    qt_wait(lambda: False, 400)
    assert len(_runs(win)) == before
    win.ctrl.undo_stack.setClean()


def test_tuning_panel_explains_the_budget(qtbot):
    from widgets.tuning_panel import TuningPanel

    panel = TuningPanel()
    qtbot.addWidget(panel)
    panel.update_progress({"pass_id": TUNE, "done": 3, "total": 32, "tasks": [{"name": f"t{i}"} for i in range(4)]})
    assert "8" in panel.budget.text() and "4" in panel.budget.text() and "per PrimFunc" in panel.budget.text()
    panel.update_progress({"pass_id": "relax.MetaScheduleTuneIRMod", "done": 3, "total": 64, "tasks": [{"name": "a"}]})
    assert "shared" in panel.budget.text()
