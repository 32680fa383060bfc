"""Screenshot of seeded tuning in the main window (issue 19; a developer tool, real engine):
``xvfb-run -a -s "-screen 0 1920x1080x24" .venv/bin/python -m scripts.screenshots.tuning docs/screenshots --size=1024x700
[--lang=zh_CN] [--budget=60]``.

``tuning_seeded_<W>_<lang>.png``: ``cpu_tuned_app.json`` (the default CPU pipeline with a seeded
``MetaScheduleTuneTIR``) run on ``builtin:mlp`` with a short budget, in fresh work and user-database folders: the
Tuning dock lists the tuned PrimFuncs, and its footer says how many kept the app's schedule and how many a tuned
one.
"""

from __future__ import annotations

import os
import sys

from scripts.screenshots.tour import localized_app, pump_for, pump_until, shot_session


def main(argv: list[str]) -> int:
    """Write the shot at ``--size`` (default 1024x700) in ``--lang`` (default English) into ``argv[0]``."""
    opts = shot_session(argv, "rps_tuning_shots_", extra=("budget",))
    out, width, height, lang, tag, base = (opts[k] for k in ("out", "width", "height", "lang", "tag", "base"))
    budget = float(opts["budget"] or 60)
    os.environ["RPS_TUNING_DB_DIR"] = base + "/user-db"
    from PySide6.QtCore import QSettings

    from app.main_window import MainWindow
    from pipeline_model.fileformat import load_pipeline
    from pipeline_model.resources import bundled_pipeline

    app = localized_app(lang)
    win = MainWindow(settings=QSettings(os.path.join(base, "studio.ini"), QSettings.Format.IniFormat))
    win.resize(width, height)
    win.show()
    assert pump_until(app, lambda: win.ctx.catalogue.catalogue is not None, 300_000), "no catalogue"
    doc = load_pipeline(str(bundled_pipeline("cpu_tuned_app")))
    doc.model = "builtin:mlp"
    for step in doc.steps:  # a fresh work folder for the tuning step and the step applying its database
        if step.pass_id == "relax.MetaScheduleTuneTIR":
            step.params = {**step.params, "time_budget_s": budget}
        if step.pass_id in ("relax.MetaScheduleTuneTIR", "relax.MetaScheduleApplyDatabase"):
            step.params = {**step.params, "work_dir": os.path.join(base, "work")}
    win.files.replace_document(doc, ask=False)
    done = lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps)  # noqa: E731
    win.session.run_pipeline()
    assert pump_until(app, lambda: done() and not win.act_stop.isEnabled(), int(budget * 1000) + 600_000), \
        "the run did not finish"
    win.tuning_dock.show()
    win.tuning_dock.raise_()
    pump_for(app, 1500)
    path = os.path.join(out, f"tuning_seeded_{tag}.png")
    win.grab().save(path)
    print("saved", path, "footer:", win.tuning_panel.footer.text())
    win.ctrl.undo_stack.setClean()
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
