"""Screenshots of the debugging GUI (issue 21; a developer tool, real engine):
``xvfb-run -a -s "-screen 0 1920x1080x24" .venv/bin/python -m scripts.screenshots.debug docs/screenshots --size=1024x700
[--lang=zh_CN]``.

On ``builtin:transformer`` with a pipeline whose third step quietly turns the first ``R.add`` into ``R.subtract``:

* ``debug_bisect_<W>_<lang>.png``: Find Breaking Step done — the culprit marked in the pipeline list (and the
  tested steps' badges), the bisect dialog drawn over the graph;
* ``debug_reproducer_<W>_<lang>.png``: a step that raises on ``R.nn.softmax`` added; its context menu with
  Save Reproducer… / Save and Reduce…;
* ``debug_reduce_<W>_<lang>.png``: that step's reproducer saved and reduced in the Reduce dialog.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from scripts.screenshots.tour import compose, localized_app, pump_for, pump_until, shot_session
from pipeline_model.resources import resource_path

#: A Relax-level wrong rewrite: the bundled example (the first ``R.add`` of the module becomes ``R.subtract``).
WRONG_ADD = resource_path("custom_passes", "wrong_add_to_subtract.py").read_text(encoding="utf-8")

#: A step that fails on the softmax (what a user would save a reproducer of and reduce).
NO_SOFTMAX = '''from tvm import relax


def transform(mod):
    for _gv, func in mod.functions_items():
        if isinstance(func, relax.Function) and "R.nn.softmax" in func.script():
            raise ValueError("softmax is not supported by this backend")
    return mod
'''

STEPS = ["relax.FoldConstant", "relax.DecomposeOpsForInference", "custom.python", "relax.LegalizeOps",
         "relax.AnnotateTIROpPattern", "relax.FuseOps", "relax.FuseTIR", "relax.DeadCodeElimination"]


def main(argv: list[str]) -> int:
    """Write the three shots at ``--size`` (default 1024x700) in ``--lang`` (default English) into ``argv[0]``."""
    opts = shot_session(argv, "rps_debug_shots_")
    out, width, height, lang, tag, base = (opts[k] for k in ("out", "width", "height", "lang", "tag", "base"))
    from PySide6.QtCore import QSettings

    from app.main_window import MainWindow
    from pipeline_model.document import PipelineDocument, Step

    app = localized_app(lang)
    win = MainWindow(settings=QSettings(os.path.join(base, "studio.ini"), QSettings.Format.IniFormat))
    win.ctx.consent.override = True
    win.resize(width, height)
    win.show()
    wait = lambda cond, ms=300_000: pump_until(app, cond, ms)  # noqa: E731
    assert wait(lambda: win.ctx.catalogue.catalogue is not None), "no catalogue"
    steps = [Step(p, {"source": WRONG_ADD} if p == "custom.python" else {}) for p in STEPS]
    doc = PipelineDocument(name="transformer, one wrong step", model="builtin:transformer", target={"kind": "llvm"},
                           steps=steps)
    win.files.replace_document(doc, ask=False)
    done = lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps)  # noqa: E731
    win.session.run_pipeline()
    assert wait(lambda: done() and not win.act_stop.isEnabled()), "the run did not finish"
    _bisect_shot(win, app, wait, os.path.join(out, f"debug_bisect_{tag}.png"))
    failing = _reproducer_shot(win, app, wait, done, os.path.join(out, f"debug_reproducer_{tag}.png"))
    _reduce_shot(win, app, wait, failing, base, os.path.join(out, f"debug_reduce_{tag}.png"))
    win.ctrl.undo_stack.setClean()
    win.close()
    return 0


def _bisect_shot(win: Any, app: Any, wait: Any, path: str) -> None:
    reports: list = []
    win.bisector.finished.connect(reports.append)
    win.bisector.failed.connect(reports.append)
    dialog = win.bisector.show_dialog()
    assert win.bisector.find()
    assert wait(lambda: bool(reports)), "bisect did not finish"
    assert not isinstance(reports[0], str), reports[0]
    dialog.resize(min(700, win.width() - 320), 300)
    pump_for(app, 1500)
    overlays = [(dialog, 12, win.height() - dialog.height() - 30)]  # over the diff, the pipeline list left free
    tip = _culprit_tooltip(win, app)
    if tip is not None:  # the culprit's tooltip, left of its row in the pipeline list
        widget, row = tip
        overlays.append((widget, row.x() - widget.width() - 6, row.y()))
    compose(win, overlays, path)
    dialog.hide()


def _culprit_tooltip(win: Any, app: Any) -> Any:
    """``(tooltip widget, row rect in window coordinates)`` of the culprit step's tooltip, shown; ``None``."""
    from PySide6.QtCore import QRect, Qt
    from PySide6.QtWidgets import QApplication, QToolTip

    uid = win.bisector.culprit_uid()
    if not uid:
        return None
    view = win.pipeline_view.list
    index = win.pipeline_view.proxy.mapFromSource(win.step_model.index(win.ctrl.doc.index_of(uid)))
    rect = view.visualRect(index)
    QToolTip.showText(view.viewport().mapToGlobal(rect.center()), index.data(Qt.ItemDataRole.ToolTipRole), view)
    pump_for(app, 800)
    tips = [w for w in QApplication.topLevelWidgets() if w.inherits("QTipLabel") and w.isVisible()]
    top_left = view.viewport().mapTo(win, rect.topLeft())
    return (tips[0], QRect(top_left, rect.size())) if tips else None


def _reproducer_shot(win: Any, app: Any, wait: Any, done: Any, path: str) -> str:
    uid = win.editor.add_pass("custom.python", 3)
    assert uid is not None
    win.editor.set_step_params(uid, {"source": NO_SOFTMAX})
    win.session.run_pipeline()
    assert wait(lambda: done() and not win.act_stop.isEnabled()), "the second run did not finish"
    win.pipeline_view.select_uids([uid])
    pump_for(app, 1500)
    view = win.pipeline_view.list
    row = win.pipeline_view.proxy.mapFromSource(win.step_model.index(win.ctrl.doc.index_of(uid)))
    rect = view.visualRect(row)
    menu = win.pipeline_view.context_menu(uid)
    at = view.viewport().mapTo(win, rect.center())
    menu.popup(view.viewport().mapToGlobal(rect.center()))
    pump_for(app, 600)
    menu.setActiveAction(next(a for a in menu.actions() if a.objectName() == "saveReproducerAction"))
    pump_for(app, 400)
    compose(win, [(menu, at.x() - menu.sizeHint().width() + 40, at.y())], path)
    menu.hide()
    return uid


def _reduce_shot(win: Any, app: Any, wait: Any, uid: str, base: str, path: str) -> None:
    folder = os.path.join(base, "softmax-repro")
    saved: list = []
    win.reproducers.saved.connect(saved.append)
    win.reproducers.failed.connect(saved.append)
    assert win.reproducers.save(folder, uid)
    assert wait(lambda: bool(saved)), "no reproducer"
    assert saved[0] == folder, saved
    dialog = win.reducer.show_dialog(folder)
    finished: list = []
    win.reducer.finished.connect(finished.append)
    win.reducer.failed.connect(finished.append)
    assert win.reducer.start()
    assert wait(lambda: bool(finished)), "reduce did not finish"
    assert isinstance(finished[0], dict), finished[0]
    dialog.resize(min(760, win.width() - 80), min(470, win.height() - 120))
    pump_for(app, 1500)
    compose(win, [(dialog, 24, 70)], path)
    dialog.hide()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
