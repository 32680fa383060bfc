"""A ``relax.MetaScheduleTuneTIR`` step with ``seed_rules`` in the engine: the app's schedules measured and put
into the database before the search (engine side, imports TVM).

The seeding itself is :func:`pipeline_model.passkinds.metaschedule.seed.seed_app_schedules` (the code exported
scripts run too); this module gives it the engine's pieces: the rule objects (the classes of
:mod:`pipeline_model.passkinds.dlight.rules`), the session's stoppable builder and runner, and the report
(``session.progress.seeds``: per PrimFunc its rule and seed latency, after tuning whether the app's schedule or
a tuned one is the best record).
"""

from __future__ import annotations

from typing import Any

import tvm

from pipeline_model.passkinds.metaschedule.script import open_work_database, track_work_dir
from pipeline_model.passkinds.metaschedule.seed import seed_app_schedules, seed_outcome
from pipeline_model.passkinds.metaschedule.session_tvm import TuningSession


def app_rules(names: list[str]) -> list[Any]:
    """Rule objects of the DLight rules named ``"app.<Class>"`` (validated by ``TuningConfig``)."""
    from pipeline_model.passkinds.dlight.rules import rule_class

    return [rule_class(name)() for name in names]


def seed_tasks(mod: tvm.IRModule) -> list[tuple[str, tvm.IRModule]]:
    """``[(name, workload)]``: the PrimFuncs of ``mod`` that are not scheduled yet, as MetaSchedule tunes them."""
    from tvm.s_tir.meta_schedule.tune_context import _normalize_mod

    return [(gv.name_hint, _normalize_mod(f)) for gv, f in mod.functions_items()
            if isinstance(f, tvm.tirx.PrimFunc) and not (f.attrs is not None and f.attrs.get("tirx.is_scheduled", False))]


def seed_session(session: TuningSession, mod: tvm.IRModule, work_dir: str, target: Any,
                 rules: list[Any]) -> list[tuple[str, tvm.IRModule]]:
    """Seed ``work_dir``'s database with the schedules ``rules`` give the PrimFuncs of ``mod``
    (:func:`~pipeline_model.passkinds.metaschedule.seed.seed_app_schedules` with the session's builder and
    runner); the result goes to ``session.progress.seeds``. Returns the tasks (for :func:`finish_seeds`)."""
    tasks = seed_tasks(mod)
    if session.should_stop() or not tasks:
        return tasks
    with track_work_dir(work_dir):
        database = open_work_database(work_dir, session.warn)
        try:
            info = seed_app_schedules(database, tasks, target, rules, *session.tools())
        except Exception:  # noqa: BLE001 - a stop during the seeds' build ends the step like a stop in tuning
            if not session.should_stop():
                raise
            return tasks
    session.progress.seeds = info
    session.emit()
    return tasks


def finish_seeds(session: TuningSession, work_dir: str, tasks: list[tuple[str, tvm.IRModule]]) -> None:
    """After tuning: which seeded PrimFuncs kept the app's schedule as their best record, which got a tuned one
    (:func:`~pipeline_model.passkinds.metaschedule.seed.seed_outcome`, into ``session.progress.seeds``)."""
    info = session.progress.seeds
    if not isinstance(info, dict) or not tasks:
        return
    database = open_work_database(work_dir, session.warn)
    seed_outcome(database, tasks, info)
    session.emit()  # the tuning panel's footer says which schedule won (the last progress event had no outcome)
