"""A one-line label whose size never follows its text, so changing the text never relays out the window.

A ``QLabel`` asks its layout to be redone on every ``setText`` (``updateGeometry``), and Qt passes that up
through every layout between the label and the main window: a new diff title or graph caption on each
step selection made the whole main window lay itself out again (dock areas, splitters, every size hint
that was invalidated on the way) and repaint what moved, which under GIL contention from worker threads
cost tens of milliseconds of GUI-thread time. :class:`StableLabel` holds a ``QLabel`` in a widget with no
layout: the inner label's ``updateGeometry`` stops at that widget (nothing to lay out), the widget's own
height is fixed to one line and its width is what its layout gives it. Text that does not fit is elided
(the whole text in the tooltip); setting the same text again does nothing at all.
"""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

_HEIGHT_SAMPLE = "Ag…"


class StableLabel(QWidget):
    """One line of plain text, elided to the width it gets; its size does not depend on the text.

    ``label`` is the inner ``QLabel`` (``label_name``: its object name, for style sheets; dynamic properties go
    on it too); ``min_chars``: a minimum width of that many average characters (for layouts that give it no stretch);
    ``alignment``: of the text in the label."""

    def __init__(self, text: str = "", parent: Optional[QWidget] = None, *,
                 elide: Qt.TextElideMode = Qt.TextElideMode.ElideRight, min_chars: int = 0, label_name: str = "",
                 grow: bool = False, max_grow_chars: int = 60,
                 alignment: Qt.AlignmentFlag = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter) -> None:
        super().__init__(parent)
        self.label = QLabel(self)
        if label_name:
            self.label.setObjectName(label_name)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setAlignment(alignment)
        self._full = ""
        self._shown = ""
        self._elide = elide
        self._min_chars = min_chars
        self._grow = grow
        self._max_grow_chars = max_grow_chars
        # Without a minimum width it takes what its layout gives it (Ignored: a long text never widens the
        # window); with one, at least that (Preferred: laid out like any widget of that width).
        self.setSizePolicy(QSizePolicy.Policy.Preferred if min_chars else QSizePolicy.Policy.Ignored,
                           QSizePolicy.Policy.Fixed)
        self._fit_height()
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - QLabel-compatible API
        """Show ``text`` (newlines become spaces; elided when too long, whole in the tooltip)."""
        text = " ".join(str(text).split("\n"))
        if text == self._full:
            return
        self._full = text
        self._update_shown()

    def text(self) -> str:
        """The whole text (not the elided one)."""
        return self._full

    def clear(self) -> None:
        """No text."""
        self.setText("")

    def shown_text(self) -> str:
        """The text as drawn (elided to the current width)."""
        return self._shown

    def _update_shown(self) -> None:
        if self._grow and self._full:
            fm = self.label.fontMetrics()
            want = min(fm.horizontalAdvance(self._full) + 8, self._max_grow_chars * fm.averageCharWidth())
            if want > self.minimumWidth():
                self.setMinimumWidth(want)  # laid out again this once
        width = self.label.contentsRect().width() if self.label.width() > 0 else self.width()
        shown = self.label.fontMetrics().elidedText(self._full, self._elide, max(0, width)) if self._full else ""
        if shown != self._shown:
            self._shown = shown
            self.label.setText(shown)
        tip = self._full if shown != self._full else ""
        if tip != self.toolTip():
            self.setToolTip(tip)

    def _fit_height(self) -> None:
        # One line of the inner label as styled (padding, bold...): measured on a sample, not on the text.
        current = self.label.text()
        self.label.setText(_HEIGHT_SAMPLE)
        self.label.ensurePolished()
        hint = self.label.sizeHint()
        self.label.setText(current)
        self.setFixedHeight(max(hint.height(), self.label.fontMetrics().height()))
        if self._min_chars:
            self.setMinimumWidth(self._min_chars * self.label.fontMetrics().averageCharWidth())

    def setLabelStyleSheet(self, sheet: str) -> None:  # noqa: N802 - Qt naming
        """A style sheet for the inner label (its one-line height follows)."""
        self.label.setStyleSheet(sheet)
        self._fit_height()
        self._update_shown()

    def resizeEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt API
        super().resizeEvent(event)
        self.label.setGeometry(self.rect())
        self._update_shown()

    def changeEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt API
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._fit_height()
            self._update_shown()
