"""Screenshot of Run ▸ Where Values Diverge… on the graph (docs/screenshots/debug_diverge_<W>_<lang>.png).

Run under a real X server from a checkout, once per size and language: ``xvfb-run -a -s "-screen 0
1920x1080x24" .venv/bin/python -m scripts.screenshots.diverge docs/screenshots 1920x1080 [--lang=zh_CN]`` (and
``1024x700``). It opens ``builtin:transformer`` with a pipeline whose second step is the test suite's wrong
custom step (the bundled example ``resources/custom_passes/wrong_add_to_subtract.py``: the first ``R.add`` becomes ``R.subtract``), runs it on
the real engine, selects that step, runs the real ``diverge`` and saves the window with the coloured graph,
the dialog's table drawn over the window's lower right (dialogs are windows of their own).

``--inside`` (``debug_diverge_inside_<W>_<lang>.png``, issue 31): the reported pipeline instead —
``builtin:mlp``, ``FuseOpsByPattern`` with the cuBLAS table (two composite calls, both bound to ``lv``), the
wrong step, the lowering — with both calls expanded in place: the values inside them coloured, the rewritten
``add`` ringed as first.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable

#: The pipeline: the wrong step second, then the usual lowering (it is the step looked at).
STEPS = ("relax.CanonicalizeBindings", "WRONG", "relax.LegalizeOps", "relax.AnnotateTIROpPattern", "relax.FuseOps",
         "relax.FuseTIR")


#: ``--inside``: the pipeline of issue 31's report.
INSIDE_STEPS = ("PATTERN", "WRONG", "relax.LegalizeOps", "relax.AnnotateTIROpPattern", "relax.FuseOps",
                "relax.FuseTIR")


def _pipeline(folder: str, inside: bool = False) -> str:
    """Write the pipeline file (the wrong step from the test suite's fixtures); returns its path."""
    from pipeline_model.document import PipelineDocument, Step
    from pipeline_model.fileformat import save_pipeline
    from pipeline_model.resources import resource_path

    wrong = resource_path("custom_passes", "wrong_add_to_subtract.py").read_text(encoding="utf-8")  # bundled example

    pattern = Step("relax.FuseOpsByPattern", {"pattern_source": "table", "table_prefix": "cublas"})
    steps = [Step("custom.python", {"source": wrong}) if s == "WRONG" else pattern if s == "PATTERN" else Step(s)
             for s in (INSIDE_STEPS if inside else STEPS)]
    doc = PipelineDocument(name="mlp, composites, a wrong step" if inside else "transformer with a wrong step",
                           model="builtin:mlp" if inside else "builtin:transformer", target={"kind": "llvm"},
                           steps=steps)
    path = os.path.join(folder, "diverge_demo.json")
    save_pipeline(doc, path)
    return path


def _diverge(win: Any, wait: Callable[..., bool]) -> dict:
    """Select the wrong step, run Where Values Diverge and wait for the coloured graph; the reply."""
    gv = win.graph_view
    uid = win.ctrl.doc.steps[STEPS.index("WRONG")].uid
    win.pipeline_view.select_uids([uid])
    key = win.step_model.result(uid).snapshot_key
    assert wait(lambda: not gv.is_busy() and win.graphs.shown_graph() is not None
                and win.graphs.shown_graph()[0] == key), "the step's graph never came"
    replies: list = []
    win.diverger.finished.connect(replies.append)
    win.diverger.failed.connect(replies.append)
    assert win.diverger.show_dialog()
    assert wait(lambda: bool(replies), 600_000), "diverge did not finish"
    assert isinstance(replies[0], dict), replies[0]
    assert wait(lambda: bool(gv.node_errors()) and not gv.is_busy(), 30_000), "the graph was not coloured"
    return replies[0]


def main(argv: list[str]) -> int:
    """Entry point: ``argv[0]`` the output folder, ``argv[1]`` the size (``1920x1080``); ``--lang=zh_CN``."""
    from scripts.screenshots.graph import window_session

    inside = "--inside" in argv
    opts, _app, win, wait, settle = window_session(argv)
    out, width, tag = opts["out"], opts["width"], opts["tag"]
    win.ctx.consent.override = True  # the wrong step is custom code of this tool's own
    win.ctrl.undo_stack.setClean()
    assert win.files.open_pipeline(_pipeline(os.environ["RPS_CONFIG_DIR"], inside), remember=False)
    assert wait(lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps)
                and not win.act_stop.isEnabled(), 600_000), "run failed"
    reply = _diverge(win, wait)
    print("first diverging node:", reply.get("first_divergent"))
    gv = win.graph_view
    if inside:  # both composite calls expanded in place: their values coloured, the first inside ringed
        gv.set_expanded(set(gv.expanded_groups()) | {"c:lv", "c:lv#2"})
        assert wait(lambda: not gv.is_busy() and "lv/add" in gv.node_ids(), 30_000), "the calls did not expand"
    first = "lv/add" if inside else gv.first_error_node()
    if first is not None and gv.node_rect(first) is not None:
        gv.resetTransform()  # zoomed out a little from where Reveal put it, so the branches around show
        scale = 0.62 if width < 1400 else 0.72
        gv.scale(scale, scale)
        gv.centerOn(gv.node_rect(first).center())
    dialog = win.diverger.dialog
    table = dialog.table
    header = table.horizontalHeader()
    header.setStretchLastSection(False)  # the columns' own widths, the last one's too
    table.resizeColumnsToContents()
    wide = table.verticalHeader().width() + header.length() + table.verticalScrollBar().sizeHint().width() + 40
    header.setStretchLastSection(True)
    dialog.resize(min(wide, width - 40), 250 if width < 1400 else 330)  # every column whole
    first_row = next((r for r in range(dialog.table.rowCount()) if dialog.table.item(r, 4).text()
                      and dialog.table.item(r, 0).text() == reply.get("first_divergent")), 0)
    if inside:
        gv.resetTransform()
        gv.scale(0.9, 0.9)
        gv.centerOn(gv.node_rect(first).center())
    dialog.table.scrollToItem(dialog.table.item(first_row, 0))
    settle(1200)
    name = "debug_diverge_inside" if inside else "debug_diverge"
    from scripts.screenshots.tour import compose

    # the dialog over the window's lower right corner
    compose(win, [(dialog, win.width() - dialog.width() - 12, win.height() - dialog.height() - 34)],
            os.path.join(out, f"{name}_{width}_{tag}.png"))
    dialog.close()
    win.ctrl.undo_stack.setClean()
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
