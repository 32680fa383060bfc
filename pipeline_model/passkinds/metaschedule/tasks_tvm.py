"""Tuning tasks in the engine: tune with database reuse, record the best schedules, apply the database
(engine side, imports TVM).

A work directory's database is reused: tasks already tuned there (recorded in
:data:`pipeline_model.passkinds.metaschedule.script.STATE_FILE`) are skipped; ``retune`` wipes the files
the work directory's manifest lists (:func:`~pipeline_model.passkinds.metaschedule.script.wipe_work_dir`,
the rule exported scripts follow too), and every file tuning writes is recorded in that manifest.

Entry points: :func:`tune_module` (all tasks of a Relax module, like ``tune_relax``), :func:`apply_database`
and :func:`run_task_modules` (used by the overrides of :mod:`.overrides_tvm`).
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional

import tvm
import tvm_ffi
from tvm import relax
from tvm.s_tir import meta_schedule as ms
from tvm.target import Target

from pipeline_model.passkinds.metaschedule.builder_tvm import tuning_target
from pipeline_model.passkinds.metaschedule.config import TuningConfig, has_database
from pipeline_model.passkinds.metaschedule.records import remember_own_database
from pipeline_model.passkinds.metaschedule.script import (
    STATE_FILE,
    TuningConfigError,
    check_work_database,
    commit_user_records,
    held_traces,
    import_user_records,
    open_work_database,
    search_space_problem,
    track_work_dir,
    wipe_work_dir,
)
from pipeline_model.passkinds.metaschedule.script_measure import search_strategy, tuning_cores
from pipeline_model.passkinds.metaschedule.session_tvm import (
    ProgressCallback,
    ProgressFn,
    StopFn,
    TuningSession,
)


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


def _measure_callbacks(session: TuningSession) -> list:
    """MetaSchedule's default measure callbacks with the session's :class:`ProgressCallback` after
    ``AddToDatabase`` and ``RemoveBuildArtifact`` but before ``UpdateCostModel``: a round's trials are reported
    (and a stop takes effect) without waiting for the cost model's training (its first update imports XGBoost
    and trains, seconds on a busy machine)."""
    callbacks = list(ms.measure_callback.MeasureCallback.create("default"))
    at = next((i for i, cb in enumerate(callbacks) if type(cb).__name__ == "UpdateCostModel"), len(callbacks))
    return callbacks[:at] + [ProgressCallback(session)] + callbacks[at:]


def _open_database(work_dir: str, retune: bool, warn: Any = print):
    os.makedirs(work_dir, exist_ok=True)
    if retune:
        wipe_work_dir(work_dir)
    return open_work_database(work_dir, warn)


def run_task_modules(session: TuningSession, named: list, target: Target, work_dir: str, *rest: Any) -> None:
    """:func:`_run_tasks_untracked` with the files it writes recorded in the work dir's manifest; afterwards the
    folder's database is noted as the user's own (``remember_own_database``: the run had consent for what was
    there, the rest it measured), whichever way the engine tuned (a step, the ``tune`` command, TVM's pipelines)."""
    try:
        with track_work_dir(work_dir):
            _run_tasks_untracked(session, named, target, work_dir, *rest)
    finally:
        remember_own_database(work_dir)


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
    user_db = _user_db_dir(session)
    database = _open_database(work_dir, config.retune, session.warn)
    state = _load_state(work_dir)
    budget = max_trials_per_task or max_trials_global
    todo = _tasks_to_tune(session, database, state, named, target, budget, user_db, work_dir)
    if not session.preplanned and todo:
        cap = len(todo) * max_trials_per_task if max_trials_per_task else max_trials_global
        session.progress.total += min(max_trials_global, cap)
    session.emit()
    if not todo or session.should_stop() or session.import_only:
        return
    known = held_traces(database, [t[1] for t in todo])  # never sent on to the user database: not measured here

    num_threads = int(target.attrs.get("num-cores", 0) or tuning_cores()) if target.kind.name == "llvm" else "physical"
    args = (target, work_dir, max_trials_global, max_trials_per_task, task_scheduler, database, num_threads)
    try:
        try:
            _tune_contexts(session, todo, *args)
        except Exception:  # noqa: BLE001 - a stop surfaces as whatever exception crossed the FFI
            if not session.stopped:  # one task MetaSchedule's own space cannot cover failed them all (a user's
                # space failing is the user's error: reported as it is)
                spaceless = _spaceless(session, todo, target) if session.space == "post-order-apply" else set()
                if not spaceless:
                    raise
                todo = [t for t in todo if t[0] not in spaceless]
                if todo:  # no trial was measured: the search spaces are made before any
                    try:
                        _tune_contexts(session, todo, *args)
                    except Exception:  # noqa: BLE001 - as above
                        if not session.stopped:
                            raise
    finally:
        session.task_names = []
    for name, mod, _w, key in todo:
        count, best = _best_in_db(database, mod)
        task = session.progress.task(name)
        if best is not None and (task.best_us is None or best < task.best_us):
            task.best_us = best
        task.status = "stopped" if session.user_stopped else "done"
        task.source = "tuned" if count else task.source
        prior = state.get(key) or {}
        spent = budget + (int(prior.get("budget", 0)) if session.incremental else 0)
        # a task the deadline cut before any record is left open (a later run tunes it); the user's stop too
        complete = not session.user_stopped and (count > 0 or not session.deadline_hit)
        state[key] = {"name": name, "budget": spent, "records": count, "complete": complete}
    _save_state(work_dir, state)
    if user_db:
        added, problem = commit_user_records(user_db, database, [t[1] for t in todo], target, known, session.warn)
        session.user_db["added"] = int(session.user_db.get("added") or 0) + added
        session.user_db["problem"] = problem or session.user_db.get("problem")
    for name, mod, _w in named:
        record_best_schedule(session, database, name, mod, target, work_dir)


def _tune_contexts(session: TuningSession, todo: list, target: Target, work_dir: str, max_trials_global: int,
                   max_trials_per_task: Optional[int], task_scheduler: str, database: Any, num_threads: Any) -> None:
    """``ms.tune.tune_tasks`` of the tasks ``todo`` = [(name, module, weight, key)] with the session's settings."""
    from tvm.s_tir.meta_schedule.utils import fork_seed

    config = session.config
    names = [t[0] for t in todo]
    contexts = []
    for (name, mod, _w, _k), logger, rand_state in zip(
        todo, _task_loggers(work_dir, names), fork_seed(config.seed, n=len(todo))
    ):
        contexts.append(
            ms.TuneContext(
                mod=mod, target=target, space_generator=session.space,
                search_strategy=search_strategy(config.search_population),
                task_name=name, logger=logger, rand_state=rand_state, num_threads=num_threads,
            ).clone()
        )
        session.progress.task(name).status = "tuning"
    session.task_names = names
    builder, runner = session.tools()
    cost_model = ms.cost_model.CostModel.create(
        config.cost_model, **({"num_tuning_cores": num_threads} if config.cost_model == "xgb" and isinstance(num_threads, int) else {})
    )
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
        measure_callbacks=_measure_callbacks(session),
        task_scheduler=task_scheduler,
        module_equality="structural",
    )


def _spaceless(session: TuningSession, todo: list, target: Target) -> set[str]:
    """Names of the tasks in ``todo`` MetaSchedule makes no search space for (:func:`search_space_problem`),
    each noted in the session's warnings and marked skipped: its default schedule stays."""
    out = set()
    for name, mod, _w, _k in todo:
        problem = search_space_problem(mod, target, session.space)
        if problem is not None:
            out.add(name)
            session.warn(f"{name}: not tuned, MetaSchedule has no search space for it ({problem}); "
                         "its default schedule stays")
            task = session.progress.task(name)
            task.status, task.source = "skipped", "no search space"
    return out


def _user_db_dir(session: TuningSession) -> str:
    """The per-user database this session consults and adds to ("" when off: the step's
    ``user_database`` parameter, ``RPS_TUNING_DB_DIR=off``, or a user search space)."""
    from pipeline_model.work_dirs import user_tuning_database_dir

    path = user_tuning_database_dir() if session.config.user_database and not session.space_tag else ""
    session.user_db["path"] = path
    return path


def _tasks_to_tune(session: TuningSession, database, state: dict[str, Any], named: list, target: Target,
                   budget: int, user_db: str, work_dir: str) -> list[tuple[str, tvm.IRModule, float, str]]:
    """The tasks of ``named`` that need tuning. Skipped: those the work directory's state marks complete
    with at least ``budget`` (status ``skipped``) and, for tasks the work directory never tuned, those whose
    workload the user database holds for this target (copied in; status ``from user database``). In
    time-budgeted rounds (``session.incremental``) nothing is skipped: every round tunes further."""
    todo: list[tuple[str, tvm.IRModule, float, str]] = []
    for name, mod, weight in named:
        key = _task_key(mod, target) + session.space_tag
        prior = state.get(key) or {}
        task = session.progress.task(name)
        if not session.incremental:
            reused = ""
            if prior.get("complete") and int(prior.get("budget", 0)) >= budget:
                reused, task.source = "skipped", prior.get("source") or "work dir"
            elif not prior and user_db and not (session.config.retune or session.retuned) and import_user_records(user_db, database, mod, target, session.warn):
                reused, task.source = "from user database", "user database"
                session.user_db["imported"] = [*session.user_db.get("imported", []), name]
                state[key] = {"name": name, "budget": budget, "complete": True, "source": "user database"}
                _save_state(work_dir, state)
            if reused:
                count, best = _best_in_db(database, mod)
                task.trials, task.best_us, task.reused, task.status = count, best, True, reused
                if session.preplanned:
                    session.progress.total = max(0, session.progress.total - budget)
                continue
        todo.append((name, mod, weight, key))
    return todo


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
    from pipeline_model.passkinds.metaschedule.focus import shorten

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
    try:
        return tune_module_in_session(session, mod, target, work_dir, params, op_names)
    finally:
        session.close()


def tune_module_in_session(session, mod, target, work_dir, params=None, op_names=None) -> dict[str, Any]:
    """Tune the tasks of Relax module ``mod`` (those named in ``op_names``, when given) in ``session``;
    returns :meth:`TuningSession.summary`."""
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
        run_task_modules(session, named, target, work_dir, config.max_trials_global, per_task, "gradient")
    session.progress.finished = True
    session.emit()
    return session.summary()


def apply_database(mod: tvm.IRModule, target: Any, work_dir: str,
                   warn: Any = print) -> tuple[tvm.IRModule, dict[str, Any]]:
    """Apply ``work_dir``'s best schedules (``MetaScheduleApplyDatabase``) once its lines are checked
    (``check_work_database``: ``warn`` gets each line removed); returns the module and a report
    ``{"applied": [names], "missing": [names]}``. Raises ``TuningConfigError`` when there is no database
    or a line of a file the app did not write is refused."""
    if not has_database(work_dir):
        raise TuningConfigError(
            f"no tuning database in {work_dir}: run a MetaSchedule tuning step (or the 'tune' command) first"
        )
    target = tuning_target(target)
    check_work_database(work_dir, warn)  # its lines checked (limits, allow-list) before TVM reads the folder
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
