"""Tuning that only keeps wins: a tuned schedule replaces the default one only when the built model says it is
faster (``keep_wins`` of ``relax.MetaScheduleApplyDatabase``; TVM-free at import, TVM inside the functions).

A schedule that measured fastest in isolation (MetaSchedule times each PrimFunc alone, on its own buffers) can
lose in the model (caches, the runtime's thread pool, the neighbours). So the apply step with ``keep_wins``
(the app's DLight rules, the default schedule) builds two variants of its input:

- **default**: the PrimFuncs scheduled by those rules (what the pipeline's following dlight step gives them);
- **tuned**: the database applied, the rest scheduled by the same rules;

runs both on the same seeded inputs in rotating rounds (:func:`time_in_place`: every call timed in the model
with the VM's instrument, so each PrimFunc is timed *in place*) and keeps, per PrimFunc, the tuned schedule only
when its time in the model is faster beyond noise (:func:`judge_functions`, the project's honest-numbers verdict
:func:`pipeline_model.latency_stats.compare_runs` on paired rounds). When that kept a mix, the mix is timed
against the default once more; the whole model must be faster beyond noise, or every PrimFunc keeps the default
(:func:`keep_faster`). The step's result names each PrimFunc's decision (:func:`decision_text`).

The same functions run in the engine (``keep_tvm.py`` gives them its builder) and in exported scripts (copied
verbatim with :data:`KEEP_HELPERS`; :func:`script_measure` builds as the script builds).
"""

from __future__ import annotations

from typing import Any, Callable

#: Rounds of the in-place timing; each round takes :data:`KEEP_RUNS_PER_ROUND` samples of every variant (the order
#: of the variants rotating), after :data:`KEEP_WARMUP` untimed runs each: 40 paired samples per variant, each the
#: mean of the runs that fill :data:`KEEP_SAMPLE_MS` (instrumented, then as many plain).
KEEP_ROUNDS = 10
KEEP_RUNS_PER_ROUND = 4
KEEP_WARMUP = 20
KEEP_SAMPLE_MS = 5.0


def time_in_place(calls, sync, instrumented, rounds=10, per_round=4, warmup=20, min_ms=5.0):
    """Time variants of one model in rotating rounds. ``calls[i]()`` runs variant ``i`` once; ``instrumented(i,
    hook)`` sets (``hook`` a callback ``(name, before)``) or clears (``None``) variant ``i``'s VM instrument;
    ``sync()`` waits for the device. Returns per variant ``{"wall_us": [...], "funcs": {name: [µs per run, ...]}}``,
    every list ``rounds * per_round`` long, sample ``k`` of every variant measured in the same round (paired).
    A sample is the mean over as many runs as fill ``min_ms`` (at least one), so one preemption by another process
    does not make a sample many times too slow: ``funcs`` from instrumented runs (a PrimFunc called several times
    in one run counts its sum), ``wall_us`` from plain runs (no instrument: the model's own latency)."""
    import time

    out = [{"wall_us": [], "funcs": {}} for _ in calls]
    for call in calls:
        for _ in range(warmup):
            call()
    sync()

    def instrumented_sample(i):
        run, stack = {}, []

        def hook(name, before):
            sync()
            if before:
                stack.append(time.perf_counter())
            elif stack:
                run[name] = run.get(name, 0.0) + (time.perf_counter() - stack.pop()) * 1e6

        instrumented(i, hook)
        count, t0 = 0, time.perf_counter()
        try:
            while count == 0 or time.perf_counter() - t0 < min_ms / 1000.0:
                calls[i]()
                count += 1
        finally:
            instrumented(i, None)
        for name, us in run.items():
            out[i]["funcs"].setdefault(name, []).append(us / count)

    def plain_sample(i):
        count, t0 = 0, time.perf_counter()
        while count == 0 or time.perf_counter() - t0 < min_ms / 1000.0:
            calls[i]()
            sync()
            count += 1
        out[i]["wall_us"].append((time.perf_counter() - t0) * 1e6 / count)

    for r in range(rounds):
        for j in range(len(calls)):
            i = (r + j) % len(calls)
            for _ in range(per_round):
                instrumented_sample(i)
                plain_sample(i)
    return out


def judge_functions(names, default, tuned, compare):
    """Per PrimFunc of ``names`` (those the database gave a tuned schedule): its time in the model under the
    default and the tuned variant (``default``/``tuned``: :func:`time_in_place` entries) judged by ``compare(a_us,
    b_us)`` (a :meth:`~pipeline_model.latency_stats.Comparison.to_json` dict of b against a, paired). Returns
    ``[{name, default_us, tuned_us, verdict, ratio, low, high, kept}]``; ``kept`` is ``"tuned"`` only for
    verdict ``"faster"``, else ``"default"`` (``verdict`` ``"missing"`` when a variant never called it: a
    computation on the weights alone, lifted out of the run). A PrimFunc whose schedule packs a weight runs as
    ``<name>_prepacked`` in a timed variant (:func:`steady_state`: ``SplitLayoutRewritePreproc`` names it so),
    and is timed under that name: looked up under its own name only, every packed default schedule (ResNet-18's
    convolutions) was "not timed in the model" and its tuned rival never judged (issue 35)."""
    out = []
    for name in names:
        a = default["funcs"].get(name) or default["funcs"].get(name + "_prepacked") or []
        b = tuned["funcs"].get(name) or tuned["funcs"].get(name + "_prepacked") or []
        if len(a) != len(b) or not a:
            out.append({"name": name, "default_us": None, "tuned_us": None, "verdict": "missing", "ratio": None,
                        "low": None, "high": None, "kept": "default"})
            continue
        cmp = compare(a, b)
        out.append({"name": name, "default_us": sorted(a)[len(a) // 2], "tuned_us": sorted(b)[len(b) // 2],
                    "verdict": cmp["verdict"], "ratio": cmp["ratio"], "low": cmp["low"], "high": cmp["high"],
                    "kept": "tuned" if cmp["verdict"] == "faster" else "default"})
    return out


def format_us(us):
    """A latency for a result line: ``"850 µs"``, ``"1.80 ms"``, ``"?"``."""
    if us is None:
        return "?"
    return f"{us / 1000.0:.2f} ms" if us >= 1000.0 else f"{us:.1f} µs"


#: What each verdict means for the decision, in the result lines (English; the report translates these templates).
VERDICT_PHRASES = {
    "faster": "faster beyond noise: tuned kept",
    "slower": "slower beyond noise: default kept",
    "no_difference": "within noise: default kept",
    "too_few": "too few runs to tell: default kept",
    "missing": "not timed in the model: default kept",
    "same_build": "within noise: default kept",
}


def decision_text(d):
    """One line: ``"fused_matmul: tuned 1.80 ms vs default 2.00 ms, faster beyond noise: tuned kept"``."""
    phrase = VERDICT_PHRASES.get(d["verdict"], "default kept")
    return f"{d['name']}: tuned {format_us(d['tuned_us'])} vs default {format_us(d['default_us'])}, {phrase}"


def whole_text(w):
    """The whole model's line: ``"whole model: tuned 90.0 µs vs default 120.0 µs, faster beyond noise"``."""
    phrase = VERDICT_PHRASES.get(w["verdict"], "").split(":")[0] or w["verdict"]
    return f"whole model ({w['what']}): tuned {format_us(w['tuned_us'])} vs default {format_us(w['default_us'])}, {phrase}"


def _whole(what, default, tuned, compare):
    """The whole model's verdict (``compare`` over the runs' wall times) as a dict."""
    a, b = default["wall_us"], tuned["wall_us"]
    cmp = compare(a, b)
    return {"what": what, "default_us": sorted(a)[len(a) // 2], "tuned_us": sorted(b)[len(b) // 2],
            "verdict": cmp["verdict"], "ratio": cmp["ratio"], "low": cmp["low"], "high": cmp["high"]}


def with_functions(mod, source, names):
    """A copy of ``mod`` with the PrimFuncs ``names`` taken from ``source`` (same global names); ``mod`` itself
    when ``names`` is empty."""
    if not names:
        return mod
    out = mod.clone()
    for name in names:
        out.update_func(out.get_global_var(name), source[name])
    return out


def tuned_names(before, after):
    """PrimFuncs the database gave a schedule: scheduled in ``after``, not in ``before``."""
    import tvm

    def scheduled(func):
        return bool(func.attrs is not None and func.attrs.get("tirx.is_scheduled", False))

    names = {gv.name_hint: f for gv, f in before.functions_items() if isinstance(f, tvm.tirx.PrimFunc)}
    return sorted(gv.name_hint for gv, f in after.functions_items()
                  if isinstance(f, tvm.tirx.PrimFunc) and scheduled(f) and gv.name_hint in names
                  and not scheduled(names[gv.name_hint]))


def same_as_default(names, applied, default_built):
    """The PrimFuncs of ``names`` whose applied schedule is the default one (a seeded record of the app's rule won
    in isolation): nothing to time for them."""
    import tvm_ffi

    def bare(func):
        return func.without_attr("tirx.is_scheduled") if func.attrs is not None and "tirx.is_scheduled" in func.attrs else func

    return [n for n in names if tvm_ffi.structural_equal(bare(applied[n]), bare(default_built[n]))]


def keep_faster(mod, applied, schedule_default, measure, compare):
    """The module the apply step returns and its ``keep`` report. ``mod``: the step's input; ``applied``: it with
    the database applied; ``schedule_default(m)``: ``m`` with its unscheduled PrimFuncs given the default
    schedule; ``measure([m, ...])``: :func:`time_in_place` of those modules built; ``compare(a, b)``: the
    honest-numbers verdict of b against a as a dict. The result keeps the tuned PrimFuncs that won in place, and
    only when the model with them is faster beyond noise than the default; the others stay as in ``mod`` (the
    pipeline's dlight step gives them the default schedule). Report: ``{functions: [judge_functions entries],
    whole: [{what, default_us, tuned_us, verdict, ...}], kept_tuned, kept_default, lines}``."""
    names = tuned_names(mod, applied)
    report = {"functions": [], "whole": [], "kept_tuned": [], "kept_default": list(names), "lines": []}
    if not names:
        report["lines"].append("no PrimFunc got a tuned schedule: nothing to compare")
        return mod, report
    default_built = schedule_default(mod.clone())  # a copy: DLight's pass updates the module it is given
    same = same_as_default(names, applied, default_built)
    names = [n for n in names if n not in same]
    report["same"] = same
    if not names:
        report["kept_default"] = same
        report["lines"] = [f"{n}: the database's best is the default schedule itself" for n in same]
        return mod, report
    timed = measure([default_built, schedule_default(applied.clone())])
    decisions = judge_functions(names, timed[0], timed[1], compare)
    whole = _whole("every tuned schedule", timed[0], timed[1], compare)
    report["whole"].append(whole)
    kept = [d["name"] for d in decisions if d["kept"] == "tuned"]
    if kept and len(kept) < len(names):
        mixed = with_functions(mod, applied, kept)
        again = measure([default_built, schedule_default(mixed.clone())])
        whole = _whole("the kept tuned schedules", again[0], again[1], compare)
        report["whole"].append(whole)
    if kept and whole["verdict"] != "faster":
        for d in decisions:
            if d["kept"] == "tuned":
                d["kept"], d["overruled"] = "default", True
        kept = []
    report["functions"] = decisions
    report["kept_tuned"] = kept
    report["kept_default"] = [n for n in names if n not in kept] + same
    report["lines"] = [decision_text(d) + (" (overruled: the whole model is not faster beyond noise)"
                                           if d.get("overruled") else "") for d in decisions]
    report["lines"].extend(f"{n}: the database's best is the default schedule itself" for n in same)
    report["lines"].extend(whole_text(w) for w in report["whole"])
    return with_functions(mod, applied, kept), report


def steady_state(mod):
    """``mod`` as a deployed build runs it, to be timed: the weight packing its schedules mark
    (``meta_schedule.layout_rewrite_preproc``) split out (``relax.SplitLayoutRewritePreproc``) and every
    computation on weights alone lifted into ``<entry>_transform_params`` (``relax.LiftTransformParams``), the
    steps the bundled CPU pipelines run after the apply step; :func:`time_vms` runs that function once, outside
    the timing. Timed as it stood at the apply step, the default schedules repacked their weights at every call
    and the database's (unpacked) best looked faster: GPT-2 ``.onnx`` "whole model: tuned 612 us vs default
    1.02 ms, faster beyond noise", built 1.25x slower than the default (2026-12-06, docs/TUNING.md)."""
    from tvm import relax

    return relax.transform.LiftTransformParams()(relax.transform.SplitLayoutRewritePreproc()(mod))


def script_measure(mods):
    """Exported scripts only: build each module's :func:`steady_state` as the script builds (``compile_module``
    for ``TARGET``), on the script's seeded inputs, and :func:`time_in_place` them (the engine builds with its own
    builder)."""
    import tvm
    from tvm import relax

    dev = tvm.cpu(0) if TARGET.kind.name in ("llvm", "c") else tvm.device(TARGET.kind.name, 0)  # noqa: F821
    entry = entry_function(mods[0])  # noqa: F821 - defined by the exported script
    arrays, _described = make_arguments(mods[0], entry, None)  # noqa: F821 - defined by the exported script
    args = [tvm.runtime.tensor(a, dev) for a in arrays]
    steady = [steady_state(m) for m in mods]
    vms = [prepacked_vm(relax.VirtualMachine(compile_module(m, TARGET), dev), m) for m in steady]  # noqa: F821
    return time_vms(vms, entry, args, dev)


def time_vms(vms, entry, args, dev):
    """:func:`time_in_place` of the VMs ``vms`` (each running ``entry`` on the device arrays ``args``), every call
    timed through the VM's instrument. A VM whose ``entry`` was lifted (a ``PrepackedVM``: :func:`steady_state`)
    gets its weights transformed here, once: the timed calls run ``entry`` alone."""
    calls = []
    for vm in vms:
        if entry in (getattr(vm, "lifted", None) or {}):  # a PrepackedVM
            func, call_args = vm.vm[entry], vm.arguments(entry, args)
        else:
            func, call_args = vm[entry], args
        calls.append(lambda func=func, call_args=call_args: func(*call_args))

    def instrumented(i, hook):
        vms[i].set_instrument(None if hook is None else
                              (lambda func, symbol, before, ret, *a: hook(str(symbol), before) or 0))

    return time_in_place(calls, dev.sync, instrumented, KEEP_ROUNDS, KEEP_RUNS_PER_ROUND, KEEP_WARMUP,
                         KEEP_SAMPLE_MS)


def keep_wins_pass(rules):
    """Exported scripts only: the apply step's pass with ``keep_wins`` — the stock ``MetaScheduleApplyDatabase``
    pass (``pass_`` of the script's step) followed by :func:`keep_faster` against ``rules``' default schedule;
    prints each decision."""
    import tvm
    from tvm.s_tir import dlight

    def schedule_default(m):
        return dlight.ApplyDefaultSchedule(*rules)(m)

    def compare(a, b):
        return compare_runs(a, b, paired=True).to_json()  # noqa: F821 - copied with the script's helpers

    def wrap(apply_pass):
        @tvm.transform.module_pass(opt_level=0, name="MetaScheduleApplyDatabaseKeepWins")
        def keep(mod, _ctx):
            out, report = keep_faster(mod, apply_pass(mod), schedule_default, script_measure, compare)
            for line in report["lines"]:
                print(f"keep_wins: {line}")
            return out

        return keep

    return wrap


#: The helpers an exported apply step with ``keep_wins`` copies (after the latency statistics, :func:`stats_source`).
KEEP_HELPERS: tuple[Callable[..., Any], ...] = (
    time_in_place, judge_functions, format_us, decision_text, whole_text, _whole, with_functions,
    tuned_names, same_as_default, keep_faster, steady_state, script_measure, time_vms, keep_wins_pass)
KEEP_CONSTANTS = ("KEEP_ROUNDS", "KEEP_RUNS_PER_ROUND", "KEEP_WARMUP", "KEEP_SAMPLE_MS", "VERDICT_PHRASES")


def keep_sources() -> list[str]:
    """What an exported apply step with ``keep_wins`` copies, in order: the project's latency statistics
    (:mod:`pipeline_model.latency_stats`: ``compare_runs`` and what it calls, verbatim), this module's constants
    and :data:`KEEP_HELPERS`."""
    import inspect

    from pipeline_model import latency_stats as ls
    from pipeline_model.emit import helper_source

    stats = ["from dataclasses import asdict, dataclass\nimport math\nfrom typing import Any, Optional, Sequence\n",
             "".join(f"{n} = {getattr(ls, n)!r}\n" for n in ("FASTER", "SLOWER", "NO_DIFFERENCE", "SAME_BUILD",
                                                                "TOO_FEW", "MIN_REPEATS", "MIN_EFFECT", "LEVEL",
                                                                "RESAMPLES"))
             + "VERDICTS = (FASTER, SLOWER, NO_DIFFERENCE, SAME_BUILD, TOO_FEW)\n"]
    stats.extend(helper_source(f) for f in (ls.Summary, ls.summarize, ls.Comparison, ls.bootstrap_ratio_interval,
                                            ls.bootstrap_paired_interval, ls.compare_runs))
    module = inspect.getmodule(keep_faster)
    consts = "".join(f"{n} = {getattr(module, n)!r}\n" for n in KEEP_CONSTANTS)
    return [*stats, consts, *(helper_source(f) for f in KEEP_HELPERS)]
