"""Side-by-side TVMScript diff view (before/after a pipeline step), with an error mode.

``DiffView.set_snapshots(before, after, before_title, after_title)`` shows the two module texts
aligned row by row (``pipeline_model.diff``): removed lines tinted red on the left, added lines green
on the right, padding rows grey; both sides scroll together. A combo filters one function, a check
box hides unchanged functions. ``set_error(step_title, error_text, last_good_script)`` shows a
failed step: its plain error text and the last good IR.
"""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from pipeline_model import diff as D
from widgets.code_editor import CodeEditor
from widgets.highlight import palette_is_dark

ALL_FUNCTIONS = ""

_STATUS_MARK = {D.ADDED: "+", D.REMOVED: "−", D.CHANGED: "~", D.UNCHANGED: " "}


def diff_colors(dark: bool) -> dict[str, QColor]:
    """Tints for removed / added / padding / changed-line rows, for a light or dark palette."""
    if dark:
        return {
            "removed": QColor("#5a2a2a"),
            "added": QColor("#23502e"),
            "removed_soft": QColor("#432626"),
            "added_soft": QColor("#203a27"),
            "pad": QColor("#333338"),
        }
    return {
        "removed": QColor("#ffd7d5"),
        "added": QColor("#d4f7d9"),
        "removed_soft": QColor("#ffecec"),
        "added_soft": QColor("#eaffed"),
        "pad": QColor("#eeeeee"),
    }


class DiffView(QWidget):
    """Before/after TVMScript of a step, side by side.

    Signals: ``function_selected(str)`` when the user picks a function in the filter ("" = all).
    """

    function_selected = Signal(str)

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self._diff: Optional[D.ModuleDiff] = None
        self._before: Optional[str] = None
        self._after: Optional[str] = None
        self._titles = ("", "")
        self._function = ALL_FUNCTIONS
        self._syncing = False
        self._rows: list[D.DiffRow] = []

        self.function_combo = QComboBox()
        self.function_combo.setMinimumContentsLength(24)
        self.function_combo.setToolTip("Show one function (+ added, − removed, ~ changed)")
        self.function_combo.activated.connect(self._on_combo_activated)
        self.hide_unchanged_box = QCheckBox("Hide unchanged functions")
        self.hide_unchanged_box.toggled.connect(lambda _=False: self._render())
        self.summary_label = QLabel()
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(QLabel("Function:"))
        bar.addWidget(self.function_combo)
        bar.addWidget(self.hide_unchanged_box)
        bar.addStretch(1)
        bar.addWidget(self.summary_label)

        self.left_title = QLabel()
        self.right_title = QLabel()
        for label in (self.left_title, self.right_title):
            label.setTextFormat(Qt.TextFormat.PlainText)
            label.setStyleSheet("font-weight: bold; padding: 2px;")
        self.left = CodeEditor(read_only=True)
        self.right = CodeEditor(read_only=True)
        self.error_text = QPlainTextEdit()
        self.error_text.setReadOnly(True)
        self.error_text.setFont(self.left.font())
        self.error_text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)

        left_box = QWidget()
        lv = QVBoxLayout(left_box)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addWidget(self.left_title)
        lv.addWidget(self.left)
        right_box = QWidget()
        rv = QVBoxLayout(right_box)
        rv.setContentsMargins(0, 0, 0, 0)
        rv.addWidget(self.right_title)
        self.right_stack = QStackedWidget()
        self.right_stack.addWidget(self.right)
        self.right_stack.addWidget(self.error_text)
        rv.addWidget(self.right_stack)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(left_box)
        self.splitter.addWidget(right_box)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.splitter, 1)

        for a, b in ((self.left, self.right), (self.right, self.left)):
            a.verticalScrollBar().valueChanged.connect(lambda v, b=b: self._sync(b.verticalScrollBar(), v))
            a.horizontalScrollBar().valueChanged.connect(lambda v, b=b: self._sync(b.horizontalScrollBar(), v))
        self.clear()

    # -- API ---------------------------------------------------------------------------------------
    @property
    def module_diff(self) -> Optional[D.ModuleDiff]:
        """The diff on display (``None`` when cleared or in error mode)."""
        return self._diff

    @property
    def rows(self) -> list[D.DiffRow]:
        """The rows currently shown (after the function filter / hide-unchanged option)."""
        return list(self._rows)

    @property
    def in_error_mode(self) -> bool:
        """True while showing a failed step."""
        return self.right_stack.currentWidget() is self.error_text

    def clear(self) -> None:
        """Show nothing."""
        self._diff = None
        self._before = self._after = None
        self._rows = []
        self._function = ALL_FUNCTIONS
        self.right_stack.setCurrentWidget(self.right)
        self.left.set_text("")
        self.right.set_text("")
        self.left_title.setText("Before")
        self.right_title.setText("After")
        self.summary_label.setText("")
        self.function_combo.clear()
        self.function_combo.setEnabled(False)
        self.hide_unchanged_box.setEnabled(False)

    def set_snapshots(
        self, before: Optional[str], after: Optional[str], before_title: str = "", after_title: str = ""
    ) -> None:
        """Show the diff of two module texts (``None``: no module on that side)."""
        self._before, self._after = before, after
        self._titles = (before_title, after_title)
        self.right_stack.setCurrentWidget(self.right)
        self._diff = D.diff_snapshots(before, after)
        self.left_title.setText(before_title or "Before")
        self.right_title.setText(after_title or "After")
        names = self._diff.names()
        if self._function and self._function not in names:
            self._function = ALL_FUNCTIONS
        self._fill_combo()
        stats = self._diff.stats()
        if self._diff.changed:
            self.summary_label.setText(
                f"{stats[D.CHANGED]} changed, {stats[D.ADDED]} added, {stats[D.REMOVED]} removed functions · "
                f"+{stats['added_lines']} −{stats['removed_lines']} lines"
            )
        else:
            self.summary_label.setText("no change")
        self.function_combo.setEnabled(True)
        self.hide_unchanged_box.setEnabled(True)
        self._render()

    def set_error(self, step_title: str, error_text: str, last_good_script: Optional[str]) -> None:
        """Error mode: the plain error of ``step_title`` on the right, the last good IR on the left."""
        self._diff = None
        self._rows = []
        self.function_combo.clear()
        self.function_combo.setEnabled(False)
        self.hide_unchanged_box.setEnabled(False)
        self.left_title.setText(f"Last good IR (input of {step_title})" if step_title else "Last good IR")
        self.right_title.setText(f"{step_title} failed" if step_title else "Step failed")
        self.left.set_text(last_good_script or "")
        self.error_text.setPlainText(error_text)
        self.right_stack.setCurrentWidget(self.error_text)
        self.summary_label.setText("step failed")

    def select_function(self, name: str) -> None:
        """Filter the view to one function (``""`` for all) without emitting ``function_selected``."""
        self._function = name
        index = self.function_combo.findData(name)
        if index >= 0:
            self.function_combo.setCurrentIndex(index)
        self._render()

    def set_hide_unchanged(self, hide: bool) -> None:
        """Check/uncheck "hide unchanged functions"."""
        self.hide_unchanged_box.setChecked(hide)

    def refresh_palette(self) -> None:
        """Re-tint and re-highlight after a palette change."""
        for editor in (self.left, self.right):
            if editor.highlighter is not None:
                editor.highlighter.refresh_palette()
        self._render()

    # -- internals ---------------------------------------------------------------------------------
    def _fill_combo(self) -> None:
        assert self._diff is not None
        self.function_combo.blockSignals(True)
        self.function_combo.clear()
        self.function_combo.addItem("All functions", ALL_FUNCTIONS)
        for f in self._diff.functions:
            if not f.is_function:
                continue
            self.function_combo.addItem(f"{_STATUS_MARK[f.status]} {f.name}", f.name)
            self.function_combo.setItemData(
                self.function_combo.count() - 1, f"{f.name}: {f.status}", Qt.ItemDataRole.ToolTipRole
            )
        index = self.function_combo.findData(self._function)
        self.function_combo.setCurrentIndex(max(0, index))
        self.function_combo.blockSignals(False)

    def _on_combo_activated(self, index: int) -> None:
        name = self.function_combo.itemData(index) or ALL_FUNCTIONS
        self._function = name
        self._render()
        self.function_selected.emit(name)

    def _render(self) -> None:
        if self._diff is None:
            return
        if self._function:
            rows = self._diff.rows(self._function)
        else:
            rows = self._diff.rows(hide_unchanged=self.hide_unchanged_box.isChecked())
        self._rows = rows
        colors = diff_colors(palette_is_dark(self.palette()))
        left_bg: dict[int, QColor] = {}
        right_bg: dict[int, QColor] = {}
        for i, row in enumerate(rows):
            tag = row.tag
            if tag == D.REPLACE:
                left_bg[i] = colors["removed"]
                right_bg[i] = colors["added"]
            elif tag == D.DELETE:
                left_bg[i] = colors["removed"]
                right_bg[i] = colors["pad"]
            elif tag == D.INSERT:
                left_bg[i] = colors["pad"]
                right_bg[i] = colors["added"]
        for editor, texts, numbers, bg in (
            (self.left, [r.left_text for r in rows], [r.left_no for r in rows], left_bg),
            (self.right, [r.right_text for r in rows], [r.right_no for r in rows], right_bg),
        ):
            editor.setUpdatesEnabled(False)
            editor.set_text("\n".join(texts))
            editor.set_line_numbers(numbers)
            editor.set_line_backgrounds(bg)
            editor.setUpdatesEnabled(True)
        first_change = next((i for i, r in enumerate(rows) if r.tag not in (D.EQUAL, D.GAP)), None)
        if first_change is not None:
            self.scroll_to_row(max(0, first_change - 3))

    def scroll_to_row(self, row: int) -> None:
        """Scroll both sides so that ``row`` is at the top."""
        self.left.verticalScrollBar().setValue(row)

    def _sync(self, bar, value: int) -> None:  # noqa: ANN001
        if self._syncing:
            return
        self._syncing = True
        try:
            bar.setValue(value)
        finally:
            self._syncing = False
