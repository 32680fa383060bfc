"""Profile table of a built module: where one run's time goes, per callee (TVM-free Qt widget).

Shows a :class:`pipeline_model.build_api.Profile` (from ``build_run`` with ``profile`` or the engine's
``profile`` command) as a sortable table: function, calls per run, total and mean time per run, and
share of the total with a bar. Activating a row emits :attr:`ProfileView.callee_activated` with the
callee name (the graph view can select the nodes in ``profile.nodes[name]``).

*Compare with:* a chooser of other profiled modules (filled by the app, :meth:`ProfileView.set_compare_choices`;
the choice is :attr:`ProfileView.compare_chosen`) and, when the app gives a
:class:`pipeline_model.build_api.ProfileComparison` (:meth:`ProfileView.set_comparison`), a second table per
callee: time before and after, change, ratio and share, largest change first, callees present on one
side only marked *added* / *removed*, a change inside the spread of the instrumented runs shown as "no
significant difference (±x %)" (no ratio, no colour), and a summary line (total before → after, ratio, and
the verdict over the runs' wall times).
"""

from __future__ import annotations

from typing import Any, Optional

import math

from PySide6.QtCore import QAbstractTableModel, QCoreApplication, QModelIndex, QPersistentModelIndex, QRect, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPalette
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QStackedWidget,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from pipeline_model.build_api import (ADDED, IN_BOTH, PROFILE_KERNELS, REMOVED, Profile, ProfileComparison, ProfileDiffRow,
                                      ProfileEntry)
from pipeline_model.latency_stats import NO_DIFFERENCE
from widgets.compare_view import no_difference_text, verdict_label
from widgets.latency_chart import format_us


def callee_kind_text(kind: str) -> str:
    """The shown name of a profiled callee's kind (the engine's ``prim_func``, ``relax_function``, ``builtin``,
    ``packed``); an unknown kind as it came."""
    texts = {
        "prim_func": QCoreApplication.translate("ProfileView", "PrimFunc"),
        "relax_function": QCoreApplication.translate("ProfileView", "Relax function"),
        "builtin": QCoreApplication.translate("ProfileView", "VM built-in"),
        "packed": QCoreApplication.translate("ProfileView", "packed function"),
    }
    return texts.get(kind, kind)

#: Role carrying the raw sort value of a cell.
SORT_ROLE = Qt.ItemDataRole.UserRole + 1
#: Role carrying the share (0..1) for the bar delegate.
SHARE_ROLE = Qt.ItemDataRole.UserRole + 2

_ModelIndex = QModelIndex | QPersistentModelIndex
# Text colours of a change: faster (negative delta) and slower; readable on light and dark palettes.
FASTER_COLOUR, SLOWER_COLOUR = QColor("#2e9d4a"), QColor("#d0453a")


def format_delta_us(value: float) -> str:
    """A signed change of time: ``+12.3 µs``, ``−1.20 ms`` (a real minus sign), ``0 µs``."""
    if value == 0:
        return format_us(0.0)
    return ("+" if value > 0 else "\u2212") + format_us(abs(value))


def format_ratio(ratio: Optional[float]) -> str:
    """``after / before`` as ``0.42×``, ``12.5×``, ``250×`` (``–`` when unknown)."""
    if ratio is None or math.isnan(ratio):
        return "–"
    return f"{ratio:.2f}×" if ratio < 10 else f"{ratio:.1f}×" if ratio < 100 else f"{ratio:.0f}×"


class _RowsModel(QAbstractTableModel):
    """A flat table over a list of rows (``_rows``), one column per name in ``COLUMNS``."""

    COLUMNS: tuple[str, ...] = ()

    def __init__(self, parent: Optional[Any] = None) -> None:
        super().__init__(parent)
        self._rows: list[Any] = []

    def _replace(self, rows: list[Any]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def _sorted(self, key: Any, descending: bool, ties: Any = None) -> None:
        """The rows sorted by ``key``, equal ones by ``ties`` when given (views told the layout changed)."""
        self.layoutAboutToBeChanged.emit()
        if ties is not None:
            self._rows.sort(key=ties)
        self._rows.sort(key=key, reverse=descending)
        self.layoutChanged.emit()

    def rowCount(self, parent: _ModelIndex = QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: _ModelIndex = QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else len(self.COLUMNS)


class QtProfileModel(_RowsModel):
    """Rows = profile entries; columns: function, calls, total, mean, share."""

    COLUMNS = ("function", "calls", "total", "mean", "share")

    def set_entries(self, entries: list[ProfileEntry]) -> None:
        """Replace the rows."""
        self._replace(entries)

    def entry(self, row: int) -> ProfileEntry:
        """The entry shown in ``row``."""
        return self._rows[row]

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802 - Qt API
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or role != Qt.ItemDataRole.DisplayRole:
            return None
        titles = (self.tr("Function"), self.tr("Calls"), self.tr("Total / run"), self.tr("Mean / call"),
                  self.tr("Share"))
        return titles[section] if 0 <= section < len(titles) else None

    def data(self, index: _ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        e, col = self._rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (e.name, str(e.calls), format_us(e.total_us), format_us(e.mean_us), f"{e.share * 100:.1f} %")[col]
        if role == SORT_ROLE:
            return (e.name, e.calls, e.total_us, e.mean_us, e.share)[col]
        if role == SHARE_ROLE and col == 4:
            return e.share
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.tr("%1 (%2): %3 calls, %4 per run (min %5, max %6 over the runs)").replace(
                "%1", e.name).replace("%2", callee_kind_text(e.kind)).replace("%3", str(e.calls)).replace(
                "%4", format_us(e.total_us)).replace("%5", format_us(e.min_total_us)).replace(
                "%6", format_us(e.max_total_us))
        if role == Qt.ItemDataRole.TextAlignmentRole and col > 0:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort by ``column`` (numbers numerically)."""
        keys = (lambda e: e.name.lower(), lambda e: e.calls, lambda e: e.total_us, lambda e: e.mean_us,
                lambda e: e.share)
        if not 0 <= column < len(keys):
            return
        self._sorted(keys[column], order == Qt.SortOrder.DescendingOrder)


class QtProfileDiffModel(_RowsModel):
    """Rows = callees of two profiles compared; columns: function, before, after, change, ratio, share."""

    COLUMNS = ("function", "before", "after", "delta", "ratio", "share")

    def set_rows(self, rows: list[ProfileDiffRow]) -> None:
        """Replace the rows."""
        self._replace(rows)

    def row_data(self, row: int) -> ProfileDiffRow:
        """The callee shown in ``row``."""
        return self._rows[row]

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802 - Qt API
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            titles = (self.tr("Function"), self.tr("Before / run"), self.tr("After / run"), self.tr("Change"),
                      self.tr("Ratio"), self.tr("Share"))
            return titles[section] if 0 <= section < len(titles) else None
        if role == Qt.ItemDataRole.ToolTipRole:
            tips = ("", "", "", self.tr("After minus before; sorted by the size of the change"),
                    self.tr("After / before (below 1: faster)"), self.tr("Share of each profile's total"))
            return tips[section] or None if 0 <= section < len(tips) else None
        return None

    def _status_text(self, r: ProfileDiffRow) -> str:
        return self.tr("added") if r.status == ADDED else self.tr("removed")

    def _display(self, r: ProfileDiffRow, col: int) -> str:
        if col == 0:
            return r.name
        if col == 1:
            return format_us(r.before_us) if r.before_us is not None else "–"
        if col == 2:
            return format_us(r.after_us) if r.after_us is not None else "–"
        if col == 3:
            return format_delta_us(r.delta_us)
        if col == 4:
            if r.status != IN_BOTH:
                return self._status_text(r)
            if r.verdict == NO_DIFFERENCE:
                return no_difference_text(r.noise_pct)
            return format_ratio(r.ratio)
        before = f"{r.share_before * 100:.1f} %" if r.share_before is not None else "–"
        after = f"{r.share_after * 100:.1f} %" if r.share_after is not None else "–"
        return f"{before} → {after}"

    def _sort_value(self, r: ProfileDiffRow, col: int) -> Any:
        if col == 4:  # removed < any ratio < added
            return r.ratio if r.ratio is not None else (-1.0 if r.status == REMOVED else math.inf)
        return (r.name.lower(), r.before_us if r.before_us is not None else -1.0,
                r.after_us if r.after_us is not None else -1.0, abs(r.delta_us), 0.0,
                r.share_after if r.share_after is not None else -1.0)[col]

    def data(self, index: _ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        r, col = self._rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(r, col)
        if role == SORT_ROLE:
            return self._sort_value(r, col)
        if role == SHARE_ROLE and col == 5:
            return float(r.share_after or 0.0)
        if role == Qt.ItemDataRole.ForegroundRole and col in (3, 4) and r.delta_us and r.significant:
            return QBrush(FASTER_COLOUR if r.delta_us < 0 else SLOWER_COLOUR)
        if role == Qt.ItemDataRole.FontRole and r.status != IN_BOTH:
            font = QFont()
            font.setItalic(True)
            return font
        if role == Qt.ItemDataRole.ToolTipRole:
            if r.status == ADDED:
                return self.tr("%1 (%2) is only in the later profile (a new or renamed function): %3 per run").replace(
                    "%1", r.name).replace("%2", callee_kind_text(r.kind)).replace("%3", format_us(r.after_us or 0.0))
            if r.status == REMOVED:
                return self.tr("%1 (%2) is only in the earlier profile (gone or renamed): %3 per run").replace(
                    "%1", r.name).replace("%2", callee_kind_text(r.kind)).replace("%3", format_us(r.before_us or 0.0))
            return self.tr("%1 (%2): %3 → %4 per run, %5 → %6 calls").replace("%1", r.name).replace(
                "%2", callee_kind_text(r.kind)).replace("%3", format_us(r.before_us or 0.0)).replace(
                "%4", format_us(r.after_us or 0.0)).replace("%5", str(r.calls_before)).replace("%6", str(r.calls_after))
        if role == Qt.ItemDataRole.TextAlignmentRole and col > 0:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sort by ``column`` (the change by its size; ties by name)."""
        if not 0 <= column < len(self.COLUMNS):
            return
        self._sorted(lambda r: self._sort_value(r, column), order == Qt.SortOrder.DescendingOrder, lambda r: r.name)


class ShareBarDelegate(QStyledItemDelegate):
    """Paints the share column as a bar in the palette's highlight colour under the text."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _ModelIndex) -> None:
        share = index.data(SHARE_ROLE)
        if isinstance(share, float):
            rect: QRect = option.rect.adjusted(2, 3, -2, -3)
            width = int(rect.width() * max(0.0, min(1.0, share)))
            color = option.palette.color(QPalette.ColorRole.Highlight)
            color.setAlpha(110)
            painter.save()
            painter.fillRect(QRect(rect.left(), rect.top(), width, rect.height()), color)
            painter.restore()
        super().paint(painter, option, index)


def _table(parent: QWidget, model: QAbstractTableModel, share_column: int) -> QTableView:
    table = QTableView(parent)
    table.setModel(model)
    table.setSortingEnabled(True)
    table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
    table.setItemDelegateForColumn(share_column, ShareBarDelegate(table))
    table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    table.verticalHeader().setVisible(False)
    table.setWordWrap(False)
    return table


class ProfileView(QWidget):
    """A caption (total, run time, repeats), the *Compare with* chooser and the sortable per-callee table
    (or, comparing, the per-callee comparison table)."""

    callee_activated = Signal(str)
    #: The user chose a profile to compare with (its key; ``""``: no comparison).
    compare_chosen = Signal(str)

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("profileView")
        self._profile: Optional[Profile] = None
        self._comparison: Optional[ProfileComparison] = None
        self._caption = QLabel(self)
        self._caption.setWordWrap(True)
        self._caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.compare_label = QLabel(self.tr("Compare with:"), self)
        self.compare_combo = QComboBox(self)
        self.compare_combo.setObjectName("profileCompareCombo")
        self.compare_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.compare_combo.setMinimumContentsLength(22)
        self.compare_label.setBuddy(self.compare_combo)
        self.compare_combo.currentIndexChanged.connect(lambda _i: self.compare_chosen.emit(self.compare_key()))
        self._model = QtProfileModel(self)
        self._table = _table(self, self._model, 4)
        self._table.activated.connect(lambda index: self.activate_row(index.row()))
        self._diff_model = QtProfileDiffModel(self)
        self._diff_table = _table(self, self._diff_model, 5)
        self._diff_table.setObjectName("profileDiffTable")
        for column in range(1, len(QtProfileDiffModel.COLUMNS)):
            self._diff_table.horizontalHeader().setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self._diff_table.activated.connect(lambda index: self.activate_diff_row(index.row()))
        self._stack = QStackedWidget(self)
        self._stack.addWidget(self._table)
        self._stack.addWidget(self._diff_table)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self._caption, 1)
        top.addWidget(self.compare_label)
        top.addWidget(self.compare_combo)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self._stack)
        self.set_compare_choices([])
        self.set_profile(None)

    def set_profile(self, profile: Optional[Profile]) -> None:
        """Show ``profile`` (``None``: empty, with a hint), largest total first; ends a comparison shown."""
        self._profile = profile
        self._comparison = None
        self._diff_model.set_rows([])
        self._stack.setCurrentWidget(self._table)
        if profile is None:
            self._model.set_entries([])
            self._caption.setText(self.tr("No profile yet: build with profiling on to see where the time goes."))
            return
        self._model.set_entries(profile.entries)
        self._table.sortByColumn(2, Qt.SortOrder.DescendingOrder)
        self._caption.setText(self._profile_caption(profile))

    def _profile_caption(self, profile: Profile) -> str:
        if profile.method == PROFILE_KERNELS:
            text = (self.tr("%1 kernels, %2 per run, each timed by itself on the RPC device (the whole run there "
                            "%3, median of %4 runs; the VM's work between the kernels is not in the rows)")
                    .replace("%1", str(len(profile.entries))).replace("%2", format_us(profile.total_us))
                    .replace("%3", format_us(profile.run_us)).replace("%4", str(profile.repeat)))
            if profile.skipped:
                text += ". " + self.tr("Not timed on the device: %1").replace(
                    "%1", ", ".join(profile.skipped))
            return text
        return (self.tr("%1 functions, %2 of calls per run (instrumented run %3, median of %4 runs)")
                .replace("%1", str(len(profile.entries))).replace("%2", format_us(profile.total_us))
                .replace("%3", format_us(profile.run_us)).replace("%4", str(profile.repeat)))

    def profile(self) -> Optional[Profile]:
        """The profile shown."""
        return self._profile

    # ---- comparison --------------------------------------------------------------------------
    def set_compare_choices(self, choices: list[tuple[str, str]], current: str = "") -> None:
        """The profiles the user may compare with, as ``(key, label)``, and the one chosen (``""``: none).

        Emits nothing; a ``current`` that is not among ``choices`` leaves no choice."""
        self.compare_combo.blockSignals(True)
        try:
            self.compare_combo.clear()
            self.compare_combo.addItem(self.tr("(no comparison)"), "")
            for key, label in choices:
                self.compare_combo.addItem(label, key)
            index = self.compare_combo.findData(current) if current else 0
            self.compare_combo.setCurrentIndex(max(0, index))
        finally:
            self.compare_combo.blockSignals(False)
        self.compare_combo.setEnabled(bool(choices))
        self.compare_combo.setToolTip(
            self.tr("Compare this profile, callee by callee, with the profile of another step") if choices else
            self.tr("No other step has a profile: select another step, check Profile and Build & Run it"))

    def compare_choices(self) -> list[tuple[str, str]]:
        """The ``(key, label)`` choices offered (without the *no comparison* entry)."""
        return [(str(self.compare_combo.itemData(i)), self.compare_combo.itemText(i))
                for i in range(1, self.compare_combo.count())]

    def compare_key(self) -> str:
        """The key chosen in *Compare with* (``""``: none)."""
        return str(self.compare_combo.currentData() or "")

    def choose_compare(self, key: str) -> bool:
        """Choose ``key`` in *Compare with* as the user would (``""``: none); False when it is not offered."""
        index = self.compare_combo.findData(key) if key else 0
        if index < 0:
            return False
        self.compare_combo.setCurrentIndex(index)
        return True

    def set_comparison(self, comparison: Optional[ProfileComparison], before_label: str = "",
                       after_label: str = "") -> None:
        """Show ``comparison`` (``None``: back to the profile's own table), largest change first."""
        self._comparison = comparison
        if comparison is None:
            self._diff_model.set_rows([])
            self._stack.setCurrentWidget(self._table)
            if self._profile is not None:
                self._caption.setText(self._profile_caption(self._profile))
            return
        self._diff_model.set_rows(comparison.rows)
        self._diff_table.sortByColumn(3, Qt.SortOrder.DescendingOrder)
        self._stack.setCurrentWidget(self._diff_table)
        self._caption.setText(comparison_summary(comparison, before_label, after_label))

    def comparison(self) -> Optional[ProfileComparison]:
        """The comparison shown (``None``: the single profile is shown)."""
        return self._comparison

    def is_comparing(self) -> bool:
        """True while the comparison table is shown."""
        return self._stack.currentWidget() is self._diff_table

    def diff_model(self) -> QtProfileDiffModel:
        """The comparison table's model (tests)."""
        return self._diff_model

    def activate_diff_row(self, row: int) -> None:
        """Emit :attr:`callee_activated` for the callee shown in ``row`` of the comparison table."""
        if 0 <= row < self._diff_model.rowCount():
            self.callee_activated.emit(self._diff_model.row_data(row).name)

    # ---- single table ------------------------------------------------------------------------
    def table_model(self) -> QtProfileModel:
        """The table model (tests, the app's export)."""
        return self._model

    def sort_by(self, column: int, ascending: bool = True) -> None:
        """Sort the table shown by ``column``."""
        table = self._diff_table if self.is_comparing() else self._table
        table.sortByColumn(column, Qt.SortOrder.AscendingOrder if ascending else Qt.SortOrder.DescendingOrder)

    def activate_row(self, row: int) -> None:
        """Emit :attr:`callee_activated` for the entry shown in ``row``."""
        if 0 <= row < self._model.rowCount():
            self.callee_activated.emit(self._model.entry(row).name)


def comparison_summary(comparison: ProfileComparison, before_label: str = "", after_label: str = "") -> str:
    """The summary line of a comparison: both sides, total of calls before → after with the ratio and
    change, the instrumented runs' time, and how many callees are in both, added and removed."""
    c = comparison
    translate = QCoreApplication.translate
    runs = (" " + translate("ProfileView", "Instrumented runs after against before: {verdict}.").format(
        verdict=verdict_label(c.runs))) if c.runs is not None else ""
    return (translate("ProfileView", "{before} → {after}: calls {t0} → {t1} per run ({ratio}, {delta}); "
                                     "run {r0} → {r1}; {both} functions in both, {added} added, {removed} removed")
            .format(before=before_label or translate("ProfileView", "before"),
                    after=after_label or translate("ProfileView", "after"),
                    t0=format_us(c.total_before_us), t1=format_us(c.total_after_us), ratio=format_ratio(c.ratio),
                    delta=format_delta_us(c.delta_us), r0=format_us(c.run_before_us), r1=format_us(c.run_after_us),
                    both=c.count(IN_BOTH), added=c.count(ADDED), removed=c.count(REMOVED))) + runs
