"""QApplication set-up and the GUI entry point ``run_app(argv)``.

Start-up is kept light (issue 33): before the first paint only PySide6 and the modules of what the first
frame shows are imported, and only what it shows is built (tests/test_startup_imports.py names what waits).
Right after the window's first paint (:func:`app.first_paint.after_first_paint`) come the parts hidden at
first (:meth:`app.main_window.MainWindow.build_hidden_parts`), the engine process (the only place TVM is
imported; it starts in a background thread) and the start-up document.
"""

from __future__ import annotations

import os
import sys
from typing import Optional

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QApplication

from app.first_paint import after_first_paint
from app.settings import APPLICATION, ORGANIZATION
from pipeline_model.resources import resource_path

STYLE_FILE = resource_path("styles", "app.qss")
#: GIL switch interval of the GUI process (Python's default is 5 ms). Worker threads run Python
#: (graph layout and change detection, the engine reader decoding replies); each call from Qt into a
#: Python slot or paint method then waits up to one interval for the GIL, and a repaint makes several.
GUI_SWITCH_INTERVAL_S = 0.001


def make_application(argv: Optional[list[str]] = None) -> QApplication:
    """The QApplication (reused when one exists), with names and the palette-following style sheet."""
    app = QApplication.instance()
    if app is None:
        app = QApplication([sys.argv[0] if sys.argv else "relax-pipeline-studio"] + list(argv or []))
    sys.setswitchinterval(GUI_SWITCH_INTERVAL_S)  # the GUI thread gets the GIL back sooner
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationDisplayName(APPLICATION)
    try:
        app.setStyleSheet(STYLE_FILE.read_text(encoding="utf-8"))
    except OSError:
        pass
    follow_palette_changes(app)
    return app  # type: ignore[return-value]


class _PaletteFollower(QObject):
    """Re-applies the application style sheet when the application palette changes.

    With an application style sheet set, Qt does not pass a new application palette (the desktop
    switching between light and dark) on to the widgets: text would take the new colours while text
    fields, lists and views kept the old background. Setting the style sheet again re-polishes every
    widget with the new palette. It listens to ``QGuiApplication.paletteChanged``, not to an event filter
    on the application: such a filter runs Python (and waits for the GIL) for every event of every
    object, which lengthened GUI-thread stalls while worker threads ran Python."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self._app = app
        self._pending = False
        app.paletteChanged.connect(self._on_palette_changed)

    def _on_palette_changed(self, *_args: object) -> None:
        if not self._pending:
            self._pending = True
            QTimer.singleShot(0, self._reapply)

    def _reapply(self) -> None:
        self._pending = False
        sheet = self._app.styleSheet()
        if sheet:
            self._app.setStyleSheet("")
            self._app.setStyleSheet(sheet)


def follow_palette_changes(app: QApplication) -> None:
    """Make the widgets follow application palette changes although a style sheet is set (once per app)."""
    if app.property("rps_palette_follower"):
        return
    follower = _PaletteFollower(app)
    app.setProperty("rps_palette_follower", True)
    app._rps_palette_follower = follower  # type: ignore[attr-defined]  # keep a reference


def setup_look_and_language(app: QApplication, dark: bool = False, language: Optional[str] = None) -> str:
    """Install the translator (View ▸ Language, else the system locale; ``language`` overrides both)
    and apply the remembered theme (``dark``: the ``--dark`` option, not remembered). Returns the
    language loaded (``en`` when no translation applies)."""
    from app.appearance import apply_theme, remember_system_look, theme_setting
    from app.i18n import install_translator, language_setting, resolve_language
    from app.settings import app_settings

    settings = app_settings()
    remember_system_look(app)
    chosen = resolve_language(language or language_setting(settings))
    if install_translator(app, chosen) is None:
        chosen = "en"
    theme = "dark" if dark else theme_setting(settings)
    if theme != "system":
        apply_theme(app, theme)
    return chosen


def run_app(argv: list[str]) -> int:
    """Open the main window (``argv``: optional pipeline file) and run the event loop."""
    import argparse

    parser = argparse.ArgumentParser(prog="main.py", description="Relax Pipeline Studio")
    parser.add_argument("file", nargs="?", help="pipeline file (.json) to open")
    parser.add_argument("--model", help="model spec to use instead of the file's (builtin:mlp, path)")
    parser.add_argument("--dark", action="store_true", help="use a dark palette whatever the desktop's theme")
    args, qt_args = parser.parse_known_args(argv)
    from app.platform_check import xcb_problem

    problem = xcb_problem()
    if problem is not None and QApplication.instance() is None:
        print(problem, file=sys.stderr)  # instead of Qt's abort without a hint
        return 3
    app = make_application(qt_args)
    setup_look_and_language(app, dark=args.dark)

    from app.main_window import MainWindow

    window = MainWindow(start_engine=False)  # the engine starts behind the painted window (below)
    probe = os.environ.get("RPS_STARTUP_PROBE")
    if probe:
        _install_first_paint_probe(window, probe)
    window.show()
    from app.autosave import env_answer, install_signal_handlers

    window._signal_tick = install_signal_handlers(window)  # SIGTERM & co.: recovery copy, then exit

    def start() -> None:
        # After the first paint, so the window appears at once: the panels behind the first frame, the engine
        # process (TVM's import takes the CPU for seconds), the document (its schema check), then a crashed
        # session's edits.
        window.build_hidden_parts()
        window.worker.start()
        window.open_initial(args.file, model=args.model, recovery_answer=env_answer())
        hook = os.environ.get("RPS_TEST_HOOK")
        if hook:
            from app.test_hooks import run_hook

            run_hook(window, hook)

    after_first_paint(window, start)
    code = app.exec()
    return int(code)


def _install_first_paint_probe(window, path: str) -> None:
    """Benchmark hook (``RPS_STARTUP_PROBE=FILE``): write the wall-clock time of the first paint of
    the main window to FILE, then close the window."""
    import time

    from PySide6.QtCore import QEvent, QObject

    class _Probe(QObject):
        def __init__(self) -> None:
            super().__init__(window)
            self.done = False

        def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt API
            if not self.done and event.type() == QEvent.Type.Paint:
                self.done = True
                stamp = time.time()
                QTimer.singleShot(0, lambda: _finish(stamp))
            return False

    def _finish(stamp: float) -> None:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(f"{stamp:.6f}\n")
        window.close()

    window._startup_probe = _Probe()  # keep a reference
    window.installEventFilter(window._startup_probe)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run_app(sys.argv[1:]))
