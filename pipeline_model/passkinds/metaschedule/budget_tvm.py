"""A ``relax.MetaScheduleTuneTIR`` step with ``time_budget_s``: the engine's rounds (engine side, imports TVM).

The rounds themselves are :func:`pipeline_model.passkinds.metaschedule.plan.run_budgeted_tuning` (the code
exported scripts run too); this module gives it the engine's pieces: a look-up round first (tasks the work
directory finished, or whose workload the per-user database holds, get zero trials), the FLOPs × calls of
each PrimFunc, ``tune_round`` (TVM's own ``MetaScheduleTuneTIR`` pass with the session's allocation; the
session ends a round at the deadline) and ``reprofile`` (the step's module with the database applied,
profiled now).
"""

from __future__ import annotations

import inspect
import time
from typing import Any, Callable, Optional

import tvm

from pipeline_model.passkinds.metaschedule.plan import prim_func_costs, run_budgeted_tuning, task_weights
from pipeline_model.passkinds.metaschedule.session_tvm import TuningSession


def budgeted_tune(session: TuningSession, run_inner: Callable[[tvm.IRModule], Any], mod: tvm.IRModule,
                  work_dir: str, tgt: Any, settings: dict[str, Any],
                  profile_fn: Optional[Callable[..., Any]]) -> dict[str, Any]:
    """Spend ``settings["time_budget_s"]`` on the PrimFuncs of ``mod`` (floor ``settings["min_trials"]``);
    ``run_inner(sub)`` runs the stock tuning pass on module ``sub`` with the session's allocation (a round
    tunes its PrimFuncs one by one, heaviest first, so a deadline cuts the light ones). Returns the plan
    (also in ``session.progress.budget``)."""
    budget_s = float(settings["time_budget_s"])
    session.deadline = session.started + budget_s
    funcs = {gv.name_hint: (gv, f) for gv, f in mod.functions_items() if isinstance(f, tvm.tirx.PrimFunc)}
    prims = list(funcs)
    session.progress.total = 0  # the rounds set it as they go
    session.progress.phase = "lookup"
    session.import_only, session.allocation = True, {n: 1 for n in prims}
    try:
        run_inner(mod)
    finally:
        session.import_only = False
        session.progress.phase = ""
    reused = {t.name for t in session.progress.tasks if t.reused}
    flops, calls = prim_func_costs(mod)
    weights = task_weights({n: flops.get(n, 0.0) for n in prims if n not in reused}, calls)
    session.incremental = True

    configured = session.config.search_population

    def tune_round(alloc: dict[str, int], population: int) -> dict[str, int]:
        before = {n: session.progress.task(n).trials for n in alloc}
        session.allocation = dict(alloc)
        session.progress.total = session.progress.done + sum(alloc.values())
        session.config.search_population = population  # the round's (a smaller one for calibration)
        try:
            for name in alloc:  # in the order given: heaviest first
                if session.should_stop():
                    break
                gv, func = funcs[name]
                run_inner(tvm.IRModule({gv: func}))
        finally:
            session.config.search_population = configured
        return {n: session.progress.task(n).trials - before[n] for n in alloc}

    def log(text: str) -> None:
        session.progress.budget = {**(session.progress.budget or {}), "round": text}
        session.emit()

    plan = run_budgeted_tuning(weights, max(0.0, session.deadline - time.perf_counter()), int(settings["min_trials"]),
                               tune_round, time.perf_counter, _reprofiler(mod, tgt, work_dir, set(weights), profile_fn),
                               should_stop=lambda: session.user_stopped, log=log, search_population=configured)
    plan["reused"] = sorted(reused)
    plan["weights"] = {n: float(w) for n, w in weights.items()}
    for name in plan["not_reached"]:
        session.progress.task(name).status = "not reached"
    session.progress.total = session.progress.done
    session.progress.budget = plan
    return plan


def _reprofiler(mod: tvm.IRModule, tgt: Any, work_dir: str, names: set[str],
                profile_fn: Optional[Callable[..., Any]]) -> Optional[Callable[[], Optional[dict[str, float]]]]:
    """``reprofile()`` for the rounds: µs per PrimFunc of ``mod`` with the work directory's best schedules
    applied, profiled now (``None`` when the engine gave no profile function that can measure afresh)."""
    if profile_fn is None:
        return None
    try:
        fresh = "fresh" in inspect.signature(profile_fn).parameters
    except (TypeError, ValueError):
        fresh = False
    if not fresh:
        return None

    def reprofile() -> Optional[dict[str, float]]:
        from pipeline_model.passkinds.metaschedule.config import has_database
        from pipeline_model.passkinds.metaschedule.tasks_tvm import apply_database

        if not has_database(work_dir):
            return None
        try:
            applied, _info = apply_database(mod, tgt, work_dir)
            profile, _source = profile_fn(applied, fresh=True)
        except Exception:  # noqa: BLE001 - without a tuned profile the rounds keep the FLOPs weights
            return None
        return {str(e.get("name")): float(e.get("total_us") or 0.0) for e in profile.get("entries") or []
                if e.get("name") in names}

    return reprofile
