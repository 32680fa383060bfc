"""QApplication set-up and the GUI entry point ``run_app(argv)``.

Startup is kept light: only PySide6 and the TVM-free document code are imported before the first
window is painted; the engine process (the only place TVM is imported) starts in a background
thread right after the window is shown.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication

from app.settings import APPLICATION, ORGANIZATION

ROOT = Path(__file__).resolve().parent.parent
STYLE_FILE = ROOT / "resources" / "styles" / "app.qss"


def make_application(argv: Optional[list[str]] = None) -> QApplication:
    """The QApplication (reused when one exists), with names and the palette-following style sheet."""
    app = QApplication.instance()
    if app is None:
        app = QApplication([sys.argv[0] if sys.argv else "relax-pipeline-studio"] + list(argv or []))
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationDisplayName(APPLICATION)
    try:
        app.setStyleSheet(STYLE_FILE.read_text(encoding="utf-8"))
    except OSError:
        pass
    return app  # type: ignore[return-value]


def run_app(argv: list[str]) -> int:
    """Open the main window (``argv``: optional pipeline file) and run the event loop."""
    import argparse

    parser = argparse.ArgumentParser(prog="main.py", description="Relax Pipeline Studio")
    parser.add_argument("file", nargs="?", help="pipeline file (.json) to open")
    parser.add_argument("--model", help="model spec to use instead of the file's (builtin:mlp, path)")
    parser.add_argument("--screenshot", help=argparse.SUPPRESS)
    args, qt_args = parser.parse_known_args(argv)
    app = make_application(qt_args)

    from app.main_window import MainWindow

    window = MainWindow()
    probe = os.environ.get("RPS_STARTUP_PROBE")
    if probe:
        _install_first_paint_probe(window, probe)
    window.show()
    # Load after the first paint so the window appears at once.
    QTimer.singleShot(0, lambda: window.open_initial(args.file, model=args.model))
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
