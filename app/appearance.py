"""View ▸ Theme and View ▸ Language: the choices, their settings and how they are applied.

Theme (setting ``ui/theme``: ``system``, ``light``, ``dark``) applies at once: ``dark`` is the Fusion
style with :func:`app.application.dark_palette` (what ``--dark`` gives), ``light`` the Fusion style's
standard palette, ``system`` the style and palette the application started with. Language (setting
``ui/language``, see :mod:`app.i18n`) applies at the next start; the menu says so.
"""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtGui import QAction, QActionGroup, QPalette
from PySide6.QtWidgets import QApplication, QMenu, QMessageBox, QWidget

from app.i18n import LANGUAGE_KEY, LANGUAGES, language_setting, tr

THEME_KEY = "ui/theme"
THEMES = ("system", "light", "dark")


def theme_setting(settings: QSettings) -> str:
    """The remembered theme (``system`` when unset or unknown)."""
    value = str(settings.value(THEME_KEY, "system") or "system")
    return value if value in THEMES else "system"


def remember_system_look(app: QApplication) -> None:
    """Keep the style and palette the application started with (what ``system`` goes back to)."""
    if getattr(app, "_rps_system_look", None) is None:
        app._rps_system_look = (app.style().name(), QPalette(app.palette()))  # type: ignore[attr-defined]


def apply_theme(app: QApplication, theme: str) -> None:
    """Apply ``theme`` (``system``, ``light``, ``dark``) to ``app`` at run time."""
    from app.application import dark_palette

    remember_system_look(app)
    style_name, palette = app._rps_system_look  # type: ignore[attr-defined]
    if theme == "dark":
        app.setStyle("Fusion")
        app.setPalette(dark_palette())
    elif theme == "light":
        app.setStyle("Fusion")
        app.setPalette(app.style().standardPalette())
    else:
        app.setStyle(style_name)
        app.setPalette(palette)
    app.setProperty("rps_theme", theme)


class AppearanceController(QObject):
    """Fills View ▸ Theme and View ▸ Language and applies/remembers the choices."""

    #: The theme was applied (``system``, ``light``, ``dark``).
    theme_changed = Signal(str)

    def __init__(self, settings: QSettings, dialog_parent: Optional[QWidget] = None, parent: Optional[QObject] = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.dialog_parent = dialog_parent
        self.theme_actions: dict[str, QAction] = {}
        self.language_actions: dict[str, QAction] = {}
        #: hook for tests: shows the "applies at the next start" note
        self.notify_restart = self._notify_restart

    def build_menus(self, view_menu: QMenu) -> None:
        """Add the Theme and Language sub-menus to ``view_menu``."""
        self.theme_menu = view_menu.addMenu(tr("&Theme"))
        group = QActionGroup(self.theme_menu)
        labels = {"system": tr("&System"), "light": tr("&Light"), "dark": tr("&Dark")}
        current = theme_setting(self.settings)
        for key in THEMES:
            act = self.theme_menu.addAction(labels[key])
            act.setCheckable(True)
            act.setChecked(key == current)
            group.addAction(act)
            act.triggered.connect(lambda _=False, k=key: self.set_theme(k))
            self.theme_actions[key] = act
        self.language_menu = view_menu.addMenu(tr("&Language (applies at the next start)"))
        group = QActionGroup(self.language_menu)
        current = language_setting(self.settings)
        for key, label in LANGUAGES.items():
            act = self.language_menu.addAction(tr("System") if key == "system" else label)
            act.setCheckable(True)
            act.setChecked(key == current)
            group.addAction(act)
            act.triggered.connect(lambda _=False, k=key: self.set_language(k))
            self.language_actions[key] = act

    def set_theme(self, theme: str) -> None:
        """Apply and remember ``theme``."""
        app = QApplication.instance()
        if app is not None:
            apply_theme(app, theme)  # type: ignore[arg-type]
        self.settings.setValue(THEME_KEY, theme)
        if theme in self.theme_actions:
            self.theme_actions[theme].setChecked(True)
        self.theme_changed.emit(theme)

    def set_language(self, language: str) -> None:
        """Remember ``language`` (``system``, ``en``, ``zh_CN``) for the next start."""
        if language == language_setting(self.settings):
            return
        self.settings.setValue(LANGUAGE_KEY, language)
        if language in self.language_actions:
            self.language_actions[language].setChecked(True)
        self.notify_restart()

    def _notify_restart(self) -> None:
        QMessageBox.information(self.dialog_parent, tr("Language"),
                                tr("The new language is used the next time Relax Pipeline Studio starts."))
