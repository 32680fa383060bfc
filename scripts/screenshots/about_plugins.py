"""Screenshots of Help ▸ About listing the installed plug-ins (documentation tool, not part of the app).

Run it with the Python of an environment where plug-ins are installed (e.g. the example plug-in and a broken one,
as tests/test_plugins.py installs them), on an X server of 1024x700::

    Xvfb :54 -screen 0 1024x700x24 &  DISPLAY=:54 VENV/bin/python -m scripts.screenshots.about_plugins docs/screenshots

Writes ``about_plugins_1024_en.png`` and ``about_plugins_1024_zh.png`` (settings and state in a temporary folder).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def shoot(out_path: str, language: str) -> None:
    """The main window with the About box over it, the engine answered, the whole screen saved to ``out_path``."""
    sys.path.insert(0, ROOT)
    from PySide6.QtWidgets import QApplication, QMessageBox

    from app.application import setup_look_and_language
    from app.i18n import tr
    from app.main_window import MainWindow

    app = QApplication([])
    setup_look_and_language(app, language=language)
    window = MainWindow()
    window.resize(1024, 700)
    window.show()
    deadline = time.monotonic() + 240  # a guard against a hang
    while time.monotonic() < deadline and not (window.help.engine_info and window.palette.visible_pass_ids()):
        app.processEvents()
        time.sleep(0.05)
    box = QMessageBox(QMessageBox.Icon.NoIcon, tr("About Relax Pipeline Studio"), window.help.about_text(),
                      QMessageBox.StandardButton.Ok, window)
    box.show()
    for _ in range(50):
        app.processEvents()
        time.sleep(0.02)
    app.primaryScreen().grabWindow(0).save(out_path)
    window.exit_on_signal()
    app.processEvents()


def main(out_dir: str) -> int:
    """One process per language (each with its own settings folder)."""
    for language in ("en", "zh_CN"):
        base = tempfile.mkdtemp()
        env = dict(os.environ, HOME=base, XDG_CONFIG_HOME=base + "/cfg", XDG_STATE_HOME=base + "/state",
                   XDG_CACHE_HOME=base + "/cache")
        out = os.path.join(out_dir, f"about_plugins_1024_{language[:2]}.png")
        code = f"import sys; sys.path.insert(0, {ROOT!r}); from scripts.screenshots.about_plugins import shoot; " \
               f"shoot({out!r}, {language!r})"
        subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=300)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
