"""The pass of a MetaSchedule pipeline step in the engine: progress events, stop, report, targeted tuning
(engine side, imports TVM).

:func:`make_tuning_pass` builds it; the kind's
:meth:`~pipeline_model.passkinds.metaschedule.MetaScheduleKind.build_pass` calls it with the step's
context.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Optional

import tvm
from tvm import relax
from tvm.s_tir import meta_schedule as ms

from pipeline_model.passkinds.metaschedule.builder_tvm import check_rpc_tracker, tuning_target
from pipeline_model.passkinds.metaschedule.config import (
    TuningConfig,
    TuningProgress,
    has_database,
    resolve_work_dir,
    tuning_mode,
)
from pipeline_model.passkinds.metaschedule.overrides_tvm import func_id, tuning_session
from pipeline_model.passkinds.metaschedule.records import remember_own_database
from pipeline_model.passkinds.metaschedule.script import (
    TuningConfigError,
    load_tensor_intrinsics,
    meta_schedule_target,
    track_work_dir,
    wipe_work_dir,
)
from pipeline_model.passkinds.metaschedule.session_tvm import StopFn, TuningSession
from pipeline_model.passkinds.metaschedule.tasks_tvm import apply_database

EmitFn = Callable[[str, dict], None]
ProfileFn = Callable[[tvm.IRModule], tuple[dict, str]]


def make_tuning_pass(
    pass_id: str, params: dict[str, Any], target: Any, default_work_dir: Optional[str],
    base_dir: Optional[str] = None, emit: Optional[EmitFn] = None, cancelled: Optional[StopFn] = None,
    report: Optional[dict] = None, stop_early: Optional[StopFn] = None, profile_fn: Optional[ProfileFn] = None,
    trusted: bool = False, step_number: Optional[int] = None, measure_fn: Optional[Callable[[list], list]] = None,
) -> tvm.transform.Pass:
    """A module pass for a ``relax.MetaScheduleTuneTIR`` / ``relax.MetaScheduleTuneIRMod`` /
    ``relax.MetaScheduleApplyDatabase`` step.

    The tuning passes run TVM's own pass inside a :class:`TuningSession` that emits
    ``emit("tuning_progress", TuningProgress.to_json())`` after each round and stops when
    ``cancelled()`` (the run is cancelled) or ``stop_early()`` (the user ended tuning; the step
    succeeds and the run goes on) is true; either way what was measured stays in the database. When
    ``report`` (a dict, e.g. ``StepResult.report``) is given, the pass fills ``report["tuning"]``
    (tuning summary) or ``report["apply_database"]`` (applied PrimFuncs). Bad parameters raise
    :class:`TuningConfigError` now, not at run time.

    Targeted tuning (``relax.MetaScheduleTuneTIR`` with ``focus``/``functions``/``schedule_fn``, see
    :mod:`pipeline_model.passkinds.metaschedule.focus`): ``profile_fn(mod)`` returns ``(profile, source)``
    for the step's input module (the engine's stored profile, or one measured now); only the chosen
    PrimFuncs are tuned, each with its share of the budget, and ``report["tuning"]["focus"]`` holds the
    plan. A ``schedule_fn`` is user code: without ``trusted`` the step refuses to build.

    The apply step with ``keep_wins`` (the default schedule's rules) keeps a tuned schedule only where the model
    built with it is faster beyond noise: ``measure_fn(mods)`` times variants in place
    (:mod:`pipeline_model.passkinds.metaschedule.keep`); ``report["apply_database"]["keep"]`` says what was kept.
    """
    mode = tuning_mode(pass_id)
    if mode == "apply":
        work_dir = resolve_work_dir(str(params.get("work_dir") or ""), default_work_dir, base_dir)
        keep = _keep_setup(params, measure_fn, step_number)
        return _apply_step(pass_id, work_dir, tuning_target(target), emit, report, keep)
    if mode not in ("tir", "irmod"):
        raise TuningConfigError(f"{pass_id} is not a MetaSchedule tuning pass")
    config = TuningConfig.from_params(params, where=f"step {pass_id}")
    work_dir = resolve_work_dir(config.work_dir, default_work_dir, base_dir)
    tgt = meta_schedule_target(target)  # its tensor intrinsics are loaded by the step, once its workers start
    targeted = _targeted_setup(pass_id, mode, params, trusted, step_number)
    budgeted = _budget_setup(pass_id, mode, params, step_number)
    rules = _seed_setup(pass_id, mode, config, step_number)
    with tgt:
        if mode == "tir":
            inner = relax.transform.MetaScheduleTuneTIR(work_dir=work_dir, max_trials_global=config.max_trials_global)
        else:
            inner = relax.transform.MetaScheduleTuneIRMod(
                params={}, work_dir=work_dir, max_trials_global=config.max_trials_global,
                max_trials_per_task=config.max_trials_per_task, op_names=config.op_names or None,
            )
    flags = [f for f in (cancelled, stop_early) if f is not None]

    def new_session() -> TuningSession:
        def on_progress(progress: TuningProgress) -> None:
            if emit is not None:
                emit("tuning_progress", progress.to_json())

        return TuningSession(TuningConfig(**config.to_json()), on_progress,
                             (lambda: any(f() for f in flags)) if flags else None, pass_id=pass_id)

    @tvm.transform.module_pass(opt_level=0, name=pass_id.split(".", 1)[1])
    def tune_step(mod, _ctx):
        session = new_session()
        try:
            return _tune_step(session, mod)
        finally:
            session.close()  # the step's build and measure workers
            remember_own_database(work_dir)  # the run had consent for what was there; the rest it measured

    def _tune_step(session, mod):
        _prepare_session(session, mod, mode, work_dir, targeted, profile_fn)
        # The build and measure workers start now (a fresh interpreter importing TVM each, seconds on a busy
        # machine) while this process loads the tensor intrinsics, looks the tasks up and searches.
        session.tools()
        if session.preplanned and budgeted is None:
            session.emit()  # the PrimFuncs and their budgets, before the look-ups share the cores with the workers
        load_tensor_intrinsics(tgt)
        seeded = []
        if rules:
            from pipeline_model.passkinds.metaschedule.seed_tvm import seed_session

            seeded = seed_session(session, mod, work_dir, tgt, rules)
        if budgeted is not None:
            from pipeline_model.passkinds.metaschedule.budget_tvm import budgeted_tune

            budgeted_tune(session, lambda sub: _run_inner(session, inner, sub, work_dir, tgt, None), mod,
                          work_dir, tgt, budgeted, profile_fn)
            out = mod
            session.progress.finished = True
            session.emit()
        else:
            out = _tune_in_session(session, inner, mod, work_dir, tgt, targeted)
        if seeded:
            from pipeline_model.passkinds.metaschedule.seed_tvm import finish_seeds

            finish_seeds(session, work_dir, seeded)
        if report is not None:
            report["tuning"] = _step_summary(session, work_dir)
        return out

    return tune_step


def _keep_setup(params: dict[str, Any], measure_fn: Optional[Callable[[list], list]],
                step_number: Optional[int]) -> Optional[Callable[[Any, Any], tuple[Any, dict]]]:
    """``keep(mod, applied) -> (module, report)`` of an apply step with ``keep_wins`` (``None``: off)."""
    from pipeline_model.passkinds.metaschedule.config import SEED_RULES

    names = [str(r) for r in params.get("keep_wins") or []]
    if not names:
        return None
    where = f"step {step_number} (relax.MetaScheduleApplyDatabase)" if step_number else "relax.MetaScheduleApplyDatabase"
    unknown = [r for r in names if r not in SEED_RULES]
    if unknown:
        raise TuningConfigError(f"{where}: keep_wins names unknown rules {unknown}; the app's rules are {list(SEED_RULES)}")
    if measure_fn is None:
        raise TuningConfigError(f"{where}: keep_wins needs the engine's timing of the built model, and none is given here")
    from pipeline_model.passkinds.metaschedule.keep_tvm import keeper

    return keeper(names, measure_fn)


def _apply_step(pass_id: str, work_dir: str, tgt: Any, emit: Optional[EmitFn],
                report: Optional[dict], keep: Optional[Callable[[Any, Any], tuple[Any, dict]]] = None,
                ) -> tvm.transform.Pass:
    """The pass of a ``relax.MetaScheduleApplyDatabase`` step (a warning, not an error, without a database);
    with ``keep`` (``keep_wins``) only the tuned schedules that win in the built model are kept."""

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
        warnings: list[str] = []
        new_mod, info = apply_database(mod, tgt, work_dir, warnings.append)
        info["work_dir"] = work_dir
        if warnings:  # lines of the database skipped (too long, too deep, not JSON, refused by the allow-list)
            info["warnings"] = warnings
            for message in warnings if emit is not None else ():
                emit("warning", {"pass_id": pass_id, "message": message})
        if keep is not None:
            with tgt:
                new_mod, info["keep"] = keep(mod, new_mod)
        if report is not None:
            report["apply_database"] = info
        return new_mod

    return apply_step


def _prepare_session(session: TuningSession, mod: tvm.IRModule, mode: str, work_dir: str,
                     targeted: Optional[dict[str, Any]], profile_fn: Optional[ProfileFn]) -> None:
    """Before tuning: the RPC tracker checked, the PrimFuncs named with their budgets (``tir``), the
    targeted plan made, and with ``retune`` the work directory wiped (manifest rule)."""
    config = session.config
    if config.runner == "rpc":
        check_rpc_tracker(config)
    session.progress.work_dir = work_dir
    if mode == "tir":
        for gv, func in mod.functions_items():
            if isinstance(func, tvm.tirx.PrimFunc):
                session.name_of_func[func_id(func)] = gv.name_hint
                session.progress.task(gv.name_hint)
        session.progress.total = len(session.name_of_func) * config.max_trials_global
        session.preplanned = True
    if targeted is not None:
        _plan_session(session, mod, config, targeted, profile_fn)
    os.makedirs(work_dir, exist_ok=True)
    if config.retune:
        wipe_work_dir(work_dir)
        session.config.retune = False
        session.retuned = True


def _tune_in_session(session: TuningSession, inner: tvm.transform.Pass, mod: tvm.IRModule, work_dir: str,
                     tgt: Any, targeted: Optional[dict[str, Any]]) -> tvm.IRModule:
    """Run TVM's tuning pass ``inner`` with ``session`` active, then report the end."""
    out = _run_inner(session, inner, mod, work_dir, tgt, targeted)
    session.progress.finished = True
    session.emit()
    return out


def _run_inner(session: TuningSession, inner: tvm.transform.Pass, mod: tvm.IRModule, work_dir: str,
               tgt: Any, targeted: Optional[dict[str, Any]]) -> tvm.IRModule:
    """Run TVM's tuning pass ``inner`` once with ``session`` active (files recorded in the manifest)."""
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
    return out


def _budget_setup(pass_id: str, mode: str, params: dict[str, Any],
                  step_number: Optional[int]) -> Optional[dict[str, Any]]:
    """Validated settings of a time-budgeted ``relax.MetaScheduleTuneTIR`` step (``None``: no budget)."""
    from pipeline_model.passkinds.metaschedule.focus import FocusError, focus_settings, is_budgeted

    if not is_budgeted(params):
        return None
    where = f"step {step_number} ({pass_id})" if step_number else f"step {pass_id}"
    if mode != "tir":
        raise TuningConfigError(f"{where}: time_budget_s needs relax.MetaScheduleTuneTIR")
    try:
        return focus_settings(params, where)
    except FocusError as exc:
        raise TuningConfigError(str(exc)) from None


def _seed_setup(pass_id: str, mode: str, config: TuningConfig, step_number: Optional[int]) -> list[Any]:
    """The rule objects of a step's ``seed_rules`` (``[]``: no seeding); only ``relax.MetaScheduleTuneTIR`` seeds."""
    if not config.seed_rules:
        return []
    if mode != "tir":
        where = f"step {step_number} ({pass_id})" if step_number else f"step {pass_id}"
        raise TuningConfigError(f"{where}: seed_rules needs relax.MetaScheduleTuneTIR")
    from pipeline_model.passkinds.metaschedule.seed_tvm import app_rules

    return app_rules(config.seed_rules)


def _step_summary(session: TuningSession, work_dir: str) -> dict[str, Any]:
    """``report["tuning"]``: the session's summary, with a message when it was stopped early."""
    summary = session.summary()
    if session.user_stopped:
        summary["message"] = (
            f"stopped early after {summary['done']} of {summary['total']} trials "
            f"({summary['measured']} measured); the records are kept in {work_dir}"
        )
    return summary


# ------------------------------------------------------------------------------ targeted tuning
def _targeted_setup(pass_id: str, mode: str, params: dict[str, Any], trusted: bool,
                    step_number: Optional[int]) -> Optional[dict[str, Any]]:
    """Validated targeted-tuning settings of a step (``None`` when it tunes every PrimFunc as TVM does);
    loads the user's ``schedule_fn`` (trusted code only) into ``settings["schedule"]``."""
    from pipeline_model.passkinds.metaschedule.focus import FocusError, focus_settings, is_targeted, schedule_label
    from pipeline_model.passkinds.metaschedule.script import load_schedule_fn

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
    from pipeline_model.passkinds.metaschedule.focus import needs_profile
    from pipeline_model.passkinds.metaschedule.script import plan_targeted_tuning

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
