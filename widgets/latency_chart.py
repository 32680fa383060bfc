"""``LatencyChart``: a small horizontal bar chart of latencies (baseline vs pipeline) with the speed-up.

Painted with QPainter in the widget's palette colours (light and dark themes); each bar shows the
median latency, with a whisker from the fastest to the slowest measurement when given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget


@dataclass
class LatencyBar:
    """One bar: ``label``, median latency and the whisker's ends, e.g. the quartiles (microseconds);
    ``highlight``: drawn in the highlight colour (``None``: the chart highlights the lowest median)."""

    label: str
    median_us: float
    min_us: Optional[float] = None
    max_us: Optional[float] = None
    highlight: Optional[bool] = None


def format_us(value: float) -> str:
    """A latency for humans: ``812 µs``, ``3.41 ms``, ``1.20 s``."""
    if value >= 1e6:
        return f"{value / 1e6:.2f} s"
    if value >= 1e3:
        return f"{value / 1e3:.3g} ms"
    return f"{value:.3g} µs"


class LatencyChart(QWidget):
    """Bars of latencies, the fastest in the palette's highlight colour, and a speed-up caption."""

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("latencyChart")
        self.bars: list[LatencyBar] = []
        self.caption = ""
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMinimumHeight(self.sizeHint().height())

    def set_bars(self, bars: list[LatencyBar], caption: str = "") -> None:
        """Show ``bars`` (top to bottom) and ``caption`` (e.g. ``speed-up 1.42×``)."""
        self.bars = list(bars)
        self.caption = caption
        self.setMinimumHeight(self.sizeHint().height())
        self.updateGeometry()
        self.update()

    def clear(self) -> None:
        """No bars."""
        self.set_bars([], "")

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        fm = QFontMetrics(self.font())
        rows = max(2, len(self.bars))
        return QSize(360, 12 + rows * (fm.height() + 14) + fm.height() + 8)

    def paintEvent(self, event) -> None:  # noqa: N802, ARG002 - Qt API
        pal = self.palette()
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.fillRect(self.rect(), pal.color(QPalette.ColorRole.Base))
        fm = QFontMetrics(self.font())
        text = pal.color(QPalette.ColorRole.Text)
        if not self.bars:
            painter.setPen(pal.color(QPalette.ColorRole.PlaceholderText))
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self.tr("Compare with the baseline to see latencies here"))
            painter.end()
            return
        label_w = min(max(fm.horizontalAdvance(b.label) for b in self.bars) + 12, self.width() // 3)
        value_w = max(fm.horizontalAdvance(format_us(b.median_us)) for b in self.bars) + 12
        left, right = 8 + label_w, self.width() - 8 - value_w
        top = 8
        bar_h = fm.height() + 6
        scale_max = max((b.max_us if b.max_us is not None else b.median_us) for b in self.bars) or 1.0
        best = min(b.median_us for b in self.bars)
        span = max(right - left, 10)
        highlight = pal.color(QPalette.ColorRole.Highlight)
        other = pal.color(QPalette.ColorRole.Mid)
        for i, bar in enumerate(self.bars):
            y = top + i * (bar_h + 8)
            painter.setPen(text)
            label = fm.elidedText(bar.label, Qt.TextElideMode.ElideRight, label_w - 8)
            painter.drawText(QRectF(8, y, label_w - 8, bar_h), Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight, label)
            width = span * bar.median_us / scale_max
            lit = bar.highlight if bar.highlight is not None else bar.median_us == best and len(self.bars) > 1
            colour = highlight if lit else other
            painter.fillRect(QRectF(left, y + 2, max(width, 1.0), bar_h - 4), colour)
            if bar.min_us is not None and bar.max_us is not None:
                x0 = left + span * bar.min_us / scale_max
                x1 = left + span * bar.max_us / scale_max
                pen = QPen(text)
                pen.setWidthF(1.2)
                painter.setPen(pen)
                mid = y + bar_h / 2
                painter.drawLine(int(x0), int(mid), int(x1), int(mid))
                painter.drawLine(int(x0), int(mid - 4), int(x0), int(mid + 4))
                painter.drawLine(int(x1), int(mid - 4), int(x1), int(mid + 4))
            painter.setPen(text)
            end = left + width
            if bar.max_us is not None:
                end = max(end, left + span * bar.max_us / scale_max)
            painter.drawText(QRectF(end + 6, y, value_w + 40, bar_h), Qt.AlignmentFlag.AlignVCenter, format_us(bar.median_us))
        if self.caption:
            y = top + len(self.bars) * (bar_h + 8)
            font = painter.font()
            font.setBold(True)
            painter.setFont(font)
            painter.setPen(text)
            painter.drawText(QRectF(8, y, self.width() - 16, fm.height() + 4), Qt.AlignmentFlag.AlignLeft, self.caption)
        painter.end()


def contrast_ok(background: QColor, foreground: QColor) -> bool:
    """True when ``foreground`` is readable on ``background`` (lightness differs by ≥ 0.35)."""
    return abs(background.lightnessF() - foreground.lightnessF()) >= 0.35
