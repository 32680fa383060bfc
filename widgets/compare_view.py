"""Comparison of two or more pipelines on the same model and inputs (TVM-free Qt widget).

Shows a :class:`pipeline_model.build_api.MultiCompareResult` (``compare`` with ``modules``): a table
(pipeline, build time, median latency, spread, ratio to the fastest, check, error), a latency chart
(:class:`widgets.latency_chart.LatencyChart`), the final-IR diff summary of every pair and a
"Use this one" button emitting :attr:`CompareView.use_requested` with the chosen row (the fastest by
default, else the selected one).
"""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from pipeline_model.build_api import MultiCompareResult
from widgets.latency_chart import LatencyBar, LatencyChart, format_us


class CompareView(QWidget):
    """Table + chart + IR diff summary + "use this one"."""

    use_requested = Signal(int)

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("compareView")
        self._result: Optional[MultiCompareResult] = None
        self._table = QTableWidget(0, 7, self)
        self._table.setHorizontalHeaderLabels([
            self.tr("Pipeline"), self.tr("Build"), self.tr("Median"), self.tr("Spread"), self.tr("vs fastest"),
            self.tr("Check"), self.tr("Problem")])
        self._table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self._table.verticalHeader().setVisible(False)
        self._table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self._table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self._chart = LatencyChart(self)
        self._diffs = QLabel(self)
        self._diffs.setWordWrap(True)
        self._best = QLabel(self)
        self._use = QPushButton(self.tr("Use this one"), self)
        self._use.clicked.connect(self.use_best)
        row = QHBoxLayout()
        row.addWidget(self._best, 1)
        row.addWidget(self._use)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._table)
        layout.addWidget(self._chart)
        layout.addWidget(self._diffs)
        layout.addLayout(row)
        self.set_result(None)

    def set_result(self, result: Optional[MultiCompareResult]) -> None:
        """Show ``result`` (``None``: empty)."""
        self._result = result
        self._table.setRowCount(0)
        self._chart.clear()
        if result is None:
            self._diffs.setText("")
            self._best.setText(self.tr("Compare two or more pipelines to see them side by side."))
            self._use.setEnabled(False)
            return
        best = result.rows[result.best] if result.best is not None else None
        best_us = best.latency.median_us if best is not None and best.latency else None
        self._table.setRowCount(len(result.rows))
        bars = []
        for i, r in enumerate(result.rows):
            lat = r.latency
            if r.check is None:
                check = "-"
            else:
                check = self.tr("pass") if r.check.passed else self.tr("FAIL")
                if r.check.max_abs_over_ref is not None:
                    check += f" ({r.check.max_abs_over_ref:.2g})"
                if r.check.warnings:
                    check += " " + self.tr("[outputs too small to check]")
            cells = [
                ("★ " if i == result.best else "") + r.label,
                format_us(r.build_ms * 1000.0) if r.build_ms else "-",
                format_us(lat.median_us) if lat else "-",
                f"{format_us(lat.min_us)} – {format_us(lat.max_us)}" if lat else "-",
                f"{lat.median_us / best_us:.2f}×" if lat and best_us else "-",
                check,
                r.error or "",
            ]
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if col == 6 and r.error:
                    item.setToolTip(r.error)
                self._table.setItem(i, col, item)
            if lat:
                bars.append(LatencyBar(r.label, lat.median_us, lat.min_us, lat.max_us))
        caption = ""
        timed = [b for b in bars]
        if len(timed) >= 2 and best_us:
            slowest = max(b.median_us for b in timed)
            caption = self.tr("fastest is %1× faster than the slowest").replace("%1", f"{slowest / best_us:.2f}")
        self._chart.set_bars(bars, caption)
        lines = []
        for d in result.diffs:
            a, b = result.rows[d["a"]].label, result.rows[d["b"]].label
            if d.get("identical"):
                lines.append(self.tr("%1 vs %2: identical final IR").replace("%1", a).replace("%2", b))
            else:
                st = d.get("stats") or {}
                lines.append(self.tr("%1 vs %2: %3 changed, %4 added, %5 removed functions").replace("%1", a)
                             .replace("%2", b).replace("%3", str(st.get("changed", 0)))
                             .replace("%4", str(st.get("added", 0))).replace("%5", str(st.get("removed", 0))))
        self._diffs.setText("\n".join(lines))
        self._best.setText(self.tr("Fastest: %1").replace("%1", best.label) if best is not None
                           else self.tr("No pipeline ran"))
        self._use.setEnabled(best is not None)

    def result(self) -> Optional[MultiCompareResult]:
        """The result shown."""
        return self._result

    def table(self) -> QTableWidget:
        """The table (tests)."""
        return self._table

    def best_label_text(self) -> str:
        """The "Fastest: ..." line."""
        return self._best.text()

    def use_best(self) -> None:
        """Emit :attr:`use_requested` with the selected row, or the fastest one when none is selected."""
        if self._result is None:
            return
        rows = {i.row() for i in self._table.selectedIndexes()}
        row = min(rows) if len(rows) == 1 else self._result.best
        if row is not None and not self._result.rows[row].error:
            self.use_requested.emit(int(row))
