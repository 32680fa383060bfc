"""Screenshots of start-up (issue 33): the main window as its first frame shows it, and once idle.

Run under a real X server from a checkout, with a fresh home (a first start), once per language::

    xvfb-run -a -s "-screen 0 1114x761x24" .venv/bin/python -m scripts.screenshots.startup docs/screenshots [--lang=zh_CN]

(the first window takes 92 % of the screen: 1024×700 there). The app starts as ``main.py`` starts it
(:func:`app.application.run_app`); on the event-loop turn after the first paint, before anything that waits
for it runs, the window is grabbed (``startup_first_<W>_<lang>.png``); then start-up goes on (the hidden
panels, the engine, the tutorial pipeline and its run) and, once the run ended and nothing moved for a
second, the window is grabbed again (``startup_idle_<W>_<lang>.png``), then with the Build & Run and the Profile
tab on top (``startup_idle_run_…``, ``startup_idle_profile_…``: panels built after the first paint).
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Any, Callable

#: Longest wait for the engine and the start-up run (a guard against hangs).
GUARD_MS = 600_000


def _when_idle(window: Any, then: Callable[[], None]) -> None:
    """Call ``then`` once the start-up run ended (or the guard passed) and a second went by."""
    from PySide6.QtCore import QElapsedTimer, QTimer

    seen = {"ran": False}
    window.session.running_changed.connect(lambda running: seen.update(ran=seen["ran"] or running))
    clock = QElapsedTimer()
    clock.start()
    timer = QTimer(window)

    def poll() -> None:
        ready = seen["ran"] and not window.act_stop.isEnabled() and window.ctx.catalogue.catalogue is not None
        if ready or clock.elapsed() > GUARD_MS:
            timer.stop()
            QTimer.singleShot(1000, then)

    timer.timeout.connect(poll)
    timer.start(200)


def main(argv: list[str]) -> int:
    """Start the app, grab its first frame and its idle state into ``argv[0]``."""
    out = os.path.abspath(argv[0] if argv else ".")
    lang = next((a.split("=", 1)[1] for a in argv if a.startswith("--lang=")), "en")
    os.makedirs(out, exist_ok=True)
    home = tempfile.mkdtemp(prefix="rps_startup_shots_")
    os.environ.update(RPS_CONFIG_DIR=os.path.join(home, "config"), XDG_STATE_HOME=os.path.join(home, "state"))
    from app import application
    from app.i18n import LANGUAGE_KEY
    from app.settings import app_settings

    app_settings().setValue(LANGUAGE_KEY, lang)
    real = application.after_first_paint

    def shoot(window: Any, name: str) -> None:
        path = os.path.join(out, f"startup_{name}_{window.width()}_{lang}.png")
        window.grab().save(path)
        print(path, flush=True)

    def idle(window: Any) -> None:
        from PySide6.QtWidgets import QApplication

        shoot(window, "idle")
        for dock, name in ((window.run_dock, "idle_run"), (window.profile_dock, "idle_profile")):
            dock.raise_()  # the panels built after the first paint, as their tab shows them
            QApplication.processEvents()
            shoot(window, name)
        window.close()

    def spy(window: Any, callback: Callable[[], None], fallback_ms: int = 2000) -> None:
        def at_first_paint() -> None:
            shoot(window, "first")
            _when_idle(window, lambda: idle(window))
            callback()  # run_app's own: the panels behind the tabs, the engine, the start-up document

        real(window, at_first_paint, fallback_ms=GUARD_MS)

    application.after_first_paint = spy  # type: ignore[assignment]
    return application.run_app([])


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
