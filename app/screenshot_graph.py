"""Screenshots of the graph view on the 32-layer decoder in the real main window (docs/screenshots/).

Run under a real X server: ``xvfb-run -s "-screen 0 1600x1000x24" .venv/bin/python -m app.screenshot_graph
docs/screenshots``. Runs LegalizeOps, AnnotateTIROpPattern, FuseOps, FuseTIR, DeadCodeElimination on
``builtin:decoder`` and saves ``graph_collapsed.png`` (the model input, every layer one group),
``graph_expanded.png`` (layer 0 and its attention expanded), ``graph_find.png`` (Ctrl+F "softmax": the
match centred and selected, "1 of N") and ``graph_fused.png`` (a fused function of the FuseOps step
opened from the function picker).
"""

from __future__ import annotations

import os
import sys
import tempfile

STEPS = ("relax.LegalizeOps", "relax.AnnotateTIROpPattern", "relax.FuseOps", "relax.FuseTIR",
         "relax.DeadCodeElimination")


def main(argv: list[str]) -> int:
    """Entry point: ``argv[0]`` is the output folder."""
    out = argv[0] if argv else "docs/screenshots"
    os.makedirs(out, exist_ok=True)
    os.environ.setdefault("RPS_CONFIG_DIR", tempfile.mkdtemp(prefix="rps_shots_"))
    from app.application import make_application
    from app.screenshot_tour import pump_for, pump_until
    from app.main_window import MainWindow
    from pipeline_model.document import PipelineDocument, Step
    from pipeline_model.fileformat import save_pipeline

    app = make_application([])

    def wait(cond, ms: int = 300_000) -> bool:  # noqa: ANN001
        return pump_until(app, cond, ms)

    def settle(ms: int = 800) -> None:
        pump_for(app, ms)

    from PySide6.QtCore import QSettings

    # settings of its own (see screenshot_tour): a saved window state must not change the shots
    settings_dir = tempfile.mkdtemp(prefix="rps_shots_")
    win = MainWindow(settings=QSettings(os.path.join(settings_dir, "studio.ini"), QSettings.Format.IniFormat))
    gv = win.graph_view

    def shot(name: str) -> None:
        wait(lambda: not gv.is_busy())
        settle()
        path = os.path.join(out, name)
        win.grab().save(path)
        print("saved", path)

    win.resize(1560, 960)
    win.show()
    assert wait(lambda: win.ctx.catalogue.catalogue is not None), "no catalogue"
    path = os.path.join(os.environ["RPS_CONFIG_DIR"], "decoder.rps.json")
    save_pipeline(PipelineDocument(model="builtin:decoder", name="Decoder (32 layers)", target={"kind": "llvm"},
                                   steps=[Step(s) for s in STEPS]), path)
    win.files.open_pipeline(path, remember=False)
    done = lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps)  # noqa: E731
    win.session.run_pipeline()
    assert wait(done), "run did not finish"
    input_key = win.inspector.input_key

    def showing(key: str) -> bool:
        return (not gv.is_busy() and gv.graph_json() is not None and gv._key is not None  # noqa: SLF001
                and gv._key[0] == key)  # noqa: SLF001

    win.pipeline_view.list.selectionModel().clear()  # no current step: the model input
    win.pipeline_view.select_uids([])
    assert wait(lambda: showing(input_key)), f"no input graph: {win.graph_caption.text()}"
    gv.collapse_all()
    wait(lambda: not gv.is_busy())
    gv.fit_to_view()
    shot("graph_collapsed.png")

    gv.set_expanded({"m:layers", "m:layers.0", "m:layers.0.self_attn"} & set(gv.groups()) or set())
    wait(lambda: not gv.is_busy())
    gv.resetTransform()
    gv.scale(0.8, 0.8)
    first = next((n for n in gv.node_ids() if str(gv.node_info(n).get("module") or "").startswith("layers.0.self_attn")), None)
    if first:
        rect = gv.node_rect(first)
        gv.centerOn(rect.center().x() + 120, rect.center().y() + 40)
    shot("graph_expanded.png")

    gv.collapse_all()
    wait(lambda: not gv.is_busy())
    win.act_find.trigger()
    bar = win.graph_area.find_bar
    bar.edit.setText("softmax")
    bar.edit.returnPressed.emit()
    wait(lambda: not gv.is_busy())
    settle(400)
    win.act_find_next.trigger()
    shot("graph_find.png")
    bar.close_bar()

    fuse = win.ctrl.doc.steps[2]
    win.pipeline_view.select_uids([fuse.uid])
    wait(lambda: showing(win.step_model.result(fuse.uid).snapshot_key) and win.function_picker.count() > 1)
    names = [win.function_picker.itemText(i) for i in range(win.function_picker.count())]
    fused = next((n for n in names if "softmax" in n), None) or next((n for n in names if n.startswith("fused")), None)
    if fused:
        win.graphs.show_function(fused)
        wait(lambda: win.function_picker.currentText() == fused and not gv.is_busy())
        settle(600)
        gv.select_node(next((n for n in gv.node_ids() if gv.node_info(n).get("kind") == "binding"), None))
    shot("graph_fused.png")
    win.ctrl.undo_stack.setClean()
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
