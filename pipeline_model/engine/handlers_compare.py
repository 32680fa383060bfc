"""Engine command ``compare``: build several modules (pipelines, snapshots, the model as loaded), run them on
the same inputs, time and check them, and diff their final IRs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from pipeline_model.engine.build.inputs import PreparedInputs, prepare_inputs
from pipeline_model.engine.build.measure import measure_resolved, output_stats, time_together
from pipeline_model.engine.build.reference import reference_outputs, tvm_check
from pipeline_model.engine.build.remote import one_device
from pipeline_model.engine.build.requests import check_settings, resolve_module
from pipeline_model.engine.handler_registry import handler
from pipeline_model.latency_stats import FASTER, compare_runs
from pipeline_model.scriptlib.functions import BuildError, entry_function
from pipeline_model.scriptlib.outputs import compare_outputs

if TYPE_CHECKING:  # the worker imports this module; only type checkers import it back
    from pipeline_model.engine.context import WorkerContext


def _ir_summary(mod: Any) -> str:
    """``mod``'s TVMScript, or "" when it cannot be printed (no diff for it)."""
    try:
        return str(mod.script())
    except Exception:  # noqa: BLE001 - a module that cannot be printed: no diff for it
        return ""


def _final_ir_diffs(scripts: list[str]) -> list[dict[str, Any]]:
    """The diff of the final IRs of every pair of modules (those that printed)."""
    from pipeline_model import diff as diff_mod

    diffs = []
    for i in range(len(scripts)):
        for j in range(i + 1, len(scripts)):
            if not scripts[i] or not scripts[j]:
                continue
            d = diff_mod.diff_snapshots(scripts[i], scripts[j])
            diffs.append({"a": i, "b": j, "identical": not d.changed, "stats": d.stats(),
                          "functions": [{"name": f.name, "status": f.status, "added": f.added_lines,
                                         "removed": f.removed_lines}
                                        for f in d.functions if f.status != "unchanged" and f.is_function]})
    return diffs


def _same_build(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two built rows are the same build: same target and the same module after the Relax pipeline."""
    return bool(a.get("fingerprint")) and a.get("fingerprint") == b.get("fingerprint") and a["target"] == b["target"]


def _versus(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """``b`` against ``a`` (:func:`pipeline_model.latency_stats.compare_runs` over their repeats), as JSON."""
    paired = bool(a["latency"].get("interleaved") and b["latency"].get("interleaved"))
    return compare_runs(a["latency"]["runs_us"], b["latency"]["runs_us"], same_build=_same_build(a, b),
                        paired=paired).to_json()


def _judge_rows(rows: list[dict[str, Any]]) -> tuple[Optional[int], bool]:
    """Set ``vs_first`` and ``significant`` on every timed row after the first; return the fastest row by
    median and whether it is significantly faster than every other timed row that is not the same build
    (``best_clear``)."""
    timed = [r for r in rows if r.get("latency")]
    first = rows[0] if rows and rows[0].get("latency") else None
    for row in rows[1:]:
        row["vs_first"] = _versus(first, row) if first is not None and row.get("latency") else None
        row["significant"] = bool(row["vs_first"] and row["vs_first"]["significant"])
    if not timed:
        return None, False
    best = min(timed, key=lambda r: r["latency"]["median_us"])
    others = [r for r in timed if r is not best and not _same_build(r, best)]
    clear = bool(others) and all(_versus(r, best)["verdict"] == FASTER for r in others)
    return rows.index(best), clear


def _compare_many(args: dict, ctx: WorkerContext) -> dict:
    """``compare`` with ``modules``: build each, run on the same inputs, time them in turn, check, diff the
    final IRs, and judge each against the first (:mod:`pipeline_model.latency_stats`)."""
    specs = list(args.get("modules") or [])
    if len(specs) < 2:
        raise BuildError("compare: give at least two modules")
    func_name = args.get("function")
    prepared: Optional[PreparedInputs] = None
    chk = check_settings(args)
    ref_outputs: Optional[list[np.ndarray]] = None
    ref_label = ""
    rows: list[dict[str, Any]] = []
    built: list[dict[str, Any]] = []
    scripts: list[str] = []
    for i, spec in enumerate(specs):
        spec = dict(spec or {})
        resolved = resolve_module(spec, ctx)
        mod, loaded, target, key = resolved.mod, resolved.loaded, resolved.target, resolved.key
        label = str(spec.get("label") or resolved.label)
        fname = entry_function(mod, func_name)
        if prepared is None:
            prepared = prepare_inputs(mod, fname, loaded, args.get("inputs"))
            func_name = fname
            if chk is not None:
                ref_outputs, ref_label = reference_outputs(loaded, fname, prepared.for_reference(loaded, fname), ctx)
        try:
            res = measure_resolved(resolved, fname, prepared.for_module(mod, fname), args.get("bench", {}), ctx,
                                   f"{i + 1}/{len(specs)}: {label}", time_later=True)
        except BuildError as exc:
            rows.append({"label": label, "key": key, "target": target, "error": str(exc), "build_ms": None,
                         "latency": None, "outputs": [], "check": None, "fingerprint": ""})
            scripts.append("")
            continue
        row = {"label": label, "key": key, "target": target, "device": res["device"], "build_ms": res["build_ms"],
               "latency": None, "outputs": output_stats(res["outputs"]), "check": None, "error": None,
               "fingerprint": res["fingerprint"]}
        if chk is not None and ref_outputs is not None:
            row["check"] = tvm_check(res["outputs"], ref_outputs, check_settings(args, mod, loaded, res["outputs"]) or chk,
                                    ref_label)
        rows.append(row)
        built.append(res)
        res["row"] = row
        scripts.append(_ir_summary(mod))
    time_together(built, ctx)
    for res in built:
        res["row"]["latency"] = res["latency"]
    best, clear = _judge_rows(rows)
    return {"function": func_name, "arguments": prepared.described if prepared else None, "rows": rows,
            "diffs": _final_ir_diffs(scripts), "best": best, "best_clear": clear}


@handler("compare")
def handle_compare(args: dict, ctx: WorkerContext) -> dict:
    """Build modules, run them on the same inputs and compare latencies (and, with ``modules``, more).

    Two-module form: ``a`` and ``b`` (each a module request like ``build_run``'s: ``document``, ``base_dir``,
    ``key``, ``baseline``, ``target``), ``inputs``, ``bench``, ``check`` (compare ``b`` against ``a``);
    ``speedup`` = latency(a) / latency(b) (ratio of medians); ``comparison``: b against a
    (:class:`pipeline_model.latency_stats.Comparison` as JSON: ratio, interval, verdict, significant;
    verdict ``same_build`` when both compile to the same module). The modules are timed in turn, in rotating
    rounds after warming up, so a change of load falls on both.
    Many-module form: ``modules`` (a list of such requests, each with an optional ``label``), ``inputs``,
    ``bench``, ``check``: reply ``{"function", "arguments", "rows": [{label, key, target, device, build_ms,
    latency, outputs, check (vs the model as loaded), error, fingerprint, and after the first: vs_first
    (comparison against the first row), significant}], "diffs": [{a, b, added, removed, identical,
    functions}] (final IR of every pair, :func:`pipeline_model.diff.diff_scripts`), "best": index of the
    fastest by median, "best_clear": whether it is significantly faster than every other}``. A module that fails to build gets its ``error``; the others still run.
    """
    with one_device():  # on an RPC device, every module of the comparison runs on the same one
        return _compare_many(args, ctx) if args.get("modules") is not None else _compare_two(args, ctx)


def _compare_two(args: dict, ctx: WorkerContext) -> dict:
    """``compare`` with ``a`` and ``b`` (see :func:`handle_compare`)."""
    sides = []
    prepared: Optional[PreparedInputs] = None
    func_name = None
    for side in ("a", "b"):
        spec = dict(args.get(side) or {})
        if not spec:
            raise BuildError(f"compare: module {side!r} is missing")
        resolved = resolve_module(spec, ctx)
        mod, loaded, target, label = resolved.mod, resolved.loaded, resolved.target, resolved.label
        func_name = entry_function(mod, args.get("function") or func_name)
        if prepared is None:
            prepared = prepare_inputs(mod, func_name, loaded, args.get("inputs"))
        res = measure_resolved(resolved, func_name, prepared.for_module(mod, func_name), args.get("bench", {}),
                               ctx, f"{side}: {label}", time_later=True)
        sides.append((label, target, res))
    time_together([res for _l, _t, res in sides], ctx)
    (la, ta, ra), (lb, tb, rb) = sides
    out: dict[str, Any] = {"function": func_name, "arguments": prepared.described if prepared else None}
    for name, label, target, res in (("a", la, ta, ra), ("b", lb, tb, rb)):
        out[name] = {"label": label, "target": target, "device": res["device"], "build_ms": res["build_ms"],
                     "latency": res["latency"], "outputs": output_stats(res["outputs"]),
                     "fingerprint": res["fingerprint"]}
    out["speedup"] = ra["latency"]["median_us"] / rb["latency"]["median_us"]
    out["comparison"] = _versus(out["a"], out["b"])
    chk = check_settings(args)
    if chk is not None:
        out["check"] = compare_outputs(rb["outputs"], ra["outputs"], chk["rtol"], chk["atol"], chk["scale"])
    return out
