"""Help ▸ Environment: the environment report (:mod:`pipeline_model.env_report`) as copyable text.

:class:`EnvDialog` shows problems first, highlighted by severity (palette-aware colours from
:mod:`widgets.theme`), then the report text in a read-only, selectable view; *Copy* puts the whole plain
text report on the clipboard (for bug reports). The app gathers the report in its engine worker
(``EnvReport`` = ``env_report.make_report(env_report.local_facts(), engine_reply_of("env"), error)``) and
calls :meth:`EnvDialog.set_report`; :meth:`EnvDialog.set_loading` shows a waiting text meanwhile.
"""

from __future__ import annotations

import html
from typing import Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from pipeline_model.env_report import ERROR, EnvReport, render_text
from widgets.theme import status_css


class EnvDialog(QDialog):
    """The environment report: a problems summary (coloured) above the full text, a Copy button.

    ``refresh_requested`` is emitted by the *Refresh* button (the app re-asks the engine).
    """

    refresh_requested = Signal()

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Environment"))
        self.resize(820, 600)
        self._report: Optional[EnvReport] = None
        layout = QVBoxLayout(self)
        self.problems_label = QLabel(self)
        self.problems_label.setWordWrap(True)
        self.problems_label.setTextFormat(Qt.TextFormat.RichText)
        self.problems_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.problems_label)
        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        layout.addWidget(self.text, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.copy_button = QPushButton(self.tr("Copy"), self)
        self.copy_button.setToolTip(self.tr("Copy the whole report as plain text"))
        self.refresh_button = QPushButton(self.tr("Refresh"), self)
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.refresh_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        self.copy_button.clicked.connect(self.copy_to_clipboard)
        self.refresh_button.clicked.connect(self.refresh_requested)
        layout.addWidget(buttons)
        self.set_loading()

    def set_loading(self) -> None:
        """Show that the report is being gathered."""
        self._report = None
        self.problems_label.setText(self.tr("Asking the engine…"))
        self.text.setPlainText("")
        self.copy_button.setEnabled(False)

    def set_report(self, report: EnvReport) -> None:
        """Show ``report``."""
        self._report = report
        self.text.setPlainText(render_text(report))
        self.copy_button.setEnabled(True)
        if not report.problems:
            colour = status_css("ok", self.palette())
            none_found = html.escape(self.tr("No problems found."))
            self.problems_label.setText("<span style='color:%s'>%s</span>" % (colour, none_found))
            return
        rows = []
        for problem in report.problems:
            kind = "error" if problem.severity == ERROR else "warning"
            colour = status_css(kind, self.palette())
            word = self.tr("Error") if kind == "error" else self.tr("Warning")
            fix_word = html.escape(self.tr("Fix:"))
            fix = f"<br/>&nbsp;&nbsp;{fix_word} <code>{html.escape(problem.fix)}</code>" if problem.fix else ""
            rows.append(f'<p style="margin:2px"><b style="color:{colour}">{html.escape(word)}:</b> '
                        f"{html.escape(problem.message)}{fix}</p>")
        self.problems_label.setText("".join(rows))

    def report(self) -> Optional[EnvReport]:
        """The report shown (``None`` while loading)."""
        return self._report

    def plain_text(self) -> str:
        """The text the Copy button copies."""
        return render_text(self._report) if self._report is not None else ""

    def copy_to_clipboard(self) -> None:
        """Put the plain text report on the clipboard."""
        clipboard = QGuiApplication.clipboard()
        if clipboard is not None and self._report is not None:
            clipboard.setText(self.plain_text())
