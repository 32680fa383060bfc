"""Screenshots of the interface's words (issue 33): Build & Run's result, a step TVM refuses (its error as code
under the app's sentence: ``failed_step``, and the build that stops there: ``failed_build``), the library export's result and the consent question of
a custom step, written as ``docs/screenshots/texts_<shot>_<W>_<lang>.png``.

Run under a real X server from a checkout, once per size and language: ``xvfb-run -a -s "-screen 0 1920x1080x24"
.venv/bin/python -m scripts.screenshots.texts docs/screenshots 1920x1080 --lang=zh_CN`` (and ``1024x700``).
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Any, Callable


def _engine(win: Any, wait: Callable[..., bool], start: Callable[[], bool]) -> None:
    """Start a Build & Run panel request and wait for its answer."""
    done: list = []
    win.run_controller.finished.connect(lambda kind, value: done.append(value))
    win.run_controller.failed.connect(lambda kind, message: done.append(message))
    assert start()
    assert wait(lambda: bool(done), 600_000), "no answer from the engine"
    win.raise_run_panel()


def _run(win: Any, wait: Callable[..., bool], steps: list[str]) -> Any:
    from pipeline_model.document import PipelineDocument, Step

    win.ctrl.undo_stack.setClean()
    doc = PipelineDocument(model="builtin:mlp", steps=[Step(s) for s in steps])
    win.files.replace_document(doc, ask=False)
    assert wait(lambda: all(win.step_model.result(s.uid) is not None for s in doc.steps)
                and not win.act_stop.isEnabled(), 600_000), "run failed"
    return doc


def _consent(app: Any, win: Any, settle: Callable[[int], None], path: str) -> None:
    """The consent question of a custom step, over the window (the screen is grabbed)."""
    from app.consent_service import ConsentDialog, document_items, item_code
    from pipeline_model.document import PipelineDocument, Step

    doc = PipelineDocument(model="builtin:mlp", steps=[
        Step("relax.LegalizeOps"),
        Step("custom.python", {"source": "import tvm\n\n\ndef transform(mod: tvm.IRModule) -> tvm.IRModule:\n"
                                         "    return tvm.relax.transform.FoldConstant()(mod)\n"})])
    items = document_items(doc)
    dialog = ConsentDialog(items, win.windowTitle().split(" — ")[0], [item_code(i, doc) for i in items], win)
    dialog.show()
    settle(800)
    box = win.frameGeometry()
    app.primaryScreen().grabWindow(0, box.x(), box.y(), box.width(), box.height()).save(path)
    dialog.close()
    print("saved", path)


def main(argv: list[str]) -> int:
    """Entry point: ``argv[0]`` the output folder, ``argv[1]`` the size (``1920x1080``); ``--lang=zh_CN``."""
    from scripts.screenshots.graph import window_session

    opts, app, win, wait, settle = window_session(argv)
    out, width, tag = opts["out"], opts["width"], opts["tag"]

    def shot(name: str) -> None:
        settle(1200)
        path = os.path.join(out, f"texts_{name}_{width}_{tag}.png")
        win.grab().save(path)
        print("saved", path)

    doc = _run(win, wait, ["relax.LegalizeOps", "relax.FuseOps", "relax.FuseTIR"])
    win.pipeline_view.select_uids([doc.steps[-1].uid], current=doc.steps[-1].uid)
    win.run_panel.random_radio.setChecked(True)
    _engine(win, wait, win.run_controller.build_and_run)
    shot("build")
    _engine(win, wait, lambda: win.run_controller.export_library(tempfile.mkdtemp(prefix="rps_export_")))
    shot("export")
    failing = _run(win, wait, ["relax.Gradient", "relax.LegalizeOps"])  # func_name "main": not in the MLP
    win.pipeline_view.select_uids([failing.steps[0].uid], current=failing.steps[0].uid)
    win.diff_dock.show()
    win.diff_dock.raise_()
    shot("failed_step")
    _engine(win, wait, win.run_controller.build_and_run)
    shot("failed_build")
    _consent(app, win, settle, os.path.join(out, f"texts_consent_{width}_{tag}.png"))
    win.ctrl.undo_stack.setClean()
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
