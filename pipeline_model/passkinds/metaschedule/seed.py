"""MetaSchedule tuning seeded with the app's own DLight schedules (TVM-free at import; the functions of
:data:`SEED_HELPERS` are copied verbatim into exported scripts, like :mod:`.plan`'s).

A ``relax.MetaScheduleTuneTIR`` step with ``seed_rules`` (app rule names such as ``"app.CPUMatmul"``)
first gives every PrimFunc it tunes the schedule those rules give it — the first rule that returns a
schedule, applied as ``dlight.ApplyDefaultSchedule`` applies it — and measures that schedule with the step's
own builder and runner (the measurement the candidates get). The measured schedule is committed to the work
directory's database as a ``TuningRecord`` (its trace, the measured ``run_secs``, the workload, the target,
the ``ArgInfo`` the candidates get), so ``MetaScheduleApplyDatabase`` picks, per PrimFunc, whichever is
fastest: the app's schedule or a tuned one. A few minutes of search on a small machine often find schedules
slower than the app's hand-written rules; with seeds, tuning never makes a PrimFunc slower than the app's
default pipeline (within the noise of one measurement).

A seed is only committed when its trace replays: it is written to a scratch JSON database, read back by a
second database (as ``MetaScheduleApplyDatabase`` reads it) and the schedule the database gives must be the
rule's (:func:`same_schedule`); otherwise the PrimFunc is not seeded and the step's report says why.

Seeds never enter the per-user tuning database (a seed is not a tuned result: the user database would
turn the workload into a look-up with zero trials): a record is a seed when its trace never entered
MetaSchedule's post-processors (:func:`~pipeline_model.passkinds.metaschedule.script.is_search_record`).

:func:`seed_app_schedules` seeds a list of workloads (built and measured in one batch);
:func:`seed_outcome` says afterwards which PrimFuncs kept the app's schedule and which got a tuned one;
:func:`seed_tuning_pass` (exported scripts only) is the module pass a script runs before its tuning step.
"""

from pipeline_model.passkinds.metaschedule.script import (  # the helpers the seeding uses
    is_search_record,
    meta_schedule_target,
    open_work_database,
    script_tuning_tools,
    track_work_dir,
)


def rule_schedule(rules, workload, target):
    """``(rule class name, schedule)`` of the first of ``rules`` that schedules the PrimFunc ``main`` of the
    one-function module ``workload`` — ``rule.apply(func, its target attribute or target, False)``, as
    ``dlight.ApplyDefaultSchedule`` does —, or ``(None, None)`` when none does."""
    func = workload["main"]
    func_target = func.attrs.get("target") if func.attrs is not None else None
    for rule in rules:
        space = rule.apply(func, func_target or target, False)
        if isinstance(space, (list, tuple)):
            space = space[0] if space else None
        if space is not None:
            return type(rule).__name__, space
    return None, None


def same_schedule(a, b):
    """Whether modules ``a`` and ``b`` hold the same schedule: structurally equal, or equal once the one
    change a trace's JSON makes is undone (a boolean block annotation, such as the weight-packing mark
    ``meta_schedule.layout_rewrite_preproc``, is read back as the integer 1; TVM treats both alike)."""
    import re

    import tvm_ffi

    if tvm_ffi.structural_equal(a, b):
        return True

    def text(mod):
        return re.sub(r'(": )False\b', r"\g<1>0", re.sub(r'(": )True\b', r"\g<1>1", mod.script()))

    return text(a) == text(b)


def replays(record, workload, target, scratch_dir, expected):
    """``None`` when ``record`` (a seed) replays to the schedule ``expected`` the way the database gives it
    back — written to a JSON database in ``scratch_dir``, read by a second database from the files —, else a
    sentence saying what went wrong."""
    from tvm.s_tir import meta_schedule as ms

    try:
        first = ms.database.JSONDatabase(work_dir=scratch_dir, module_equality="structural")
        first.commit_tuning_record(ms.database.TuningRecord(
            record.trace, first.commit_workload(workload), [0.001], target, record.args_info))
        again = ms.database.JSONDatabase(work_dir=scratch_dir, module_equality="structural")
        sch = again.query_schedule(workload, target, "main")
    except Exception as exc:  # noqa: BLE001 - a trace that cannot replay is reported, not raised
        return f"its trace does not replay: {type(exc).__name__}: {str(exc).strip().splitlines()[-1][:200]}"
    if sch is None:
        return "its trace does not replay (the database gives no schedule)"
    if not same_schedule(sch.mod, expected):
        return "its trace replays to another schedule than the rule's"
    return None


def _present_seed(database, workload, expected):
    """The mean latency in seconds of the seed of ``workload`` that ``database`` already holds with the
    schedule ``expected`` (a previous run seeded it), else ``None``."""
    from tvm import s_tir

    if not database.has_workload(workload):
        return None
    for rec in database.get_top_k(database.commit_workload(workload), 1 << 20):
        if is_search_record(rec) or not rec.run_secs:
            continue
        try:
            sch = s_tir.Schedule(workload)
            rec.trace.apply_to_schedule(sch, remove_postproc=False)
        except Exception:  # noqa: BLE001 - not this seed
            continue
        if same_schedule(sch.mod, expected):
            return sum(float(x) for x in rec.run_secs) / len(rec.run_secs)
    return None


def seed_app_schedules(database, tasks, target, rules, builder, runner):
    """Commit the app rules' schedule of each task to ``database`` (see the module docstring).

    ``tasks``: ``[(name, workload)]`` (one-PrimFunc modules, as MetaSchedule tunes them); ``target``: the
    tuning target; ``rules``: DLight rule objects in order; ``builder``/``runner``: the step's. The schedules
    are built in one batch and measured in one. Returns ``{rules, tasks: {name: {rule, status, us, reason}},
    no_rule: [names], seconds}`` (``seconds``: the time it took) where ``status`` is ``seeded`` (measured and committed now), ``present`` (the database
    held it already) or ``skipped`` (``reason`` says why: its trace does not replay, the rule, build or run
    failed)."""
    import os
    import shutil
    import tempfile
    import time

    from tvm.s_tir import meta_schedule as ms

    start = time.perf_counter()
    info = {"rules": [type(r).__name__ for r in rules], "tasks": {}, "no_rule": [], "seconds": 0.0}
    todo = []
    scratch = tempfile.mkdtemp(prefix="rps_seed_")
    try:
        for name, workload in tasks:
            entry = {"rule": None, "status": "skipped", "us": None, "reason": ""}
            try:
                entry["rule"], sch = rule_schedule(rules, workload, target)
            except Exception as exc:  # noqa: BLE001 - a rule that fails here fails in dlight too; say so
                entry["reason"] = f"the rule failed: {type(exc).__name__}: {str(exc).strip()[:200]}"
                info["tasks"][name] = entry
                continue
            if sch is None:
                info["no_rule"].append(name)
                continue
            info["tasks"][name] = entry
            present = _present_seed(database, workload, sch.mod)
            if present is not None:
                entry["status"], entry["us"] = "present", round(present * 1e6, 3)
                continue
            try:  # MetaSchedule removes a weight-packing stage it measures as done; it must be a plain copy
                args = ms.arg_info.ArgInfo.from_entry_func(sch.mod, remove_preproc=True)
            except Exception as exc:  # noqa: BLE001 - (a zero-padded packing is not: Llama's 344 columns)
                entry["reason"] = ("MetaSchedule cannot take its weight packing apart (not a plain copy): "
                                   f"{str(exc).strip().splitlines()[0][:160]}")
                continue
            record = ms.database.TuningRecord(sch.trace, database.commit_workload(workload), None, target, args)
            folder = os.path.join(scratch, str(len(info["tasks"])))  # one scratch database per seed
            os.makedirs(folder)
            entry["reason"] = replays(record, workload, target, folder, sch.mod) or ""
            if not entry["reason"]:
                todo.append((name, workload, sch, args))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    info["seconds"] = round(time.perf_counter() - start, 3)
    if not todo:
        return info
    device = "cpu" if target.kind.name in ("llvm", "c") else target.kind.name
    built = builder.build([ms.builder.BuilderInput(sch.mod, target) for _n, _w, sch, _a in todo])
    inputs, ready = [], []
    for item, result in zip(todo, built):
        if result.error_msg:
            info["tasks"][item[0]]["reason"] = "build failed: " + str(result.error_msg).strip().splitlines()[-1][:200]
            continue
        inputs.append(ms.runner.RunnerInput(result.artifact_path, device, item[3]))
        ready.append(item)
    results = [f.result() for f in runner.run(inputs)] if inputs else []
    for (name, workload, sch, args), result in zip(ready, results):
        entry = info["tasks"][name]
        secs = [float(x) for x in result.run_secs or []]
        if result.error_msg or not secs or sum(secs) / len(secs) >= 1e9:
            entry["reason"] = "run failed: " + str(result.error_msg or "no time").strip().splitlines()[-1][:200]
            continue
        database.commit_tuning_record(ms.database.TuningRecord(
            sch.trace, database.commit_workload(workload), result.run_secs, target, args))
        entry["status"], entry["us"] = "seeded", round(sum(secs) / len(secs) * 1e6, 3)
    info["seconds"] = round(time.perf_counter() - start, 3)
    return info


def seed_outcome(database, tasks, info):
    """After tuning: for each seeded task of ``info`` (:func:`seed_app_schedules`) whether the database's
    best record is still the app's schedule (``best`` = ``"app"``) or a tuned one (``"tuned"``, with
    ``best_us``). ``tasks``: ``[(name, workload)]``. Updates ``info`` and returns ``{"app": n, "tuned": m}``."""
    counts = {"app": 0, "tuned": 0}
    workloads = dict(tasks)
    for name, entry in info["tasks"].items():
        if entry["status"] not in ("seeded", "present") or name not in workloads:
            continue
        workload = workloads[name]
        top = database.get_top_k(database.commit_workload(workload), 1) if database.has_workload(workload) else []
        if not top:
            continue
        best = "tuned" if is_search_record(top[0]) else "app"
        secs = [float(x) for x in top[0].run_secs or []]
        entry["best"], entry["best_us"] = best, (round(sum(secs) / len(secs) * 1e6, 3) if secs else None)
        counts[best] += 1
    info["outcome"] = counts
    return counts


def seed_summary(info):
    """One line on the seeds of a step, e.g. ``app schedules: 12 seeded, 2 skipped, 3 no rule; best: 9 app,
    3 tuned``."""
    statuses = [e["status"] for e in info["tasks"].values()]
    seeded = sum(1 for s in statuses if s in ("seeded", "present"))
    line = (f"app schedules: {seeded} seeded, {statuses.count('skipped')} skipped, {len(info['no_rule'])} no rule"
            f" ({float(info.get('seconds') or 0):.0f} s)")
    outcome = info.get("outcome")
    if outcome:
        line += f"; best: {outcome['app']} app, {outcome['tuned']} tuned"
    return line


def seed_tuning_pass(tune_tir, work_dir, options, rules):
    """Exported scripts only: a module pass that seeds the work directory's database with the schedules of
    ``rules`` for every PrimFunc of its input (:func:`seed_app_schedules`, the step's builder and runner from
    ``options``) and sets ``tune_tir.seeds`` (``(info, tasks)``), so :func:`print_seed_outcome` can say which
    schedules won after tuning; the seconds it took are in ``tune_tir.seed_s`` (a time budget counts them)."""
    import os
    import time

    import tvm
    from tvm.s_tir.meta_schedule.tune_context import _normalize_mod

    @tvm.transform.module_pass(opt_level=0, name="SeedAppSchedules")
    def seed(mod, _ctx):
        start = time.perf_counter()
        target = meta_schedule_target(tvm.target.Target.current())
        tasks = [(gv.name_hint, _normalize_mod(f)) for gv, f in mod.functions_items()
                 if isinstance(f, tvm.tirx.PrimFunc) and not (f.attrs is not None and f.attrs.get("tirx.is_scheduled", False))]
        os.makedirs(str(work_dir), exist_ok=True)
        with track_work_dir(str(work_dir)):
            database = open_work_database(work_dir)
            info = seed_app_schedules(database, tasks, target, rules, *script_tuning_tools(options))
        for name, entry in info["tasks"].items():
            if entry["status"] == "skipped":
                print(f"not seeded with the app's schedule: {name}: {entry['reason']}")
        print(seed_summary(info))
        tune_tir.seeds = (info, tasks)
        tune_tir.seed_s = time.perf_counter() - start
        return mod

    return seed


def print_seed_outcome(tune_tir, work_dir):
    """Exported scripts only: a module pass printing, after the tuning step, how many PrimFuncs kept the
    app's schedule and how many got a tuned one (:func:`seed_outcome`)."""
    import tvm

    @tvm.transform.module_pass(opt_level=0, name="SeedOutcome")
    def outcome(mod, _ctx):
        seeds = getattr(tune_tir, "seeds", None)
        if seeds:
            database = open_work_database(work_dir)
            seed_outcome(database, seeds[1], seeds[0])
            print(seed_summary(seeds[0]))
        return mod

    return outcome


#: Helpers an exported script with a seeded tuning step needs (in this order, after :data:`.script.SCRIPT_HELPERS`).
SEED_HELPERS = (rule_schedule, same_schedule, replays, _present_seed, seed_app_schedules, seed_outcome, seed_summary,
                seed_tuning_pass, print_seed_outcome)
