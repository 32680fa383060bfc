"""Comparison of two or more pipelines on the same model and inputs (TVM-free Qt widget).

Shows a :class:`pipeline_model.build_api.MultiCompareResult` (``compare`` with ``modules``): a table
(pipeline, build time, median latency, spread (interquartile range; min–max in the tooltip), each row
against the first — faster / slower with its interval, "no significant difference (±x %)" or "same build",
:mod:`pipeline_model.latency_stats` — check, error), a latency chart (:class:`widgets.latency_chart.LatencyChart`:
medians with the interquartile range; only a clearly fastest pipeline is highlighted), the final-IR diff
summary of every pair and a "Use this one" button emitting :attr:`CompareView.use_requested` with the chosen
row (the selected one, else the fastest by median).

:func:`verdict_label` is the translated one-line verdict of a
:class:`pipeline_model.latency_stats.Comparison`, shared by the Build & Run panel and the profile view.
"""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QCoreApplication, Signal
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

from pipeline_model.build_api import CompareRow, MultiCompareResult
from pipeline_model.latency_stats import FASTER, MIN_REPEATS, NO_DIFFERENCE, SAME_BUILD, SLOWER, Comparison
from widgets.latency_chart import LatencyBar, LatencyChart, format_us


def _pct(value: Optional[float]) -> str:
    if value is None or value != value or value == float("inf"):
        return "?"
    return f"{value:.1f}" if value < 10 else f"{value:.0f}"


def no_difference_text(noise_pct: Optional[float]) -> str:
    """"no significant difference (±x %)" (translated)."""
    return QCoreApplication.translate("LatencyStats", "no significant difference (±{pct} %)").format(pct=_pct(noise_pct))


def verdict_label(cmp: Optional[Comparison]) -> str:
    """The verdict of ``cmp`` in one translated line: "1.31× slower (95 % CI 1.27–1.35×)", "2.10× faster
    (…)", "no significant difference (±4 %)", "same build (no difference to measure)", "too few repeats"."""
    if cmp is None:
        return QCoreApplication.translate("LatencyStats", "not measured")
    if cmp.verdict == SAME_BUILD:
        return QCoreApplication.translate("LatencyStats", "same build (no difference to measure)")
    if cmp.verdict == NO_DIFFERENCE:
        return no_difference_text(cmp.noise_pct)
    level = int(round(cmp.level * 100))
    if cmp.verdict == FASTER:
        return QCoreApplication.translate("LatencyStats", "{factor}× faster ({level} % CI {low}–{high}×)").format(
            factor=f"{1.0 / cmp.ratio:.2f}", level=level, low=f"{1.0 / cmp.high:.2f}", high=f"{1.0 / cmp.low:.2f}")
    if cmp.verdict == SLOWER:
        return QCoreApplication.translate("LatencyStats", "{factor}× slower ({level} % CI {low}–{high}×)").format(
            factor=f"{cmp.ratio:.2f}", level=level, low=f"{cmp.low:.2f}", high=f"{cmp.high:.2f}")
    return QCoreApplication.translate("LatencyStats", "too few repeats to tell ({n} needed)").format(n=MIN_REPEATS)


def latency_bar(label: str, lat: object, highlight: Optional[bool] = None) -> LatencyBar:
    """A chart bar of a latency (``LatencyStats`` or its dict): the median with the interquartile range
    (min–max when the quartiles are unknown)."""
    get = (lambda k: lat.get(k)) if isinstance(lat, dict) else (lambda k: getattr(lat, k, None))
    low = get("q1_us") if get("q1_us") is not None else get("min_us")
    high = get("q3_us") if get("q3_us") is not None else get("max_us")
    return LatencyBar(label, float(get("median_us") or 0.0), low, high, highlight)


def spread_text(lat: object) -> str:
    """"IQR a – b" of a latency (``LatencyStats``), or "min – max" when the quartiles are unknown."""
    q1, q3 = getattr(lat, "q1_us", None), getattr(lat, "q3_us", None)
    if q1 is not None and q3 is not None:
        return QCoreApplication.translate("LatencyStats", "IQR {low} – {high}").format(low=format_us(q1), high=format_us(q3))
    return f"{format_us(getattr(lat, 'min_us'))} – {format_us(getattr(lat, 'max_us'))}"


class CompareView(QWidget):
    """Table + chart + IR diff summary + "use this one"."""

    use_requested = Signal(int)

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("compareView")
        self._result: Optional[MultiCompareResult] = None
        self._table = QTableWidget(0, 7, self)
        self._table.setHorizontalHeaderLabels([
            self.tr("Pipeline"), self.tr("Build"), self.tr("Median"), self.tr("Spread"), self.tr("vs first"),
            self.tr("Check"), self.tr("Problem")])
        header = self._table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(6, QHeaderView.ResizeMode.Stretch)
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
        self._table.setRowCount(len(result.rows))
        bars = []
        for i, r in enumerate(result.rows):
            for col, (text, tip) in enumerate(self._cells(result, i, r)):
                item = QTableWidgetItem(text)
                if tip:
                    item.setToolTip(tip)
                self._table.setItem(i, col, item)
            if r.latency:
                bars.append(latency_bar(r.label, r.latency, i == result.best and result.best_clear))
        self._chart.set_bars(bars, self.tr("bars: median; whiskers: interquartile range of the repeats"))
        self._diffs.setText("\n".join(self._diff_lines(result)))
        self._best.setText(self.best_text(result))
        self._use.setEnabled(result.best is not None)

    def _cells(self, result: MultiCompareResult, i: int, r: CompareRow) -> list[tuple[str, str]]:
        """(text, tooltip) of the row's cells."""
        lat = r.latency
        if r.check is None:
            check = "-"
        else:
            check = self.tr("pass") if r.check.passed else self.tr("FAIL")
            if r.check.max_abs_over_ref is not None:
                check += f" ({r.check.max_abs_over_ref:.2g})"
            if r.check.warnings:
                check += " " + self.tr("[outputs too small to check]")
        versus = "-" if not lat else (self.tr("(first)") if i == 0 else verdict_label(r.vs_first))
        spread_tip = (self.tr("min – max: %1 – %2 over %3 repeats").replace("%1", format_us(lat.min_us))
                      .replace("%2", format_us(lat.max_us)).replace("%3", str(len(lat.runs_us))) if lat else "")
        return [
            (("★ " if i == result.best and result.best_clear else "") + r.label, ""),
            (format_us(r.build_ms * 1000.0) if r.build_ms else "-", ""),
            (format_us(lat.median_us) if lat else "-", ""),
            (spread_text(lat) if lat else "-", spread_tip),
            (versus, ""),
            (check, ""),
            (r.error or "", r.error or ""),
        ]

    def _diff_lines(self, result: MultiCompareResult) -> list[str]:
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
        return lines

    def best_text(self, result: MultiCompareResult) -> str:
        """The closing line: the fastest only when it is significantly faster than every other."""
        if result.best is None:
            return self.tr("No pipeline ran")
        best = result.rows[result.best]
        if result.best_clear:
            return self.tr("Fastest: %1 (significantly faster than every other)").replace("%1", best.label)
        timed = [r for r in result.rows if r.latency is not None]
        if len(timed) > 1 and all(r.vs_first is not None and r.vs_first.verdict == SAME_BUILD for r in timed[1:]):
            return self.tr("No fastest: every pipeline compiles to the same build")
        return self.tr("Fastest by median: %1, but not significantly faster than every other "
                       "(the spread of the repeats covers the difference)").replace("%1", best.label)

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
