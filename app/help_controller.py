"""The Help menu: Documentation (the repository's Markdown files in a read-only viewer, or the system
browser), Keyboard Shortcuts (generated from the window's actions), Environment (the environment report:
local facts plus the engine's ``env`` reply, in :class:`widgets.env_dialog.EnvDialog`) and About (app and
TVM versions, the installed plug-ins with their versions and those that could not be loaded, which a status
message also names once the engine answers)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtCore import QObject, Qt, QUrl
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence
from PySide6.QtWidgets import (
    QDialog, QDialogButtonBox, QHeaderView, QListWidget, QListWidgetItem, QMenu, QMenuBar, QMessageBox, QPushButton,
    QSplitter, QTableWidget, QTableWidgetItem, QTextBrowser, QVBoxLayout, QWidget,
)

from app import __version__
from app.i18n import tr
from widgets.dialog_parts import close_box
from widgets.theme import status_css

if TYPE_CHECKING:  # imported when Help ▸ Environment is first opened
    from widgets.env_dialog import EnvDialog

ROOT = Path(__file__).resolve().parent.parent
#: Where an installed copy keeps the documentation, under its data prefix (pyproject ``data-files``).
INSTALLED_DOCS = ("share", "relax-pipeline-studio")


def docs_root() -> Path:
    """The folder holding README.md and docs/: the checkout, else an installed copy's data folder."""
    if (ROOT / "README.md").exists():
        return ROOT
    import site
    import sysconfig

    for prefix in (sysconfig.get_path("data"), site.getuserbase()):
        candidate = Path(prefix, *INSTALLED_DOCS)
        if (candidate / "README.md").exists():
            return candidate
    return ROOT


#: Documents for those who work on the app, not with it: not listed by Help ▸ Documentation.
DEVELOPER_DOCS = ("DEVELOPERS.md", "ARCHITECTURE.md")


def doc_files(root: Optional[Path] = None) -> list[Path]:
    """The user documentation shown by Help ▸ Documentation: README.md and docs/*.md (of
    :func:`docs_root` unless ``root`` is given), without the developers' documents (:data:`DEVELOPER_DOCS`)."""
    root = docs_root() if root is None else root
    files = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    return [f for f in files if f.exists() and f.name not in DEVELOPER_DOCS]


def menu_shortcuts(menu_bar: QMenuBar) -> list[tuple[str, str, str]]:
    """``(menu path, action text, shortcuts)`` of every action with a shortcut in ``menu_bar``'s menus,
    in menu order (texts as shown, ``&`` mnemonics removed)."""
    rows: list[tuple[str, str, str]] = []
    seen: set[int] = set()

    def clean(text: str) -> str:
        return text.replace("&&", "\x00").replace("&", "").replace("\x00", "&")

    def walk(menu: QMenu, path: str) -> None:
        for act in menu.actions():
            if act.menu() is not None:
                walk(act.menu(), f"{path} ▸ {clean(act.menu().title())}")
                continue
            keys = [k for k in act.shortcuts() if not k.isEmpty()]
            if act.isSeparator() or not keys or id(act) in seen:
                continue
            seen.add(id(act))
            text = QKeySequence.listToString(keys, QKeySequence.SequenceFormat.NativeText)
            rows.append((path, clean(act.text()), text))

    for top in menu_bar.actions():
        if top.menu() is not None:
            walk(top.menu(), clean(top.menu().title()))
    return rows


class DocumentationDialog(QDialog):
    """The documentation files in a list and a Markdown viewer; "Open in Browser" hands the file to
    the system (QDesktopServices)."""

    def __init__(self, files: list[Path], parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Documentation"))
        self.files = files
        self.list = QListWidget(self)
        for f in files:
            root = docs_root()
            item = QListWidgetItem(str(f.relative_to(root)) if f.is_relative_to(root) else f.name)
            item.setData(Qt.ItemDataRole.UserRole, str(f))
            self.list.addItem(item)
        self.viewer = QTextBrowser(self)
        self.viewer.setObjectName("docViewer")
        self.viewer.setOpenExternalLinks(True)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(self.list)
        split.addWidget(self.viewer)
        split.setStretchFactor(1, 1)
        split.setSizes([200, 640])
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.browser_button = QPushButton(self.tr("Open in Browser"), self)
        buttons.addButton(self.browser_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.browser_button.clicked.connect(self.open_external)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(split, 1)
        layout.addWidget(buttons)
        self.list.currentRowChanged.connect(self.show_file)
        if files:
            self.list.setCurrentRow(0)
        self.resize(900, 600)

    def current_path(self) -> Optional[Path]:
        """The file shown."""
        item = self.list.currentItem()
        return Path(item.data(Qt.ItemDataRole.UserRole)) if item is not None else None

    def show_file(self, row: int) -> None:
        """Show file ``row`` of the list."""
        path = self.current_path()
        if path is None:
            return
        self.viewer.setSearchPaths([str(path.parent)])
        try:
            self.viewer.setMarkdown(path.read_text(encoding="utf-8"))
        except OSError as exc:
            self.viewer.setPlainText(self.tr("Cannot read {path}: {error}").format(path=path, error=exc))

    def open_external(self) -> bool:
        """Open the shown file with the system's viewer for Markdown."""
        path = self.current_path()
        return bool(path) and QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))


class ShortcutsDialog(QDialog):
    """A table of every menu action's shortcut (generated from the actions, see :func:`menu_shortcuts`)."""

    def __init__(self, rows: list[tuple[str, str, str]], parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Keyboard Shortcuts"))
        self.table = QTableWidget(len(rows), 3, self)
        self.table.setObjectName("shortcutTable")
        self.table.setHorizontalHeaderLabels([self.tr("Menu"), self.tr("Action"), self.tr("Shortcut")])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                self.table.setItem(r, c, QTableWidgetItem(text))
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        buttons = close_box(self)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.resize(560, 480)


class HelpController(QObject):
    """Help menu actions; ``window`` is the main window (its menu bar lists the shortcuts)."""

    def __init__(self, ctx: Any, window: Any) -> None:
        super().__init__(ctx)
        self.ctx = ctx
        self.window = window
        self.engine_info: dict = {}
        self.dialog: Optional[QDialog] = None
        self.env_dialog: Optional[EnvDialog] = None
        self.env_request: Any = None
        self._reported_failures: set[str] = set()
        ctx.engine.ping_ready.connect(self._on_ping)

    def _on_ping(self, info: dict) -> None:
        self.engine_info = dict(info)
        self.report_plugin_failures()

    def plugin_report(self) -> dict:
        """The plug-ins of this process and the engine's failures (its ping), each once."""
        from pipeline_model import plugins
        from pipeline_model.env_report import local_plugins

        engine = {"failures": self.engine_info.get("plugin_failures") or []}
        return plugins.merge_reports(local_plugins(), engine)

    def report_plugin_failures(self) -> None:
        """A status message naming the plug-ins that could not be loaded (each once per session)."""
        from pipeline_model.env_report import plugin_failure_lines

        new = [line for line in plugin_failure_lines(self.plugin_report()) if line not in self._reported_failures]
        if new:
            self._reported_failures.update(new)
            self.ctx.status(tr("Plug-in not loaded (the app runs without it; see Help ▸ Environment): {0}").format(
                "; ".join(new)), 20000)

    def build_menu(self, menu_bar: QMenuBar) -> QMenu:
        """Add the Help menu to ``menu_bar``."""
        menu = menu_bar.addMenu(tr("&Help"))
        self.act_docs = QAction(tr("&Documentation"), self.window)
        self.act_docs.setShortcut(QKeySequence(QKeySequence.StandardKey.HelpContents))
        self.act_docs.triggered.connect(self.show_documentation)
        self.act_shortcuts = QAction(tr("&Keyboard Shortcuts"), self.window)
        self.act_shortcuts.triggered.connect(self.show_shortcuts)
        self.act_env = QAction(tr("&Environment…"), self.window)
        self.act_env.setStatusTip(tr("TVM and tvm-ffi versions, build flags, devices, codegens and known problems"))
        self.act_env.triggered.connect(self.show_environment)
        self.act_about = QAction(tr("&About Relax Pipeline Studio"), self.window)
        self.act_about.setMenuRole(QAction.MenuRole.AboutRole)
        self.act_about.triggered.connect(self.show_about)
        for act in (self.act_docs, self.act_shortcuts, self.act_env, None, self.act_about):
            menu.addSeparator() if act is None else menu.addAction(act)
        self.menu = menu
        return menu

    def show_documentation(self) -> DocumentationDialog:
        """Help ▸ Documentation."""
        self.dialog = DocumentationDialog(doc_files(), self.ctx.dialog_parent)
        self.dialog.show()
        return self.dialog

    def show_shortcuts(self) -> ShortcutsDialog:
        """Help ▸ Keyboard Shortcuts."""
        self.dialog = ShortcutsDialog(menu_shortcuts(self.window.menuBar()), self.ctx.dialog_parent)
        self.dialog.show()
        return self.dialog

    def show_environment(self) -> EnvDialog:
        """Help ▸ Environment: the dialog opens at once ("asking the engine…") and fills in when the
        engine's ``env`` reply (or its failure) arrives; *Refresh* asks again."""
        if self.env_dialog is None:
            from widgets.env_dialog import EnvDialog

            self.env_dialog = EnvDialog(self.ctx.dialog_parent)
            self.env_dialog.refresh_requested.connect(self.refresh_environment)
        self.env_dialog.show()
        self.env_dialog.raise_()
        self.refresh_environment()
        return self.env_dialog

    def refresh_environment(self) -> None:
        """Gather the environment report again (local facts now, the engine's part through a request)."""
        dialog = self.env_dialog
        if dialog is None:
            return
        if self.env_request is not None:
            self.env_request.cancel()
        dialog.set_loading()
        request = self.ctx.engine.submit_call("env", {})
        self.env_request = request
        request.finished.connect(lambda value: self._on_env(request, value if isinstance(value, dict) else None, ""))
        request.failed.connect(lambda message: self._on_env(request, None, message or tr("the engine did not answer")))

    def _on_env(self, request: Any, reply: Optional[dict], error: str) -> None:
        if request is not self.env_request or self.env_dialog is None:
            return  # an older request (Refresh was pressed again)
        self.env_request = None
        from pipeline_model.env_report import local_facts, make_report

        self.env_dialog.set_report(make_report(local_facts(), reply, error))

    def about_text(self) -> str:
        """The About box's HTML: app version, TVM / tvm-ffi versions from the engine's ping."""
        tvm = self.engine_info.get("tvm") or tr("unknown (the engine has not answered yet)")
        ffi = self.engine_info.get("tvm_ffi") or "?"
        text = tr("<h3>Relax Pipeline Studio {version}</h3>"
                  "<p>Build, preview and run Apache TVM Relax pass pipelines.</p>"
                  "<p>TVM {tvm} (tvm-ffi {ffi}), in the engine process.</p>").format(
            version=html.escape(__version__), tvm=html.escape(str(tvm)), ffi=html.escape(str(ffi)))
        return text + self._plugins_html()

    def _plugins_html(self) -> str:
        """The About box's plug-in list: package, version, what each adds; those not loaded, with why."""
        from pipeline_model.env_report import plugin_failure_lines, plugin_lines

        report = self.plugin_report()
        items = [html.escape(line) for line in plugin_lines(report)]
        items += [f"<span style='color:{status_css('error')}'>" + html.escape(tr("not loaded: {0}").format(line)) + "</span>"
                  for line in plugin_failure_lines(report)]
        body = "<ul>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>" if items else \
            "<p>" + html.escape(tr("No plug-ins installed.")) + "</p>"
        return "<p><b>" + html.escape(tr("Plug-ins")) + "</b></p>" + body

    def show_about(self) -> None:
        """Help ▸ About."""
        QMessageBox.about(self.ctx.dialog_parent, tr("About Relax Pipeline Studio"), self.about_text())
