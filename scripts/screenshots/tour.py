"""Take screenshots of the real main window in its main states (for docs/screenshots/).

Run under a real X server, e.g. ``xvfb-run -s "-screen 0 1600x1000x24" .venv/bin/python -m
scripts.screenshots.tour docs/screenshots``. It opens the tutorial pipeline, waits for the engine, and
saves ``main.png`` (graph + diff of FuseOps), ``graph.png`` (a node selected, details shown),
``diff.png`` (LegalizeOps diff), ``failed.png`` (a failing custom step: the error at its line in the
step's source, the traceback, the last good IR). With ``--dark`` it uses a dark Fusion palette and
saves ``dark.png`` (the FuseOps state with a node selected) and ``dark_failed.png`` instead. With
``--lang=zh_CN`` the shots are taken in that language and prefixed (``zh_main.png`` …); with
``--small`` the window is 1024×700 and only ``main_1024x700.png`` is saved. With ``--wire`` it saves
``env.png`` (Help ▸ Environment), ``pass_context.png`` (the FuseOps diff with ``relax.FuseOps.max_depth``
set, the PassContext dialog on top), ``profile.png`` (a profiled build: the Profile panel and the heat
overlay), ``profile_compare.png`` (that profile compared with the module after the first step's) and
``compare.png`` (Run ▸ Compare Pipelines… with two pipelines compared). With ``--profile`` only the two
profile shots are taken (with ``--lang``/``--small`` naming as above). With ``--size=WxH`` the window has
that size and only the workspace shots are saved: ``ws_<W>_<lang>.png`` (FuseOps) and ``ws_<W>_<lang>_failed.png``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from typing import Any, Optional

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


def pump_until(app, cond, ms: int) -> bool:  # noqa: ANN001 - a QApplication, a predicate
    """Process events until ``cond()`` holds (True) or ``ms`` milliseconds passed (False)."""
    from PySide6.QtCore import QDeadlineTimer, QThread

    deadline = QDeadlineTimer(ms)
    while not cond():
        if deadline.hasExpired():
            return False
        app.processEvents()
        QThread.msleep(20)
    return True


def pump_for(app, ms: int) -> None:  # noqa: ANN001 - a QApplication
    """Process events for ``ms`` milliseconds (lets layouts and repaints settle)."""
    from PySide6.QtCore import QThread

    end = time.time() + ms / 1000
    while time.time() < end:
        app.processEvents()
        QThread.msleep(20)


def localized_app(lang: Optional[str], dark: bool = False) -> Any:
    """The application (``make_application``), in the dark palette with ``dark``, its texts in ``lang`` when given."""
    from app.application import make_application

    app = make_application([])
    if dark:
        from app.appearance import apply_dark

        apply_dark(app)
    if lang:
        from app.i18n import install_translator

        install_translator(app, lang)
    return app


def shot_session(argv: list[str], prefix: str, extra: tuple[str, ...] = ()) -> dict:
    """The common set-up of the single-purpose screenshot tools (``debug``, ``tuning``):
    ``--size=WxH`` (default 1024x700), ``--lang=``, the ``extra`` ``--name=value`` options, the output folder
    (first other argument, default docs/screenshots, created) and a fresh temporary base folder the app's config,
    cache and state go to. Returns ``out``, ``width``, ``height``, ``lang``, ``tag`` (``<W>_<lang>``), ``base``
    and the extra options by name (``None`` when not given)."""
    import tempfile

    names = ("size", "lang", *extra)
    given = {n: next((a.split("=", 1)[1] for a in argv if a.startswith(f"--{n}=")), None) for n in names}
    rest = [a for a in argv if not a.startswith(tuple(f"--{n}=" for n in names))]
    out = os.path.abspath(rest[0] if rest else "docs/screenshots")
    os.makedirs(out, exist_ok=True)
    width, height = (int(v) for v in (given["size"] or "1024x700").split("x"))
    base = tempfile.mkdtemp(prefix=prefix)
    os.environ.update({"RPS_CONFIG_DIR": base + "/cfg", "RPS_CACHE_DIR": base + "/cache",
                       "XDG_STATE_HOME": base + "/state"})
    return {**given, "out": out, "width": width, "height": height, "base": base,
            "tag": f"{width}_{(given['lang'] or 'en').split('_')[0]}"}


def _options(argv: list[str]) -> dict:
    """The command line: the output folder and the ``--dark``/``--lang=``/``--small``/``--wire``/``--profile``/
    ``--size=`` options, with the file names they imply (``ws``: the workspace shots' stem, ``prefix``)."""
    lang = next((a.split("=", 1)[1] for a in argv if a.startswith("--lang=")), None)
    size = next((a.split("=", 1)[1] for a in argv if a.startswith("--size=")), None)
    rest = [a for a in argv if a not in ("--dark", "--small", "--wire", "--profile")
            and not a.startswith(("--lang=", "--size="))]
    # --size=WxH: the workspace shots ws_<W>_<lang>.png (FuseOps), ws_<W>_<lang>_failed.png and ws_<W>_<lang>_compare.png
    # (Compare with Baseline in the Build & Run panel) at that size.
    return {"dark": "--dark" in argv, "lang": lang, "small": "--small" in argv, "wire": "--wire" in argv,
            "profile_only": "--profile" in argv, "size": size,
            "ws": f"ws_{size.split('x')[0]}_{(lang or 'en').split('_')[0]}" if size else None,
            "prefix": f"{lang.split('_')[0]}_" if lang else "", "out": rest[0] if rest else "docs/screenshots"}


def main(argv: list[str]) -> int:
    """Entry point: ``argv[0]`` is the output folder; ``--dark`` for the dark-palette shots."""
    opts = _options(argv)
    dark, lang, small, size, ws, prefix, out = (opts[k] for k in ("dark", "lang", "small", "size", "ws", "prefix", "out"))
    os.makedirs(out, exist_ok=True)
    from PySide6.QtCore import QSettings

    from app.main_window import MainWindow

    app = localized_app(lang, dark)

    def wait(cond, ms: int = 120_000) -> bool:  # noqa: ANN001
        return pump_until(app, cond, ms)

    def settle(ms: int = 600) -> None:
        pump_for(app, ms)

    def shot(name: str) -> None:
        settle()
        if ws:
            path = os.path.join(out, ws + ("" if name == "main.png" else "_" + name[: -len(".png")]) + ".png")
        else:
            path = os.path.join(out, name.replace(".png", "_1024x700.png") if small else prefix + name)
        win.grab().save(path)
        print("saved", path)

    # Settings of their own: a window state saved by an earlier session (another dock raised, panels
    # resized) must not change what the screenshots show.
    settings_dir = tempfile.mkdtemp(prefix="rps_tour_")
    win = MainWindow(settings=QSettings(os.path.join(settings_dir, "studio.ini"), QSettings.Format.IniFormat))
    win.ctx.trust.override = True
    win.resize(*((1024, 700) if small else tuple(int(v) for v in size.split("x")) if size else (1560, 960)))
    win.show()
    win.open_initial(None)
    assert wait(lambda: win.ctx.catalogue.catalogue is not None), "no catalogue"
    done = lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps)  # noqa: E731
    assert wait(done), "run did not finish"
    if opts["profile_only"]:
        _profile_shots(win, wait, settle, lambda name: os.path.join(
            out, name.replace(".png", "_1024x700.png") if small else prefix + name))
    elif opts["wire"]:
        _wire_shots(win, out, wait, settle, done)
    else:
        _state_shots(win, opts, wait, settle, shot, done)
    win.ctrl.undo_stack.setClean()
    win.close()
    return 0


def _state_shots(win, opts: dict, wait, settle, shot, done) -> None:  # noqa: ANN001 - window, helpers of main()
    """main.png (FuseOps), graph.png / dark.png (a node selected), diff.png (LegalizeOps), failed.png (a failing
    custom step) and, at ``--size``, compare.png (Compare with Baseline); see the module docstring."""
    dark, small, ws = opts["dark"], opts["small"], opts["ws"]
    steps = win.ctrl.doc.steps
    # FuseOps: graph with fused calls highlighted, diff below.
    win.pipeline_view.select_uids([steps[2].uid])
    wait(lambda: not win.graph_view.is_busy(), 10_000)
    settle(1500)
    win.graph_view.fit_to_view()
    if not dark:
        shot("main.png")
        if small:
            return
    # A node selected: details panel.
    calls = [n for n in (win.graph_view.graph_json() or {}).get("nodes", []) if n.get("callee")]
    if calls:
        win.graph_view.select_node(calls[0]["id"], center=True)
    if not ws:
        shot("dark.png" if dark else "graph.png")
    if not dark and not ws:
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
    if ws:
        # Compare with Baseline in the Build & Run panel (the window's own size): ws_<W>_<lang>_compare.png.
        win.ctrl.undo_stack.undo()  # the failing source, then the step: the pipeline as before
        win.ctrl.undo_stack.undo()
        assert wait(done), "third run did not finish"
        win.raise_run_panel(win.run_controller.compare)
        wait(lambda: not win.run_controller.busy, 300_000)
        settle(1500)
        shot("compare.png")


def compose(window: Any, overlays: list[tuple[Any, int, int]], path: str) -> None:
    """``window``'s image with each ``(widget, x, y)`` drawn over it at window coordinates (dialogs and menus are
    separate top-level windows), framed."""
    from PySide6.QtGui import QColor, QPainter, QPen

    image = window.grab()
    painter = QPainter(image)
    for widget, x, y in overlays:
        over = widget.grab()
        x = max(0, min(x, image.width() - over.width()))
        y = max(0, min(y, image.height() - over.height()))
        painter.drawPixmap(x, y, over)
        painter.setPen(QPen(QColor("#808080"), 1))
        painter.drawRect(x, y, over.width() - 1, over.height() - 1)
    painter.end()
    image.save(path)
    print("saved", path)


def _profile_shots(win, wait, settle, path_for) -> None:  # noqa: ANN001 - window, helpers of main()
    """profile.png (a profiled build of the final module: the Profile panel and the heat overlay) and
    profile_compare.png (the final module compared with the module after the first step, also profiled)."""
    from widgets.run_panel import MODULE_FINAL, MODULE_SELECTED

    steps = win.ctrl.doc.steps
    finished: list = []
    win.run_controller.finished.connect(lambda kind, value: finished.append(kind))
    win.run_controller.failed.connect(lambda kind, message: finished.append(message))
    combo = win.run_panel.module_combo

    def build(uid: str, module: str) -> None:
        win.pipeline_view.select_uids([uid])
        combo.setCurrentIndex(combo.findData(module))
        finished.clear()
        win.run_controller.build_and_run()
        assert wait(lambda: bool(finished), 300_000), "profiled build did not finish"
        assert finished == ["build_run"], finished

    win.run_panel.profile_check.setChecked(True)
    try:
        build(steps[0].uid, MODULE_SELECTED)
        build(steps[-1].uid, MODULE_FINAL)
    finally:
        win.run_panel.profile_check.setChecked(False)
    wait(lambda: bool(win.graph_view.heat()) and not win.graph_view.is_busy(), 30_000)
    win.graph_view.fit_to_view()
    win.profile_dock.raise_()
    settle(1500)
    win.grab().save(path_for("profile.png"))
    print("saved", path_for("profile.png"))
    first = win.step_model.result(steps[0].uid).snapshot_key
    assert win.profile_view.choose_compare(first), f"no profile of step 1 to compare with: {win.profile_view.compare_choices()}"
    settle(1500)
    win.grab().save(path_for("profile_compare.png"))
    print("saved", path_for("profile_compare.png"))
    win.profile_view.choose_compare("")


def _wire_shots(win, out: str, wait, settle, done) -> None:
    """env.png, pass_context.png, profile.png, profile_compare.png, compare.png (see the module docstring)."""
    steps = win.ctrl.doc.steps
    fuse = next(s for s in steps if s.pass_id == "relax.FuseOps")
    # Help ▸ Environment
    env = win.help.show_environment()
    wait(lambda: env.report() is not None, 60_000)
    env.resize(900, 640)
    settle(800)
    env.grab().save(os.path.join(out, "env.png"))
    print("saved", os.path.join(out, "env.png"))
    env.close()
    # PassContext: relax.FuseOps.max_depth = 2, the FuseOps diff
    dialog = win.pass_context.show_dialog()
    wait(lambda: dialog.editor.key_combo.findText("relax.FuseOps.max_depth") >= 0, 60_000)
    dialog.editor.key_combo.setEditText("relax.FuseOps.max_depth")
    dialog.editor.value_edit.setText("2")
    dialog.editor.add_config_button.click()
    settle(300)
    assert wait(lambda: done() and not win.act_stop.isEnabled()), "PassContext run did not finish"
    win.pipeline_view.select_uids([fuse.uid])
    wait(lambda: not win.graph_view.is_busy(), 10_000)
    settle(1500)
    win.graph_view.fit_to_view()
    settle(500)
    dialog.resize(470, 420)
    settle(300)
    compose(win, [(dialog, win.width() - dialog.width() - 24, 60)], os.path.join(out, "pass_context.png"))
    dialog.close()
    win.ctrl.undo_stack.undo()
    assert wait(lambda: done() and not win.act_stop.isEnabled()), "run after undo did not finish"
    _profile_shots(win, wait, settle, lambda name: os.path.join(out, name))
    # Compare Pipelines
    compare = win.comparer.show_dialog()
    from pipeline_model.build_api import BenchSettings  # noqa: F401 - the panel's settings are used

    from pipeline_model.resources import resource_path

    win.comparer.add_files([str(resource_path("pipelines", n))
                            for n in ("cpu_build.json", "cpu_build_fuse_transpose.json")])
    results: list = []
    win.comparer.finished.connect(results.append)
    win.comparer.failed.connect(results.append)
    win.comparer.compare()
    assert wait(lambda: bool(results), 400_000), "comparison did not finish"
    compare.resize(980, 720)
    settle(1000)
    compare.grab().save(os.path.join(out, "compare.png"))
    print("saved", os.path.join(out, "compare.png"))
    compare.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
