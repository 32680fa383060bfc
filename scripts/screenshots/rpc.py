"""Screenshots of devices over RPC (issue 36; a developer tool, real engine, a loopback farm of its own):
``Xvfb :N -screen 0 WxHx24 & DISPLAY=:N .venv/bin/python -m scripts.screenshots.rpc docs/screenshots --size=WxH
[--lang=zh_CN]`` (the screen as large as the window: the picker's open list is grabbed from the screen).

* ``rpc_picker_<W>_<lang>.png``: the Build & Run target picker open, listing the RPC tracker's devices
  (the tracker set as in Edit ▸ Preferences) after this machine's and the presets;
* ``rpc_build_<W>_<lang>.png``: a Build & Run of the default CPU pipeline on ``builtin:mlp`` run on one of them;
* ``rpc_profile_<W>_<lang>.png``: that run's profile (Profile panel): each kernel timed by itself on the device.
"""

from __future__ import annotations

import os
import sys

from scripts.screenshots.tour import localized_app, pump_for, pump_until, shot_session


def main(argv: list[str]) -> int:
    """Write the three shots at ``--size`` (default 1024x700) in ``--lang`` (default English) into ``argv[0]``."""
    opts = shot_session(argv, "rps_rpc_shots_")
    out, width, height, lang, tag, base = (opts[k] for k in ("out", "width", "height", "lang", "tag", "base"))
    from PySide6.QtCore import QSettings, Qt

    from app.main_window import MainWindow
    from pipeline_model.fileformat import load_pipeline
    from pipeline_model.resources import bundled_pipeline
    from tests.rpc_farm import local_farm

    app = localized_app(lang)
    with local_farm(servers=2) as farm:
        settings = QSettings(os.path.join(base, "studio.ini"), QSettings.Format.IniFormat)
        settings.setValue("rpc/tracker", farm.address)
        win = MainWindow(settings=settings)
        win.ctx.consent.override = True
        win.resize(width, height)
        win.move(0, 0)
        win.show()
        assert pump_until(app, lambda: win.ctx.catalogue.catalogue is not None, 300_000), "no catalogue"
        doc = load_pipeline(str(bundled_pipeline("cpu_build")))
        win.files.replace_document(doc, ask=False)
        win.raise_run_panel()
        win.resizeDocks([win.run_dock], [int(height * 0.62)], Qt.Orientation.Vertical)
        win.run_panel.profile_check.setChecked(True)  # profiled on the device: the Profile panel comes up
        combo = win.run_panel.target_combo
        remote_row = lambda: next((i for i in range(combo.count()) if combo.remote_at(i)), None)  # noqa: E731
        win.run_controller.refresh_devices()
        assert pump_until(app, lambda: remote_row() is not None, 120_000), "no RPC device listed"
        pump_for(app, 1000)
        combo.showPopup()
        pump_for(app, 1200)
        path = os.path.join(out, f"rpc_picker_{tag}.png")
        app.primaryScreen().grabWindow(0).copy(0, 0, width, height).save(path)
        print("saved", path)
        combo.hidePopup()
        row = remote_row()
        combo.setCurrentIndex(row)
        combo.activated.emit(row)
        got: list = []
        win.run_controller.finished.connect(lambda kind, value: got.append(value))
        win.run_controller.failed.connect(lambda kind, message: got.append(message))
        if width < 1400:  # the result column needs the room the right-hand docks take at this size
            win.pipeline_dock.hide()
            win.palette_dock.hide()
        win.run_controller.build_and_run()
        assert pump_until(app, lambda: bool(got), 600_000), "Build & Run did not finish"
        pump_for(app, 1500)
        path = os.path.join(out, f"rpc_profile_{tag}.png")
        win.grab().save(path)
        print("saved", path)
        win.raise_run_panel()
        pump_for(app, 800)
        path = os.path.join(out, f"rpc_build_{tag}.png")
        win.grab().save(path)
        print("saved", path, "device:", got[0].get("device") if isinstance(got[0], dict) else got[0])
        win.ctrl.undo_stack.setClean()
        win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
