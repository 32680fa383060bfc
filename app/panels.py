"""The main window's composite panels: the graph area (centre) and the pipeline panel (right dock).

Plain widget containers: they build and lay out their children and expose them as attributes;
controllers drive them (:mod:`app.step_inspector`, :mod:`app.pipeline_editor`).
"""

from __future__ import annotations

from typing import Any, Optional

from PySide6.QtCore import QEvent, QObject, QSettings, Qt, Signal
from PySide6.QtGui import QTextOption
from PySide6.QtWidgets import (
    QComboBox, QFrame, QGridLayout, QHBoxLayout, QLabel, QLineEdit, QMenu, QScrollArea, QSizePolicy, QSplitter,
    QTextBrowser, QToolButton, QVBoxLayout, QWidget,
)

from app.i18n import tr
from widgets.param_editor import ParamEditor
from widgets.pipeline_view import PipelineView
from widgets.stable_label import StableLabel
from widgets.step_model import QtPipelineModel

#: Narrowest the node details panel gets (its placeholder and type texts wrap inside it).
DETAILS_MIN_WIDTH = 220
#: Below this width of the graph area the node details go under the graph instead of beside it.
DETAILS_BESIDE_WIDTH = 900
DETAILS_MIN_HEIGHT = 70
#: Setting of View ▸ Show Overview (the graph's minimap).
OVERVIEW_KEY = "graph/overview"



class Banner(QFrame):
    """A dismissable message strip (engine crash, load errors) that does not block the window."""

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton(self)
        close.setText("✕")
        close.setAutoRaise(True)
        close.clicked.connect(self.hide)
        #: A button for the message's action (e.g. Restart Engine), shown only with such a message.
        self.action_button = QToolButton(self)
        self.action_button.hide()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.action_button)
        layout.addWidget(close)
        self.hide()

    def show_message(self, text: str, kind: str = "warning", action: Any = None) -> None:
        """Show ``text`` (plain), with a button for ``action`` (a ``QAction``) when given."""
        self.setProperty("kind", kind)
        self.style().unpolish(self)
        self.style().polish(self)
        self.label.setText(text)
        self.label.setToolTip("")
        self.action_button.setDefaultAction(action) if action is not None else None
        self.action_button.setVisible(action is not None)
        self.show()


class FindBar(QFrame):
    """Find in the graph: a text field, "3 of 17", previous/next and close (hidden until Ctrl+F).

    Emits ``search(text)`` on Enter with a new text, ``next_requested`` on Enter with the same text (and from
    F3 / the buttons), ``previous_requested`` (Shift+Enter, Shift+F3, the button) and ``closed`` (Esc, ✕).
    """

    search = Signal(str)
    next_requested = Signal()
    previous_requested = Signal()
    closed = Signal()

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("graphFindBar")
        self.edit = QLineEdit(self)
        self.edit.setObjectName("graphFindText")
        self.edit.setPlaceholderText(tr("Find a node by name, op, callee or shape"))
        self.edit.setClearButtonEnabled(True)
        self.edit.installEventFilter(self)
        self.count_label = QLabel("", self)
        self.count_label.setObjectName("graphFindCount")
        self.count_label.setMinimumWidth(80)
        self.prev_button = QToolButton(self)
        self.prev_button.setText("▲")
        self.prev_button.setToolTip(tr("Previous match (Shift+F3)"))
        self.next_button = QToolButton(self)
        self.next_button.setText("▼")
        self.next_button.setToolTip(tr("Next match (F3)"))
        close = QToolButton(self)
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip(tr("Close (Esc)"))
        self.searched: Optional[str] = None  # the text the matches were found for
        self.edit.returnPressed.connect(self._on_return)
        self.prev_button.clicked.connect(self.previous_requested)
        self.next_button.clicked.connect(self._on_next)
        close.clicked.connect(self.close_bar)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel(tr("Find:"), self))
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.count_label)
        layout.addWidget(self.prev_button)
        layout.addWidget(self.next_button)
        layout.addWidget(close)
        self.hide()

    def open_bar(self) -> None:
        """Show the bar with the text selected and focused."""
        self.show()
        self.edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.edit.selectAll()

    def close_bar(self) -> None:
        """Hide the bar."""
        self.hide()
        self.closed.emit()

    def set_count(self, index: int, total: int) -> None:
        """Show "index of total" (or that nothing matched)."""
        if total <= 0:
            self.count_label.setText(tr("No matches") if self.edit.text().strip() else "")
        else:
            self.count_label.setText(tr("{0} of {1}").format(index, total))

    def forget_matches(self) -> None:
        """Another graph is shown: the next Enter searches again."""
        self.searched = None
        self.count_label.setText("")

    def _on_return(self) -> None:
        text = self.edit.text().strip()
        if not text:
            return
        shift = bool(self.edit.property("_shift"))
        self.edit.setProperty("_shift", False)
        if text != self.searched:
            self.searched = text
            self.search.emit(text)
        elif shift:
            self.previous_requested.emit()
        else:
            self.next_requested.emit()

    def _on_next(self) -> None:
        if self.edit.text().strip() != self.searched:
            self._on_return()
        else:
            self.next_requested.emit()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        """Esc closes the bar even while a window shortcut uses Esc (Stop); Shift+Enter goes back."""
        if obj is self.edit and event.type() in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress):
            key = event.key()  # type: ignore[attr-defined]
            if key == Qt.Key.Key_Escape:
                event.accept()
                if event.type() == QEvent.Type.KeyPress:
                    self.close_bar()
                return event.type() == QEvent.Type.KeyPress
            if event.type() == QEvent.Type.KeyPress and key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self.edit.setProperty("_shift", bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier))  # type: ignore[attr-defined]
        return super().eventFilter(obj, event)


class GraphArea(QWidget):
    """Banner, function picker + caption, find bar, graph view and node details side by side."""

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        from widgets.graph_view import GraphView

        super().__init__(parent)
        self.banner = Banner(self)
        self.function_picker = QComboBox(self)
        self.function_picker.setToolTip(tr("Relax function shown in the graph"))
        self.function_picker.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.function_picker.setMinimumContentsLength(16)
        # A new caption on every step shown must not relay out the main window: a label whose size does not
        # follow its text (elided in the middle, whole in the tooltip).
        self.graph_caption = StableLabel(parent=self, elide=Qt.TextElideMode.ElideRight, min_chars=12, label_name="graphCaption")
        self.graph_caption.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.graph_view = GraphView(self)
        self.find_bar = FindBar(self)
        self.details = QTextBrowser(self)
        self.details.setObjectName("nodeDetails")
        # Long type texts (tuples, shapes with many dims) break anywhere rather than overflow.
        self.details.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.details.setLineWrapMode(QTextBrowser.LineWrapMode.WidgetWidth)
        self.details.setMinimumWidth(DETAILS_MIN_WIDTH)
        self.details.setOpenLinks(False)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        graph_box = QWidget(self)
        graph_layout = QVBoxLayout(graph_box)
        graph_layout.setContentsMargins(0, 0, 0, 0)
        graph_layout.setSpacing(2)
        graph_layout.addWidget(self.find_bar)
        graph_layout.addWidget(self.graph_view, 1)
        split.addWidget(graph_box)
        split.addWidget(self.details)
        split.setStretchFactor(0, 4)
        split.setStretchFactor(1, 1)
        split.setCollapsible(0, False)
        split.setSizes([900, 280])
        self.graph_split = split
        self._details_beside: Optional[bool] = None
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(QLabel(tr("Function:"), self))
        top.addWidget(self.function_picker)
        top.addSpacing(12)
        top.addWidget(self.graph_caption, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 0)
        layout.setSpacing(4)
        layout.addWidget(self.banner)
        layout.addLayout(top)
        layout.addWidget(split, 1)

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        """The node details beside the graph when there is room for both, else below it (the graph keeps
        the width: at 1024 px the area is about 650 px wide)."""
        super().resizeEvent(event)
        self._place_details(self.width() >= DETAILS_BESIDE_WIDTH)

    def _place_details(self, beside: bool) -> None:
        if beside == self._details_beside:
            return
        self._details_beside = beside
        split = self.graph_split
        if beside:
            self.details.setMinimumHeight(0)
            split.setOrientation(Qt.Orientation.Horizontal)
            split.setSizes([max(1, self.width() - 280), 280])
        else:
            self.details.setMinimumHeight(DETAILS_MIN_HEIGHT)
            split.setOrientation(Qt.Orientation.Vertical)
            height = max(split.height(), 300)
            split.setSizes([height - max(DETAILS_MIN_HEIGHT, height // 4), max(DETAILS_MIN_HEIGHT, height // 4)])

    @staticmethod
    def overview_setting(settings: QSettings) -> bool:
        """View ▸ Show Overview as remembered in ``settings`` (off by default: it covers nodes)."""
        value = settings.value(OVERVIEW_KEY, False)
        return value.lower() in ("true", "1", "yes") if isinstance(value, str) else bool(value)  # INI: strings

    def set_overview(self, settings: QSettings, on: bool) -> None:
        """View ▸ Show Overview: the graph's minimap (remembered in ``settings``)."""
        self.graph_view.set_overview_visible(on)
        settings.setValue(OVERVIEW_KEY, on)


def _value_row(parent: QWidget, label_name: str, button_text: str, tooltip: str) -> tuple[QLabel, QToolButton]:
    """A plain-text value label that may shrink, and a menu button next to it (model and target rows)."""
    label = QLabel(parent)
    label.setObjectName(label_name)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setMinimumWidth(60)
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
    button = QToolButton(parent)
    button.setText(button_text)
    button.setToolTip(tooltip)
    button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
    return label, button


class PipelinePanel(QWidget):
    """Model/target rows, the pipeline list and the step parameter form (the right dock)."""

    def __init__(self, step_model: QtPipelineModel, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.pipeline_view = PipelineView(step_model, self)
        self.param_editor = ParamEditor(self)
        self.model_label, self.model_button = _value_row(
            self, "modelLabel", tr("Model…"), tr("Use a built-in model, or open a model file (Ctrl+M)"))
        # The target: shown here, chosen in one place (the Build & Run panel's device list and
        # its JSON editor); this button offers the same choices. Every change is an undo command.
        self.target_label, self.target_button = _value_row(
            self, "targetLabel", tr("Change…"), tr("Change the compilation target (devices found by the engine, or a JSON target)"))
        self.target_button.setObjectName("targetChange")
        self.target_menu = QMenu(self.target_button)
        self.target_button.setMenu(self.target_menu)
        bar = QGridLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.setHorizontalSpacing(6)
        bar.setVerticalSpacing(2)
        for row, (name, label, button) in enumerate(
            ((tr("Model"), self.model_label, self.model_button), (tr("Target"), self.target_label, self.target_button))
        ):
            bar.addWidget(QLabel(f"<b>{name}</b>", self), row, 0)
            bar.addWidget(label, row, 1)
            bar.addWidget(button, row, 2)
        bar.setColumnStretch(1, 1)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.pipeline_view)
        param_box = QWidget(self)
        param_layout = QVBoxLayout(param_box)
        param_layout.setContentsMargins(0, 0, 0, 0)
        # "Step N parameters" on each step selected: a label whose size does not follow its text (no relayout)
        self.param_title = StableLabel(tr("Step parameters"), param_box, label_name="paramTitle")
        param_layout.addWidget(self.param_title)
        self.param_scroll = QScrollArea(param_box)
        self.param_scroll.setWidgetResizable(True)
        self.param_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.param_scroll.setWidget(self.param_editor)
        param_layout.addWidget(self.param_scroll, 1)
        split.addWidget(param_box)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        split.setChildrenCollapsible(False)
        # no fixed minimum: the step list (MIN_STEPS rows) and the nested-pass table (when open) set it
        split.setSizes([480, 380])
        self.right_split = split
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(split, 1)


def scrolled(widget: QWidget) -> QScrollArea:
    """``widget`` in a frameless, resizable scroll area: a tall panel does not set the window's minimum height."""
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    area.setWidget(widget)
    return area
