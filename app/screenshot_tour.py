"""Take screenshots of the real main window in its main states (for docs/screenshots/).

Run under a real X server, e.g. ``xvfb-run -s "-screen 0 1600x1000x24" .venv/bin/python -m
app.screenshot_tour docs/screenshots``. It opens the tutorial pipeline, waits for the engine, and
saves ``main.png`` (graph + diff of FuseOps), ``graph.png`` (a node selected, details shown),
``diff.png`` (LegalizeOps diff), ``failed.png`` (a failing custom step: the error at its line in the
step's source, the traceback, the last good IR). With ``--dark`` it uses a dark Fusion palette and
saves ``dark.png`` (the FuseOps state with a node selected) and ``dark_failed.png`` instead. With
``--lang=zh_CN`` the shots are taken in that language and prefixed (``zh_main.png`` …); with
``--small`` the window is 1024×700 and only ``main_1024x700.png`` is saved.
"""

from __future__ import annotations

import os
import sys
import time

from pipeline_model.passkinds.custom_python import PASS_ID as CUSTOM_PASS_ID

FAILING_SOURCE = '''from tvm import relax


def count_calls(mod):
    """Counts the call_tir bindings of every Relax function (and has a bug)."""
    total = 0
    for gvar, func in mod.functions.items():
        if isinstance(func, relax.Function):
            total += len(func.body.blocks[0].bindings)
    return total / (total - total)  # the bug: ZeroDivisionError


def broken(mod):
    print("call_tir bindings:", count_calls(mod))
    return mod
'''


def main(argv: list[str]) -> int:
    """Entry point: ``argv[0]`` is the output folder; ``--dark`` for the dark-palette shots."""
    dark = "--dark" in argv
    lang = next((a.split("=", 1)[1] for a in argv if a.startswith("--lang=")), None)
    small = "--small" in argv
    argv = [a for a in argv if a not in ("--dark", "--small") and not a.startswith("--lang=")]
    prefix = f"{lang.split('_')[0]}_" if lang else ""
    out = argv[0] if argv else "docs/screenshots"
    os.makedirs(out, exist_ok=True)
    from PySide6.QtCore import QDeadlineTimer, QThread

    from app.application import apply_dark, make_application
    from app.main_window import MainWindow

    app = make_application([])
    if dark:
        apply_dark(app)
    if lang:
        from app.i18n import install_translator

        install_translator(app, lang)

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
        path = os.path.join(out, name.replace(".png", "_1024x700.png") if small else prefix + name)
        win.grab().save(path)
        print("saved", path)

    win = MainWindow()
    win.ctx.trust.override = True
    win.resize(*((1024, 700) if small else (1560, 960)))
    win.show()
    win.open_initial(None)
    assert wait(lambda: win.ctx.catalogue.catalogue is not None), "no catalogue"
    done = lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps)  # noqa: E731
    assert wait(done), "run did not finish"
    steps = win.ctrl.doc.steps
    # FuseOps: graph with fused calls highlighted, diff below.
    win.pipeline_view.select_uids([steps[2].uid])
    wait(lambda: not win.graph_view.is_busy(), 10_000)
    settle(1500)
    win.graph_view.fit_to_view()
    if not dark:
        shot("main.png")
        if small:
            win.ctrl.undo_stack.setClean()
            win.close()
            return 0
    # A node selected: details panel.
    calls = [n for n in (win.graph_view.graph_json() or {}).get("nodes", []) if n.get("callee")]
    if calls:
        win.graph_view.select_node(calls[0]["id"], center=True)
    shot("dark.png" if dark else "graph.png")
    if not dark:
        win.pipeline_view.select_uids([steps[0].uid])
        settle(1500)
        shot("diff.png")
    # A failing step.
    uid = win.editor.add_pass(CUSTOM_PASS_ID, 2)
    win.editor.set_step_params(uid, {"source": FAILING_SOURCE})
    win.pipeline_view.select_uids([uid])
    assert wait(done), "second run did not finish"
    win.pipeline_view.select_uids([uid])
    win.diff_view.set_details_shown(True)
    settle(1500)
    shot("dark_failed.png" if dark else "failed.png")
    win.ctrl.undo_stack.setClean()
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
