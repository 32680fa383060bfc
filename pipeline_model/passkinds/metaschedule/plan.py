"""A tuning step that spends a wall-clock budget: trials by FLOPs × calls with a floor, rounds that continue
(TVM-free; the functions of :data:`PLAN_HELPERS` are copied verbatim into exported scripts).

``relax.MetaScheduleTuneTIR`` with ``time_budget_s`` > 0 tunes in rounds until the budget is spent
(:func:`run_budgeted_tuning`, the one driver the engine and exported scripts call):

1. **calibration**: every task gets ``floor`` trials (largest weight first, so a budget too small for all
   floors is spent on the heavy tasks first; the others are reported as not reached, never dropped
   silently); the round measures the pace (trials per second);
2. **main round**: the trials that fit in the time left at that pace (× ``safety``) are split by weight
   — each PrimFunc's measured time in the model as it stands after calibration (``reprofile``: the database
   applied, so with seeded app schedules the default build's own profile where nothing beat them), or, without
   a profile (too little time left, none can be measured), FLOPs × number of calls (:func:`allocate_by_weight`:
   ``floor`` each, the rest in proportion) — and each task gets what it lacks to reach its share
   (:func:`round_increments`): a task tuned in calibration *continues* (it is never "already tuned" below the
   step's own plan);
3. **further rounds on the tuned profile** while time remains: the weights are measured again the same way,
   so the time goes where it still is; the loop ends at the deadline, when a round measures nothing (search
   spaces exhausted) or on a stop.

Everything here is pure Python; the caller passes ``tune_round(allocation, population) -> {name: trials
measured}`` and a clock. ``population`` is the evolutionary search's population for the round
(:func:`round_population`): the calibration round's few trials per PrimFunc are picked from at most
:data:`CALIBRATION_POPULATION` candidates, so its search set-up (paid per PrimFunc and round) costs a fraction of
TVM's 512 and the first trial is measured sooner; the later rounds use the step's ``search_population``.
"""

from pipeline_model.passkinds.metaschedule.script import (  # the helpers the budgeted script pass uses
    DATABASE_FILES,
    import_user_records,
    meta_schedule_target,
    open_work_database,
    profile_prim_funcs,
    track_work_dir,
    user_tuning_database_dir,
)

#: Fraction of the time left that the trials of a round are sized to (the pace varies between tasks).
ROUND_SAFETY = 0.9
#: Fewest seconds left for which another round is started.
MIN_ROUND_S = 5.0
#: Fewest seconds left (and share of the budget) for which the tuned module is profiled again.
REPROFILE_MIN_S = 20.0
REPROFILE_MIN_SHARE = 0.15
#: Largest search population of the calibration round (docs/TUNING.md, Figures: a first round's search on one
#: matmul took 3.9 s at 512, 0.5 s at 64).
CALIBRATION_POPULATION = 64


def allocate_by_weight(weights, total, floor):
    """Trials per task summing to ``max(total, floor × n)``: ``floor`` each, the rest split in proportion to
    ``weights`` (``{name: weight}``; all zero: equal split) with the largest remainders rounded up.
    Every task of ``weights`` is in the result (none is left out)."""
    names = list(weights)
    if not names:
        return {}
    floor = max(0, int(floor))
    extra = max(0, int(total) - floor * len(names))
    w = {n: max(0.0, float(weights[n] or 0.0)) for n in names}
    total_w = sum(w.values())
    if total_w <= 0:
        w = {n: 1.0 for n in names}
        total_w = float(len(names))
    raw = {n: extra * w[n] / total_w for n in names}
    out = {n: floor + int(raw[n]) for n in names}
    left = extra - sum(int(raw[n]) for n in names)
    for n in sorted(names, key=lambda n: (-(raw[n] - int(raw[n])), -w[n], n))[:left]:
        out[n] += 1
    return out


def round_increments(weights, done, total, floor):
    """New trials per task for a round after which the step has spent about ``total`` trials: each task's
    share (:func:`allocate_by_weight`) minus the trials it already got in this step (``done``), never
    below 0. A task tuned in an earlier round continues up to its share."""
    target = allocate_by_weight(weights, total, floor)
    return {n: max(0, int(target[n]) - int(done.get(n, 0))) for n in target}


def trials_that_fit(pace, seconds_left, safety=ROUND_SAFETY):
    """Trials measurable in ``seconds_left`` at ``pace`` trials per second, times ``safety`` (0 without
    time or pace)."""
    if pace <= 0 or seconds_left <= 0:
        return 0
    return int(pace * seconds_left * safety)


def task_weights(flops, calls):
    """FLOPs × calls per task (``flops``, ``calls``: ``{name: number}``; a task without a call counts once,
    one without FLOPs — a copy or transpose — weighs 1, so it still gets its floor)."""
    return {n: max(1.0, float(flops.get(n) or 0.0)) * max(1, int(calls.get(n) or 0)) for n in flops}


def prim_func_costs(mod):
    """``({name: FLOPs}, {name: calls})`` of the PrimFuncs of ``mod``: TVM's FLOP estimate of each (0 when it
    cannot estimate) and how many calls the Relax functions make to it (``call_tir`` and friends)."""
    import tvm
    from tvm import relax
    from tvm.s_tir.analysis import estimate_tir_flops

    flops, calls = {}, {}
    for gv, func in mod.functions_items():
        if isinstance(func, tvm.tirx.PrimFunc):
            try:
                flops[gv.name_hint] = float(estimate_tir_flops(tvm.IRModule({"main": func})))
            except Exception:  # noqa: BLE001 - a function TVM cannot estimate still gets its floor
                flops[gv.name_hint] = 0.0

    def count(expr):
        if isinstance(expr, relax.Call):
            for arg in expr.args:
                if isinstance(arg, tvm.ir.GlobalVar) and arg.name_hint in flops:
                    calls[arg.name_hint] = calls.get(arg.name_hint, 0) + 1

    for _gv, func in mod.functions_items():
        if isinstance(func, relax.Function):
            relax.analysis.post_order_visit(func.body, count)
    return flops, calls


def round_population(kind, search_population):
    """The search population of a round: at most :data:`CALIBRATION_POPULATION` for the calibration round (a few
    trials per PrimFunc), the step's ``search_population`` for the others."""
    return min(int(search_population), CALIBRATION_POPULATION) if kind == "calibration" else int(search_population)


def run_budgeted_tuning(weights, budget_s, floor, tune_round, now, reprofile=None, should_stop=None,
                        log=None, search_population=512):
    """Tune in rounds until ``budget_s`` seconds are spent (see the module docstring); returns the plan
    ``{budget_s, floor, spent_s, pace, rounds: [{kind, weights_from, allocation, measured, seconds}],
    trials: {name: trials this step}, not_reached: [names], end: deadline|exhausted|stopped|no-tasks}``.

    ``weights``: ``{name: FLOPs × calls}``; ``tune_round(allocation, population)`` tunes each named task that
    many more trials (``population``: :func:`round_population` of ``search_population`` for the round, the
    step's own when ``None``) and returns ``{name: trials measured}``; ``now()``: seconds (monotonic);
    ``reprofile()``: ``{name: µs}`` of the module with the tuned schedules applied, or ``None``;
    ``should_stop()``: the user's stop; ``log(text)``: one line per round."""
    start = now()
    deadline = start + float(budget_s)
    stop = should_stop or (lambda: False)
    say = log or (lambda _text: None)
    done = {n: 0 for n in weights}
    plan = {"budget_s": float(budget_s), "floor": int(floor), "pace": 0.0, "rounds": [], "trials": done,
            "not_reached": [], "end": "no-tasks"}
    if not weights:
        plan["spent_s"] = round(now() - start, 3)
        return plan
    order = sorted(weights, key=lambda n: (-float(weights[n]), n))
    first = {n: int(floor) for n in order}
    kind, source, alloc = "calibration", "flops", first
    current = dict(weights)
    while alloc and not stop():
        t0 = now()
        say(f"{kind} round: {sum(alloc.values())} trials over {len(alloc)} PrimFuncs ({max(0.0, deadline - t0):.0f} s left)")
        ranked = sorted(current, key=lambda n: (-float(current[n]), n))
        measured = tune_round({n: alloc[n] for n in ranked if alloc.get(n, 0) > 0},
                              round_population(kind, search_population)) or {}
        seconds = now() - t0
        for n, k in measured.items():
            if n in done:
                done[n] += int(k)
        count = sum(int(k) for k in measured.values())
        plan["rounds"].append({"kind": kind, "weights_from": source, "allocation": dict(alloc),
                               "measured": dict(measured), "seconds": round(seconds, 3)})
        if count > 0 and seconds > 0:
            spent = sum(r["seconds"] for r in plan["rounds"])
            plan["pace"] = sum(done.values()) / spent if spent > 0 else count / seconds
        left = deadline - now()
        if stop():
            plan["end"] = "stopped"
            break
        if left < MIN_ROUND_S:
            plan["end"] = "deadline"
            break
        if count == 0:
            plan["end"] = "exhausted"
            break
        if reprofile is not None and left >= max(REPROFILE_MIN_S, REPROFILE_MIN_SHARE * budget_s):
            timed = reprofile()
            if timed:
                current = {n: float(timed.get(n) or 0.0) for n in weights}
                source = "tuned profile"
            left = deadline - now()
        fit = trials_that_fit(plan["pace"], left)
        if fit <= 0:
            plan["end"] = "deadline"
            break
        alloc = round_increments(current, done, sum(done.values()) + fit, floor)
        kind = "main" if kind == "calibration" else "more"
        if not any(alloc.values()):
            plan["end"] = "deadline"
            break
    if stop():
        plan["end"] = "stopped"
    plan["not_reached"] = [n for n in order if done[n] == 0]
    plan["spent_s"] = round(now() - start, 3)
    return plan


def budgeted_tuning_pass(tune_tir, work_dir, settings, options):
    """Exported scripts only: a module pass spending ``settings["time_budget_s"]`` on the PrimFuncs of its
    input with :func:`run_budgeted_tuning` (the engine's driver): the user database first (tasks found there
    get zero trials), then rounds through the stock ``MetaScheduleTuneTIR`` with ``tune_tir`` (from
    ``install_meta_schedule_cpu``) told each PrimFunc's trials, heaviest first; the tuned profile
    (:func:`profile_prim_funcs` of the module with the database applied) weighs the later rounds. A round
    is not cut at the deadline here (the engine's is); no round starts after it; the seconds a seeding pass
    before it took (``tune_tir.seed_s``, :func:`.seed.seed_tuning_pass`) count in the budget. Prints the rounds."""
    import os
    import time

    import tvm
    from tvm import relax
    from tvm.s_tir.meta_schedule.tune_context import _normalize_mod

    def records():
        try:
            with open(os.path.join(str(work_dir), DATABASE_FILES[1]), "rb") as fh:
                return sum(1 for line in fh if line.strip())
        except OSError:
            return 0

    @tvm.transform.module_pass(opt_level=0, name="BudgetedTuneTIR")
    def budgeted(mod, _ctx):
        target = meta_schedule_target(tvm.target.Target.current())
        deadline = time.perf_counter() + float(settings["time_budget_s"]) - float(getattr(tune_tir, "seed_s", 0.0))
        funcs = {gv.name_hint: (gv, f) for gv, f in mod.functions_items() if isinstance(f, tvm.tirx.PrimFunc)}
        user_db = user_tuning_database_dir() if options["user_database"] and not options["retune"] else ""
        reused = []
        if user_db:
            os.makedirs(str(work_dir), exist_ok=True)
            with track_work_dir(str(work_dir)):
                database = open_work_database(work_dir)
                for name, (gv, func) in funcs.items():
                    if import_user_records(user_db, database, _normalize_mod(tvm.IRModule({gv: func})), target):
                        reused.append(name)
        if reused:
            print("from the user tuning database (no trials): " + ", ".join(sorted(reused)))
        flops, calls = prim_func_costs(mod)
        weights = task_weights({n: flops.get(n, 0.0) for n in funcs if n not in reused}, calls)

        def tune_round(alloc, population):
            tune_tir.population = population  # read by install_meta_schedule_cpu's tune_tir
            measured = {}
            for name, trials in alloc.items():
                if time.perf_counter() >= deadline:
                    break
                gv, func = funcs[name]
                before = records()
                tune_tir.choose = lambda _one, k=trials: (k, "post-order-apply")
                try:
                    relax.transform.MetaScheduleTuneTIR(work_dir=str(work_dir), max_trials_global=1)(tvm.IRModule({gv: func}))
                finally:
                    tune_tir.choose = None
                measured[name] = max(0, records() - before)
            return measured

        def reprofile():
            with target:
                applied = relax.transform.MetaScheduleApplyDatabase(work_dir=str(work_dir))(mod)
            return {e["name"]: e["total_us"] for e in profile_prim_funcs(applied, target) if e["name"] in weights}

        try:
            plan = run_budgeted_tuning(weights, max(0.0, deadline - time.perf_counter()), int(settings["min_trials"]),
                                       tune_round, time.perf_counter, reprofile, log=print,
                                       search_population=int(options["search_population"]))
        finally:
            tune_tir.population = None
        print(f"tuning: {sum(plan['trials'].values())} trials in {plan['spent_s']:.0f} s, ends: {plan['end']}"
              + (f"; not reached: {', '.join(plan['not_reached'])}" if plan["not_reached"] else ""))
        return mod

    return budgeted


#: Helpers an exported script with a time-budgeted tuning step needs (in this order, after the script.py ones
#: and its targeted helpers, whose ``profile_prim_funcs`` it uses).
PLAN_HELPERS = (allocate_by_weight, round_increments, trials_that_fit, task_weights, prim_func_costs,
                round_population, run_budgeted_tuning, budgeted_tuning_pass)
#: Module constants those helpers use (written into the script before them).
PLAN_CONSTANTS = ("ROUND_SAFETY", "MIN_ROUND_S", "REPROFILE_MIN_S", "REPROFILE_MIN_SHARE", "CALIBRATION_POPULATION")


def plan_constants_source():
    """The assignments of :data:`PLAN_CONSTANTS`, for an exported script."""
    return "".join(f"{name} = {globals()[name]!r}\n" for name in PLAN_CONSTANTS)
