"""Screenshots of the first hour (issue 33): the tutorial pipeline added from the palette on its defaults, run,
Build & Run with the check's tolerance left to the engine (docs/screenshots/first_hour_<W>_<lang>.png), and the
Build & Run of a mixed-precision (float16) pipeline whose check's tolerance is float16's
(``first_hour_fp16_<W>_<lang>.png``).

Run under a real X server from a checkout, once per size and language: ``xvfb-run -a -s "-screen 0
1920x1080x24" .venv/bin/python -m scripts.screenshots.first_hour docs/screenshots 1920x1080 [--lang=zh_CN]`` (and
``1024x700``).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable

#: The tutorial's steps, each added as a palette drop adds it (on the catalogue's defaults).
TUTORIAL = ("relax.FuseOpsByPattern", "relax.LegalizeOps", "relax.FuseOps", "relax.FuseTIR",
            "dlight.ApplyDefaultSchedule")


def _build(win: Any, wait: Callable[..., bool]) -> None:
    """Select the last step, Build & Run it and wait for the result in the Build & Run panel."""
    done: list = []
    win.run_controller.finished.connect(lambda kind, value: done.append(value))
    win.run_controller.failed.connect(lambda kind, message: done.append(message))
    win.pipeline_view.select_uids([win.ctrl.doc.steps[-1].uid])
    win.run_panel.random_radio.setChecked(True)
    assert win.run_controller.build_and_run()
    assert wait(lambda: bool(done), 600_000), "Build & Run did not finish"
    win.raise_run_panel()


def _shoot(win: Any, wait: Callable[..., bool], settle: Callable[[int], None], steps: list[Any], path: str) -> None:
    win.ctrl.undo_stack.setClean()
    win.files.new_pipeline(force=True)
    for step in steps:
        uid = win.editor.add_pass(step[0])
        if step[1]:
            win.editor.set_step_params(uid, step[1])
    assert wait(lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps)
                and not win.act_stop.isEnabled(), 600_000), "run failed"
    _build(win, wait)
    settle(1200)
    win.grab().save(path)
    print("saved", path)


def main(argv: list[str]) -> int:
    """Entry point: ``argv[0]`` the output folder, ``argv[1]`` the size (``1920x1080``); ``--lang=zh_CN``."""
    from scripts.screenshots.graph import window_session

    opts, _app, win, wait, settle = window_session(argv)
    out, width, tag = opts["out"], opts["width"], opts["tag"]
    _shoot(win, wait, settle, [(p, None) for p in TUTORIAL], os.path.join(out, f"first_hour_{width}_{tag}.png"))
    fp16 = [("relax.ToMixedPrecision", {"out_dtype": "float16"}), ("relax.LegalizeOps", None)]
    _shoot(win, wait, settle, fp16, os.path.join(out, f"first_hour_fp16_{width}_{tag}.png"))
    win.ctrl.undo_stack.setClean()
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
