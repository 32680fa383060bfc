"""Screenshots of docs/GETTING_STARTED.md: the seed tutorial's flow in the real main window on the real engine.

Run under a real X server from a checkout: ``Xvfb :56 -screen 0 1920x1080x24 & DISPLAY=:56 .venv/bin/python -m
scripts.screenshots.getting_started docs/screenshots 1280x800 [--lang=zh_CN]``. On a fresh settings folder:

* ``getting_started_1_model_<W>_<lang>.png``: File ▸ New Pipeline, ``builtin:mlp`` at fit, the Passes palette
  searched for "fuse" (the passes are dragged from there);
* ``getting_started_2_steps_<W>_<lang>.png``: FuseOpsByPattern, LegalizeOps, FuseOps, FuseTIR and DLight added on
  their defaults (as a drop from the palette adds them), run, FuseOpsByPattern selected: the nodes it changed on
  the graph, its TVMScript diff below;
* ``getting_started_3_build_<W>_<lang>.png``: the DLight step selected, Build & Run done with the numerical check;
* ``getting_started_4_export_<W>_<lang>.png``: File ▸ Export Python Script… — the save dialog (drawn as Qt's own
  dialog, the one the app opens) over the window.

The pipeline is then saved and exported (to a temporary folder), and the exported script is run with ``--build``;
its output is printed (what the guide quotes).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from typing import Any, Callable

from scripts.screenshots.first_hour import TUTORIAL, _build
from scripts.screenshots.tour import compose


def _all_ran(win: Any) -> bool:
    return all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps) and not win.act_stop.isEnabled()


def _export(win: Any, settle: Callable[[int], None], script: str, path: str) -> None:
    """File ▸ Export Python Script… to ``script``: the dialog the app asks with is shown as Qt's own file dialog
    (a native one could not be grabbed), filled in, grabbed over the window, and answered."""
    from PySide6.QtWidgets import QFileDialog

    def ask(parent: Any, title: str, start: str, filters: str, *args: Any, **kwargs: Any) -> tuple[str, str]:
        dialog = QFileDialog(parent, title, os.path.dirname(script), filters)
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.selectFile(os.path.basename(start))
        dialog.resize(820, 480)
        dialog.show()
        settle(800)
        # the dialog over the window's centre
        compose(win, [(dialog, (win.width() - dialog.width()) // 2, (win.height() - dialog.height()) // 3)], path)
        kind = dialog.selectedNameFilter()
        dialog.close()
        return script, kind

    saved = QFileDialog.getSaveFileName
    QFileDialog.getSaveFileName = staticmethod(ask)  # type: ignore[method-assign]
    try:
        win.files.export_script_dialog()
    finally:
        QFileDialog.getSaveFileName = saved  # type: ignore[method-assign]
    assert os.path.exists(script), "no script exported"


def main(argv: list[str]) -> int:
    """Entry point: ``argv[0]`` the output folder, ``argv[1]`` the size (``1280x800``); ``--lang=zh_CN``."""
    from scripts.screenshots.graph import window_session

    work = os.path.join(tempfile.mkdtemp(prefix="rps_getting_started_"), "my-project")
    os.makedirs(work)
    opts, _app, win, wait, settle = window_session(argv, "1280x800", config_dir=os.path.join(work, "cfg"))
    out, width, tag = opts["out"], opts["width"], opts["tag"]
    name = lambda n: os.path.join(out, f"getting_started_{n}_{width}_{tag}.png")  # noqa: E731

    def shot(n: str) -> None:
        settle(1200)
        win.grab().save(name(n))
        print("saved", name(n))

    win.ctrl.undo_stack.setClean()
    win.files.new_pipeline(force=True)
    assert win.ctrl.doc.model == "builtin:mlp", win.ctrl.doc.model
    assert wait(lambda: not win.graph_view.is_busy() and win.graph_view.graph_json() is not None), "no graph"
    win.palette_dock.raise_()
    win.palette.search.setText("fuse")
    win.graph_view.fit_to_view()
    shot("1_model")

    for pass_id in TUTORIAL:
        win.editor.add_pass(pass_id)
    assert wait(lambda: _all_ran(win), 600_000), "run did not finish"
    win.palette.search.clear()
    win.pipeline_dock.raise_()
    win.pipeline_view.select_uids([win.ctrl.doc.steps[0].uid])  # FuseOpsByPattern: what it grouped
    wait(lambda: not win.graph_view.is_busy(), 30_000)
    settle(1000)
    win.graph_view.fit_to_view()
    win.diff_dock.raise_()
    shot("2_steps")

    _build(win, wait)  # selects the last step (DLight) and builds its module
    shot("3_build")

    saved = os.path.join(work, "tutorial.json")
    assert win.files._save_to(saved), "not saved"  # noqa: SLF001 - File ▸ Save As… without its dialog
    script = os.path.join(work, "tutorial.py")
    _export(win, settle, script, name("4_export"))
    win.ctrl.undo_stack.setClean()
    win.close()
    done = subprocess.run([sys.executable, script, "--build"], cwd=work, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": ""})
    print(f"$ python {os.path.basename(script)} --build   (exit {done.returncode}, {len(open(script).readlines())} lines)")
    print(done.stdout[-3000:], done.stderr[-2000:])
    return done.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
