"""Seconds from Run to the first measured trial in the main window, on the tutorial MLP (issue 35: "the first trial
is measured within 10 s of Run on the tutorial MLP (today ~60 s in the GUI)").

Each round opens a fresh main window (its own engine, fresh settings, work and cache folders, no per-user tuning
database: ``RPS_TUNING_DB_DIR=off``, so nothing is reused), waits until the engine has sent its pass catalogue (the
window is ready to use), opens ``tuning_mlp_cpu.json`` (the tutorial's tuning pipeline on ``builtin:mlp``), clicks
Run (``session.run_pipeline``, what the Run action calls) and times until the Tuning panel's bar shows a trial done
(the engine's first progress event with ``done`` >= 1), then until the run ends. Prints each round and the median.
Runs without a screen (``QT_QPA_PLATFORM=offscreen``).

Usage: ``QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.bench_gui_first_trial [--rounds N]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from typing import Any, Callable


def _pump_until(app: Any, cond: Callable[[], bool], seconds: float) -> bool:
    from PySide6.QtCore import QThread

    deadline = time.monotonic() + seconds
    while not cond():
        if time.monotonic() > deadline:
            return False
        app.processEvents()
        QThread.msleep(5)
    return True


def one_round(app: Any, base: str) -> tuple[float, float]:
    """``(seconds to the first trial, seconds to the end of the run)`` in a fresh window under ``base``."""
    from PySide6.QtCore import QSettings

    from app.main_window import MainWindow
    from pipeline_model.fileformat import load_pipeline
    from pipeline_model.resources import bundled_pipeline

    win = MainWindow(settings=QSettings(os.path.join(base, "studio.ini"), QSettings.Format.IniFormat))
    win.resize(1280, 800)
    win.show()
    try:
        if not _pump_until(app, lambda: win.ctx.catalogue.catalogue is not None, 300):
            raise SystemExit("the engine sent no catalogue in 300 s")
        doc = load_pipeline(str(bundled_pipeline("tuning_mlp_cpu")))
        for step in doc.steps:
            if step.pass_id in ("relax.MetaScheduleTuneTIR", "relax.MetaScheduleApplyDatabase"):
                step.params = {**step.params, "work_dir": os.path.join(base, "work")}
        win.files.replace_document(doc, ask=False)
        t0 = time.monotonic()
        win.session.run_pipeline()
        if not _pump_until(app, lambda: win.tuning_panel.bar.value() >= 1, 600):
            raise SystemExit("no trial was measured in 600 s")
        first = time.monotonic() - t0
        done = lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps)  # noqa: E731
        if not _pump_until(app, lambda: done() and not win.act_stop.isEnabled(), 600):
            raise SystemExit("the run did not end in 600 s")
        return first, time.monotonic() - t0
    finally:
        win.ctrl.undo_stack.setClean()
        win.close()
        app.processEvents()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["RPS_TUNING_DB_DIR"] = "off"
    from app.application import make_application

    app = make_application([])
    firsts, ends = [], []
    for r in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="rps_first_trial_") as base:
            for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"):
                os.environ[name] = os.path.join(base, name.lower())
            load_before = os.getloadavg()[0]
            first, end = one_round(app, base)
            firsts.append(first)
            ends.append(end)
            print(f"round {r + 1}: first trial {first:.2f} s after Run, run ended at {end:.2f} s "
                  f"(load {load_before:.2f} -> {os.getloadavg()[0]:.2f})", flush=True)
    print(f"median: first trial {statistics.median(firsts):.2f} s, run end {statistics.median(ends):.2f} s "
          f"over {args.rounds} rounds (min {min(firsts):.2f}, max {max(firsts):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
