"""Targeted MetaSchedule tuning: which PrimFuncs to tune and how many trials each (TVM-free).

A ``relax.MetaScheduleTuneTIR`` step normally tunes every PrimFunc with the same budget. With the
parameters of :data:`FOCUS_PARAMS` it tunes only the functions that hold most of the measured time:

* ``focus``: ``"all"`` (every PrimFunc, or those named in ``functions``), ``"top_k"`` (the ``top_k``
  PrimFuncs with the largest measured time) or ``"share"`` (every PrimFunc holding at least
  ``min_share`` of the measured time);
* ``functions``: PrimFunc names picked by hand (they are tuned whatever ``focus`` says);
* ``total_trials``: the budget of the step (0: ``max_trials_global`` × the number of chosen
  functions), split by share (:func:`allocate_trials`) with at least ``min_trials`` each;
* ``schedule_fn``: the user's own search space, Python source defining ``schedule(sch) -> None``
  (a stochastic schedule, as in TVM's tutorial), applied through ``ms.space_generator.ScheduleFn`` to
  the chosen functions instead of MetaSchedule's generated space. It is user code: it runs only when
  custom code is trusted.

The profile is the engine's profile of the step's input module (``{"entries": [{name, kind,
total_us, share}]}``, see ``pipeline_model.engine.build.measure.profile_vm``). The functions below
that an exported script needs (:data:`SCRIPT_HELPERS`) are self-contained, so the script computes the
same choice and allocation as the engine from its own profile.
"""

from __future__ import annotations

from typing import Any, Optional

from pipeline_model.tuning import tuning_param as _param

#: Values of the ``focus`` parameter.
FOCUS_MODES = ("all", "top_k", "share")

#: Source of a new ``schedule_fn`` (the tutorial's stochastic matmul schedule, for a block "matmul").
SCHEDULE_FN_TEMPLATE = '''def schedule(sch):
    """A stochastic schedule: MetaSchedule samples the tile sizes (a search space of your own)."""
    block = sch.get_sblock("matmul", "main")
    i, j, k = sch.get_loops(block)
    i0, i1, i2, i3 = sch.split(i, factors=sch.sample_perfect_tile(i, n=4))
    j0, j1, j2, j3 = sch.split(j, factors=sch.sample_perfect_tile(j, n=4))
    k0, k1 = sch.split(k, factors=sch.sample_perfect_tile(k, n=2))
    sch.reorder(i0, j0, i1, j1, k0, i2, j2, k1, i3, j3)
'''


#: Parameters of targeted tuning (``ParamSpec(**d)`` each), added to ``relax.MetaScheduleTuneTIR``.
FOCUS_PARAMS: list[dict] = [
    _param("focus", "choice", "all", "Which PrimFuncs to tune: all, the top_k by measured time, or those "
           "holding at least min_share of it (uses the engine's profile of the step's input).", list(FOCUS_MODES)),
    _param("top_k", "int", 3, "focus = top_k: how many PrimFuncs (largest measured time first)."),
    _param("min_share", "float", 0.1, "focus = share: smallest share of the measured time (0.1 = 10 %)."),
    _param("functions", "str_list", [], "PrimFuncs picked by hand (always tuned; with focus = all only these)."),
    _param("total_trials", "int", 0, "Trials for the whole step when targeted, split by time share "
           "(0: max_trials_global × the number of chosen PrimFuncs)."),
    _param("min_trials", "int", 2, "Fewest trials a chosen PrimFunc gets."),
    _param("schedule_fn", "code", "", "Your own search space: Python defining schedule(sch) (a stochastic "
           "schedule, ms.space_generator.ScheduleFn) applied to the chosen PrimFuncs. User code: needs trust."),
]
#: Names of :data:`FOCUS_PARAMS`.
FOCUS_PARAM_NAMES = tuple(p["name"] for p in FOCUS_PARAMS)


class FocusError(ValueError):
    """Bad targeted-tuning parameters or functions that do not exist; the message says which."""


def focus_settings(params: dict[str, Any], where: str = "tuning step") -> dict[str, Any]:
    """The targeted-tuning settings of a step's ``params``, validated (defaults filled in).

    Returns ``{focus, top_k, min_share, functions, total_trials, min_trials, schedule_fn}``; raises
    :class:`FocusError` naming ``where`` and the parameter on a bad value."""
    out = {p["name"]: p["default"] for p in FOCUS_PARAMS}
    for name in FOCUS_PARAM_NAMES:
        if name in (params or {}) and params[name] is not None:
            out[name] = params[name]

    def bad(name: str, msg: str) -> FocusError:
        return FocusError(f"{where}: parameter '{name}' {msg}")

    if out["focus"] not in FOCUS_MODES:
        raise bad("focus", f"must be one of {list(FOCUS_MODES)}, not {out['focus']!r}")
    for name in ("top_k", "total_trials", "min_trials"):
        if isinstance(out[name], bool) or not isinstance(out[name], int):
            raise bad(name, f"must be an integer, not {out[name]!r}")
    if out["top_k"] < 1:
        raise bad("top_k", f"must be at least 1, not {out['top_k']}")
    if out["total_trials"] < 0:
        raise bad("total_trials", "must be 0 (per-function budget) or more")
    if out["min_trials"] < 1:
        raise bad("min_trials", f"must be at least 1, not {out['min_trials']}")
    share = out["min_share"]
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0.0 <= float(share) <= 1.0:
        raise bad("min_share", f"must be a number from 0 to 1, not {share!r}")
    out["min_share"] = float(share)
    funcs = out["functions"]
    if not isinstance(funcs, list) or not all(isinstance(f, str) for f in funcs):
        raise bad("functions", f"must be a list of PrimFunc names, not {funcs!r}")
    out["functions"] = [f.strip() for f in funcs if f.strip()]
    if not isinstance(out["schedule_fn"], str):
        raise bad("schedule_fn", "must be Python source text")
    return out


def is_targeted(params: dict[str, Any]) -> bool:
    """True when a tuning step tunes chosen PrimFuncs one by one (focus, hand-picked functions or a
    schedule function) instead of running TVM's stock pass over every PrimFunc."""
    params = params or {}
    return (str(params.get("focus") or "all") != "all" or bool(params.get("functions"))
            or bool(str(params.get("schedule_fn") or "").strip()))


def needs_profile(settings: dict[str, Any]) -> bool:
    """Whether choosing/allocating needs a measured profile (not for one hand-picked function)."""
    if settings["focus"] != "all":
        return True
    return len(settings["functions"]) != 1 if settings["functions"] else True


# ------------------------------------------------------------------------------------------------
# Self-contained helpers (copied verbatim into exported scripts; keep them free of module globals).


def choose_tuning_functions(entries, prim_funcs, focus="all", top_k=3, min_share=0.1, functions=()):
    """The PrimFuncs to tune, as ``[(name, share, total_us)]`` sorted by measured time (largest first).

    ``entries``: a profile's entries (dicts with ``name``, ``total_us``, ``share``; PrimFuncs not in it
    count as 0); ``prim_funcs``: the PrimFunc names of the module. ``focus`` ``"top_k"`` takes the
    ``top_k`` largest, ``"share"`` those with ``share >= min_share``, ``"all"`` every PrimFunc unless
    ``functions`` (names picked by hand, always included) are given. A hand-picked name that is not a
    PrimFunc of the module raises ``ValueError`` listing the names there are.
    """
    names = list(prim_funcs)
    known = set(names)
    missing = [f for f in functions if f not in known]
    if missing:
        raise ValueError(f"functions {missing} are not PrimFuncs of the module; it has: {', '.join(sorted(names))}")
    measured = {}
    for e in entries or []:
        if e.get("name") in known:
            measured[e["name"]] = (float(e.get("share") or 0.0), float(e.get("total_us") or 0.0))
    ranked = sorted(names, key=lambda n: (-measured.get(n, (0.0, 0.0))[1], n))
    if focus == "top_k":
        picked = [n for n in ranked if n in measured][: int(top_k)]
    elif focus == "share":
        picked = [n for n in ranked if measured.get(n, (0.0, 0.0))[0] >= float(min_share)]
    else:
        picked = [] if functions else list(ranked)
    picked += [f for f in functions if f not in picked]
    picked.sort(key=lambda n: (-measured.get(n, (0.0, 0.0))[1], n))
    return [(n, measured.get(n, (0.0, 0.0))[0], measured.get(n, (0.0, 0.0))[1]) for n in picked]


def allocate_trials(chosen, total, minimum=1):
    """Split ``total`` trials over ``chosen`` = ``[(name, share, ...)]`` in proportion to the shares
    (equal split when no share is known), at least ``minimum`` each; the largest remainders get the
    leftover trials, and trials given to lift a function to the minimum come from the others, so the
    sum is ``total`` unless the minimums alone exceed it. Returns
    ``{name: trials}``."""
    if not chosen:
        return {}
    shares = [max(0.0, float(c[1])) for c in chosen]
    weight = sum(shares)
    if weight <= 0:
        shares, weight = [1.0] * len(chosen), float(len(chosen))
    raw = [total * s / weight for s in shares]
    alloc = [max(int(minimum), int(r)) for r in raw]
    while sum(alloc) > int(total):  # minimums raised some: take the excess from the largest above it
        above = [i for i in range(len(alloc)) if alloc[i] > int(minimum)]
        if not above:
            break
        alloc[max(above, key=lambda i: (alloc[i] - raw[i], alloc[i], -i))] -= 1
    left = int(total) - sum(alloc)
    order = sorted(range(len(chosen)), key=lambda i: (-(raw[i] - int(raw[i])), -shares[i], i))
    i = 0
    while left > 0 and order:
        alloc[order[i % len(order)]] += 1
        left -= 1
        i += 1
    return {c[0]: a for c, a in zip(chosen, alloc)}


def plan_targeted_tuning(entries, prim_funcs, settings, max_trials_global):
    """The plan of a targeted tuning step: ``{focus, budget, chosen: [{name, share, total_us, trials}],
    skipped: [names]}`` (uses :func:`choose_tuning_functions` and :func:`allocate_trials`).
    ``settings``: ``focus, top_k, min_share, functions, total_trials, min_trials``."""
    chosen = choose_tuning_functions(entries, prim_funcs, settings["focus"], settings["top_k"],
                                     settings["min_share"], settings["functions"])
    budget = int(settings["total_trials"]) or int(max_trials_global) * len(chosen)
    alloc = allocate_trials(chosen, budget, settings["min_trials"])
    names = {c[0] for c in chosen}
    return {
        "focus": settings["focus"], "budget": budget,
        "chosen": [{"name": n, "share": round(s, 4), "total_us": round(t, 3), "trials": alloc[n]}
                   for n, s, t in chosen],
        "skipped": sorted(n for n in prim_funcs if n not in names),
    }


def load_schedule_fn(source, label):
    """The schedule function a ``schedule_fn`` source defines: ``schedule`` if defined, else the last
    function the source defines. The source is compiled under ``label`` so errors name its lines."""
    import builtins
    import linecache

    code = compile(source, label, "exec")
    linecache.cache[label] = (len(source), None, source.splitlines(True), label)
    namespace = {"__name__": "schedule_fn", "__builtins__": builtins, "__file__": label}
    exec(code, namespace)  # noqa: S102 - trusted user code, by explicit consent
    funcs = [v for k, v in namespace.items() if callable(v) and getattr(getattr(v, "__code__", None), "co_filename", "") == label
             and not k.startswith("_")]
    func = namespace.get("schedule") if callable(namespace.get("schedule")) else (funcs[-1] if funcs else None)
    if func is None:
        raise ValueError(f"{label} defines no schedule function: define schedule(sch) taking a tvm.s_tir.Schedule")
    return func


def shorten(text, limit=1200):
    """``text`` cut to ``limit`` characters (plus a note of how much was cut)."""
    text = str(text)
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f"\n# ... {len(text) - limit} more characters"


def profile_prim_funcs(mod, target):
    """Exported scripts only: build ``mod`` for ``target``, run its entry on the script's seeded inputs
    (``entry_function`` / ``make_arguments`` of the script) and time every call with the VM's
    instrument (as the engine's profile does); returns ``[{name, total_us, share}]``, largest first."""
    import time

    import tvm
    from tvm import relax

    ex = tvm.compile(mod, target=target)
    dev = tvm.cpu(0) if target.kind.name in ("llvm", "c") else tvm.device(target.kind.name, 0)
    vm = relax.VirtualMachine(ex, dev)
    entry = entry_function(mod)  # noqa: F821 - defined by the exported script
    arrays, _described = make_arguments(mod, entry, None)  # noqa: F821 - defined by the exported script
    args = [tvm.runtime.tensor(a, dev) for a in arrays]
    vm[entry](*args)
    prims = {gv.name_hint for gv, f in mod.functions_items() if isinstance(f, tvm.tirx.PrimFunc)}
    runs, stack = [], []

    def instrument(func, symbol, before, ret, *call_args):
        dev.sync()
        if before:
            stack.append((str(symbol), time.perf_counter()))
        elif stack:
            name, t0 = stack.pop()
            runs[-1][name] = runs[-1].get(name, 0.0) + (time.perf_counter() - t0) * 1e6
        return 0

    vm.set_instrument(instrument)
    try:
        for _ in range(5):
            runs.append({})
            vm[entry](*args)
    finally:
        vm.set_instrument(None)
    names = sorted({n for run in runs for n in run})
    totals = {n: sorted(run.get(n, 0.0) for run in runs)[len(runs) // 2] for n in names}
    grand = sum(totals.values()) or 1.0
    return [{"name": n, "total_us": totals[n], "share": totals[n] / grand, "prim_func": n in prims}
            for n in sorted(names, key=lambda n: -totals[n])]


def targeted_tuning_pass(tune_tir, work_dir, settings, max_trials_global, schedule_source="", label="<schedule_fn>"):
    """Exported scripts only: a module pass tuning the chosen PrimFuncs of its input, each with its
    share of the budget (:func:`plan_targeted_tuning` on :func:`profile_prim_funcs`), through the stock
    ``MetaScheduleTuneTIR`` with ``tune_tir`` (from ``install_meta_schedule_cpu``) and, with
    ``schedule_source``, the user's ``ScheduleFn`` as the search space. Prints the plan."""
    import tvm
    import tvm_ffi
    from tvm import relax
    from tvm.s_tir import meta_schedule as ms

    @tvm.transform.module_pass(opt_level=0, name="TargetedTuneTIR")
    def targeted(mod, _ctx):
        prims = {gv.name_hint: f for gv, f in mod.functions_items() if isinstance(f, tvm.tirx.PrimFunc)}
        hand = list(settings.get("functions") or [])
        profile_needed = settings.get("focus", "all") != "all" or len(hand) != 1
        target = tvm.target.Target.current()
        entries = profile_prim_funcs(mod, target) if profile_needed and len(prims) > 1 else []
        plan = plan_targeted_tuning(entries, list(prims), settings, max_trials_global)
        for c in plan["chosen"]:
            print(f"tuning {c['name']}: {c['share'] * 100:.1f} % of the time, {c['trials']} trials")
        if plan["skipped"]:
            print("not tuned: " + ", ".join(plan["skipped"]))
        trials = {c["name"]: c["trials"] for c in plan["chosen"]}
        by_body = {tvm_ffi.structural_hash(f.body): n for n, f in prims.items()}
        space = ms.space_generator.ScheduleFn(load_schedule_fn(schedule_source, label)) if schedule_source.strip() \
            else "post-order-apply"

        def choose(one):
            func = list(one.functions.values())[0] if hasattr(one, "functions") else one
            name = by_body.get(tvm_ffi.structural_hash(func.body))
            return (trials[name], space) if trials.get(name) else None

        tune_tir.choose = choose  # the registered tune_tir asks it for each PrimFunc
        try:
            relax.transform.MetaScheduleTuneTIR(work_dir=work_dir, max_trials_global=1)(mod)
        finally:
            tune_tir.choose = None
        return mod

    return targeted


#: Helpers an exported targeted tuning step needs (in this order), besides ``install_meta_schedule_cpu``.
SCRIPT_HELPERS = (choose_tuning_functions, allocate_trials, plan_targeted_tuning, load_schedule_fn,
                  profile_prim_funcs, targeted_tuning_pass)


def schedule_label(step_number: Optional[int]) -> str:
    """The pseudo file name of a step's schedule function (``<schedule_fn of step N>``)."""
    return f"<schedule_fn of step {step_number}>" if step_number else "<schedule_fn>"
