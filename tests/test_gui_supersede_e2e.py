"""End to end on the real engine (issue 18): an edit made while a long step runs supersedes the run.

A consented custom step sleeps the first time it runs; while it sleeps another step is edited. The engine
has to be killed to end the sleeping step, yet that is no crash: no crash banner, no "Engine crashed"
status, the results of the steps before the edit stay, and the new run completes (the graph of the
selected step is never reported as unavailable)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from pipeline_model.document import PipelineDocument, Step  # noqa: E402
from pipeline_model.engine.results import CHANGED  # noqa: E402
from tests.conftest import qt_wait  # noqa: E402

pytestmark = pytest.mark.e2e

SLEEPS_ONCE = """
import os
import time

import tvm

def transform(mod: tvm.IRModule) -> tvm.IRModule:
    if not os.path.exists({marker!r}):
        open({marker!r}, "w").write("started")
        time.sleep(120)
    return mod
"""




def test_an_edit_during_a_long_step_is_no_crash(own_window, tmp_path):
    from app.undo_commands import RemoveStepsCommand

    win = own_window
    marker = tmp_path / "started.txt"
    doc = PipelineDocument(model="builtin:mlp", steps=[
        Step("relax.LegalizeOps"), Step("custom.python", {"source": SLEEPS_ONCE.format(marker=str(marker))}),
        Step("relax.FoldConstant"), Step("relax.DeadCodeElimination")])
    crashes: list[str] = []
    win.worker.engine_crashed.connect(crashes.append)
    statuses: list[str] = []
    win.statusBar().messageChanged.connect(statuses.append)
    captions: list[str] = []
    win.files.replace_document(doc, ask=False)
    assert qt_wait(marker.exists, 120_000), "the sleeping step never started"
    first = doc.steps[0].uid
    assert qt_wait(lambda: (r := win.step_model.result(first)) is not None and r.state == CHANGED, 60_000)
    win.pipeline_view.select_uids([first], current=first)  # its graph is on screen during the edit
    pid = win.client.pid
    results: list = []
    win.session.run_finished.connect(lambda _rev, result: results.append(result))
    win.ctrl.undo_stack.push(RemoveStepsCommand(win.ctrl, [win.ctrl.doc.steps[3].uid]))  # edit another step

    def poll() -> bool:
        captions.append(win.graph_area.graph_caption.text())
        return bool(results)

    assert qt_wait(poll, 180_000), "the new run never finished"
    result = results[-1]
    assert result.ok, result.error
    assert not crashes, crashes
    assert win.client.pid != pid, "the sleeping step was not ended"
    assert not any("crash" in s.lower() for s in statuses), statuses
    assert not win.banner.isVisible() or "crash" not in win.banner.label.text().lower()
    assert "died" not in win.banner.label.text()
    assert win.step_model.result(first) is not None and win.step_model.result(first).state == CHANGED
    assert len(result.steps) == 3 and all(s.state in (CHANGED, "unchanged") for s in result.steps)
    assert not any("Graph unavailable" in c for c in captions), [c for c in captions if "unavailable" in c]
