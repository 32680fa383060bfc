"""View ▸ Theme and View ▸ Language: the choices, their settings and how they are applied.

Theme (setting ``ui/theme``: ``system``, ``light``, ``dark``) applies at once: ``dark`` is the Fusion
style with :func:`dark_palette` (what ``--dark`` gives), ``light`` the Fusion style's
standard palette, ``system`` the style and palette the application started with. Language (setting
``ui/language``, see :mod:`app.i18n`) applies at the next start; the menu says so.
"""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtGui import QAction, QActionGroup, QColor, QPalette
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


def dark_palette() -> QPalette:
    """A dark Fusion palette (what a dark desktop theme gives): used by ``--dark``, the screenshot
    tour and the tests that check every view stays readable on a dark background."""
    pal = QPalette()
    role, group = QPalette.ColorRole, QPalette.ColorGroup
    colours = {
        role.Window: "#2b2b2e", role.WindowText: "#e6e6e6", role.Base: "#1e1e21", role.AlternateBase: "#2a2a2e",
        role.ToolTipBase: "#3a3a3e", role.ToolTipText: "#f0f0f0", role.Text: "#e6e6e6", role.Button: "#35353a",
        role.ButtonText: "#e6e6e6", role.BrightText: "#ff6b6b", role.Link: "#6cb4ff", role.LinkVisited: "#b89cff",
        role.Highlight: "#2f6fb3", role.HighlightedText: "#ffffff", role.PlaceholderText: "#8f8f96",
        role.Light: "#4a4a50", role.Midlight: "#3c3c42", role.Mid: "#2f2f34", role.Dark: "#18181b", role.Shadow: "#0c0c0e",
    }
    for r, c in colours.items():
        pal.setColor(r, QColor(c))
    for r in (role.WindowText, role.Text, role.ButtonText):
        pal.setColor(group.Disabled, r, QColor("#7a7a80"))
    pal.setColor(group.Disabled, role.Base, QColor("#26262a"))
    return pal


def apply_dark(app: QApplication) -> None:
    """Fusion style with :func:`dark_palette` (the ``--dark`` option)."""
    app.setStyle("Fusion")
    app.setPalette(dark_palette())


def apply_theme(app: QApplication, theme: str) -> None:
    """Apply ``theme`` (``system``, ``light``, ``dark``) to ``app`` at run time."""
    remember_system_look(app)
    style_name, palette = app._rps_system_look  # type: ignore[attr-defined]
    if theme == "dark":
        apply_dark(app)
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
