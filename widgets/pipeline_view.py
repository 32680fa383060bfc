"""The pipeline editor list: steps with state, time and enabled checkbox; drops, reorder, delete.

``PipelineView`` wraps a ``QListView`` over a :class:`widgets.step_model.QtPipelineModel` (through
a filter proxy for "hide unchanged steps") and a panel listing the nested passes of the selected
composite step. All edits are emitted as requests; the application performs them as undo commands.
"""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QPersistentModelIndex, QRect, QSize, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QAction, QBrush, QColor, QKeySequence, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListView,
    QMenu,
    QSplitter,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from pipeline_model.engine.results import FAILED, UNCHANGED
from widgets.step_model import (
    MIME_PASS,
    MIME_STEP,
    BISECT_CULPRIT,
    CULPRIT_COLOUR,
    BisectRole,
    CompositeRole,
    NestedRole,
    QtPipelineModel,
    StateRole,
    UidRole,
    format_ms,
    state_icon,
)


class QtHideUnchangedProxy(QSortFilterProxyModel):
    """Hides steps whose state is "unchanged" when enabled; passes drops through to the source."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._hide = False

    def set_hide_unchanged(self, hide: bool) -> None:
        """Show or hide the unchanged steps."""
        if hasattr(self, "beginFilterChange"):
            self.beginFilterChange()
        self._hide = hide
        if hasattr(self, "endFilterChange"):
            self.endFilterChange()
        else:  # pragma: no cover
            self.invalidateFilter()

    @property
    def hide_unchanged(self) -> bool:
        """Whether unchanged steps are hidden."""
        return self._hide

    def filterAcceptsRow(self, source_row: int, source_parent: QModelIndex) -> bool:  # noqa: N802
        if not self._hide:
            return True
        return self.sourceModel().index(source_row, 0, source_parent).data(StateRole) != UNCHANGED

    def dropMimeData(self, data, action, row, column, parent) -> bool:  # noqa: N802
        # Map the proxy insertion row to the source list (rows past the end append).
        source: QtPipelineModel = self.sourceModel()  # type: ignore[assignment]
        if parent is not None and parent.isValid() and row < 0:
            row = parent.row()
            parent = QModelIndex()
        if 0 <= row < self.rowCount():
            source_row = self.mapToSource(self.index(row, 0)).row()
        else:
            source_row = source.rowCount()
        return source.dropMimeData(data, action, source_row, 0, QModelIndex())


class _StepDelegate(QStyledItemDelegate):
    """The default item painting, under it the row's tint (``BackgroundRole``: a failed step, the running one, the
    breaking step; the style sheet's ``::item`` rule would leave it out), and a violet bar along the left edge of
    the breaking step a bisection found (seen also while it is selected, when the tint is under the selection)."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,  # noqa: D102
              index: QModelIndex | QPersistentModelIndex) -> None:
        rect = option.rect  # type: ignore[attr-defined]
        tint = index.data(Qt.ItemDataRole.BackgroundRole)
        if isinstance(tint, QBrush) and not option.state & QStyle.StateFlag.State_Selected:  # type: ignore[attr-defined]
            painter.fillRect(rect, tint)
        super().paint(painter, option, index)
        if index.data(BisectRole) == BISECT_CULPRIT:
            painter.fillRect(QRect(rect.left(), rect.top(), 4, rect.height()), QColor(CULPRIT_COLOUR))


class _StepListView(QListView):
    """List view that asks for deletion on the Delete key instead of editing anything, and keeps the current
    step in view when it gets shorter (the nested-pass table opening under it, a smaller window)."""

    delete_pressed = Signal()

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        current = self.currentIndex()
        if current.isValid():
            self.scrollTo(current)

    def keyPressEvent(self, event) -> None:  # noqa: N802
        if event.key() in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace) and self.selectionModel().hasSelection():
            self.delete_pressed.emit()
            event.accept()
            return
        super().keyPressEvent(event)


class PipelineView(QWidget):
    """Step list + nested-pass panel.

    Signals: ``delete_requested(uids)``, ``duplicate_requested(uids)``, ``current_step_changed(uid)``
    (``""`` when none), ``nested_selected(uid, nested_index)``, ``run_to_requested(uid)``,
    ``reproducer_requested(uid)`` / ``reduce_requested(uid)`` (the context menu of a failed step, or of the
    breaking step a bisection marked: Save Reproducer… / Save and Reduce…).
    Add/move/toggle requests come from :attr:`model` (``QtPipelineModel``).
    """

    delete_requested = Signal(list)
    duplicate_requested = Signal(list)
    current_step_changed = Signal(str)
    nested_selected = Signal(str, int)
    run_to_requested = Signal(str)
    reproducer_requested = Signal(str)
    reduce_requested = Signal(str)

    def __init__(self, model: QtPipelineModel, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.model = model
        self.proxy = QtHideUnchangedProxy(self)
        self.proxy.setSourceModel(model)

        self.list = _StepListView(self)
        self.list.setObjectName("pipelineList")
        self.list.setModel(self.proxy)
        self.list.setItemDelegate(_StepDelegate(self.list))
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.list.setDragEnabled(True)
        self.list.setAcceptDrops(True)
        self.list.setDropIndicatorShown(True)
        self.list.setDragDropMode(QAbstractItemView.DragDropMode.DragDrop)
        self.list.setDefaultDropAction(Qt.DropAction.MoveAction)
        self.list.setIconSize(QSize(16, 16))
        self.list.setSpacing(1)
        self.list.setAlternatingRowColors(True)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setUniformItemSizes(True)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._context_menu)
        self.list.delete_pressed.connect(self._request_delete)
        self.list.selectionModel().currentChanged.connect(self._on_current_changed)

        self.hide_unchanged = QCheckBox(self.tr("Hide unchanged steps"), self)
        self.hide_unchanged.setToolTip(self.tr("Hide the steps that did not change the module"))
        self.hide_unchanged.toggled.connect(self.proxy.set_hide_unchanged)

        self.duplicate_action = QAction(self.tr("Duplicate"), self)
        self.duplicate_action.setShortcut(QKeySequence("Ctrl+D"))
        self.duplicate_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.duplicate_action.triggered.connect(self._request_duplicate)
        self.delete_action = QAction(self.tr("Delete"), self)
        self.delete_action.triggered.connect(self._request_delete)
        self.addAction(self.duplicate_action)

        dup_button = QToolButton(self)
        dup_button.setDefaultAction(self.duplicate_action)
        del_button = QToolButton(self)
        del_button.setDefaultAction(self.delete_action)

        self.empty_hint = QLabel(self.tr("Drag passes here from the Passes panel\n(or double-click a pass there)."), self)
        self.empty_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_hint.setEnabled(False)

        self._make_nested_table()
        self.list.setMinimumHeight(self.steps_min_height())

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.hide_unchanged)
        top.addStretch(1)
        top.addWidget(dup_button)
        top.addWidget(del_button)

        list_box = QWidget(self)
        list_layout = QVBoxLayout(list_box)
        list_layout.setContentsMargins(0, 0, 0, 0)
        list_layout.addLayout(top)
        list_layout.addWidget(self.list, 1)
        list_layout.addWidget(self.empty_hint)

        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(list_box)
        splitter.addWidget(self.nested_box)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        splitter.setCollapsible(1, False)
        self.splitter = splitter
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(splitter)

        model.modelReset.connect(self._update_hint)
        for signal in (model.modelReset, model.rowsInserted, model.dataChanged):
            signal.connect(self._update_steps_min_height)  # the rows' real height, once there are rows
        model.modelReset.connect(lambda: self._show_nested(self.current_uid()))  # another document
        model.dataChanged.connect(self._on_data_changed)
        self._update_hint()

    #: Rows of the nested-pass table that are always visible (plus its header).
    NESTED_MIN_ROWS = 4
    #: Steps the list always shows (the nested-pass table open or not).
    MIN_STEPS = 5

    def steps_min_height(self) -> int:
        """Minimum height of the step list: :attr:`MIN_STEPS` rows (as the delegate sizes them once there are
        steps; two text lines before)."""
        row = self.list.sizeHintForRow(0) if self.proxy.rowCount() else -1
        if row <= 0:
            row = 2 * self.list.fontMetrics().lineSpacing() + 8
        return self.MIN_STEPS * (row + 2 * self.list.spacing()) + 2 * self.list.frameWidth()

    def _update_steps_min_height(self) -> None:
        self.list.setMinimumHeight(self.steps_min_height())

    def nested_min_height(self) -> int:
        """Minimum height of the nested-pass table: its header and :attr:`NESTED_MIN_ROWS` rows."""
        row = self.nested.fontMetrics().height() + 6
        return (self.NESTED_MIN_ROWS + 1) * row + 2 * self.nested.frameWidth() + 4

    # ---- selection -------------------------------------------------------------------------
    def selected_uids(self) -> list[str]:
        """Uids of the selected steps, in list order."""
        rows = sorted(self.proxy.mapToSource(i).row() for i in self.list.selectionModel().selectedRows())
        return [self.model.document.steps[r].uid for r in rows if 0 <= r < len(self.model.document.steps)]

    def current_uid(self) -> str:
        """Uid of the current step (``""`` when none)."""
        index = self.list.currentIndex()
        return index.data(UidRole) or "" if index.isValid() else ""

    def select_uids(self, uids: list[str], current: Optional[str] = None) -> None:
        """Select the steps ``uids`` (and make ``current`` or the first one current)."""
        sel = self.list.selectionModel()
        sel.clearSelection()
        current = current or (uids[0] if uids else None)
        for row in range(self.proxy.rowCount()):
            index = self.proxy.index(row, 0)
            uid = index.data(UidRole)
            if uid in uids:
                sel.select(index, QItemSelectionModel.SelectionFlag.Select)
            if uid == current:
                sel.setCurrentIndex(index, QItemSelectionModel.SelectionFlag.NoUpdate)
                self.list.scrollTo(index)
        if current is None:
            self._on_current_changed(QModelIndex(), QModelIndex())

    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        uid = current.data(UidRole) if current.isValid() else ""
        self._show_nested(uid or "")
        self.current_step_changed.emit(uid or "")

    # ---- nested passes ---------------------------------------------------------------------
    def _on_data_changed(self, top_left: QModelIndex, bottom_right: QModelIndex, _roles=None) -> None:
        uid = self.current_uid()
        if uid and top_left.row() <= self._source_row(uid) <= bottom_right.row():
            self._show_nested(uid)

    def _source_row(self, uid: str) -> int:
        for i, step in enumerate(self.model.document.steps):
            if step.uid == uid:
                return i
        return -1

    def _show_nested(self, uid: str) -> None:
        row = self._source_row(uid) if uid else -1
        if row < 0:
            self.nested_box.setVisible(False)
            return
        index = self.model.index(row)
        nested = index.data(NestedRole) or []
        composite = bool(index.data(CompositeRole))
        self.nested.blockSignals(True)
        self.nested.clear()
        parents: list[QTreeWidgetItem] = []
        for i, n in enumerate(nested):
            item = QTreeWidgetItem([n.name, format_ms(n.elapsed_ms), self.tr("yes") if n.changed else ""])
            item.setData(0, Qt.ItemDataRole.UserRole, i)
            item.setIcon(0, state_icon("changed" if n.changed else "unchanged", 12))
            depth = max(0, int(n.depth))
            while len(parents) > depth:
                parents.pop()
            if parents:
                parents[-1].addChild(item)
            else:
                self.nested.addTopLevelItem(item)
            parents.append(item)
        self.nested.expandAll()
        self.nested.blockSignals(False)
        changed = sum(1 for n in nested if n.changed)
        self.nested_label.setText(
            self.tr("Nested passes: {ran} ran, {changed} changed the module").format(ran=len(nested), changed=changed)
            if nested else self.tr("Nested passes: run the step to see them"))
        self.nested_box.setVisible(bool(nested) or composite)

    def _on_nested_selected(self) -> None:
        items = self.nested.selectedItems()
        uid = self.current_uid()
        if items and uid:
            self.nested_selected.emit(uid, int(items[0].data(0, Qt.ItemDataRole.UserRole)))

    # ---- requests --------------------------------------------------------------------------
    def _request_delete(self) -> None:
        uids = self.selected_uids()
        if uids:
            self.delete_requested.emit(uids)

    def _request_duplicate(self) -> None:
        uids = self.selected_uids()
        if uids:
            self.duplicate_requested.emit(uids)

    def context_menu(self, uid: str = "") -> QMenu:
        """The context menu of step ``uid`` (default: the current one); Save Reproducer… and Save and Reduce…
        when it failed in the last run or is the breaking step of the last bisection."""
        menu = QMenu(self)
        menu.setObjectName("pipelineContextMenu")
        uids = self.selected_uids()
        uid = uid or self.current_uid() or (uids[-1] if uids else "")
        run_to = menu.addAction(self.tr("Run to this step"))
        run_to.setEnabled(bool(uid))
        run_to.triggered.connect(lambda: self.run_to_requested.emit(uid))
        row = self._source_row(uid) if uid else -1
        index = self.model.index(row) if row >= 0 else QModelIndex()
        culprit = index.isValid() and index.data(BisectRole) == BISECT_CULPRIT
        if index.isValid() and (index.data(StateRole) == FAILED or culprit):
            menu.addSeparator()
            save = menu.addAction(self.tr("Save Reproducer…"))
            save.setObjectName("saveReproducerAction")
            save.setToolTip(self.tr("A folder with a standalone repro.py of plain TVM calls that fails the same way"))
            save.triggered.connect(lambda: self.reproducer_requested.emit(uid))
            reduce = menu.addAction(self.tr("Save and Reduce…"))
            reduce.setObjectName("saveAndReduceAction")
            reduce.triggered.connect(lambda: self.reduce_requested.emit(uid))
        menu.addSeparator()
        menu.addAction(self.duplicate_action)
        menu.addAction(self.delete_action)
        return menu

    def _context_menu(self, pos) -> None:
        clicked = self.list.indexAt(pos)
        menu = self.context_menu(clicked.data(UidRole) or "" if clicked.isValid() else "")
        menu.exec(self.list.viewport().mapToGlobal(pos))
        menu.deleteLater()

    def _make_nested_table(self) -> None:
        """The table of a composite step's nested passes, under the step list (hidden until such a step is shown)."""
        self.nested = QTreeWidget(self)
        self.nested.setObjectName("nestedPasses")
        self.nested.setHeaderLabels([self.tr("Nested pass"), self.tr("Time"), self.tr("Changed")])
        self.nested.setRootIsDecorated(True)
        self.nested.setUniformRowHeights(True)
        header = self.nested.header()  # the name takes what the time and "changed" columns leave (no h-scroll)
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in (1, 2):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.nested.itemSelectionChanged.connect(self._on_nested_selected)
        # Enough rows to read a nested pipeline, few enough to leave the step list MIN_STEPS rows at 1024×700.
        self.nested.setMinimumHeight(self.nested_min_height())
        self.nested_label = QLabel(self)
        self.nested_box = QWidget(self)
        nested_layout = QVBoxLayout(self.nested_box)
        nested_layout.setContentsMargins(0, 0, 0, 0)
        nested_layout.addWidget(self.nested_label)
        nested_layout.addWidget(self.nested)
        self.nested_box.setVisible(False)

    def _update_hint(self) -> None:
        self.empty_hint.setVisible(self.model.rowCount() == 0)


__all__ = ["PipelineView", "QtHideUnchangedProxy", "MIME_PASS", "MIME_STEP"]
