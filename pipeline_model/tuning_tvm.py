"""MetaSchedule tuning that works out of the box on a CPU, with progress, stop and database reuse.

Engine side only (imports TVM). What it fixes on TVM 0.27 (see ``../shared/TVM_NOTES.md``):

* the target gets ``"num-cores"`` (MetaSchedule refuses an llvm target without it);
* the builder's ``f_build`` is the stock ``default_build`` *without* ``import tvm.s_tir.tensor_intrin``
  (that import takes ~37 s in every fresh builder worker, so every stock candidate hits the 30 s
  timeout); the builder also polls a stop flag so Stop ends a build round within a fraction of a second;
* the runner measures with ``EvaluatorConfig(number=10, repeat=1, min_repeat_ms=20)``, locally or
  through an RPC tracker (``ms.runner.RPCRunner``);
* a :class:`ProgressCallback` (a MetaSchedule ``MeasureCallback``, run after ``AddToDatabase``) counts
  trials, keeps each task's best latency, reports them and ends tuning when asked to stop — what was
  measured stays in the JSON database, so ``MetaScheduleApplyDatabase`` uses it;
* a work directory's database is reused: tasks already tuned there (recorded in
  :data:`pipeline_model.tuning.STATE_FILE`) are skipped; ``retune`` wipes it.

Entry points: :func:`tune_module` (all tasks of a Relax module, like ``tune_relax``),
:func:`install_overrides` (makes the stock ``relax.transform.MetaScheduleTuneTIR`` and
``MetaScheduleTuneIRMod`` passes use all of the above by overriding the global functions
``tvm.s_tir.meta_schedule.tune_tir`` / ``tune_relax`` they call), :func:`tuning_session` (the progress
callback, stop flag and options those overrides use) and :func:`make_tuning_pass` (a ready pass for a
pipeline step, for the catalogue).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import threading
import time
from collections import deque
from typing import Any, Callable, Iterator, Optional

import tvm
import tvm_ffi
from tvm import relax
from tvm.ir.utils import derived_object
from tvm.s_tir import meta_schedule as ms
from tvm.s_tir.meta_schedule.builder import BuilderInput, BuilderResult, PyBuilder
from tvm.s_tir.meta_schedule.measure_callback import PyMeasureCallback
from tvm.target import Target

from pipeline_model import emit
from pipeline_model.tuning import (
    STATE_FILE,
    TuningConfig,
    TuningConfigError,
    TuningProgress,
    estimate_eta,
    has_database,
    track_work_dir,
    wipe_work_dir,
)

ProgressFn = Callable[[TuningProgress], None]
StopFn = Callable[[], bool]


class TuningStopped(Exception):
    """Raised inside MetaSchedule to end tuning early; caught by this module, never escapes it."""


# --------------------------------------------------------------------------------------------- target
def tuning_target(target: Any) -> Target:
    """A ``Target`` fit for MetaSchedule: a dict/JSON/Target; llvm targets get ``num-cores``
    (:func:`pipeline_model.emit.meta_schedule_target`, the code exported scripts use too); the tensor
    intrinsics it needs are registered (:func:`ensure_intrinsics`)."""
    target = emit.meta_schedule_target(target)
    ensure_intrinsics(target)
    return target


def ensure_intrinsics(target: Target) -> None:
    """Register the tensor intrinsics MetaSchedule needs for ``target``, quickly.

    ``TuneContext`` runs ``import tvm.s_tir.tensor_intrin``, whose ``cuda`` part alone takes about a
    minute on this machine (~57 of ~69 s). For a CPU target only the CPU intrinsics are loaded
    (:func:`pipeline_model.emit.load_tensor_intrinsics`, shared with exported scripts).
    """
    emit.load_tensor_intrinsics(target)


def _physical_cores() -> int:
    try:
        import psutil

        return int(psutil.cpu_count(logical=False) or psutil.cpu_count() or 1)
    except ImportError:  # pragma: no cover - psutil is a requirement of MetaSchedule itself
        return os.cpu_count() or 1


# -------------------------------------------------------------------------------------------- builder
def make_f_build() -> Callable:
    """The builder function: stock ``default_build`` minus the slow ``tensor_intrin`` import
    (:func:`pipeline_model.emit.meta_schedule_f_build`, shared with exported scripts; a closure, so
    cloudpickle ships it by value to the builder workers, which need not import this package)."""
    return emit.meta_schedule_f_build()


@derived_object
class StoppableLocalBuilder(PyBuilder):
    """``LocalBuilder`` with the fast ``f_build`` that also polls a stop flag.

    Candidates go to a pool of ``max_workers`` processes (one fresh pool per round, like the stock
    builder); at most ``max_workers`` are in flight, so when ``should_stop()`` turns true the workers
    are killed and :class:`TuningStopped` ends the round within a fraction of a second.
    """

    def __init__(self, max_workers: int, timeout_sec: float, should_stop: Optional[StopFn] = None):
        super().__init__()
        self.max_workers = max(1, int(max_workers))
        self.timeout_sec = float(timeout_sec)
        self.should_stop = should_stop or (lambda: False)
        self.f_build = make_f_build()

    def build(self, build_inputs: list[BuilderInput]) -> list[BuilderResult]:
        # _worker_func is TVM's own worker entry (importable in the worker); f_build goes by value.
        from tvm.s_tir.meta_schedule.builder.local_builder import _serialize_params, _worker_func
        from tvm.support.popen_pool import PopenPoolExecutor

        if self.should_stop():
            raise TuningStopped("stopped before building")
        pool = PopenPoolExecutor(max_workers=self.max_workers, timeout=self.timeout_sec)
        results: list[Optional[BuilderResult]] = [None] * len(build_inputs)
        pending = deque(range(len(build_inputs)))
        running: dict[concurrent.futures.Future, int] = {}
        stopped = False
        try:
            while pending or running:
                while pending and len(running) < self.max_workers:
                    i = pending.popleft()
                    inp = build_inputs[i]
                    fut = pool.submit(
                        _worker_func, self.f_build, None, inp.mod, inp.target, _serialize_params(inp.params)
                    )
                    running[fut] = i
                done, _ = concurrent.futures.wait(
                    list(running), timeout=0.2, return_when=concurrent.futures.FIRST_COMPLETED
                )
                for fut in done:
                    i = running.pop(fut)
                    exc = fut.exception()
                    if exc is None:
                        results[i] = BuilderResult(fut.result(), None)
                    elif isinstance(exc, TimeoutError):
                        results[i] = BuilderResult(
                            None, f"LocalBuilder: Timeout, killed after {self.timeout_sec} seconds"
                        )
                    else:
                        results[i] = BuilderResult(None, "LocalBuilder: An exception occurred\n" + str(exc))
                if self.should_stop():
                    stopped = True
                    break
        finally:
            pool.shutdown(wait=not stopped)
        if stopped:
            raise TuningStopped("stopped while building")
        return [r for r in results if r is not None]


def make_builder(config: TuningConfig, should_stop: Optional[StopFn] = None) -> StoppableLocalBuilder:
    """The builder for ``config`` (``builder_workers`` 0 = all CPU cores)."""
    workers = config.builder_workers or (os.cpu_count() or 1)
    return StoppableLocalBuilder(workers, config.builder_timeout_s, should_stop)


def make_stock_builder(config: TuningConfig) -> ms.builder.LocalBuilder:
    """TVM's own ``LocalBuilder`` with the same fast ``f_build`` (for comparisons and scripts)."""
    workers = config.builder_workers or (os.cpu_count() or 1)
    return ms.builder.LocalBuilder(f_build=make_f_build(), max_workers=workers, timeout_sec=config.builder_timeout_s)


def make_runner(config: TuningConfig) -> ms.runner.Runner:
    """``LocalRunner`` or ``RPCRunner`` (tracker host/port/key) measuring with number=10,
    repeat=1, min_repeat_ms=20 by default."""
    evaluator = ms.runner.EvaluatorConfig(
        number=config.number, repeat=config.repeat, min_repeat_ms=config.min_repeat_ms,
        enable_cpu_cache_flush=False,
    )
    if config.runner == "rpc":
        rpc_config = ms.runner.RPCConfig(
            tracker_host=config.rpc_host,
            tracker_port=int(config.rpc_port),
            tracker_key=config.rpc_key,
            session_timeout_sec=int(config.rpc_session_timeout_s),
        )
        return ms.runner.RPCRunner(rpc_config=rpc_config, evaluator_config=evaluator, max_workers=1)
    return ms.runner.LocalRunner(timeout_sec=config.runner_timeout_s, evaluator_config=evaluator)


def check_rpc_tracker(config: TuningConfig, timeout_s: float = 5.0) -> int:
    """Number of free servers with ``config.rpc_key`` on the tracker; raises ``TuningConfigError``
    with a plain message when the tracker cannot be reached or has no such device."""
    import socket

    from tvm import rpc

    try:
        # TVM's connect_tracker retries for 60 s; a plain connection attempt answers within timeout_s.
        socket.create_connection((config.rpc_host, int(config.rpc_port)), timeout=timeout_s).close()
        tracker = rpc.connect_tracker(config.rpc_host, int(config.rpc_port))
        summary = tracker.summary()
    except Exception as exc:  # noqa: BLE001 - any connection failure gets the same plain message
        raise TuningConfigError(
            f"cannot reach the RPC tracker at {config.rpc_host}:{config.rpc_port} ({exc}); start it with "
            "'python -m tvm.exec.rpc_tracker' or choose runner = local"
        ) from None
    count = 0
    for item in summary.get("queue_info", {}).items():
        key, info = item
        if key == config.rpc_key:
            count = int(info.get("free", 0)) + int(info.get("pending", 0))
    servers = [s for s in summary.get("server_info", []) if str(s.get("key", "")).split(":")[-1] == config.rpc_key]
    if count == 0 and not servers:
        raise TuningConfigError(
            f"the RPC tracker at {config.rpc_host}:{config.rpc_port} has no device with key "
            f"'{config.rpc_key}'; start one with 'python -m tvm.exec.rpc_server --tracker "
            f"{config.rpc_host}:{config.rpc_port} --key {config.rpc_key}'"
        )
    return max(count, len(servers))


# ------------------------------------------------------------------------------------------- progress
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
        self.started = time.perf_counter()
        self.task_names: list[str] = []  # task id -> name, for the tune call in flight
        self.name_of_func: dict[int, str] = {}  # id(PrimFunc body) -> name (for the tune_tir override)
        self.measured_ok = 0
        self.preplanned = False  # progress.total was set up front (one budget per PrimFunc)
        self.allocation: Optional[dict[str, int]] = None  # targeted tuning: trials per PrimFunc name
        self.space: Any = "post-order-apply"  # MetaSchedule space generator (a ScheduleFn for user spaces)
        self.current_task = ""  # name of the PrimFunc being tuned (tune_tir override)
        self.space_tag = ""  # mixed into the reuse state's task keys (another search space tunes again)

    def should_stop(self) -> bool:
        """True once a stop was requested (sticky)."""
        if not self.stopped:
            try:
                self.stopped = bool(self._should_stop())
            except Exception:  # noqa: BLE001 - a broken stop callback must not break tuning
                self.stopped = False
        return self.stopped

    def emit(self) -> None:
        """Send the current progress to ``on_progress``."""
        if self.progress.finished:
            self.progress.total = max(self.progress.total, self.progress.done)
        self.progress.elapsed_s = round(time.perf_counter() - self.started, 3)
        self.progress.stopped = self.stopped
        self.progress.eta_s = (None if self.progress.finished or self.stopped
                               else estimate_eta(self.progress.done, self.progress.total, self.progress.elapsed_s))
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
        self.emit()

    def summary(self) -> dict[str, Any]:
        """JSON summary for ``StepResult.report["tuning"]``."""
        self.progress.elapsed_s = round(time.perf_counter() - self.started, 3)
        data = self.progress.to_json()
        data["measured"] = self.measured_ok
        data["errors"] = list(self.errors)
        data["config"] = self.config.to_json()
        return data


_ACTIVE = threading.local()


def active_session() -> Optional[TuningSession]:
    """The session set by :func:`tuning_session` in this thread, if any."""
    stack = getattr(_ACTIVE, "stack", None)
    return stack[-1] if stack else None


@contextlib.contextmanager
def tuning_session(session: TuningSession) -> Iterator[TuningSession]:
    """Make ``session`` the one the overridden ``tune_tir``/``tune_relax`` use in this thread."""
    install_overrides()
    stack = getattr(_ACTIVE, "stack", None)
    if stack is None:
        stack = _ACTIVE.stack = []
    stack.append(session)
    try:
        yield session
    finally:
        stack.pop()


# ------------------------------------------------------------------------------------ state / reuse
def _state_path(work_dir: str) -> str:
    return os.path.join(work_dir, STATE_FILE)


def _load_state(work_dir: str) -> dict[str, Any]:
    try:
        with open(_state_path(work_dir), encoding="utf-8") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _save_state(work_dir: str, state: dict[str, Any]) -> None:
    path = _state_path(work_dir)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(state, fh, indent=1, sort_keys=True)
    os.replace(tmp, path)


def _task_key(mod: tvm.IRModule, target: Target) -> str:
    return f"{tvm_ffi.structural_hash(mod) & 0xFFFFFFFFFFFFFFFF:016x}:{target.kind.name}"


def _best_in_db(database, mod: tvm.IRModule) -> tuple[int, Optional[float]]:
    """(number of valid records, best mean latency in us) for workload ``mod`` in ``database``."""
    if not database.has_workload(mod):
        return 0, None
    workload = database.commit_workload(mod)
    records = database.get_top_k(workload, 1 << 30)
    best = None
    for rec in records:
        if rec.run_secs:
            vals = [float(x) for x in rec.run_secs]
            us = sum(vals) / len(vals) * 1e6
            if us < 1e15 and (best is None or us < best):
                best = us
    return len(records), (round(best, 3) if best is not None else None)


# ----------------------------------------------------------------------------------------- tuning core
def _task_loggers(work_dir: str, names: list[str]) -> list:
    """MetaSchedule's per-task loggers. Its ``create_loggers`` lists the global logger's existing
    handlers *by name* in a ``dictConfig``; an unnamed handler there (pytest and other hosts add
    some) makes the second tuning of a process fail, so those are detached while it runs."""
    import logging

    from tvm.s_tir.meta_schedule.logging import get_loggers_from_work_dir

    global_logger = logging.getLogger("tvm.s_tir.meta_schedule")
    unnamed = [h for h in global_logger.handlers if not h.get_name()]
    for h in unnamed:
        global_logger.removeHandler(h)
    try:
        return get_loggers_from_work_dir(work_dir, names)
    finally:
        for h in unnamed:
            global_logger.addHandler(h)


def _open_database(work_dir: str, retune: bool):
    os.makedirs(work_dir, exist_ok=True)
    if retune:
        wipe_work_dir(work_dir)
    return ms.database.JSONDatabase(work_dir=work_dir, module_equality="structural")


def _run_tasks(session: "TuningSession", named: list, target: Target, work_dir: str, *rest: Any) -> None:
    """:func:`_run_tasks_untracked` with the files it writes recorded in the work dir's manifest."""
    with track_work_dir(work_dir):
        _run_tasks_untracked(session, named, target, work_dir, *rest)


def _run_tasks_untracked(
    session: TuningSession,
    named: list[tuple[str, tvm.IRModule, float]],
    target: Target,
    work_dir: str,
    max_trials_global: int,
    max_trials_per_task: Optional[int],
    task_scheduler: str,
) -> None:
    """Tune ``named`` = [(task name, task module, weight)] in ``work_dir``, skipping tasks the state
    file marks as tuned with at least this budget; updates ``session`` and the state file."""
    config = session.config
    database = _open_database(work_dir, config.retune)
    state = _load_state(work_dir)
    budget = max_trials_per_task or max_trials_global
    todo: list[tuple[str, tvm.IRModule, float, str]] = []
    for name, mod, weight in named:
        key = _task_key(mod, target) + session.space_tag
        count, best = _best_in_db(database, mod)
        prior = state.get(key) or {}
        task = session.progress.task(name)
        if prior.get("complete") and int(prior.get("budget", 0)) >= budget:
            task.trials, task.best_us, task.reused, task.status = count, best, True, "skipped"
            if session.preplanned:
                session.progress.total = max(0, session.progress.total - budget)
            continue
        todo.append((name, mod, weight, key))
    if not session.preplanned and todo:
        cap = len(todo) * max_trials_per_task if max_trials_per_task else max_trials_global
        session.progress.total += min(max_trials_global, cap)
    session.emit()
    if not todo or session.should_stop():
        return
    from tvm.s_tir.meta_schedule.utils import fork_seed

    num_threads = int(target.attrs.get("num-cores", 0) or _physical_cores()) if target.kind.name == "llvm" else "physical"
    contexts = []
    names = [t[0] for t in todo]
    for (name, mod, _w, _k), logger, rand_state in zip(
        todo, _task_loggers(work_dir, names), fork_seed(config.seed, n=len(todo))
    ):
        contexts.append(
            ms.TuneContext(
                mod=mod, target=target, space_generator=session.space, search_strategy="evolutionary",
                task_name=name, logger=logger, rand_state=rand_state, num_threads=num_threads,
            ).clone()
        )
        session.progress.task(name).status = "tuning"
    session.task_names = names
    builder = make_builder(config, session.should_stop)
    runner = make_runner(config)
    callbacks = list(ms.measure_callback.MeasureCallback.create("default")) + [ProgressCallback(session)]
    cost_model = ms.cost_model.CostModel.create(
        config.cost_model, **({"num_tuning_cores": num_threads} if config.cost_model == "xgb" and isinstance(num_threads, int) else {})
    )
    try:
        ms.tune.tune_tasks(
            tasks=contexts,
            task_weights=[t[2] for t in todo],
            work_dir=work_dir,
            max_trials_global=max_trials_global,
            max_trials_per_task=max_trials_per_task,
            num_trials_per_iter=config.num_trials_per_iter,
            builder=builder,
            runner=runner,
            database=database,
            cost_model=cost_model,
            measure_callbacks=callbacks,
            task_scheduler=task_scheduler,
            module_equality="structural",
        )
    except Exception:  # noqa: BLE001 - a stop surfaces as whatever exception crossed the FFI
        if not session.stopped:
            raise
    finally:
        session.task_names = []
    for name, mod, _w, key in todo:
        count, best = _best_in_db(database, mod)
        task = session.progress.task(name)
        if best is not None and (task.best_us is None or best < task.best_us):
            task.best_us = best
        task.status = "stopped" if session.stopped else "done"
        state[key] = {"name": name, "budget": budget, "records": count, "complete": not session.stopped}
    _save_state(work_dir, state)
    for name, mod, _w in named:
        record_best_schedule(session, database, name, mod, target, work_dir)


#: Characters of a best trace / tuned TensorIR kept in reports and events (the full text goes to a file).
BEST_TEXT_LIMIT = 1500


def _safe_file_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[:120] or "task"


def best_schedule(database, mod: tvm.IRModule, target: Target, name: str) -> Optional[dict[str, str]]:
    """The best schedule of workload ``mod`` in ``database``: ``{"trace": Python text of its trace
    (``query_tuning_record(...).trace``), "tir": tuned TensorIR (``query_schedule(...).mod.script()``)}``,
    full length; ``None`` when the database has no valid record for it."""
    try:
        record = database.query_tuning_record(mod, target, name)
        if record is None:
            return None
        sch = database.query_schedule(mod, target, name)
    except Exception:  # noqa: BLE001 - a record that cannot be replayed has no schedule to show
        return None
    trace = "\n".join(str(line) for line in record.trace.as_python())
    tir = sch.mod.script() if sch is not None else ""
    return {"trace": trace, "tir": tir}


def record_best_schedule(session: TuningSession, database, name: str, mod: tvm.IRModule, target: Target,
                         work_dir: str) -> None:
    """Put task ``name``'s best schedule into ``session.progress.best`` (texts shortened to
    :data:`BEST_TEXT_LIMIT`; the full texts are written to ``<work_dir>/best/<name>.trace.py`` and
    ``.tir.py``, whose paths the entry names)."""
    from pipeline_model.tuning_focus import shorten

    best = best_schedule(database, mod, target, name)
    if best is None:
        return
    folder = os.path.join(work_dir, "best")
    entry: dict[str, Any] = {}
    for part, suffix in (("trace", ".trace.py"), ("tir", ".tir.py")):
        text = best[part]
        entry[part] = shorten(text, BEST_TEXT_LIMIT)
        entry[f"{part}_chars"] = len(text)
        path = os.path.join(folder, _safe_file_name(name) + suffix)
        try:
            os.makedirs(folder, exist_ok=True)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
            entry[f"{part}_file"] = path
        except OSError:
            entry[f"{part}_file"] = ""
    session.progress.best[name] = entry


def tune_module(
    mod: tvm.IRModule,
    target: Any,
    work_dir: str,
    max_trials_global: int,
    max_trials_per_task: Optional[int] = None,
    cost_model: str = "xgb",
    runner_config: Optional[TuningConfig] = None,
    on_progress: Optional[ProgressFn] = None,
    should_stop: Optional[StopFn] = None,
    params: Optional[dict] = None,
    op_names: Optional[list[str]] = None,
    retune: Optional[bool] = None,
) -> dict[str, Any]:
    """Tune every task of a Relax module (``call_tir`` PrimFuncs) like ``tune_relax``.

    ``runner_config`` carries the builder/runner/rounds options (a :class:`TuningConfig`; its trial
    counts and cost model are overridden by the arguments). Returns the summary dict (see
    :meth:`TuningSession.summary`); the records are in ``work_dir``'s JSON database, ready for
    ``relax.transform.MetaScheduleApplyDatabase(work_dir)`` / :func:`apply_database`.
    """
    config = TuningConfig(**(runner_config.to_json() if runner_config else {}))
    config.max_trials_global = int(max_trials_global)
    config.max_trials_per_task = max_trials_per_task
    config.cost_model = cost_model
    if retune is not None:
        config.retune = retune
    session = TuningSession(config, on_progress, should_stop, pass_id="tune_module")
    return _tune_module_in_session(session, mod, target, work_dir, params, op_names)


def _tune_module_in_session(session, mod, target, work_dir, params=None, op_names=None) -> dict[str, Any]:
    config = session.config
    target = tuning_target(target)
    work_dir = os.path.abspath(work_dir)
    session.progress.work_dir = work_dir
    tasks = ms.relax_integration.extract_tasks(mod, target, params)
    if op_names:
        tasks = [t for t in tasks if any(op in t.task_name for op in op_names)]
    named = []
    for t in tasks:
        if t.mod.attrs is not None and t.mod.attrs.get("tirx.is_scheduled", False):
            continue
        named.append((t.task_name, t.dispatched[0], float(t.weight)))
    per_task = config.max_trials_per_task
    if named:
        _run_tasks(session, named, target, work_dir, config.max_trials_global, per_task, "gradient")
    session.progress.finished = True
    session.emit()
    return session.summary()


def apply_database(mod: tvm.IRModule, target: Any, work_dir: str) -> tuple[tvm.IRModule, dict[str, Any]]:
    """Apply ``work_dir``'s best schedules (``MetaScheduleApplyDatabase``); returns the module and a
    report ``{"applied": [names], "missing": [names]}``. Raises ``TuningConfigError`` when there is
    no database."""
    if not has_database(work_dir):
        raise TuningConfigError(
            f"no tuning database in {work_dir}: run a MetaSchedule tuning step (or the 'tune' command) first"
        )
    target = tuning_target(target)
    with target:
        apply_pass = relax.transform.MetaScheduleApplyDatabase(work_dir=work_dir)
    with tvm.transform.PassContext(opt_level=3):
        new_mod = apply_pass(mod)
    return new_mod, applied_report(mod, new_mod)


def applied_report(before: tvm.IRModule, after: tvm.IRModule) -> dict[str, Any]:
    """Which PrimFuncs got a tuned schedule (``tirx.is_scheduled`` newly set) and which did not."""
    applied: list[str] = []
    missing: list[str] = []
    for gv, func in after.functions_items():
        if not isinstance(func, tvm.tirx.PrimFunc):
            continue
        was = before[gv.name_hint] if gv.name_hint in [g.name_hint for g in before.get_global_vars()] else None
        now_sched = bool(func.attrs is not None and func.attrs.get("tirx.is_scheduled", False))
        was_sched = bool(was is not None and was.attrs is not None and was.attrs.get("tirx.is_scheduled", False))
        (applied if now_sched and not was_sched else missing).append(gv.name_hint)
    return {"applied": sorted(applied), "missing": sorted(missing)}


# ------------------------------------------------------------------------ overrides of TVM's globals
_INSTALLED = False
_INSTALL_LOCK = threading.Lock()


def _override_tune_tir(mod, target, work_dir, max_trials_global, *args, **kwargs):
    """Replacement of ``tvm.s_tir.meta_schedule.tune_tir`` (called by ``MetaScheduleTuneTIR`` once
    per PrimFunc with a one-function module)."""
    session = active_session() or TuningSession()
    if session.should_stop():
        return mod
    if isinstance(mod, tvm.tirx.PrimFunc):
        mod = IRModule_from_func(mod)
    target = tuning_target(target)
    work_dir = os.path.abspath(str(work_dir))
    session.progress.work_dir = work_dir
    func = mod["main"] if "main" in [g.name_hint for g in mod.get_global_vars()] else list(mod.functions.values())[0]
    name = session.name_of_func.get(_func_id(func)) or _func_name(func)
    trials = int(max_trials_global)
    if session.allocation is not None:  # targeted tuning: only the chosen PrimFuncs, each its own budget
        trials = int(session.allocation.get(name, 0))
        if trials <= 0:
            return mod
    session.current_task = name
    _run_tasks(session, [(name, _normalize(mod), 1.0)], target, work_dir, trials, None, "round-robin")
    session.emit()
    return mod


def _override_tune_relax(mod, params, target, work_dir, max_trials_global, max_trials_per_task=None,
                         op_names=None, *args, **kwargs):
    """Replacement of ``tvm.s_tir.meta_schedule.tune_relax`` (called by ``MetaScheduleTuneIRMod``)."""
    session = active_session() or TuningSession()
    if session.should_stop():
        return mod
    config = session.config
    config.max_trials_global = int(max_trials_global)
    config.max_trials_per_task = int(max_trials_per_task) if max_trials_per_task else None
    params = dict(params.items()) if params else None
    _tune_module_in_session(session, mod, target, str(work_dir), params, list(op_names) if op_names else None)
    return mod


def IRModule_from_func(func) -> tvm.IRModule:  # noqa: N802 - mirrors TVM's naming
    """A one-function module as MetaSchedule normalises it (``main``)."""
    from tvm.s_tir.meta_schedule.tune_context import _normalize_mod

    return _normalize_mod(func)


def _normalize(mod: tvm.IRModule) -> tvm.IRModule:
    from tvm.s_tir.meta_schedule.tune_context import _normalize_mod

    return _normalize_mod(mod)


def _func_id(func) -> int:
    return int(tvm_ffi.structural_hash(func.body)) if func is not None else 0


def _func_name(func) -> str:
    sym = func.attrs.get("global_symbol") if func.attrs is not None else None
    return str(sym) if sym else "main"


def install_overrides() -> None:
    """Register this module's ``tune_tir``/``tune_relax`` under TVM's global names (idempotent).

    After this, the stock ``relax.transform.MetaScheduleTuneTIR``/``MetaScheduleTuneIRMod`` passes use
    the working builder/runner and report to the :func:`active_session`.
    """
    global _INSTALLED
    with _INSTALL_LOCK:
        if _INSTALLED:
            return
        import tvm.s_tir.meta_schedule.relax_integration  # noqa: F401 - registers the stock functions first
        import tvm.s_tir.meta_schedule.tir_integration  # noqa: F401

        tvm_ffi.register_global_func("tvm.s_tir.meta_schedule.tune_tir", _override_tune_tir, override=True)
        tvm_ffi.register_global_func("tvm.s_tir.meta_schedule.tune_relax", _override_tune_relax, override=True)
        _INSTALLED = True


# ------------------------------------------------------------------------------ pass for a pipeline
def make_tuning_pass(
    pass_id: str,
    params: dict[str, Any],
    target: Any,
    default_work_dir: Optional[str],
    base_dir: Optional[str] = None,
    emit: Optional[Callable[[str, dict], None]] = None,
    cancelled: Optional[StopFn] = None,
    report: Optional[dict] = None,
    stop_early: Optional[StopFn] = None,
    profile_fn: Optional[Callable[[tvm.IRModule], tuple[dict, str]]] = None,
    trusted: bool = False,
    step_number: Optional[int] = None,
) -> tvm.transform.Pass:
    """A module pass for a ``relax.MetaScheduleTuneTIR`` / ``relax.MetaScheduleTuneIRMod`` /
    ``relax.MetaScheduleApplyDatabase`` step.

    The tuning passes run TVM's own pass inside a :class:`TuningSession` that emits
    ``emit("tuning_progress", TuningProgress.to_json())`` after each round and stops when
    ``cancelled()`` (the run is cancelled) or ``stop_early()`` (the user ended tuning; the step
    succeeds and the run goes on) is true; either way what was measured stays in the database. When ``report`` (a dict, e.g. ``StepResult.report``) is given, the pass
    fills ``report["tuning"]`` (tuning summary) or ``report["apply_database"]`` (applied PrimFuncs).
    Bad parameters raise :class:`pipeline_model.tuning.TuningConfigError` now, not at run time.

    Targeted tuning (``relax.MetaScheduleTuneTIR`` with ``focus``/``functions``/``schedule_fn``, see
    :mod:`pipeline_model.tuning_focus`): ``profile_fn(mod)`` returns ``(profile, source)`` for the step's
    input module (the engine's stored profile, or one measured now); only the chosen PrimFuncs are
    tuned, each with its share of the budget, and ``report["tuning"]["focus"]`` holds the plan. A
    ``schedule_fn`` is user code: without ``trusted`` the step refuses to build.
    """
    from pipeline_model.passkinds.metaschedule import tuning_mode
    from pipeline_model.tuning import resolve_work_dir

    mode = tuning_mode(pass_id)
    if mode == "apply":
        work_dir = resolve_work_dir(str(params.get("work_dir") or ""), default_work_dir, base_dir)
        tgt = tuning_target(target)

        @tvm.transform.module_pass(opt_level=0, name="MetaScheduleApplyDatabase")
        def apply_step(mod, _ctx):
            if not has_database(work_dir):
                message = (f"no tuning database in {work_dir}: nothing applied (run a MetaSchedule tuning "
                           "step first, or set work_dir)")
                if emit is not None:
                    emit("warning", {"pass_id": pass_id, "message": message})
                if report is not None:
                    report["apply_database"] = {"applied": [], "missing": [], "work_dir": work_dir,
                                                "warning": message}
                return mod
            new_mod, info = apply_database(mod, tgt, work_dir)
            info["work_dir"] = work_dir
            if report is not None:
                report["apply_database"] = info
            return new_mod

        return apply_step

    if mode not in ("tir", "irmod"):
        raise TuningConfigError(f"{pass_id} is not a MetaSchedule tuning pass")
    config = TuningConfig.from_params(params, where=f"step {pass_id}")
    work_dir = resolve_work_dir(config.work_dir, default_work_dir, base_dir)
    tgt = tuning_target(target)
    targeted = _targeted_setup(pass_id, mode, params, trusted, step_number)
    with tgt:
        if mode == "tir":
            inner = relax.transform.MetaScheduleTuneTIR(work_dir=work_dir, max_trials_global=config.max_trials_global)
        else:
            inner = relax.transform.MetaScheduleTuneIRMod(
                params={}, work_dir=work_dir, max_trials_global=config.max_trials_global,
                max_trials_per_task=config.max_trials_per_task, op_names=config.op_names or None,
            )

    def on_progress(progress: TuningProgress) -> None:
        if emit is not None:
            emit("tuning_progress", progress.to_json())

    @tvm.transform.module_pass(opt_level=0, name=pass_id.split(".", 1)[1])
    def tune_step(mod, _ctx):
        if config.runner == "rpc":
            check_rpc_tracker(config)
        flags = [f for f in (cancelled, stop_early) if f is not None]
        session = TuningSession(TuningConfig(**config.to_json()), on_progress,
                                (lambda: any(f() for f in flags)) if flags else None, pass_id=pass_id)
        session.progress.work_dir = work_dir
        if mode == "tir":
            for gv, func in mod.functions_items():
                if isinstance(func, tvm.tirx.PrimFunc):
                    session.name_of_func[_func_id(func)] = gv.name_hint
                    session.progress.task(gv.name_hint)
            session.progress.total = len(session.name_of_func) * config.max_trials_global
            session.preplanned = True
        if targeted is not None:
            _plan_session(session, mod, config, targeted, profile_fn)
        os.makedirs(work_dir, exist_ok=True)
        if config.retune:
            wipe_work_dir(work_dir)
            session.config.retune = False
        # A fresh PassContext: the step's instruments must not see the thousands of passes
        # MetaSchedule runs internally (the stop flag is polled by the session instead).
        try:
            with track_work_dir(work_dir), tuning_session(session), tgt, tvm.transform.PassContext(opt_level=3):
                out = inner(mod)
        except Exception:  # noqa: BLE001 - name the user's schedule function when it failed
            failure = targeted.get("failure") if targeted is not None else None
            if failure:
                raise TuningConfigError(failure[0]) from None
            raise
        session.progress.finished = True
        session.emit()
        if report is not None:
            summary = session.summary()
            if session.stopped:
                summary["message"] = (
                    f"stopped early after {summary['done']} of {summary['total']} trials "
                    f"({summary['measured']} measured); the records are kept in {work_dir}"
                )
            report["tuning"] = summary
        return out

    return tune_step


# ------------------------------------------------------------------------------ targeted tuning
def _targeted_setup(pass_id: str, mode: str, params: dict[str, Any], trusted: bool,
                    step_number: Optional[int]) -> Optional[dict[str, Any]]:
    """Validated targeted-tuning settings of a step (``None`` when it tunes every PrimFunc as TVM does);
    loads the user's ``schedule_fn`` (trusted code only) into ``settings["schedule"]``."""
    from pipeline_model.tuning_focus import FocusError, focus_settings, is_targeted, load_schedule_fn, schedule_label

    if not is_targeted(params):
        return None
    where = f"step {step_number} ({pass_id})" if step_number else f"step {pass_id}"
    if mode != "tir":
        raise TuningConfigError(f"{where}: focus, functions and schedule_fn need relax.MetaScheduleTuneTIR "
                                "(use op_names to pick tasks of relax.MetaScheduleTuneIRMod)")
    try:
        settings = focus_settings(params, where)
    except FocusError as exc:
        raise TuningConfigError(str(exc)) from None
    settings["schedule"] = None
    settings["failure"] = None
    source = settings["schedule_fn"]
    if source.strip():
        from pipeline_model.passkinds.context import UNTRUSTED_MESSAGE

        label = schedule_label(step_number)
        if not trusted:
            raise TuningConfigError(f"{label}: {UNTRUSTED_MESSAGE}")
        try:
            user_fn = load_schedule_fn(source, label)
        except SyntaxError as exc:
            raise TuningConfigError(f"{label}: syntax error at line {exc.lineno}: {exc.msg}") from None
        except Exception as exc:  # noqa: BLE001 - the user's module-level code failed
            raise TuningConfigError(f"{label}: {_user_error(exc, label)}") from None
        settings["schedule"] = _guarded_schedule(user_fn, label, settings)
    return settings


def _user_error(exc: BaseException, label: str) -> str:
    import traceback

    line = ""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename == label:
            line = f"line {frame.lineno}: {(frame.line or '').strip()}: "
            break
    text = str(exc).strip().splitlines() or [""]
    detail = [t.strip() for t in text[1:] if t.strip().lower().startswith("error message")]
    return f"{line}{type(exc).__name__}: {' '.join([text[0].strip(), *detail])[:600]}"


def _guarded_schedule(user_fn: Callable, label: str, settings: dict[str, Any]) -> Callable:
    """``user_fn`` recording its first failure (with the user's line) in ``settings["failure"]``."""

    def schedule(sch):
        try:
            return user_fn(sch)
        except Exception as exc:
            if settings.get("failure") is None:
                func = settings.get("current", "?")
                settings["failure"] = (f"{label}: failed on PrimFunc {func}: {_user_error(exc, label)}",)
            raise

    return schedule


def _plan_session(session: TuningSession, mod: tvm.IRModule, config: TuningConfig, settings: dict[str, Any],
                  profile_fn: Optional[Callable[[tvm.IRModule], tuple[dict, str]]]) -> None:
    """Choose the PrimFuncs and their trials (profile of ``mod`` when needed); set up ``session``."""
    from pipeline_model.tuning_focus import needs_profile, plan_targeted_tuning

    prim = [gv.name_hint for gv, f in mod.functions_items() if isinstance(f, tvm.tirx.PrimFunc)]
    profile: dict[str, Any] = {}
    source = ""
    if needs_profile(settings) and len(prim) > 1:
        if profile_fn is None:
            raise TuningConfigError("targeted tuning needs a profile of the step's input, and none can be measured here")
        try:
            profile, source = profile_fn(mod)
        except Exception as exc:  # noqa: BLE001 - say why the profile failed, plainly
            raise TuningConfigError(f"targeted tuning: cannot profile the step's input module: {exc}") from None
    try:
        plan = plan_targeted_tuning(profile.get("entries") or [], prim, settings, config.max_trials_global)
    except ValueError as exc:
        raise TuningConfigError(f"targeted tuning: {exc}") from None
    plan["profile"] = {"source": source or "none", "key": profile.get("key"),
                       "total_us": profile.get("total_us")}
    plan["schedule_fn"] = settings["schedule"] is not None
    session.allocation = {c["name"]: c["trials"] for c in plan["chosen"]}
    session.progress.focus = plan
    if settings["schedule"] is not None:
        user = settings["schedule"]

        def current_schedule(sch):
            settings["current"] = session.current_task or "?"
            return user(sch)

        session.space = ms.space_generator.ScheduleFn(current_schedule)
        import hashlib

        session.space_tag = ":fn" + hashlib.sha256(settings["schedule_fn"].encode()).hexdigest()[:12]
    for name in prim:
        task = session.progress.task(name)
        if name not in session.allocation:
            task.status = "not targeted"
    session.progress.total = sum(session.allocation.values())
