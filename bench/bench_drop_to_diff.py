"""From dropping a pass into the pipeline to its diff on screen: ≤ engine time for that step + 100 ms.

In-process, real engine, Qt offscreen (or $DISPLAY). The tutorial MLP pipeline
(LegalizeOps, AnnotateTIROpPattern) is run first; then passes are dropped one after the other at
the end of the pipeline with the palette's MIME data. For each drop it measures the wall time from
the drop to the moment the new step's diff is set in the DiffView and painted, and compares it with
the engine's own time for that step (``StepResult.elapsed_ms``).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUDGET_MS = 100.0
DROPS = ["relax.FuseOps", "relax.FuseTIR", "relax.FoldConstant", "relax.DeadCodeElimination", "relax.ToNonDataflow"]


def main() -> int:
    """Run the benchmark and print the figures."""
    if not os.environ.get("DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    tmp = tempfile.mkdtemp()
    os.environ["RPS_CONFIG_DIR"] = os.path.join(tmp, "cfg")
    from PySide6.QtCore import QDeadlineTimer, QModelIndex, Qt, QThread

    from app.application import make_application
    from app.main_window import MainWindow
    from pipeline_model.document import PipelineDocument, Step

    app = make_application([])

    def wait(cond, ms: int = 180_000) -> bool:
        deadline = QDeadlineTimer(ms)
        while not cond():
            if deadline.hasExpired():
                return False
            app.processEvents()
            QThread.usleep(200)
        return True

    win = MainWindow()
    win.show()
    assert wait(lambda: win.ctx.catalogue.catalogue is not None), "no catalogue"
    win.ctrl.replace_document(PipelineDocument(model="builtin:mlp", steps=[Step("relax.LegalizeOps"), Step("relax.AnnotateTIROpPattern")]))
    assert wait(lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps)), "first run"

    shown: dict[str, float] = {}
    win.inspector.step_shown.connect(lambda uid: shown.setdefault(uid, time.perf_counter()))
    rows = []
    for pass_id in DROPS:
        index = win.palette.model.index_of_pass(pass_id)
        mime = win.palette.model.mimeData([index])
        n = len(win.ctrl.doc.steps)
        t0 = time.perf_counter()
        win.pipeline_view.proxy.dropMimeData(mime, Qt.DropAction.CopyAction, n, 0, QModelIndex())
        uid = win.ctrl.doc.steps[n].uid
        ok = wait(lambda uid=uid: uid in shown and win.step_model.result(uid) is not None)
        assert ok, f"no diff for {pass_id}"
        win.diff_view.repaint()  # the diff is on screen after this paint
        t1 = time.perf_counter()
        res = win.step_model.result(uid)
        total = (t1 - t0) * 1000
        run = win.session.last_run
        rows.append((pass_id, total, res.elapsed_ms, total - res.elapsed_ms, run.total_ms if run else float("nan"), res.state))
        app.processEvents()
    print(f"{'pass':32} {'drop->diff ms':>14} {'engine step ms':>15} {'overhead ms':>12} {'run total ms':>13}  state")
    for pass_id, total, eng, over, run_ms, state in rows:
        print(f"{pass_id:32} {total:14.1f} {eng:15.1f} {over:12.1f} {run_ms:13.1f}  {state}")
    overheads = [r[3] for r in rows]
    med = statistics.median(overheads)
    print(f"overhead over the engine's step time: median {med:.1f} ms, max {max(overheads):.1f} ms; budget {BUDGET_MS:.0f} ms")
    print(f"ratio median/budget = {med / BUDGET_MS:.2f} ({'OK' if max(overheads) <= BUDGET_MS else 'OVER BUDGET (max)'})")
    win.ctrl.undo_stack.setClean()
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
