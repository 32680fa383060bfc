"""Profile table of a built module: where one run's time goes, per callee (TVM-free Qt widget).

Shows a :class:`pipeline_model.build_api.Profile` (from ``build_run`` with ``profile`` or the engine's
``profile`` command) as a sortable table: function, calls per run, total and mean time per run, and
share of the total with a bar. Activating a row emits :attr:`ProfileView.callee_activated` with the
callee name (the graph view can select the nodes in ``profile.nodes[name]``).
"""

from __future__ import annotations

from typing import Any, Optional

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QRect, Qt, Signal
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from pipeline_model.build_api import Profile, ProfileEntry
from widgets.latency_chart import format_us

#: Role carrying the raw sort value of a cell.
SORT_ROLE = Qt.ItemDataRole.UserRole + 1
#: Role carrying the share (0..1) for the bar delegate.
SHARE_ROLE = Qt.ItemDataRole.UserRole + 2

_ModelIndex = QModelIndex | QPersistentModelIndex


class QtProfileModel(QAbstractTableModel):
    """Rows = profile entries; columns: function, calls, total, mean, share."""

    COLUMNS = ("function", "calls", "total", "mean", "share")

    def __init__(self, parent: Optional[Any] = None) -> None:
        super().__init__(parent)
        self._entries: list[ProfileEntry] = []

    def set_entries(self, entries: list[ProfileEntry]) -> None:
        """Replace the rows."""
        self.beginResetModel()
        self._entries = list(entries)
        self.endResetModel()

    def entry(self, row: int) -> ProfileEntry:
        """The entry shown in ``row``."""
        return self._entries[row]

    def rowCount(self, parent: _ModelIndex = QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else len(self._entries)

    def columnCount(self, parent: _ModelIndex = QModelIndex()) -> int:  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802 - Qt API
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or role != Qt.ItemDataRole.DisplayRole:
            return None
        titles = (self.tr("Function"), self.tr("Calls"), self.tr("Total / run"), self.tr("Mean / call"),
                  self.tr("Share"))
        return titles[section] if 0 <= section < len(titles) else None

    def data(self, index: _ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._entries):
            return None
        e, col = self._entries[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (e.name, str(e.calls), format_us(e.total_us), format_us(e.mean_us), f"{e.share * 100:.1f} %")[col]
        if role == SORT_ROLE:
            return (e.name, e.calls, e.total_us, e.mean_us, e.share)[col]
        if role == SHARE_ROLE and col == 4:
            return e.share
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.tr("%1 (%2): %3 calls, %4 per run (min %5, max %6 over the runs)").replace(
                "%1", e.name).replace("%2", e.kind).replace("%3", str(e.calls)).replace(
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
        self.layoutAboutToBeChanged.emit()
        self._entries.sort(key=keys[column], reverse=order == Qt.SortOrder.DescendingOrder)
        self.layoutChanged.emit()


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


class ProfileView(QWidget):
    """A caption (total, run time, repeats) and the sortable per-callee table."""

    callee_activated = Signal(str)

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("profileView")
        self._profile: Optional[Profile] = None
        self._caption = QLabel(self)
        self._caption.setWordWrap(True)
        self._model = QtProfileModel(self)
        self._table = QTableView(self)
        self._table.setModel(self._model)
        self._table.setSortingEnabled(True)
        self._table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self._table.setItemDelegateForColumn(4, ShareBarDelegate(self._table))
        self._table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self._table.verticalHeader().setVisible(False)
        self._table.activated.connect(lambda index: self.activate_row(index.row()))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._caption)
        layout.addWidget(self._table)
        self.set_profile(None)

    def set_profile(self, profile: Optional[Profile]) -> None:
        """Show ``profile`` (``None``: empty, with a hint), largest total first."""
        self._profile = profile
        if profile is None:
            self._model.set_entries([])
            self._caption.setText(self.tr("No profile yet: build with profiling on to see where the time goes."))
            return
        self._model.set_entries(profile.entries)
        self._table.sortByColumn(2, Qt.SortOrder.DescendingOrder)
        self._caption.setText(
            self.tr("%1 functions, %2 of calls per run (instrumented run %3, median of %4 runs)")
            .replace("%1", str(len(profile.entries))).replace("%2", format_us(profile.total_us))
            .replace("%3", format_us(profile.run_us)).replace("%4", str(profile.repeat)))

    def profile(self) -> Optional[Profile]:
        """The profile shown."""
        return self._profile

    def table_model(self) -> QtProfileModel:
        """The table model (tests, the app's export)."""
        return self._model

    def sort_by(self, column: int, ascending: bool = True) -> None:
        """Sort the table by ``column``."""
        self._table.sortByColumn(column, Qt.SortOrder.AscendingOrder if ascending else Qt.SortOrder.DescendingOrder)

    def activate_row(self, row: int) -> None:
        """Emit :attr:`callee_activated` for the entry shown in ``row``."""
        if 0 <= row < self._model.rowCount():
            self.callee_activated.emit(self._model.entry(row).name)
