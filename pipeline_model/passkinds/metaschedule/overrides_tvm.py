"""TVM's ``tune_tir`` / ``tune_relax`` overridden in the engine, reporting to the active tuning session
(engine side, imports TVM).

:func:`install_overrides` makes the stock ``relax.transform.MetaScheduleTuneTIR`` and
``MetaScheduleTuneIRMod`` passes tune through :mod:`.tasks_tvm` (database reuse, manifest, progress,
stop) by overriding the global functions ``tvm.s_tir.meta_schedule.tune_tir`` / ``tune_relax`` they
call; :func:`tuning_session` sets the session (progress callback, stop flag, options, targeted plan)
those functions use in this thread.
"""

from __future__ import annotations

import contextlib
from contextlib import closing
import os
import threading
from typing import Iterator, Optional

import tvm
import tvm_ffi

from pipeline_model.passkinds.metaschedule.builder_tvm import tuning_target
from pipeline_model.passkinds.metaschedule.script import register_tuning_functions
from pipeline_model.passkinds.metaschedule.session_tvm import TuningSession
from pipeline_model.passkinds.metaschedule.tasks_tvm import run_task_modules, tune_module_in_session

_INSTALLED = False
_INSTALL_LOCK = threading.Lock()
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



def _override_tune_tir(mod, target, work_dir, max_trials_global, *args, **kwargs):
    """Replacement of ``tvm.s_tir.meta_schedule.tune_tir`` (called by ``MetaScheduleTuneTIR`` once
    per PrimFunc with a one-function module)."""
    session = active_session()
    if session is None:  # a tuning pass run outside a step: a session of its own for this call
        with closing(TuningSession()) as own:
            return _override_tune_tir_in(own, mod, target, work_dir, max_trials_global)
    return _override_tune_tir_in(session, mod, target, work_dir, max_trials_global)


def _override_tune_tir_in(session: TuningSession, mod, target, work_dir, max_trials_global):
    if session.should_stop():
        return mod
    if isinstance(mod, tvm.tirx.PrimFunc):
        mod = IRModule_from_func(mod)
    target = tuning_target(target)
    work_dir = os.path.abspath(str(work_dir))
    session.progress.work_dir = work_dir
    func = mod["main"] if "main" in [g.name_hint for g in mod.get_global_vars()] else list(mod.functions.values())[0]
    name = session.name_of_func.get(func_id(func)) or _func_name(func)
    trials = int(max_trials_global)
    if session.allocation is not None:  # targeted tuning: only the chosen PrimFuncs, each its own budget
        trials = int(session.allocation.get(name, 0))
        if trials <= 0:
            return mod
    session.current_task = name
    run_task_modules(session, [(name, _normalize(mod), 1.0)], target, work_dir, trials, None, "round-robin")
    session.emit()
    return mod


def _override_tune_relax(mod, params, target, work_dir, max_trials_global, max_trials_per_task=None,
                         op_names=None, *args, **kwargs):
    """Replacement of ``tvm.s_tir.meta_schedule.tune_relax`` (called by ``MetaScheduleTuneIRMod``)."""
    session = active_session()
    if session is None:
        with closing(TuningSession()) as own:
            return _override_tune_relax_in(own, mod, params, target, work_dir, max_trials_global,
                                           max_trials_per_task, op_names)
    return _override_tune_relax_in(session, mod, params, target, work_dir, max_trials_global,
                                   max_trials_per_task, op_names)


def _override_tune_relax_in(session: TuningSession, mod, params, target, work_dir, max_trials_global,
                            max_trials_per_task, op_names):
    if session.should_stop():
        return mod
    config = session.config
    config.max_trials_global = int(max_trials_global)
    config.max_trials_per_task = int(max_trials_per_task) if max_trials_per_task else None
    params = dict(params.items()) if params else None
    tune_module_in_session(session, mod, target, str(work_dir), params, list(op_names) if op_names else None)
    return mod


def IRModule_from_func(func) -> tvm.IRModule:  # noqa: N802 - mirrors TVM's naming
    """A one-function module as MetaSchedule normalises it (``main``)."""
    from tvm.s_tir.meta_schedule.tune_context import _normalize_mod

    return _normalize_mod(func)


def _normalize(mod: tvm.IRModule) -> tvm.IRModule:
    from tvm.s_tir.meta_schedule.tune_context import _normalize_mod

    return _normalize_mod(mod)


def func_id(func) -> int:
    """The key of a PrimFunc by its body's structural hash (the overrides get one-function modules)."""
    return int(tvm_ffi.structural_hash(func.body)) if func is not None else 0


def _func_name(func) -> str:
    sym = func.attrs.get("global_symbol") if func.attrs is not None else None
    return str(sym) if sym else "main"


def install_overrides() -> None:
    """Register this module's ``tune_tir``/``tune_relax`` under TVM's global names (idempotent;
    :func:`~pipeline_model.passkinds.metaschedule.script.register_tuning_functions`, as exported scripts do).

    After this, the stock ``relax.transform.MetaScheduleTuneTIR``/``MetaScheduleTuneIRMod`` passes use
    the working builder/runner and report to the :func:`active_session`.
    """
    global _INSTALLED
    with _INSTALL_LOCK:
        if _INSTALLED:
            return
        register_tuning_functions(_override_tune_tir, _override_tune_relax)
        _INSTALLED = True
