"""A one-line label that elides long text instead of widening its window.

A plain ``QLabel`` asks for the width of its whole text, so a long caption ("Graph unavailable: module
'86f6…' …") pushes the window past the screen and squeezes the docks. :class:`ElidedLabel` asks for
little width, draws the text elided to the width it gets (``…`` in the middle or at the end) and shows the
full text as its tooltip. Use it wherever a caption holds text from the engine or the user (the graph
caption, step titles in headers).
"""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QFrame, QSizePolicy, QWidget


class ElidedLabel(QFrame):
    """One line of text elided to the available width; the full text is the tooltip and :meth:`text`."""

    def __init__(self, text: str = "", parent: Optional[QWidget] = None,
                 mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight) -> None:
        super().__init__(parent)
        self._text = ""
        self._mode = mode
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - QLabel-compatible API
        """Set the full text (one line: newlines become spaces)."""
        self._text = " ".join(str(text).split("\n"))
        self.setToolTip(self._text if self.elided_text() != self._text or len(self._text) > 80 else "")
        self.updateGeometry()
        self.update()

    def text(self) -> str:
        """The full text."""
        return self._text

    def elided_text(self, width: Optional[int] = None) -> str:
        """The text as drawn at ``width`` pixels (default: the current content width)."""
        w = self.contentsRect().width() if width is None else width
        return self.fontMetrics().elidedText(self._text, self._mode, max(0, w))

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        fm = self.fontMetrics()
        return QSize(min(fm.horizontalAdvance(self._text), 40 * fm.averageCharWidth()) + 4, fm.height() + 4)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt API
        fm = self.fontMetrics()
        return QSize(fm.horizontalAdvance("…") + 4, fm.height() + 4)

    def resizeEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt API
        super().resizeEvent(event)
        self.setToolTip(self._text if self.elided_text() != self._text else "")

    def paintEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt API
        super().paintEvent(event)
        painter = QPainter(self)
        rect = self.contentsRect()
        painter.drawText(rect, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), self.elided_text())
        painter.end()
