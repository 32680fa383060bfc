"""Screenshots of the graph view in the real main window (docs/screenshots/graph_*.png).

Run under a real X server, once per screen size: ``xvfb-run -s "-screen 0 1920x1080x24" .venv/bin/python -m
scripts.screenshots.graph docs/screenshots 1920x1080`` (and ``1024x700``; ``--lang=zh_CN`` for ``zh_graph_*``).
Saves, with the size in the name:

* ``graph_mlp_<size>.png``: ``builtin:mlp`` as loaded, every group expanded, fit to the view (at a scale
  where names and shapes read: the view scrolls for the rest);
* ``graph_heat_<size>.png``: the MLP after LegalizeOps (every node changed by the step, amber) with the
  profile heat overlay of a profiled build of that module (its own colour scale and legend);
* ``graph_decoder_collapsed_<size>.png``: the 32-layer ``builtin:decoder`` collapsed, fit to the view
  (``x → layers ×32 → norm → output``: the layers are one box);
* ``graph_decoder_layers_fit_<size>.png``: the layers opened and ``layers.9`` clicked open, fit to the view
  (far out: every name written at a legible screen size);
* ``graph_decoder_layer_<size>.png``: the same zoomed to 0.55 on ``layers.9`` (simplified boxes, names at
  screen size);
* ``graph_decoder_detail_<size>.png``: the layers at a readable zoom (the model summary);
* ``graph_nested_<size>.png``: an MLP pipeline of eight steps run, its seventh (``pipeline.zero``) selected:
  its nested passes listed under the steps, the step list still showing five steps and the selected one.

``--tooltip`` takes only ``graph_tooltip_<size>.png``: the MLP after LegalizeOps and FuseOps, FuseOps selected, the
hover tooltip of a fused call drawn over the window (its kind, op, callee, type in the interface's language).

``--decoder-layers=800`` takes only the decoder's first two shots, of a generated decoder of that many layers
(``graph_decoder800_collapsed_<size>.png``, ``graph_decoder800_layers_fit_<size>.png``,
``graph_decoder800_layer_<size>.png``: the 50,000-node function, shown collapsed first by the engine), then
Expand All at fit and at 1:1 on ``layers.9`` (``graph_decoder800_expanded_fit_<size>.png``,
``graph_decoder800_expanded_detail_<size>.png``).
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Any, Callable, Optional


def _session(size: str, lang: Optional[str]) -> tuple[Any, Any, Callable[..., bool], Callable[[int], None]]:
    """The application (in ``lang`` when given), a main window of ``size`` with settings of its own, and the
    wait helpers."""
    from PySide6.QtCore import QSettings

    from app.main_window import MainWindow
    from scripts.screenshots.tour import localized_app, pump_for, pump_until

    app = localized_app(lang)
    settings_dir = tempfile.mkdtemp(prefix="rps_shots_")  # a saved window state must not change the shots
    win = MainWindow(settings=QSettings(os.path.join(settings_dir, "studio.ini"), QSettings.Format.IniFormat))
    w, h = (int(v) for v in size.split("x"))
    win.resize(w, h - 40)
    win.show()

    def wait(cond: Callable[[], bool], ms: int = 300_000) -> bool:
        return pump_until(app, cond, ms)

    return app, win, wait, lambda ms: pump_for(app, ms)


def window_session(argv: list[str], default_size: str = "1920x1080",
                   config_dir: Optional[str] = None) -> tuple[dict, Any, Any, Callable[..., bool], Callable[[int], None]]:
    """The set-up the window tools (``first_hour``, ``texts``, ``diverge``, ``getting_started``) share: ``--lang=``;
    the output folder (first argument not starting with ``--``; default docs/screenshots; created) and the size
    (the second, else ``default_size``); the app's config in ``config_dir`` (a new temporary folder when ``None``)
    unless ``RPS_CONFIG_DIR`` is set; a :func:`_session` whose window is exactly that size, once the catalogue is
    there. Returns ``(opts, app, win, wait, settle)``, ``opts`` holding ``out``, ``size``, ``lang``, ``width`` and
    ``tag`` (the language's first part, ``en`` when none)."""
    lang = next((a.split("=", 1)[1] for a in argv if a.startswith("--lang=")), None)
    rest = [a for a in argv if not a.startswith("--")]
    out = rest[0] if rest else "docs/screenshots"
    size = rest[1] if len(rest) > 1 else default_size
    os.makedirs(out, exist_ok=True)
    os.environ.setdefault("RPS_CONFIG_DIR", config_dir or tempfile.mkdtemp(prefix="rps_shots_"))
    app, win, wait, settle = _session(size, lang)
    win.resize(*(int(v) for v in size.split("x")))  # the image is the window: exactly the size named
    assert wait(lambda: win.ctx.catalogue.catalogue is not None), "no catalogue"
    opts = {"out": out, "size": size, "lang": lang, "width": int(size.split("x")[0]),
            "tag": (lang or "en").split("_")[0]}
    return opts, app, win, wait, settle


def _open(win: Any, wait: Callable[..., bool], model: str, steps: tuple[str, ...], name: str,
          min_nodes: int = 1) -> None:
    """Open a pipeline of ``model`` with ``steps``, run it and show the model input's graph."""
    from pipeline_model.document import PipelineDocument, Step
    from pipeline_model.fileformat import save_pipeline

    win.ctrl.undo_stack.setClean()
    path = os.path.join(os.environ["RPS_CONFIG_DIR"], f"{name}.rps.json")
    save_pipeline(PipelineDocument(model=model, name=name, target={"kind": "llvm"}, steps=[Step(s) for s in steps]),
                  path)
    win.files.open_pipeline(path, remember=False)
    if steps:
        win.session.run_pipeline()
        assert wait(lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps)), "run failed"
    gv = win.graph_view
    win.pipeline_view.list.selectionModel().clear()
    win.pipeline_view.select_uids([])
    assert wait(lambda: not gv.is_busy() and gv.graph_json() is not None and gv._key is not None  # noqa: SLF001
                and win.inspector.input_key is not None and gv._key[0] == win.inspector.input_key  # noqa: SLF001
                and len(gv.graph_json()["nodes"]) >= min_nodes), f"no input graph: {win.graph_caption.text()}"


def _heat(win: Any, wait: Callable[..., bool]) -> None:
    """Select the first step and build its module with profiling: the heat overlay on a changed step."""
    from widgets.run_panel import MODULE_SELECTED

    step = win.ctrl.doc.steps[0]
    win.pipeline_view.select_uids([step.uid])
    gv = win.graph_view
    assert wait(lambda: not gv.is_busy() and bool(gv.highlighted())), "no changed nodes"
    finished: list = []
    win.run_controller.finished.connect(lambda kind, value: finished.append(kind))
    win.run_controller.failed.connect(lambda kind, message: finished.append(message))
    combo = win.run_panel.module_combo
    combo.setCurrentIndex(combo.findData(MODULE_SELECTED))
    win.run_panel.profile_check.setChecked(True)
    try:
        win.run_controller.build_and_run()
        assert wait(lambda: bool(finished), 300_000) and finished == ["build_run"], finished
    finally:
        win.run_panel.profile_check.setChecked(False)
    assert wait(lambda: bool(gv.heat()) and not gv.is_busy(), 30_000), "no heat"


def _nested(win: Any, wait: Callable[..., bool]) -> None:
    """An MLP pipeline with a named pipeline step (nested passes) as its seventh of eight, run, that step selected."""
    steps = ("relax.CanonicalizeBindings", "relax.FoldConstant", "relax.EliminateCommonSubexpr", "relax.Normalize",
             "relax.DeadCodeElimination", "relax.ConvertToDataflow", "pipeline.zero", "relax.DeadCodeElimination")
    _open(win, wait, "builtin:mlp", steps, "Nested passes")
    step = win.ctrl.doc.steps[6]
    win.pipeline_view.select_uids([step.uid])
    assert wait(lambda: win.pipeline_view.nested_box.isVisible(), 30_000), "no nested passes"


def _decoder(win: Any, wait: Callable[..., bool], layers: int, shot: Callable[[str], None]) -> None:
    """A generated ``builtin:decoder`` of ``layers`` layers: collapsed at fit, then ``layers.9`` opened at fit."""
    from pipeline_model.resources import resource_path

    with open(resource_path("models", "decoder.py"), encoding="utf-8") as handle:
        source = handle.read().replace("\nLAYERS = 32\n", f"\nLAYERS = {layers}\n", 1)
    model = os.path.join(os.environ["RPS_CONFIG_DIR"], f"decoder{layers}.py")
    with open(model, "w", encoding="utf-8") as handle:
        handle.write(source)
    win.ctx.trust.override = True  # the model file is code this script wrote itself
    _open(win, wait, model, ("relax.DeadCodeElimination",), f"Decoder ({layers} layers)")
    gv = win.graph_view
    wait(lambda: not gv.is_partial() and not gv.is_busy())
    gv.fit_to_view()
    shot(f"decoder{layers}_collapsed")
    gv.toggle_group("m:layers.9")
    wait(lambda: not gv.is_busy() and "m:layers.9" in gv.expanded_groups())
    gv.fit_to_view()
    shot(f"decoder{layers}_layers_fit")
    _zoom_on(gv, "m:layers.9", 0.55)
    shot(f"decoder{layers}_layer")
    gv.expand_all()  # every layer open (issue 33: the GUI process's memory with all of them laid out)
    wait(lambda: not gv.is_busy() and len(gv.expanded_groups()) > layers)
    gv.fit_to_view()
    shot(f"decoder{layers}_expanded_fit")
    _zoom_on(gv, "m:layers.9", 1.0)
    shot(f"decoder{layers}_expanded_detail")


def _zoom_on(gv: Any, group: str, scale: float) -> None:
    """The view at ``scale``, centred on ``group``'s frame."""
    frame = gv.group_rect(group)
    gv.resetTransform()
    gv.scale(scale, scale)
    if frame is not None:
        gv.centerOn(frame.center())


def _tooltip(win: Any, wait: Callable[..., bool], path: str) -> None:
    """The hover tooltip of the first node that calls a function, over the window (tooltips are windows of their
    own)."""
    from PySide6.QtWidgets import QApplication, QToolTip

    from scripts.screenshots.tour import compose
    from scripts.screenshots.tour import pump_for

    _open(win, wait, "builtin:mlp", ("relax.LegalizeOps", "relax.FuseOps"), "MLP")
    win.pipeline_view.select_uids([win.ctrl.doc.steps[1].uid])
    gv = win.graph_view
    wait(lambda: not gv.is_busy() and bool(gv.highlighted()))
    gv.expand_all()
    wait(lambda: not gv.is_busy())
    gv.fit_to_view()
    node = next(n for n, a in gv._prepared.attrs.items() if a.get("callee"))  # noqa: SLF001
    rect = gv.node_rect(node)
    gv.select_node(node, center=True)
    pump_for(QApplication.instance(), 500)
    at = gv.mapFromScene(rect.center())
    QToolTip.showText(gv.viewport().mapToGlobal(at), gv.tooltip_html(node), gv.viewport())
    pump_for(QApplication.instance(), 800)
    tips = [w for w in QApplication.topLevelWidgets() if w.inherits("QTipLabel") and w.isVisible()]
    where = gv.viewport().mapTo(win, at)
    compose(win, [(tip, where.x() + 12, where.y() + 16) for tip in tips[:1]], path)


def main(argv: list[str]) -> int:
    """Entry point: ``argv[0]`` the output folder, ``argv[1]`` the screen size (``1920x1080``);
    ``--lang=zh_CN`` takes the shots in that language (names prefixed ``zh_``)."""
    lang = next((a.split("=", 1)[1] for a in argv if a.startswith("--lang=")), None)
    argv = [a for a in argv if not a.startswith("--lang=")]
    prefix = f"{lang.split('_')[0]}_" if lang else ""
    layers = next((int(a.split("=", 1)[1]) for a in argv if a.startswith("--decoder-layers=")), 0)
    argv = [a for a in argv if not a.startswith("--decoder-layers=")]
    flags = [a for a in argv if a.startswith("--")]
    argv = [a for a in argv if not a.startswith("--")]
    out = argv[0] if argv else "docs/screenshots"
    size = argv[1] if len(argv) > 1 else "1920x1080"
    os.makedirs(out, exist_ok=True)
    os.environ.setdefault("RPS_CONFIG_DIR", tempfile.mkdtemp(prefix="rps_shots_"))
    _app, win, wait, settle = _session(size, lang)
    gv = win.graph_view

    def shot(name: str) -> None:
        wait(lambda: not gv.is_busy())
        settle(800)
        path = os.path.join(out, f"{prefix}graph_{name}_{size}.png")
        win.grab().save(path)
        print("saved", path)

    assert wait(lambda: win.ctx.catalogue.catalogue is not None), "no catalogue"
    if "--tooltip" in flags:
        _tooltip(win, wait, os.path.join(out, f"{prefix}graph_tooltip_{size}.png"))
        win.ctrl.undo_stack.setClean()
        win.close()
        return 0
    if layers:
        _decoder(win, wait, layers, shot)
        win.ctrl.undo_stack.setClean()
        win.close()
        return 0
    _open(win, wait, "builtin:mlp", ("relax.LegalizeOps",), "MLP")
    gv.expand_all()
    wait(lambda: not gv.is_busy())
    gv.fit_to_view()
    shot("mlp")
    _heat(win, wait)
    gv.fit_to_view()
    shot("heat")

    _nested(win, wait)
    shot("nested")

    _open(win, wait, "builtin:decoder", (), "Decoder (32 layers)", min_nodes=1000)
    gv.collapse_all()
    wait(lambda: not gv.is_busy())
    gv.fit_to_view()
    shot("decoder_collapsed")
    gv.toggle_group("m:layers.9")  # what a click on layers.9 does (its parent, the layers, opens too)
    wait(lambda: not gv.is_busy() and "m:layers.9" in gv.expanded_groups())
    gv.fit_to_view()
    shot("decoder_layers_fit")
    _zoom_on(gv, "m:layers.9", 0.55)
    shot("decoder_layer")
    gv.set_expanded({"m:layers"})
    wait(lambda: not gv.is_busy() and gv.expanded_groups() == frozenset({"m:layers"}))
    gv.resetTransform()
    gv.scale(0.75, 0.75)
    box = gv.group_rect("m:layers.0")
    if box is not None:
        gv.centerOn(box.center().x(), box.top() + gv.viewport().height() / 1.5 - 60)
    shot("decoder_detail")
    win.ctrl.undo_stack.setClean()
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
