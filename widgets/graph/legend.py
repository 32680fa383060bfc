"""The legends in the graph view's top-left corner: the heat overlay's (the heat scale from 0 to the largest
share of the run time, and the amber of "changed by this step" beside it: the two never share a colour) and
the "where values diverge" overlay's (:class:`ErrorLegend`)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QLinearGradient, QPainter, QPen
from PySide6.QtWidgets import QToolButton, QWidget

from widgets.graph.errors import (
    DIVERGES_START,
    ERROR_STOPS,
    NO_COUNTERPART,
    OK_END,
    ErrorMark,
    fill_colour,
    first_colour,
    outline_colour,
)
from widgets.graph.items.nodes import heat_label
from widgets.graph.palette import HEAT_STOPS, GraphPalette, blend, heat_colour


def _paint_background(painter: QPainter, widget: QWidget, c: dict) -> None:
    """A legend's background: a rounded box in the graph palette ``c``'s border and a tint of its base (antialiased
    from here on)."""
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    painter.setPen(QPen(c["border"], 1.0))
    painter.setBrush(blend(c["base"], c["text"], 0.04))
    painter.drawRoundedRect(QRectF(widget.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 5.0, 5.0)


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
            _paint_background(painter, self, c)
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


class ErrorLegend(QWidget):
    """The "where values diverge" legend (top left of the view, shown while the overlay is on): a title with
    a summary, the error scale from ok to diverges with the tolerance marked, the "no counterpart" and
    "first diverging" swatches, and a button that clears the colouring (:attr:`clear_requested`)."""

    BAR_W = 170.0
    BAR_COMPACT = 90.0
    clear_requested = Signal()

    def __init__(self, parent: QWidget, palette: GraphPalette) -> None:
        super().__init__(parent)
        self.setObjectName("errorLegend")
        self._palette = palette
        self._texts = {"title": "Where values diverge", "summary": "", "ok": "ok", "tolerance": "tolerance",
                       "diverges": "diverges", "none": "no counterpart", "first": "first diverging node",
                       "badge": "first"}
        self.clear_button = QToolButton(self)
        self.clear_button.setObjectName("errorLegendClear")
        self.clear_button.setText("✕")
        self.clear_button.setAutoRaise(True)
        self.clear_button.clicked.connect(self.clear_requested.emit)
        self.compact = False
        self.setVisible(False)
        self._relayout()

    def set_texts(self, **texts: str) -> None:
        """Replace some of the texts: ``title``, ``summary``, ``ok``, ``tolerance``, ``diverges``, ``none``,
        ``first``, ``badge``, and ``clear_tip`` (the clear button's tooltip)."""
        tip = texts.pop("clear_tip", None)
        if tip is not None:
            self.clear_button.setToolTip(tip)
        self._texts.update({k: str(v) for k, v in texts.items()})
        self._relayout()
        self.update()

    def texts(self) -> dict[str, str]:
        """What the legend writes (tests)."""
        return dict(self._texts)

    def full_size(self, compact: bool = False) -> tuple[int, int]:
        """The legend's size, whole or compact (title and the bar between its two words: a small view)."""
        fm = QFontMetricsF(self._palette.sub_font)
        t = self._texts
        button = self.clear_button.sizeHint()
        line = fm.height()
        bold = QFont(self._palette.sub_font)
        bold.setBold(True)
        title = QFontMetricsF(bold).horizontalAdvance(t["title"]) + button.width() + 8
        if compact:
            w = max(title, fm.horizontalAdvance(t["ok"]) + self.BAR_COMPACT + fm.horizontalAdvance(t["diverges"]) + 12)
            return int(w + 16), int(2 * line + 20)
        ends = fm.horizontalAdvance(t["ok"]) + fm.horizontalAdvance(t["tolerance"]) + fm.horizontalAdvance(t["diverges"]) + 16
        w = max(title, fm.horizontalAdvance(t["summary"]), self.BAR_W, ends, 22 + fm.horizontalAdvance(t["none"]),
                30 + fm.horizontalAdvance(t["badge"]) + fm.horizontalAdvance(t["first"]))
        return int(w + 16), int(5 * line + 34 + (line if t["summary"] else 0))

    def set_compact(self, compact: bool) -> None:
        """Whole or compact (the full texts then in the legend's tooltip)."""
        if compact != self.compact:
            self.compact = compact
            self._relayout()
            self.update()

    def _relayout(self) -> None:
        w, h = self.full_size(self.compact)
        self.resize(w, h)
        self.clear_button.move(w - self.clear_button.sizeHint().width() - 3, 2)
        t = self._texts
        self.setToolTip("\n".join(x for x in (t["title"], t["summary"], t["tolerance"], t["none"], t["first"]) if x)
                        if self.compact else "")

    def paintEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        """Background, title and summary, the scale with its three words, the two swatches."""
        c = self._palette.colors
        fm = QFontMetricsF(self._palette.sub_font)
        line = fm.height()
        t = self._texts
        painter = QPainter(self)
        try:
            _paint_background(painter, self, c)
            bold = QFont(self._palette.sub_font)
            bold.setBold(True)
            painter.setFont(bold)
            painter.setPen(c["text"])
            y = 6 + fm.ascent()
            painter.drawText(QPointF(8, y), t["title"])
            painter.setFont(self._palette.sub_font)
            if self.compact:
                self._paint_compact_bar(painter, y + 6, fm)
                return
            if t["summary"]:
                y += line
                painter.drawText(QPointF(8, y), t["summary"])
            bar = QRectF(8, y + 6, self.width() - 16, line - 2)
            edge = self._paint_scale(painter, bar)
            y = bar.bottom() + 3 + fm.ascent()
            painter.drawText(QPointF(bar.left(), y), t["ok"])
            tw = fm.horizontalAdvance(t["tolerance"])
            painter.drawText(QPointF(min(max(edge - tw / 2.0, bar.left() + fm.horizontalAdvance(t["ok"]) + 6),
                                         bar.right() - tw - fm.horizontalAdvance(t["diverges"]) - 6), y), t["tolerance"])
            painter.drawText(QPointF(bar.right() - fm.horizontalAdvance(t["diverges"]), y), t["diverges"])
            swatch = QRectF(8, y + fm.descent() + 6, 14, line - 2)
            grey = ErrorMark(NO_COUNTERPART, 0.0)
            painter.setPen(QPen(outline_colour(grey, c["base"]), 1.4, Qt.PenStyle.DashLine))
            painter.setBrush(fill_colour(grey, c["base"]))
            painter.drawRoundedRect(swatch, 3, 3)
            painter.setPen(c["text"])
            painter.drawText(QPointF(swatch.right() + 8, swatch.top() + fm.ascent() - 1), t["none"])
            badge_w = fm.horizontalAdvance(t["badge"]) + 10
            badge = QRectF(8, swatch.bottom() + 6, badge_w, line)
            colour = first_colour(c["base"])
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colour)
            painter.drawRoundedRect(badge, 3, 3)
            painter.setPen(QColor("#ffffff") if c["base"].lightness() >= 128 else QColor("#000000"))
            painter.drawText(badge, int(Qt.AlignmentFlag.AlignCenter), t["badge"])
            painter.setPen(c["text"])
            painter.drawText(QPointF(badge.right() + 8, badge.top() + fm.ascent()), t["first"])
        finally:
            painter.end()

    def _paint_scale(self, painter: QPainter, bar: QRectF) -> float:
        """The error scale (ok -> diverges) in ``bar`` with the tolerance marked; returns the mark's x."""
        base, text = self._palette.colors["base"], self._palette.colors["text"]
        grad = QLinearGradient(bar.topLeft(), bar.topRight())
        for stop, _colour in ERROR_STOPS:
            grad.setColorAt(stop, fill_colour(ErrorMark("ok", stop), base))
        painter.fillRect(bar, grad)
        edge = bar.left() + bar.width() * (OK_END + DIVERGES_START) / 2.0
        painter.setPen(QPen(text, 1.5))
        painter.drawLine(QPointF(edge, bar.top() - 2), QPointF(edge, bar.bottom() + 2))
        return edge

    def _paint_compact_bar(self, painter: QPainter, top: float, fm: QFontMetricsF) -> None:
        """``ok`` [the scale with the tolerance marked] ``diverges`` on one line."""
        c = self._palette.colors
        t = self._texts
        line = fm.height()
        painter.setPen(c["text"])
        painter.drawText(QPointF(8, top + fm.ascent() - 1), t["ok"])
        bar = QRectF(14 + fm.horizontalAdvance(t["ok"]), top, self.BAR_COMPACT, line - 2)
        self._paint_scale(painter, bar)
        painter.drawText(QPointF(bar.right() + 6, top + fm.ascent() - 1), t["diverges"])
