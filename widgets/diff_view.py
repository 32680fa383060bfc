"""Side-by-side TVMScript diff view (before/after a pipeline step), with an error mode.

``DiffView.set_snapshots(before, after, before_title, after_title)`` shows the two module texts
aligned row by row (``pipeline_model.diff``): removed lines tinted red on the left, added lines green
on the right, padding rows grey; both sides scroll together. A combo filters one function, a check
box hides unchanged functions. ``set_error(step_title, error_text, last_good_script, traceback,
location)`` shows a failed step: its plain error text, the line of the user's code it points at (a
link: ``location_activated``), the traceback behind a "Details" toggle (the user's frames first), and
the last good IR.

Large texts never hold the GUI thread long: a diff of more than ``async_lines`` lines is computed off the
GUI thread, in the diff process (``pipeline_model.diff_process``; above ``process_lines`` lines, from a
worker thread that waits with the GIL released and assembles the small answer; if the process fails, in
that thread), its rows are made piece by piece (``pipeline_model.diff.RowTable``), and more than
``async_lines`` rows (or a big last good IR) are put into the editors in pieces of ``fill_chunk_rows``
rows, at most ``fill_budget_ms`` of GUI-thread time per event-loop turn
(the top rows appear at once; painting, scrolling and input go on in between). A newer
``set_snapshots``/``clear``/``set_error`` drops a fill under way (generation counter).
"""

from __future__ import annotations

import html
import os
import time
from operator import attrgetter
from typing import TYPE_CHECKING, Callable, Optional

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QRunnable, Qt, QThreadPool, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QToolButton,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from pipeline_model import diff as D
from pipeline_model import gc_pause
from widgets.code_editor import CodeEditor
from widgets.error_trace import ErrorLocation, user_frames_first
from widgets.highlight import palette_is_dark
from widgets.stable_label import StableLabel

if TYPE_CHECKING:  # imported with the first diff that needs it (a big one), not with the view
    from pipeline_model.diff_process import DiffProcess

ALL_FUNCTIONS = ""
#: Module texts with more lines than this (both sides together) are diffed off the GUI thread, and more
#: rows than this are put into the editors piece by piece.
ASYNC_LINES = 4000
#: Module texts with more lines than this (both sides together) are diffed in the diff process
#: (:mod:`pipeline_model.diff_process`): in a thread of this process the diff's long string operations
#: hold the GIL the GUI thread needs.
PROCESS_LINES = 4000
#: Rows appended to each editor per piece of a piecewise fill (~1 ms per side on the 2-core machine).
FILL_CHUNK_ROWS = 250
#: GUI-thread time a piecewise fill may take per event-loop turn before it yields.
FILL_BUDGET_MS = 6.0
#: Longest line put into an editor as it is; a longer one is cut there with a note of what was left out.
#: (An 800-layer model's ``forward`` signature is one 530,000-character line: laying it out for the first
#: paint took ~85 ms of GUI-thread time per side, and no one reads it past the first screens.)
MAX_SHOWN_CHARS = 10_000


#: Whether views diff large texts in the diff process (``RPS_DIFF_PROCESS=0``: always in a thread).
_USE_PROCESS = os.environ.get("RPS_DIFF_PROCESS", "1") != "0"


class _DiffSignals(QObject):
    done = Signal(int, object)


class _DiffTask(QRunnable):
    """The diff of two large texts off the GUI thread (the view keeps only the latest generation's result):
    in the diff process (:mod:`pipeline_model.diff_process`) when one is given and usable, else here."""

    def __init__(self, generation: int, before: Optional[str], after: Optional[str], signals: _DiffSignals,
                 process: Optional[DiffProcess] = None, latest: Optional[list[int]] = None) -> None:
        super().__init__()
        self.generation, self.before, self.after, self.signals = generation, before, after, signals
        self.process, self.latest = process, latest

    def run(self) -> None:  # noqa: D102 - QRunnable API
        if self.latest is not None and self.latest[0] != self.generation:
            return  # superseded before it started
        # A 50k-line diff is ~10^5 new objects: collections of the whole heap meanwhile (10-50 ms each,
        # GIL held) would stall the GUI thread. Paused, then frozen: the diff stays on screen, later
        # collections skip it, and reference counting frees it (no cycles) when it is replaced.
        # (pipeline_model.gc_pause: other threads may pause the collector at the same time.)
        with gc_pause.paused(freeze=True):
            try:
                result: object = self._compute()
            except Exception as exc:  # noqa: BLE001 - shown by the view
                result = exc
        self.signals.done.emit(self.generation, result)

    def _compute(self) -> D.ModuleDiff:
        process = self.process
        if process is not None and process.usable:
            from pipeline_model.diff_process import DiffProcessError

            try:
                return process.diff(self.before, self.after)
            except DiffProcessError:
                if process.closed:  # the app is closing: no diff to show
                    raise
                # The process crashed, hung or is gone: the same diff in this thread, nothing said.
        return D.diff_snapshots(self.before, self.after)


_STATUS_MARK = {D.ADDED: "+", D.REMOVED: "−", D.CHANGED: "~", D.UNCHANGED: " "}


#: An editor holding more lines than this is emptied in an event-loop turn of its own before a fill
#: (dropping a 50k-line document costs ~10 ms).
CLEAR_ALONE_BLOCKS = 15000


class _Side:
    """What one editor gets from a fill: ``texts`` (one per row), and for a diff side the rows' gutter
    numbers and tints by row tag (``rows`` + ``side`` "left"/"right"; ``largest``: the biggest line
    number, for the gutter's width)."""

    def __init__(self, editor: CodeEditor, texts: Optional[list[str]] = None,
                 rows: Optional[D.RowTable] = None, side: str = "left",
                 tints: Optional[dict[str, QColor]] = None) -> None:
        self.editor, self.texts, self.rows, self.tints = editor, texts, rows, tints or {}
        self.text_of = attrgetter(f"{side}_text")
        self.number_of = attrgetter(f"{side}_no")
        self.total = len(rows) if rows is not None else len(texts or [])
        self.largest = 1
        if rows is not None:
            self.largest = rows.last_number(side) or 1

    def put(self, lo: int, hi: int, total_rows: int) -> None:
        """Rows ``lo..hi-1`` into the editor (``lo == 0``: replacing what it showed). Few Python objects
        per piece (no tuple per row), so a fill does not set off the garbage collector."""
        hi = min(hi, self.total)
        if lo >= hi and lo > 0:
            return
        editor = self.editor
        part = self.rows.rows(lo, hi) if self.rows is not None else None  # made for this piece only
        if part is not None:
            texts = list(map(self.text_of, part))
            numbers = list(map(self.number_of, part))
            tints = self.tints
            backgrounds = {i: tints[r.tag] for i, r in enumerate(part, lo) if r.tag in tints}
        else:
            texts = (self.texts or [])[lo:hi]
        if max(map(len, texts), default=0) > MAX_SHOWN_CHARS:
            texts = [_cut(t) for t in texts]
        text = "\n".join(texts)
        if lo == 0:
            editor.set_text(text, pieces_follow=hi < total_rows)
            if part is not None:
                editor.set_line_numbers(numbers, largest=self.largest)
                editor.set_line_backgrounds(backgrounds)
        else:
            editor.append_text(text, notify=False)  # the fill calls appended() once per turn
            if part is not None:
                editor.extend_line_numbers(numbers)
                if backgrounds:
                    editor.add_line_backgrounds(backgrounds)


def _cut(line: str) -> str:
    """``line`` as shown: cut after :data:`MAX_SHOWN_CHARS` characters, with a note of how many were left out."""
    if len(line) <= MAX_SHOWN_CHARS:
        return line
    return line[:MAX_SHOWN_CHARS] + QCoreApplication.translate(
        "DiffView", "  … [{0} more characters not shown]").format(f"{len(line) - MAX_SHOWN_CHARS:,}")


class _Fill:
    """Rows being put into the editors, piece by piece; ``done`` rows are in. ``clear``: big editors to
    empty first, one per event-loop turn."""

    def __init__(self, generation: int, sides: list[_Side], scroll_row: Optional[int], is_diff: bool,
                 clear: list[CodeEditor], on_done: Optional[Callable[[], None]] = None) -> None:
        self.generation, self.sides, self.scroll_row, self.is_diff = generation, sides, scroll_row, is_diff
        self.on_done = on_done
        self.total = max((side.total for side in sides), default=0)
        self.done = 0
        self.started = 0  # sides that have their first piece
        self.clear = [editor for editor in clear if editor.blockCount() > CLEAR_ALONE_BLOCKS]


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
    #: The diff asked for last is on screen, all its rows in the editors (large diffs are computed on a
    #: worker thread and put in by pieces; also after a re-render: function chooser, hide-unchanged).
    diff_shown = Signal()
    #: The diff asked for last is computed (``module_diff`` is set); its rows may still be coming in.
    diff_ready = Signal()

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self._init_state()
        bar = self._build_bar()
        self._build_editors()
        self._build_error_page()
        self._build_panes()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.splitter, 1)
        for a, b in ((self.left, self.right), (self.right, self.left)):
            a.verticalScrollBar().valueChanged.connect(self._on_user_scroll)
            a.verticalScrollBar().valueChanged.connect(lambda v, b=b: self._sync(b.verticalScrollBar(), v))
            a.horizontalScrollBar().valueChanged.connect(lambda v, b=b: self._sync(b.horizontalScrollBar(), v))
        self.clear()

    def _init_state(self) -> None:
        """What the view keeps besides its widgets: the diff shown, the fill in progress, the worker pool."""
        self.async_lines = ASYNC_LINES
        self.fill_chunk_rows = FILL_CHUNK_ROWS
        self.fill_budget_ms = FILL_BUDGET_MS
        self._generation = 0
        self._busy = False
        self._fill: Optional[_Fill] = None
        self._filling = False  # inside a piece: scroll changes are ours, not the user's
        self._fill_timer = QTimer(self)
        self._fill_timer.setSingleShot(True)
        self._fill_timer.setInterval(0)
        self._fill_timer.timeout.connect(self._continue_fill)
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
        self._rows: D.RowTable = D.RowTable()
        #: Texts with more lines than this are diffed in a diff process: ``diff_process``, or the shared one
        #: (``pipeline_model.diff_process.shared()``) when that is None; never when ``use_diff_process`` is false.
        self.process_lines = PROCESS_LINES
        self.use_diff_process = _USE_PROCESS
        self.diff_process: Optional[DiffProcess] = None
        self._latest = [0]  # the generation asked for last, read by the diff task before it starts
        self._tints_dark = palette_is_dark(self.palette())

    def _build_bar(self) -> QHBoxLayout:
        """The top bar: function chooser, hide-unchanged box, summary."""
        self.function_combo = QComboBox()
        self.function_combo.setMinimumContentsLength(24)
        self.function_combo.setToolTip(self.tr("Show one function (+ added, − removed, ~ changed)"))
        self.function_combo.activated.connect(self._on_combo_activated)
        self.hide_unchanged_box = QCheckBox(self.tr("Hide unchanged functions"))
        self.hide_unchanged_box.toggled.connect(lambda _=False: self._render())
        # Titles and summary change with every step shown: labels whose size does not follow their text, so
        # a new text never relays out the main window (widgets.stable_label).
        self.summary_label = StableLabel(alignment=Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.summary_label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(QLabel(self.tr("Function:")))
        bar.addWidget(self.function_combo)
        bar.addWidget(self.hide_unchanged_box)
        bar.addWidget(self.summary_label, 1)
        return bar

    def _build_editors(self) -> None:
        """The two panes' titles and read-only editors."""
        self.left_title = StableLabel()
        self.right_title = StableLabel()
        for label in (self.left_title, self.right_title):
            label.setLabelStyleSheet("font-weight: bold; padding: 2px;")
        self.left = CodeEditor(read_only=True)
        self.right = CodeEditor(read_only=True)

    def _build_error_page(self) -> None:
        """What the right pane shows for a failed step: the error, its location link and the traceback."""
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

    def _build_panes(self) -> None:
        """Left pane (before), right pane (after, or the error page), side by side in :attr:`splitter`."""
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

    # -- API ---------------------------------------------------------------------------------------
    @property
    def module_diff(self) -> Optional[D.ModuleDiff]:
        """The diff on display (``None`` when cleared or in error mode)."""
        return self._diff

    @property
    def rows(self) -> list[D.DiffRow]:
        """The rows currently shown (after the function filter / hide-unchanged option); all of them, also
        while a large diff is still being put into the editors (:meth:`is_busy`)."""
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
        """True while a large diff is computed or put into the editors for the latest :meth:`set_snapshots`
        (``diff_shown`` comes when it is all in)."""
        return self._busy or (self._fill is not None and self._fill.is_diff)

    def is_filling(self) -> bool:
        """True while rows (of a diff or of the last good IR) are still being put into the editors."""
        return self._fill is not None

    def clear(self) -> None:
        """Show nothing (an editor holding a big text is emptied over the next event-loop turns)."""
        self._generation += 1
        self._stop_fill()
        self._busy = False
        self._diff = None
        self._before = self._after = None
        self._rows = D.RowTable()
        self._function = ALL_FUNCTIONS
        self.error_location = None
        self.right_stack.setCurrentWidget(self.right)
        self._start_fill(self._new_fill([_Side(self.left, []), _Side(self.right, [])], None, False), at_once=False)
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
        self._stop_fill()
        lines = (before or "").count("\n") + (after or "").count("\n")
        if lines > self.async_lines:
            self._busy = True
            self.summary_label.setText(self.tr("Comparing {0} lines…").format(lines))
            self._diff, self._rows = None, D.RowTable()
            # Empty both sides first (a big document is dropped in a turn of its own), then compute the diff
            # (not meanwhile: the worker's long string operations hold the GIL the GUI thread waits for).
            self._pool.clear()
            self._latest[0] = self._generation
            process = None
            if self.use_diff_process and lines > self.process_lines:
                from pipeline_model import diff_process

                process = self.diff_process or diff_process.shared()
            task = _DiffTask(self._generation, before, after, self._diff_signals, process, self._latest)
            self._start_fill(self._new_fill([_Side(self.left, []), _Side(self.right, [])], None, False,
                                            on_done=lambda: self._pool.start(task)), at_once=False)
            return
        self._busy = False
        self._show_diff(D.diff_snapshots(before, after), at_once=True)

    def _on_diff_done(self, generation: int, result: object) -> None:
        if generation != self._generation:
            return  # superseded by a newer set_snapshots/clear/set_error
        self._busy = False
        if isinstance(result, Exception):
            self.summary_label.setText(self.tr("Cannot compare: {0}").format(result))
            return
        self._show_diff(result)  # type: ignore[arg-type]

    def _show_diff(self, diff: D.ModuleDiff, at_once: bool = False) -> None:
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
        self.diff_ready.emit()
        self._render(at_once=at_once)  # diff_shown once all rows are in

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
        self._generation += 1  # a large diff still computing (or being put in) is dropped
        self._stop_fill()
        self._busy = False
        self._diff = None
        self._rows = D.RowTable()
        self.function_combo.clear()
        self.function_combo.setEnabled(False)
        self.hide_unchanged_box.setEnabled(False)
        self.left_title.setText(self.tr("Last good IR (input of {step})").format(step=step_title) if step_title
                                else self.tr("Last good IR"))
        self.right_title.setText(self.tr("{step} failed").format(step=step_title) if step_title else self.tr("Step failed"))
        good = (last_good_script or "").split("\n")
        self._start_fill(self._new_fill([_Side(self.left, good)], None, False),
                         at_once=len(good) <= self.async_lines)
        self.error_text.setPlainText(error_text)
        self.error_location = location
        if location is not None:
            where = html.escape(location.describe())
            link = self.tr("show the line in the editor") if location.is_custom_source else self.tr("show the file")
            self.location_label.setText(
                self.tr("<b>Error at {where}</b>: {message} — <a href='location'>{link}</a>").format(
                    where=where, message=f"<code>{html.escape(location.message)}</code>", link=link)  # Python's words
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
            status = {D.ADDED: self.tr("added"), D.REMOVED: self.tr("removed"), D.CHANGED: self.tr("changed"),
                      D.UNCHANGED: self.tr("unchanged")}.get(f.status, f.status)
            self.function_combo.setItemData(
                self.function_combo.count() - 1, f"<code>{html.escape(f.name)}</code>: {html.escape(status)}",
                Qt.ItemDataRole.ToolTipRole)
        index = self.function_combo.findData(self._function)
        self.function_combo.setCurrentIndex(max(0, index))
        self.function_combo.blockSignals(False)

    def _on_combo_activated(self, index: int) -> None:
        name = self.function_combo.itemData(index) or ALL_FUNCTIONS
        self._function = name
        self._render()
        self.function_selected.emit(name)

    def _render(self, at_once: bool = False) -> None:
        if self._diff is None:
            return
        # Rows as segments: made piece by piece as the fill puts them in (a 50k-row diff is ~10^5 objects).
        rows = self._diff.row_table(self._function or None, hide_unchanged=self.hide_unchanged_box.isChecked())
        self._rows = rows
        self._tints_dark = palette_is_dark(self.palette())
        colors = diff_colors(self._tints_dark)
        left_tints = {D.REPLACE: colors["removed"], D.DELETE: colors["removed"], D.INSERT: colors["pad"]}
        right_tints = {D.REPLACE: colors["added"], D.DELETE: colors["pad"], D.INSERT: colors["added"]}
        n = len(rows)
        sides = [_Side(self.left, rows=rows, side="left", tints=left_tints),
                 _Side(self.right, rows=rows, side="right", tints=right_tints)]
        first_change = rows.first_change()
        scroll_row = max(0, first_change - 3) if first_change is not None else None
        self._generation += 1  # a fill under way (an older render of this diff) is dropped
        self._stop_fill()
        # In pieces: from the next turn (this one updated the chooser and the summary, and may have dropped
        # the previous diff's ~10^5 objects).
        self._start_fill(self._new_fill(sides, scroll_row, True), at_once=at_once or n <= self.async_lines,
                         later=True)

    # -- piecewise fill ------------------------------------------------------------------------------
    def _stop_fill(self) -> None:
        self._fill = None
        self._fill_timer.stop()

    def _new_fill(self, sides: list[_Side], scroll_row: Optional[int], is_diff: bool,
                  on_done: Optional[Callable[[], None]] = None) -> _Fill:
        return _Fill(self._generation, sides, scroll_row, is_diff, [side.editor for side in sides], on_done)

    def _start_fill(self, fill: _Fill, at_once: bool, later: bool = False) -> None:
        """Put ``fill``'s rows in: all now (``at_once``) or the first pieces now (``later``: on the next
        turn) and the rest on later event-loop turns (big editors emptied first, one per turn, from the
        next turn on)."""
        self._fill = fill
        if at_once:
            fill.clear = []
            self._fill_pieces(fill, None)
        elif later or fill.clear:
            self._fill_timer.start()
        else:
            self._continue_fill()

    def _continue_fill(self) -> None:
        fill = self._fill
        if fill is None or fill.generation != self._generation:
            return
        if fill.clear:
            editor = fill.clear.pop(0)
            self._filling = True
            try:
                editor.set_text("")
            finally:
                self._filling = False
            self._fill_timer.start()
            return
        self._fill_pieces(fill, self.fill_budget_ms)

    def _scroll_due(self, fill: _Fill) -> bool:
        row = fill.scroll_row
        if row is None or fill.done == 0:
            return False
        first, last = self.left.visible_block_range()
        return fill.done >= fill.total or fill.done >= row + last - first

    def _first_piece(self, fill: _Fill) -> None:
        """The first piece of one side: its first screenful comes with highlighting and a full repaint, so
        each side gets a turn of its own."""
        side = fill.sides[fill.started]
        hi = min(fill.total, max(1, self.fill_chunk_rows))
        side.editor.setUpdatesEnabled(False)
        self._filling = True
        try:
            side.put(0, hi, fill.total)
        finally:
            self._filling = False
            side.editor.setUpdatesEnabled(True)
        fill.started += 1
        if fill.started == len(fill.sides):
            fill.done = hi
        self._fill_timer.start()

    def _fill_pieces(self, fill: _Fill, budget_ms: Optional[float]) -> None:
        if budget_ms is not None and fill.done == 0 and fill.total > 0 and len(fill.sides) > 1:
            self._first_piece(fill)
            return
        start = time.perf_counter()
        # The first piece replaces the texts (one repaint after); later ones repaint only what is in view.
        editors = [side.editor for side in fill.sides] if fill.done == 0 else []
        for editor in editors:
            editor.setUpdatesEnabled(False)
        appended: set[CodeEditor] = set()
        self._filling = True
        try:
            # Scrolling to the first change lays out and highlights a screenful: a turn of its own.
            while not (budget_ms is not None and self._scroll_due(fill)):
                lo = fill.done
                hi = fill.total if budget_ms is None else min(fill.total, lo + max(1, self.fill_chunk_rows))
                for side in fill.sides:
                    side.put(lo, hi, fill.total)
                    if lo > 0:
                        appended.add(side.editor)
                fill.done = hi
                if fill.done >= fill.total:
                    break
                if budget_ms is not None and (time.perf_counter() - start) * 1000 >= budget_ms:
                    break
            for editor in appended:
                editor.appended()
            complete = fill.done >= fill.total
            if self._scroll_due(fill) and (complete or not appended):
                row = fill.scroll_row
                assert row is not None
                fill.scroll_row = None
                self.scroll_to_row(row)
        finally:
            self._filling = False
            for editor in editors:
                editor.setUpdatesEnabled(True)
        if not complete:
            self._fill_timer.start()
            return
        self._fill = None
        if fill.on_done is not None:
            fill.on_done()
        if fill.is_diff:
            self.diff_shown.emit()

    def _on_user_scroll(self, _value: int) -> None:  # noqa: D401 - slot
        # The user scrolled while a big diff is being put in: leave the view where they put it.
        if not self._filling and not self._syncing and self._fill is not None:
            self._fill.scroll_row = None

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

