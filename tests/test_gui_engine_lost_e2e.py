"""Issue 33: the status tells the truth about the engine. After the engine process is killed while idle, the
status bar no longer says "Engine ready" of it: it says the process ended, a fresh engine starts, the steps run
again, and the diff pane shows the selected step's diff (not an internal "snapshot '…' is not in the engine's
cache" error)."""

from __future__ import annotations

import os
import signal

import pytest

pytest.importorskip("pytestqt")

from pipeline_model.document import PipelineDocument, Step  # noqa: E402
from tests.conftest import qt_wait  # noqa: E402

pytestmark = pytest.mark.e2e


def _all_ran(win) -> bool:
    return all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps) and not win.act_stop.isEnabled()


def test_killed_engine_is_reported_replaced_and_its_modules_made_again(own_window):
    win = own_window
    doc = PipelineDocument(model="builtin:mlp", steps=[Step("relax.LegalizeOps"), Step("relax.FoldConstant")])
    win.files.replace_document(doc, ask=False)
    assert qt_wait(lambda: _all_ran(win) and win.worker.state == "ready", 120_000)
    states: list[tuple[str, str]] = []
    win.worker.state_changed.connect(lambda state, message: states.append((state, message)))
    while True:  # idle: nothing asked of the engine for a second (the selected step's graph and texts came)
        states.clear()
        qt_wait(lambda: bool(states), 1000)
        if not states and not win.worker.busy and win.worker.state == "ready":
            break
    first = win.step_model.result(doc.steps[0].uid)
    pid = win.client.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)  # killed from outside while idle (the OOM killer, a user's kill)
    assert qt_wait(lambda: any(state == "crashed" for state, _m in states), 30_000), f"the status still says {states}"
    assert "ended" in next(m for state, m in states if state == "crashed")
    assert "ended" in win.engine_label.label.text() or states[-1][0] != "crashed"
    assert qt_wait(lambda: win.worker.state == "ready" and win.client.pid not in (None, pid), 120_000)
    assert qt_wait(lambda: _all_ran(win) and win.step_model.result(doc.steps[0].uid) is not first, 120_000)
    assert "ended" not in win.engine_label.label.text()  # it says ready of the new engine
    win.pipeline_view.select_uids([doc.steps[0].uid], current=doc.steps[0].uid)
    assert qt_wait(lambda: win.diff_view.module_diff is not None and win.diff_view.module_diff.changed, 60_000), \
        win.diff_view.left_title.text()
    assert "cache" not in win.diff_view.left_title.text()
