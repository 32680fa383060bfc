"""``TuningPanel``: live MetaSchedule progress — trials done/total as a progress bar and a per-task table.

Fed with the data of the engine's ``tuning_progress`` events (``pipeline_model.passkinds.metaschedule.config.TuningProgress``
as JSON: ``{done, total, tasks: [{name, trials, best_us, errors, reused, status}], work_dir,
elapsed_s, finished, stopped, pass_id, runner, eta_s, focus, best, seeds}``): the title shows the estimated
time left; the footer, with ``seed_rules``, how many PrimFuncs kept the app's schedule and how many a tuned one; a task row's tooltip its time share and trials (targeted tuning) and the start of its best
schedule, and a double-click opens its full best trace and tuned TensorIR. "Stop Tuning" asks the owner to end tuning early
(``stop_requested``): the tuning step ends as a successful step with what was measured, and the run
goes on (a following apply step uses the records).
"""

from __future__ import annotations

from typing import Any, Optional

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from widgets.dialog_parts import close_box
from widgets.units import format_duration_s

COLUMNS = (  # header texts, translated where shown
    QT_TRANSLATE_NOOP("TuningPanel", "Task"), QT_TRANSLATE_NOOP("TuningPanel", "Trials"),
    QT_TRANSLATE_NOOP("TuningPanel", "Best latency"), QT_TRANSLATE_NOOP("TuningPanel", "Errors"),
    QT_TRANSLATE_NOOP("TuningPanel", "Status"),
)



def status_text(status: str) -> str:
    """A task's status word from the engine (``tuning``, ``done`` ...), translated."""
    words = {"tuning": QCoreApplication.translate("TuningPanel", "tuning"),
             "done": QCoreApplication.translate("TuningPanel", "done"),
             "stopped": QCoreApplication.translate("TuningPanel", "stopped"),
             "not reached": QCoreApplication.translate("TuningPanel", "not reached"),
             "not targeted": QCoreApplication.translate("TuningPanel", "not targeted"),
             "skipped": QCoreApplication.translate("TuningPanel", "skipped"),
             "from user database": QCoreApplication.translate("TuningPanel", "from user database")}
    return words.get(status, status)


def end_reason(data: dict[str, Any]) -> str:
    """Why a tuning step ended, from its last ``tuning_progress`` event (``""`` while it runs).

    The engine reports ``done``/``total`` trials, ``finished``/``stopped`` and per task ``trials``,
    ``errors``, ``reused``; a finished step below its budget ended because the tasks were already tuned
    (reused from the database), because candidates failed, or because MetaSchedule's search space was
    exhausted (it found no more distinct candidates)."""
    done, total = int(data.get("done") or 0), int(data.get("total") or 0)
    if data.get("stopped"):
        return QCoreApplication.translate("TuningPanel", "stopped; measured trials are kept")
    if not data.get("finished"):
        return ""
    if total <= 0 or done >= total:
        return QCoreApplication.translate("TuningPanel", "done")
    tasks = list(data.get("tasks") or [])
    reused = sum(1 for t in tasks if t.get("reused"))
    errors = sum(int(t.get("errors") or 0) for t in tasks)
    parts = []
    if tasks and reused == len(tasks):
        return QCoreApplication.translate("TuningPanel", "all {0} tasks already tuned (reused from the database)").format(len(tasks))
    if reused:
        parts.append(QCoreApplication.translate("TuningPanel", "{0} of {1} tasks reused from the database").format(reused, len(tasks)))
    if errors:
        parts.append(QCoreApplication.translate("TuningPanel", "{0} candidates failed to build or run").format(errors))
    if not parts:
        parts.append(QCoreApplication.translate("TuningPanel", "search space exhausted (MetaSchedule found no more candidates)"))
    return QCoreApplication.translate("TuningPanel", "ended early: {0}").format("; ".join(parts))

class TuningPanel(QWidget):
    """Progress bar, summary line and per-task table of a tuning run."""

    stop_requested = Signal()

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("tuningPanel")
        self.last: Optional[dict[str, Any]] = None
        self.active = False
        self.stop_sent = False  # Stop was clicked for the tuning in flight
        self.title = QLabel(self.tr("No tuning step has run yet. Add a MetaSchedule step (relax.MetaScheduleTuneTIR / TuneIRMod) and run."), self)
        self.title.setObjectName("tuningTitle")
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.bar = QProgressBar(self)
        self.bar.setRange(0, 1)
        self.bar.setValue(0)
        self.bar.setFormat(self.tr("%v / %m trials"))
        self.stop_button = QPushButton(self.tr("Stop Tuning"), self)
        self.stop_button.setToolTip(self.tr("End tuning within a few seconds; what was measured is kept in the database "
                                            "and the pipeline goes on (the apply step uses it)"))
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self._on_stop_clicked)
        top = QHBoxLayout()
        top.addWidget(self.bar, 1)
        top.addWidget(self.stop_button)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setObjectName("tuningTasks")
        self.table.setHorizontalHeaderLabels([self.tr(c) for c in COLUMNS])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        self.table.cellDoubleClicked.connect(self._on_cell_double_clicked)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for col in range(1, len(COLUMNS)):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        #: How the trial budget splits: TuneTIR's ``max_trials_global`` is a budget per PrimFunc (TVM tunes
        #: each PrimFunc on its own), so the total is that times the number of PrimFuncs.
        self.budget = QLabel("", self)
        self.budget.setObjectName("tuningBudget")
        self.budget.setWordWrap(True)
        self.footer = QLabel("", self)
        self.footer.setWordWrap(True)
        self.footer.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.title)
        layout.addLayout(top)
        layout.addWidget(self.budget)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.footer)

    def reset(self) -> None:
        """Back to the empty state (another document or model: the old figures describe nothing shown)."""
        self.last = None
        self.active = self.stop_sent = False
        self.stop_button.setEnabled(False)
        self.title.setText(self.tr("No tuning step has run yet. Add a MetaSchedule step (relax.MetaScheduleTuneTIR / TuneIRMod) and run."))
        self.bar.setRange(0, 1)
        self.bar.setValue(0)
        self.table.setRowCount(0)
        self.budget.setText("")
        self.footer.setText("")

    def budget_text(self, pass_id: str, total: int, tasks: int) -> str:
        """What the trial budget means: ``MetaScheduleTuneTIR``'s ``max_trials_global`` counts per PrimFunc
        (TVM tunes each PrimFunc separately), so ``total`` is that times ``tasks``; TuneIRMod shares it."""
        if not total or not tasks:
            return ""
        if pass_id.endswith("MetaScheduleTuneTIR") and total % tasks == 0:
            return self.tr("Budget: {per} trials per PrimFunc × {tasks} PrimFunc(s) = {total} trials "
                           "(MetaScheduleTuneTIR's max_trials_global counts per PrimFunc).").format(
                per=total // tasks, tasks=tasks, total=total)
        return self.tr("Budget: {total} trials shared by {tasks} task(s).").format(total=total, tasks=tasks)

    def _on_stop_clicked(self) -> None:
        self.stop_sent = True
        self.stop_button.setEnabled(False)
        self.footer.setText(self.tr("Stopping tuning after this round; measured trials are kept…"))
        self.stop_requested.emit()

    def start(self, step_title: str) -> None:
        """A tuning step started (before its first progress event)."""
        self.active = True
        self.stop_sent = False
        self.stop_button.setEnabled(True)
        self.title.setText(self.tr("Tuning: {step}…").format(step=step_title))
        self.bar.setRange(0, 0)  # busy until the first event says how many trials

    def update_progress(self, data: dict[str, Any]) -> None:
        """Show one ``tuning_progress`` event."""
        self.last = dict(data)
        done, total = int(data.get("done") or 0), int(data.get("total") or 0)
        finished, stopped = bool(data.get("finished")), bool(data.get("stopped"))
        self.active = not (finished or stopped)
        self.stop_button.setEnabled(self.active and not self.stop_sent)
        self.bar.setRange(0, max(total, 1))
        self.bar.setValue(min(done, max(total, 1)))
        reason = end_reason(data)
        state = f" — {reason}" if reason else ""
        self.bar.setFormat(f"%v/%m — {reason}" if reason else "%v/%m")
        self.bar.setToolTip(reason)
        pass_id = str(data.get("pass_id") or "MetaSchedule")
        elapsed = format_duration_s(float(data.get("elapsed_s") or 0.0))
        eta = data.get("eta_s")
        if self.active and eta is not None:
            state += self.tr(" — about {eta} left").format(eta=format_duration_s(float(eta)))
        if self.active and data.get("phase") == "lookup":  # a time-budgeted step before its first round
            self.bar.setRange(0, 0)
            self.title.setText(self.tr("<b>{pass_id}</b>: looking the PrimFuncs up in the work folder and the user "
                                       "tuning database, {elapsed}").format(pass_id=pass_id, elapsed=elapsed))
        else:
            self.title.setText(self.tr("<b>{pass_id}</b>: {done} / {total} trials, {elapsed}, runner {runner}").format(
                pass_id=pass_id, done=done, total=total, elapsed=elapsed, runner=data.get("runner", "local")) + state)
        tasks = list(data.get("tasks") or [])
        from widgets.latency_chart import format_us  # with the first progress (the panel is a hidden tab at start)

        self.budget.setText(self.budget_text(pass_id, total, len(tasks)))
        best_of = data.get("best") if isinstance(data.get("best"), dict) else {}
        shares = {c.get("name"): c for c in ((data.get("focus") or {}).get("chosen") or []) if isinstance(c, dict)}
        self.table.setRowCount(len(tasks))
        for row, task in enumerate(tasks):
            best = task.get("best_us")
            cells = (
                str(task.get("name", "")),
                str(task.get("trials", 0)),
                format_us(float(best)) if best is not None else "–",
                str(task.get("errors", 0)),
                status_text(str(task.get("status", ""))) + (self.tr(" (reused)") if task.get("reused") else ""),
            )
            for col, text in enumerate(cells):
                item = self.table.item(row, col)
                if item is None:
                    item = QTableWidgetItem()
                    if col in (1, 2, 3):
                        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    self.table.setItem(row, col, item)
                item.setText(text)
                item.setToolTip(self._task_tooltip(task, best_of.get(task.get("name")), shares.get(task.get("name"))))
        work_dir = data.get("work_dir")
        footer = self.tr("Database: {path}").format(path=work_dir) if work_dir else ""
        seeds = data.get("seeds")
        if isinstance(seeds, dict):  # seed_rules: the app's schedules compete with the tuned ones
            from pipeline_model.passkinds.metaschedule.report import seed_counts  # with the first seeded result

            counts = seed_counts(seeds)
            text = (self.tr("best schedule: the app's for {app} PrimFunc(s), a tuned one for {tuned}").format(**counts)
                    if seeds.get("outcome") else self.tr("{seeded} app schedules seeded").format(**counts))
            footer = f"{footer} · {text}" if footer else text
        devices = data.get("devices")
        if isinstance(devices, dict) and devices:  # runner = rpc: what each device of the farm measured
            text = self.tr("RPC devices: {devices}").format(devices=", ".join(
                self.tr("{device} {measured} measured").format(device=d, measured=c.get("measured", 0))
                + (self.tr(" ({requeued} re-queued)").format(requeued=c["requeued"]) if c.get("requeued") else "")
                for d, c in sorted(devices.items()) if isinstance(c, dict)))
            footer = f"{footer} · {text}" if footer else text
        self.footer.setText(footer)

    def _task_tooltip(self, task: dict[str, Any], best: Optional[dict[str, Any]], chosen: Optional[dict[str, Any]]) -> str:
        """Tooltip of a task row: its share of the measured time and trials (targeted tuning) and the
        start of its best schedule's trace (double-click for the trace and tuned TensorIR)."""
        lines = []
        if chosen:
            lines.append(self.tr("{share:.1f} % of the measured time; {trials} trials allocated").format(
                share=float(chosen.get("share") or 0.0) * 100.0, trials=chosen.get("trials")))
        if best:
            trace = str(best.get("trace") or "")
            lines.append(self.tr("Best schedule (double-click for the trace and tuned TensorIR):"))
            lines.append("\n".join(trace.splitlines()[:12]))
        return "\n".join(lines)

    def best_schedule(self, name: str) -> Optional[dict[str, Any]]:
        """The best-schedule entry of task ``name`` from the last event (``{trace, tir, *_file, *_chars}``)."""
        best = (self.last or {}).get("best")
        entry = best.get(name) if isinstance(best, dict) else None
        return entry if isinstance(entry, dict) else None

    def best_schedule_text(self, name: str) -> str:
        """Full trace and tuned TensorIR of task ``name`` (read from the files the engine wrote; the
        shortened texts of the event when the files are gone)."""
        entry = self.best_schedule(name)
        if entry is None:
            return ""
        parts = []
        for part, title in (("trace", self.tr("# Best schedule trace")), ("tir", self.tr("# Tuned TensorIR"))):
            text = str(entry.get(part) or "")
            path = entry.get(f"{part}_file")
            if path:
                try:
                    with open(str(path), encoding="utf-8") as fh:
                        text = fh.read()
                except OSError:
                    pass
            parts.append(f"{title}\n{text}")
        return "\n\n".join(parts)

    def _on_cell_double_clicked(self, row: int, _col: int) -> None:
        item = self.table.item(row, 0)
        name = item.text() if item is not None else ""
        text = self.best_schedule_text(name)
        if not text:
            return
        from PySide6.QtGui import QFontDatabase
        from PySide6.QtWidgets import QDialog, QPlainTextEdit

        dialog = QDialog(self)
        dialog.setObjectName("bestScheduleDialog")
        dialog.setWindowTitle(self.tr("Best schedule of {task}").format(task=name))
        view = QPlainTextEdit(dialog)
        view.setReadOnly(True)
        view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        view.setPlainText(text)
        buttons = close_box(dialog)
        layout = QVBoxLayout(dialog)
        layout.addWidget(view, 1)
        layout.addWidget(buttons)
        dialog.resize(760, 560)
        dialog.open()

    def end(self, message: str = "") -> None:
        """The run that tuned ended (finished, failed or stopped)."""
        self.active = False
        self.stop_button.setEnabled(False)
        if self.bar.maximum() == 0:
            self.bar.setRange(0, 1)
        if message:
            self.footer.setText(message if not self.footer.text() else f"{message} · {self.footer.text()}")

    def task_names(self) -> list[str]:
        """Names in the table (tests)."""
        return [self.table.item(r, 0).text() for r in range(self.table.rowCount()) if self.table.item(r, 0)]

