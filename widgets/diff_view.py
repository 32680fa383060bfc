"""Side-by-side TVMScript diff view (before/after a pipeline step), with an error mode.

``DiffView.set_snapshots(before, after, before_title, after_title)`` shows the two module texts
aligned row by row (``pipeline_model.diff``): removed lines tinted red on the left, added lines green
on the right, padding rows grey; both sides scroll together. A combo filters one function, a check
box hides unchanged functions. ``set_error(step_title, error_text, last_good_script, traceback,
location)`` shows a failed step: its plain error text, the line of the user's code it points at (a
link: ``location_activated``), the traceback behind a "Details" toggle (the user's frames first), and
the last good IR.
"""

from __future__ import annotations

import html
from typing import Optional

from PySide6.QtCore import QEvent, QObject, QRunnable, Qt, QThreadPool, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QToolButton,
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
from widgets.error_trace import ErrorLocation, user_frames_first
from widgets.highlight import palette_is_dark

ALL_FUNCTIONS = ""
#: Module texts with more lines than this (both sides together) are diffed on a worker thread.
ASYNC_LINES = 4000


class _DiffSignals(QObject):
    done = Signal(int, object)


class _DiffTask(QRunnable):
    """``diff_snapshots`` off the GUI thread (the view keeps only the latest generation's result)."""

    def __init__(self, generation: int, before: Optional[str], after: Optional[str], signals: _DiffSignals) -> None:
        super().__init__()
        self.generation, self.before, self.after, self.signals = generation, before, after, signals

    def run(self) -> None:  # noqa: D102 - QRunnable API
        try:
            result: object = D.diff_snapshots(self.before, self.after)
        except Exception as exc:  # noqa: BLE001 - shown by the view
            result = exc
        self.signals.done.emit(self.generation, result)

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

    Signals: ``function_selected(str)`` when the user picks a function in the filter ("" = all);
    ``location_activated(ErrorLocation)`` when the user clicks the error's "show the line" link.
    """

    function_selected = Signal(str)
    location_activated = Signal(object)
    #: The diff asked for last is on screen (large diffs are computed on a worker thread).
    diff_shown = Signal()

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.async_lines = ASYNC_LINES
        self._generation = 0
        self._busy = False
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._diff_signals = _DiffSignals(self)
        self._diff_signals.done.connect(self._on_diff_done)
        self._diff: Optional[D.ModuleDiff] = None
        self._before: Optional[str] = None
        self._after: Optional[str] = None
        self._titles = ("", "")
        self._function = ALL_FUNCTIONS
        self._syncing = False
        self._rows: list[D.DiffRow] = []
        self._tints_dark = palette_is_dark(self.palette())

        self.function_combo = QComboBox()
        self.function_combo.setMinimumContentsLength(24)
        self.function_combo.setToolTip(self.tr("Show one function (+ added, − removed, ~ changed)"))
        self.function_combo.activated.connect(self._on_combo_activated)
        self.hide_unchanged_box = QCheckBox(self.tr("Hide unchanged functions"))
        self.hide_unchanged_box.toggled.connect(lambda _=False: self._render())
        self.summary_label = QLabel()
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(QLabel(self.tr("Function:")))
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
        self.error_text.setMinimumHeight(3 * self.error_text.fontMetrics().height())
        self.error_location: Optional[ErrorLocation] = None
        self.location_label = QLabel()
        self.location_label.setObjectName("errorLocation")
        self.location_label.setWordWrap(True)
        self.location_label.setTextFormat(Qt.TextFormat.RichText)
        self.location_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.location_label.linkActivated.connect(self._on_location_link)
        self.details_button = QToolButton()
        self.details_button.setObjectName("errorDetails")
        self.details_button.setCheckable(True)
        self.details_button.setAutoRaise(True)
        self.details_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.details_button.setToolTip(self.tr("Show the traceback (your code's frames first)"))
        self.details_button.toggled.connect(self._on_details_toggled)
        self.traceback_view = CodeEditor(read_only=True, highlight=False)
        self.traceback_view.setObjectName("errorTraceback")
        self.traceback_view.hide()
        self.error_page = QWidget()
        ev = QVBoxLayout(self.error_page)
        ev.setContentsMargins(0, 0, 0, 0)
        ev.setSpacing(2)
        ev.addWidget(self.location_label)
        self.error_split = QSplitter(Qt.Orientation.Vertical)
        self.error_split.addWidget(self.error_text)
        details_box = QWidget()
        dv = QVBoxLayout(details_box)
        dv.setContentsMargins(0, 0, 0, 0)
        dv.setSpacing(0)
        dv.addWidget(self.details_button, 0, Qt.AlignmentFlag.AlignLeft)
        dv.addWidget(self.traceback_view, 1)
        self.error_split.addWidget(details_box)
        self.error_split.setChildrenCollapsible(False)
        self.error_split.setStretchFactor(0, 1)
        self.error_split.setStretchFactor(1, 3)
        ev.addWidget(self.error_split, 1)
        self._update_details_button()

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
        self.right_stack.addWidget(self.error_page)
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
        return self.right_stack.currentWidget() is self.error_page

    @property
    def details_shown(self) -> bool:
        """True while the traceback of a failed step is expanded."""
        return self.details_button.isChecked()

    def is_busy(self) -> bool:
        """True while a large diff is computed for the latest :meth:`set_snapshots`."""
        return self._busy

    def clear(self) -> None:
        """Show nothing."""
        self._generation += 1
        self._busy = False
        self._diff = None
        self._before = self._after = None
        self._rows = []
        self._function = ALL_FUNCTIONS
        self.error_location = None
        self.right_stack.setCurrentWidget(self.right)
        self.left.set_text("")
        self.right.set_text("")
        self.left_title.setText(self.tr("Before"))
        self.right_title.setText(self.tr("After"))
        self.summary_label.setText("")
        self.function_combo.clear()
        self.function_combo.setEnabled(False)
        self.hide_unchanged_box.setEnabled(False)

    def set_snapshots(
        self, before: Optional[str], after: Optional[str], before_title: str = "", after_title: str = ""
    ) -> None:
        """Show the diff of two module texts (``None``: no module on that side). Large texts are diffed on
        a worker thread (``diff_shown`` when on screen); small ones at once."""
        self._before, self._after = before, after
        self._titles = (before_title, after_title)
        self.error_location = None
        self.right_stack.setCurrentWidget(self.right)
        self.left_title.setText(before_title or self.tr("Before"))
        self.right_title.setText(after_title or self.tr("After"))
        self._generation += 1
        lines = (before or "").count("\n") + (after or "").count("\n")
        if lines > self.async_lines:
            self._busy = True
            self.summary_label.setText(self.tr("Comparing {0} lines…").format(lines))
            self._diff, self._rows = None, []
            self.left.set_text("")
            self.right.set_text("")
            self._pool.clear()
            self._pool.start(_DiffTask(self._generation, before, after, self._diff_signals))
            return
        self._busy = False
        self._show_diff(D.diff_snapshots(before, after))

    def _on_diff_done(self, generation: int, result: object) -> None:
        if generation != self._generation:
            return  # superseded by a newer set_snapshots/clear/set_error
        self._busy = False
        if isinstance(result, Exception):
            self.summary_label.setText(self.tr("Cannot compare: {0}").format(result))
            return
        self._show_diff(result)  # type: ignore[arg-type]

    def _show_diff(self, diff: D.ModuleDiff) -> None:
        self._diff = diff
        names = self._diff.names()
        if self._function and self._function not in names:
            self._function = ALL_FUNCTIONS
        self._fill_combo()
        stats = self._diff.stats()
        if self._diff.changed:
            self.summary_label.setText(
                self.tr("{changed} changed, {added} added, {removed} removed functions · +{plus} −{minus} lines").format(
                    changed=stats[D.CHANGED], added=stats[D.ADDED], removed=stats[D.REMOVED],
                    plus=stats["added_lines"], minus=stats["removed_lines"])
            )
        else:
            self.summary_label.setText(self.tr("no change"))
        self.function_combo.setEnabled(True)
        self.hide_unchanged_box.setEnabled(True)
        self._render()
        self.diff_shown.emit()

    def set_not_run(self, step_title: str, failed_step: Optional[str] = None) -> None:
        """A step that did not run because an earlier step failed (or the run stopped): a plain message,
        no diff (its "after" side does not exist, it is not an empty module)."""
        self.clear()
        if failed_step:
            text = self.tr("{0}: not run (an earlier step failed: {1})").format(step_title, failed_step)
        else:
            text = self.tr("{0}: not run (an earlier step failed)").format(step_title)
        self.left_title.setText(text)
        self.right_title.setText("")
        self.summary_label.setText(self.tr("not run (an earlier step failed)"))

    def set_error(
        self,
        step_title: str,
        error_text: str,
        last_good_script: Optional[str],
        traceback: str = "",
        location: Optional[ErrorLocation] = None,
    ) -> None:
        """Error mode: the plain error of ``step_title`` on the right, the last good IR on the left.

        ``location``: the line of the user's code the error points at (shown as a link above the
        message); ``traceback``: shown under "Details", the user's frames first."""
        self._generation += 1  # a large diff still computing is dropped
        self._busy = False
        self._diff = None
        self._rows = []
        self.function_combo.clear()
        self.function_combo.setEnabled(False)
        self.hide_unchanged_box.setEnabled(False)
        self.left_title.setText(self.tr("Last good IR (input of {step})").format(step=step_title) if step_title
                                else self.tr("Last good IR"))
        self.right_title.setText(self.tr("{step} failed").format(step=step_title) if step_title else self.tr("Step failed"))
        self.left.set_text(last_good_script or "")
        self.error_text.setPlainText(error_text)
        self.error_location = location
        if location is not None:
            where = html.escape(location.describe())
            link = self.tr("show the line in the editor") if location.is_custom_source else self.tr("show the file")
            self.location_label.setText(
                self.tr("<b>Error at {where}</b>: {message} — <a href='location'>{link}</a>").format(
                    where=where, message=html.escape(location.message), link=link)
            )
            self.location_label.show()
        else:
            self.location_label.clear()
            self.location_label.hide()
        files = [location.file] if location is not None else []
        self.traceback_view.set_text(user_frames_first(traceback, files) if traceback else "")
        self.details_button.setVisible(bool(traceback))
        self.traceback_view.setVisible(bool(traceback) and self.details_button.isChecked())
        self._update_details_button()
        self._balance_error_split()
        self.right_stack.setCurrentWidget(self.error_page)
        self.summary_label.setText(self.tr("step failed at {where}").format(where=location.describe())
                                   if location is not None else self.tr("step failed"))

    def set_details_shown(self, shown: bool) -> None:
        """Expand or collapse the traceback of a failed step (kept for the next failed step)."""
        self.details_button.setChecked(shown)

    def _on_details_toggled(self, checked: bool) -> None:
        self.traceback_view.setVisible(checked and bool(self.traceback_view.text()))
        self._update_details_button()
        self._balance_error_split()

    def _balance_error_split(self) -> None:
        # The message is a line or two: give the traceback most of the room while it is shown.
        if self.traceback_view.isVisibleTo(self.error_page):
            self.error_split.setSizes([1, 3])
        else:
            self.error_split.setSizes([3, 1])

    def _update_details_button(self) -> None:
        checked = self.details_button.isChecked()
        self.details_button.setArrowType(Qt.ArrowType.DownArrow if checked else Qt.ArrowType.RightArrow)
        self.details_button.setText(self.tr("Hide traceback") if checked else self.tr("Details: traceback"))

    def _on_location_link(self, _href: str) -> None:
        if self.error_location is not None:
            self.location_activated.emit(self.error_location)

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
        self._tints_dark = palette_is_dark(self.palette())
        self._render()

    def changeEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt API
        """Follow a light/dark palette switch: line tints and the error link's colour."""
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            if palette_is_dark(self.palette()) != self._tints_dark:
                self._tints_dark = palette_is_dark(self.palette())
                self._render()
            text = self.location_label.text()
            if text:  # rich text keeps the link colour it was laid out with
                self.location_label.clear()
                self.location_label.setText(text)
        super().changeEvent(event)

    # -- internals ---------------------------------------------------------------------------------
    def _fill_combo(self) -> None:
        assert self._diff is not None
        self.function_combo.blockSignals(True)
        self.function_combo.clear()
        self.function_combo.addItem(self.tr("All functions"), ALL_FUNCTIONS)
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
        self._tints_dark = palette_is_dark(self.palette())
        colors = diff_colors(self._tints_dark)
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
