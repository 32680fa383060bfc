"""Screenshot of the pass palette searched for "GELU": ``app.ExpandSigmoid``'s title and description (issue 34: the
step now writes GELU through erf/tanh), written as ``docs/screenshots/palette_gelu_<W>_<lang>.png``; with
``--search=TEXT --pass=ID`` another step's (``--search=channels --pass=app.ChannelsLast``: issue 35's new step,
``palette_channels_<W>_<lang>.png``, the file named after the search).

Run under a real X server from a checkout, once per size and language: ``xvfb-run -a -s "-screen 0 1920x1080x24"
.venv/bin/python -m scripts.screenshots.palette docs/screenshots 1920x1080 --lang=zh_CN`` (and ``1024x700``).
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str]) -> int:
    """Entry point: ``argv[0]`` the output folder, ``argv[1]`` the size (``1920x1080``); ``--lang=zh_CN``."""
    from scripts.screenshots.graph import window_session

    opts, _app, win, wait, settle = window_session(argv)
    out, width, tag = opts["out"], opts["width"], opts["tag"]
    assert wait(lambda: bool(win.palette.visible_pass_ids()), 120_000), "no pass catalogue"
    win.palette_dock.show()
    win.palette_dock.raise_()
    search = next((a.split("=", 1)[1] for a in argv if a.startswith("--search=")), "GELU")
    pass_id = next((a.split("=", 1)[1] for a in argv if a.startswith("--pass=")), "app.ExpandSigmoid")
    win.palette.search.setText(search)
    settle(300)
    assert pass_id in win.palette.visible_pass_ids(), win.palette.visible_pass_ids()
    win.palette.show_pass_doc(pass_id)
    settle(600)
    win.palette_dock.raise_()  # (the compact layout tabs it with the pipeline: raised again once laid out)
    settle(600)
    path = os.path.join(out, f"palette_{search.lower()}_{width}_{tag}.png")
    win.grab().save(path)
    print("saved", path)
    win.ctrl.undo_stack.setClean()
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
