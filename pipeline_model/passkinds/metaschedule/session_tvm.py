"""A tuning session in the engine: options, progress, stop flag (engine side, imports TVM).

A :class:`ProgressCallback` (a MetaSchedule ``MeasureCallback``, run after ``AddToDatabase``) counts
trials, keeps each task's best latency, reports them and ends tuning when asked to stop — what was
measured stays in the JSON database, so ``MetaScheduleApplyDatabase`` uses it. A :class:`TuningSession`
holds what the tuning calls of one step or command share.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Optional

from tvm.ir.utils import derived_object
from tvm.s_tir.meta_schedule.measure_callback import PyMeasureCallback

from pipeline_model.passkinds.metaschedule.builder_tvm import TuningStopped, make_builder, make_runner
from pipeline_model.passkinds.metaschedule.script_measure import close_tuning_tools
from pipeline_model.passkinds.metaschedule.config import TuningConfig, TuningProgress, estimate_eta

ProgressFn = Callable[[TuningProgress], None]
StopFn = Callable[[], bool]


@derived_object
class ProgressCallback(PyMeasureCallback):
    """MeasureCallback that counts trials per task, keeps the best latency and stops on request.

    It must come after MetaSchedule's default callbacks (``AddToDatabase`` first), so everything
    measured is in the database before a stop ends tuning.
    """

    def __init__(self, session: "TuningSession"):
        super().__init__()
        self.session = session

    def apply(self, task_scheduler, task_id, measure_candidates, builder_results, runner_results) -> None:
        self.session.record(int(task_id), builder_results, runner_results)
        if self.session.should_stop():
            self.session.stopped = True
            raise TuningStopped("tuning stopped by the user")


class TuningSession:
    """State shared by the tuning calls of one step/command: options, progress, stop flag.

    ``on_progress`` gets a :class:`TuningProgress` after each measured round (and at start/end);
    ``should_stop`` is polled by the builder (every 0.2 s) and after each round.
    """

    def __init__(
        self,
        config: Optional[TuningConfig] = None,
        on_progress: Optional[ProgressFn] = None,
        should_stop: Optional[StopFn] = None,
        pass_id: str = "",
    ):
        self.config = config or TuningConfig()
        self.on_progress = on_progress
        self._should_stop = should_stop or (lambda: False)
        self.progress = TuningProgress(pass_id=pass_id, runner=self.config.runner)
        self.stopped = False
        self.errors: list[str] = []
        self.warnings: list[str] = []  # database lines skipped when read (file, line, why)
        self.started = time.perf_counter()
        self.task_names: list[str] = []  # task id -> name, for the tune call in flight
        self.name_of_func: dict[int, str] = {}  # id(PrimFunc body) -> name (for the tune_tir override)
        self.measured_ok = 0
        self.preplanned = False  # progress.total was set up front (one budget per PrimFunc)
        self.allocation: Optional[dict[str, int]] = None  # targeted tuning: trials per PrimFunc name
        self.space: Any = "post-order-apply"  # MetaSchedule space generator (a ScheduleFn for user spaces)
        self.current_task = ""  # name of the PrimFunc being tuned (tune_tir override)
        self.space_tag = ""  # mixed into the reuse state's task keys (another search space tunes again)
        self.deadline: Optional[float] = None  # time-budgeted tuning: perf_counter() at which tuning ends
        self.deadline_hit = False  # the stop came from the deadline (a normal end), not from the user
        self.incremental = False  # time-budgeted rounds: every call tunes more, the reuse state never skips
        self.retuned = False  # this step wiped its work directory (retune): nothing is taken from the user database
        self.import_only = False  # look tasks up (work dir, user database) without tuning any
        self.user_db: dict[str, Any] = {"path": "", "imported": [], "added": 0, "problem": None}
        self._tools: Optional[tuple[Any, Any]] = None

    def tools(self) -> tuple[Any, Any]:
        """``(builder, runner)`` of the session's options, made at the first call and kept until :meth:`close`:
        every PrimFunc, round and seed of the step measures with the same worker processes (a fresh builder
        pool and runner per PrimFunc cost ~7 s each). The step makes them first, before its look-ups and search,
        and nothing waits for their workers to start before the first candidate needs them."""
        if self._tools is None:
            builder = make_builder(self.config, self.should_stop)
            # One build worker starts now beside the runner's (a fresh interpreter importing TVM each, ~3 s of
            # CPU): the first candidate needs no more, and on two cores every extra start-up delays it; the
            # pool starts the others when a round has more candidates in flight.
            builder.warm(1)
            self._tools = (builder, make_runner(self.config, self.should_stop))
        return self._tools

    def close(self) -> None:
        """End the worker processes of :meth:`tools` (the step's end; a later call makes new ones)."""
        tools, self._tools = self._tools, None
        if tools is not None:
            close_tuning_tools(*tools)

    def should_stop(self) -> bool:
        """True once a stop was requested or the deadline passed (sticky)."""
        if not self.stopped:
            try:
                self.stopped = bool(self._should_stop())
            except Exception:  # noqa: BLE001 - a broken stop callback must not break tuning
                self.stopped = False
            if not self.stopped and self.deadline is not None and time.perf_counter() >= self.deadline:
                self.stopped = self.deadline_hit = True
        return self.stopped

    @property
    def user_stopped(self) -> bool:
        """True when the user (or a cancelled run) ended tuning, not the time budget's deadline."""
        return self.stopped and not self.deadline_hit

    def warn(self, message: str) -> None:
        """Note a database line skipped when read (shown in the step's report; at most 50 kept)."""
        if message not in self.warnings and len(self.warnings) < 50:
            self.warnings.append(message)

    def emit(self) -> None:
        """Send the current progress to ``on_progress``."""
        if self.progress.finished:
            self.progress.total = max(self.progress.total, self.progress.done)
        self.progress.elapsed_s = round(time.perf_counter() - self.started, 3)
        self.progress.stopped = self.user_stopped
        self.progress.user_database = dict(self.user_db)
        self.progress.eta_s = (None if self.progress.finished or self.stopped
                               else estimate_eta(self.progress.done, self.progress.total, self.progress.elapsed_s))
        if self.deadline is not None and not (self.progress.finished or self.stopped):
            self.progress.eta_s = round(max(0.0, self.deadline - time.perf_counter()), 1)  # the budget's end
        if self.on_progress is not None:
            self.on_progress(self.progress)

    def record(self, task_id: int, builder_results, runner_results) -> None:
        """Account for one measured round of task ``task_id``."""
        name = self.task_names[task_id] if 0 <= task_id < len(self.task_names) else f"task_{task_id}"
        if not builder_results:
            return
        task = self.progress.task(name)
        task.status = "tuning"
        for b_res, r_res in zip(builder_results, runner_results):
            task.trials += 1
            self.progress.done += 1
            secs = None
            if b_res.error_msg is None and r_res.error_msg is None and r_res.run_secs:
                vals = [float(x) for x in r_res.run_secs]
                secs = sum(vals) / len(vals)
            if secs is None or secs >= 1e9:
                task.errors += 1
                msg = b_res.error_msg or r_res.error_msg
                if msg and len(self.errors) < 20:
                    self.errors.append(f"{name}: {str(msg).splitlines()[0][:300]}")
                continue
            self.measured_ok += 1
            us = secs * 1e6
            if task.best_us is None or us < task.best_us:
                task.best_us = round(us, 3)
        self.note_devices()
        self.emit()

    def note_devices(self) -> None:
        """Copy the RPC farm's per-device counts (``{"host:port": {measured, failed, requeued}}``) into the
        progress (nothing for the local runner)."""
        stats = getattr(self._tools[1], "device_stats", None) if self._tools is not None else None
        if stats:
            self.progress.devices = {device: dict(counts) for device, counts in stats.items()}

    def summary(self) -> dict[str, Any]:
        """JSON summary for ``StepResult.report["tuning"]``."""
        self.progress.elapsed_s = round(time.perf_counter() - self.started, 3)
        data = self.progress.to_json()
        data["measured"] = self.measured_ok
        data["devices_served"] = sum(1 for counts in self.progress.devices.values() if counts.get("measured"))
        data["errors"] = list(self.errors)
        data["warnings"] = list(self.warnings)
        data["config"] = self.config.to_json()
        data["user_database"] = dict(self.user_db)
        return data
