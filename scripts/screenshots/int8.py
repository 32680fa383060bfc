"""Screenshot of an int8 model's Build & Run (issue 34): the default CPU pipeline on a small QDQ model
(``tests.int8_models.qdq_conv_model``: the form ONNX Runtime's ``quantize_static`` writes), its check judged at one
quantization step against the model as loaded with each op in float64 (docs/screenshots/int8_check_<W>_<lang>.png).

Run under a real X server from a checkout, once per size and language: ``xvfb-run -a -s "-screen 0
1920x1080x24" .venv/bin/python -m scripts.screenshots.int8 docs/screenshots 1920x1080 [--lang=zh_CN]`` (and
``1024x700``).
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str]) -> int:
    """Entry point: ``argv[0]`` the output folder, ``argv[1]`` the size (``1920x1080``); ``--lang=zh_CN``."""
    from pipeline_model.fileformat import load_pipeline, save_pipeline
    from pipeline_model.resources import bundled_pipeline
    from scripts.screenshots.first_hour import _build
    from scripts.screenshots.graph import window_session
    from tests.int8_models import qdq_conv_model

    opts, _app, win, wait, settle = window_session(argv)
    folder = os.environ["RPS_CONFIG_DIR"]
    doc = load_pipeline(str(bundled_pipeline("cpu_build")))
    doc.model, doc.name = qdq_conv_model(folder), "int8 (QDQ) on the CPU build"
    path = os.path.join(folder, "int8.rps.json")
    save_pipeline(doc, path)
    win.ctrl.undo_stack.setClean()
    win.files.open_pipeline(path, remember=False)
    win.session.run_pipeline()
    assert wait(lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps)
                and not win.act_stop.isEnabled(), 600_000), "run failed"
    _build(win, wait)
    settle(1200)
    out = os.path.join(opts["out"], f"int8_check_{opts['width']}_{opts['tag']}.png")
    win.grab().save(out)
    print("saved", out)
    win.ctrl.undo_stack.setClean()
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
