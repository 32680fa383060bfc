"""Take screenshots of the real main window in its main states (for docs/screenshots/).

Run under a real X server, e.g. ``xvfb-run -s "-screen 0 1600x1000x24" .venv/bin/python -m
app.screenshot_tour docs/screenshots``. It opens the tutorial pipeline, waits for the engine, and
saves ``main.png`` (graph + diff of FuseOps), ``graph.png`` (a node selected, details shown),
``diff.png`` (LegalizeOps diff), ``failed.png`` (a failing custom step: error + last good IR).
"""

from __future__ import annotations

import os
import sys
import time

FAILING_SOURCE = '''from tvm import relax

def broken(mod):
    raise RuntimeError("this custom pass fails on purpose (screenshot of a failed step)")
'''


def main(argv: list[str]) -> int:
    """Entry point: ``argv[0]`` is the output folder."""
    out = argv[0] if argv else "docs/screenshots"
    os.makedirs(out, exist_ok=True)
    from PySide6.QtCore import QDeadlineTimer, QThread
    from PySide6.QtWidgets import QApplication

    from app.application import make_application
    from app.main_window import MainWindow

    app = make_application([])

    def wait(cond, ms: int = 120_000) -> bool:
        deadline = QDeadlineTimer(ms)
        while not cond():
            if deadline.hasExpired():
                return False
            app.processEvents()
            QThread.msleep(20)
        return True

    def settle(ms: int = 600) -> None:
        end = time.time() + ms / 1000
        while time.time() < end:
            app.processEvents()
            QThread.msleep(20)

    def shot(name: str) -> None:
        settle()
        path = os.path.join(out, name)
        win.grab().save(path)
        print("saved", path)

    win = MainWindow()
    win.trust_override = True
    win.resize(1560, 960)
    win.show()
    win.open_initial(None)
    assert wait(lambda: win.catalogue is not None), "no catalogue"
    done = lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps)  # noqa: E731
    assert wait(done), "run did not finish"
    steps = win.ctrl.doc.steps
    # FuseOps: graph with fused calls highlighted, diff below.
    win.pipeline_view.select_uids([steps[2].uid])
    wait(lambda: not win.graph_view.is_busy(), 10_000)
    settle(1500)
    win.graph_view.fit_to_view()
    shot("main.png")
    # A node selected: details panel.
    calls = [n for n in (win.graph_view.graph_json() or {}).get("nodes", []) if n.get("callee")]
    if calls:
        win.graph_view.select_node(calls[0]["id"], center=True)
    shot("graph.png")
    win.pipeline_view.select_uids([steps[0].uid])
    settle(1500)
    shot("diff.png")
    # A failing step.
    uid = win.add_pass("custom.python", 2)
    win.set_step_params(uid, {"source": FAILING_SOURCE})
    win.pipeline_view.select_uids([uid])
    assert wait(done), "second run did not finish"
    win.pipeline_view.select_uids([uid])
    settle(1500)
    shot("failed.png")
    win.ctrl.undo_stack.setClean()
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
