"""The heat overlay's legend in the graph view's top-left corner: the heat scale from 0 to the largest share
of the run time, and the amber of "changed by this step" beside it (the two never share a colour)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFontMetricsF, QLinearGradient, QPainter, QPen
from PySide6.QtWidgets import QWidget

from widgets.graph.items.nodes import heat_label
from widgets.graph.palette import HEAT_STOPS, GraphPalette, blend, heat_colour


class HeatLegend(QWidget):
    """A small, mouse-transparent child of the view, shown while the heat overlay is painted."""

    BAR_W = 120.0

    def __init__(self, parent: QWidget, palette: GraphPalette) -> None:
        super().__init__(parent)
        self._palette = palette
        self._top = 0.0
        self._title = "share of run time"
        self._changed = "changed"
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents, True)
        self.setVisible(False)
        self._relayout()

    def set_top(self, share: float) -> None:
        """The largest share shown (the scale's right end)."""
        self._top = float(share)
        self._relayout()
        self.update()

    def set_texts(self, title: str, changed: str) -> None:
        """The legend's title and the change swatch's text (translated by the view)."""
        self._title, self._changed = title, changed
        self._relayout()
        self.update()

    def texts(self) -> tuple[str, str, str]:
        """Title, the scale's right end, the change swatch's text (what the legend writes)."""
        return self._title, heat_label(self._top) if self._top else "", self._changed

    def _relayout(self) -> None:
        fm = QFontMetricsF(self._palette.sub_font)
        title, top, changed = self.texts()
        w = max(fm.horizontalAdvance(title), self.BAR_W + 8 + fm.horizontalAdvance(top),
                18 + fm.horizontalAdvance(changed)) + 16
        self.resize(int(w), int(3 * fm.height() + 22))

    def paintEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        """Background, title, the gradient bar with its ends, the change swatch."""
        c = self._palette.colors
        fm = QFontMetricsF(self._palette.sub_font)
        line = fm.height()
        title, top, changed = self.texts()
        painter = QPainter(self)
        try:
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            painter.setPen(QPen(c["border"], 1.0))
            painter.setBrush(blend(c["base"], c["text"], 0.04))
            painter.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 5.0, 5.0)
            painter.setFont(self._palette.sub_font)
            painter.setPen(c["text"])
            painter.drawText(QPointF(8, 5 + fm.ascent()), title)
            bar = QRectF(8, 9 + line, self.BAR_W, line - 2)
            grad = QLinearGradient(bar.topLeft(), bar.topRight())
            for k, _stop in enumerate(HEAT_STOPS):
                t = k / (len(HEAT_STOPS) - 1)
                grad.setColorAt(t, heat_colour(t))
            painter.fillRect(bar, grad)
            painter.drawText(QPointF(bar.right() + 6, bar.top() + fm.ascent() - 1), top)
            swatch = QRectF(8, bar.bottom() + 5, 12, line - 2)
            painter.setPen(QPen(c["changed_pen"], 1.5))
            painter.setBrush(c["changed"])
            painter.drawRoundedRect(swatch, 2, 2)
            painter.setPen(c["text"])
            painter.drawText(QPointF(swatch.right() + 6, swatch.top() + fm.ascent() - 1), changed)
        finally:
            painter.end()
