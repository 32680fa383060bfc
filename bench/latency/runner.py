"""The bench's two phases.

1. **Engine** (:func:`engine_phase`): every model is written as the files a user opens (``.pt2``, dynamo
   ``.onnx``; the small models also as their ``.py`` source) and each file goes through the app's engine: the
   model as imported built by ``tvm.compile``'s default ("TVM default"), the app's pipelines (app default =
   ``cpu_build.json``, optional extra pipelines, variants, the tuned column) run, built and exported.
   Nothing is timed there; the engine is closed before phase 2 (its thread pools spin after work).
2. **Timing** (:func:`timing_phase`), per model, in this process: the exported TVM modules, PyTorch eager,
   ``torch.compile`` and ONNX Runtime on the same inputs and thread count; every column checked against
   ``tvm.compile``'s default build and PyTorch; then every system timed interleaved
   (:func:`bench.latency.timing.interleaved`), with the load average before and after.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Optional

from bench.latency import appside, docs, exporting, models, systems, timing


def _prepare(doc: Any, label: str, model_path: str, target: dict[str, Any], work_dir: str, trials: Optional[int],
             tag: str) -> Any:
    """A copy of ``doc`` on ``model_path`` and the host ``target``, tuning work in ``work_dir``."""
    doc = doc.clone()
    drop = {"mcpu"} if label == "no_mcpu" else set()
    doc.model, doc.path = model_path, None
    doc.target = {k: v for k, v in target.items() if k not in drop}
    doc.name = f"{label} on {tag}"
    docs.set_tuning(doc, trials, os.path.join(work_dir, f"{tag}.{label}"))
    return doc


def model_files(name: str, model: Any, inputs: tuple[Any, ...], formats: list[str], folder: str) -> dict[str, str]:
    """Write ``name`` in every format of ``formats`` (plus ``onnx`` for ONNX Runtime); ``{format: path}``.
    ``py``: the small model's source (loaded by the app's PyTorch ``.py`` importer)."""
    paths = {}
    for fmt in dict.fromkeys([*formats, "onnx"]):
        if fmt == "py":
            if name not in models.MODELS_SOURCE:
                continue
            paths[fmt] = os.path.join(folder, f"{name}.py")
            with open(paths[fmt], "w", encoding="utf-8") as fh:
                fh.write(models.MODELS_SOURCE[name])
        else:
            paths[fmt] = exporting.export(model, inputs, folder, name, fmt)
    return paths


def _engine_file(client: Any, plan: Any, name: str, fmt: str, path: str) -> dict[str, Any]:
    """Every app-side column of one model file (see :func:`engine_phase`)."""
    tag = f"{name}.{fmt}"
    out = os.path.join(plan.tmp, "lib", tag)

    def prep(doc: Any, label: str) -> Any:
        return _prepare(doc, label, path, plan.target, plan.work_root, plan.trials, tag)

    row: dict[str, Any] = {"model": name, "format": fmt, "path": path, "app": {}}
    tvm_doc = prep(plan.docs["cpu_build"], "baseline")
    row["tvm"] = appside.timed(f"{tag} TVM default", lambda: appside.tvm_default(
        client, tvm_doc, os.path.join(out, "tvm_default")))
    for label in plan.app_labels:
        doc = prep(plan.doc_for(label), label)
        row["app"][label] = appside.timed(f"{tag} {label}", lambda doc=doc, label=label: appside.app_column(
            client, doc, f"{tag} {label}", os.path.join(out, label)))
        if label == "app default":
            _build_rounds(client, plan, row, tvm_doc, doc, tag)
    if plan.tuned_minutes.get(name):
        from bench.latency.tuned import tuned_column

        minutes = plan.tuned_minutes[name]
        row["app"]["tuned"] = appside.timed(f"{tag} app tuned ({minutes:g} min)", lambda: tuned_column(
            client, prep, plan.docs[docs.BEST_TUNED], f"{tag} tuned", minutes,
            os.path.join(plan.work_root, f"{tag}.best"), os.path.join(out, "tuned"), plan.opts))
    return row


def _build_rounds(client: Any, plan: Any, row: dict[str, Any], tvm_doc: Any, app_doc: Any, tag: str) -> None:
    """More build rounds of the TVM default and app default columns (``--build-rounds``), into their
    ``build_rounds`` (seconds per round, the columns' own builds first)."""
    tvm_col, app_col = row["tvm"], row["app"]["app default"]
    if plan.build_rounds < 2 or "build_s" not in tvm_col or "build_s" not in app_col:
        return
    try:
        tvm_col["build_rounds"], app_col["build_rounds"] = appside.build_rounds(
            client, tvm_doc, app_doc, plan.build_rounds, (tvm_col["build_s"], app_col["build_s"]))
    except Exception as exc:  # noqa: BLE001 - the table keeps the first round; the error is printed
        print(f"  {tag} build rounds: ERROR {str(exc)[:300]}", file=sys.stderr, flush=True)
        return
    print(f"  {tag} build rounds (app / TVM s): " + ", ".join(
        f"{a:.2f}/{t:.2f}" for a, t in zip(app_col["build_rounds"], tvm_col["build_rounds"])),
        file=sys.stderr, flush=True)


def engine_phase(plan: Any) -> list[dict[str, Any]]:
    """Phase 1: export every model, run every file through the engine; one row per (model, format)."""
    rows = []
    with appside.plan_client(plan) as client:
        for name in plan.models:
            model, inputs = models.make_model(name)
            t0 = time.perf_counter()
            paths = model_files(name, model, inputs, plan.formats, plan.tmp)
            plan.onnx[name] = paths["onnx"]
            print(f"{name}: exported {', '.join(paths)} in {time.perf_counter() - t0:.0f} s", file=sys.stderr,
                  flush=True)
            for fmt in plan.formats:
                if fmt in paths:
                    rows.append(_engine_file(client, plan, name, fmt, paths[fmt]))
    return rows


def _tvm_systems(rows: list[dict[str, Any]], inputs: tuple[Any, ...]) -> list[tuple[str, Any, str]]:
    """``(system name, System, format)`` of every built TVM column of one model's rows."""
    out = []
    for row in rows:
        fmt = row["format"]
        cols = [("TVM default", row["tvm"]), *(row["app"].items())]
        for label, col in cols:
            if "lib" in col:
                out.append((f"{fmt}:{label}", systems.tvm_system(f"{row['model']}.{fmt} {label}", col["lib"],
                                                                 inputs), fmt))
    return out


def _check(all_systems: dict[str, Any], ref_torch: list[Any], tvm_refs: dict[str, list[Any]],
           fmt_of: dict[str, str], tol: float) -> dict[str, dict[str, Any]]:
    """Each system's outputs against PyTorch and against ``tvm.compile``'s default build (same format; the
    first format's for the systems outside TVM): ``{name: {"vs_torch", "vs_tvm", "ok"}}``."""
    first = next(iter(tvm_refs.values()), None)
    checks = {}
    for name, system in all_systems.items():
        got = system.outputs()
        tvm_ref = tvm_refs.get(fmt_of.get(name, ""), first)
        vs_torch = systems.relative_error(got, ref_torch)
        vs_tvm = systems.relative_error(got, tvm_ref) if tvm_ref is not None else float("nan")
        checks[name] = {"vs_torch": vs_torch, "vs_tvm": vs_tvm,
                        "ok": vs_torch <= tol and (tvm_ref is None or vs_tvm <= tol)}
    return checks


def timing_phase(plan: Any, rows: list[dict[str, Any]], name: str) -> dict[str, Any]:
    """Phase 2 for one model: build its in-process systems, check them, time them interleaved."""
    mine = [r for r in rows if r["model"] == name]
    model, inputs = models.make_model(name)
    t0 = time.perf_counter()
    found = {"PyTorch eager": systems.torch_eager(model, inputs)}
    if not plan.opts.no_compile:
        found["torch.compile"] = systems.torch_compiled(model, inputs)
    compile_s = time.perf_counter() - t0
    found["ONNX Runtime"] = systems.onnxruntime_session(plan.onnx[name], inputs, plan.threads)
    fmt_of = {}
    for sys_name, system, fmt in _tvm_systems(mine, inputs):
        found[sys_name], fmt_of[sys_name] = system, fmt
    ref = found["PyTorch eager"].outputs()
    tvm_refs = {f: found[f"{f}:TVM default"].outputs() for f in plan.formats if f"{f}:TVM default" in found}
    checks = _check(found, ref, tvm_refs, fmt_of, plan.opts.tol)
    samples, (load_before, load_after) = _timed(plan, found)
    print(f"{name}: timed {len(found)} systems x {plan.opts.repeat} rounds (torch.compile first call "
          f"{compile_s:.0f} s); load {load_before} -> {load_after}", file=sys.stderr, flush=True)
    for sys_name in found:
        st = timing.summary(samples[sys_name])
        c = checks[sys_name]
        print(f"  {sys_name:28s} {st['min'] / 1000:9.3f} / {st['median'] / 1000:9.3f} ms  "
              f"vs PyTorch {c['vs_torch']:.1e}, vs TVM default {c['vs_tvm']:.1e}: {'pass' if c['ok'] else 'FAIL'}",
              file=sys.stderr, flush=True)
    result = {"samples": samples, "checks": checks, "load": (load_before, load_after)}
    if getattr(plan.opts, "busy", False):
        result["busy"] = _busy_timing(plan, found, name)
    return result


def _busy_timing(plan: Any, found: dict[str, Any], name: str) -> dict[str, Any]:
    """``--busy``: the same interleaved timing of ``found`` again with a competing process pinned to one core
    (:mod:`bench.latency.busy`); its samples and load, for the table's second part."""
    from bench.latency.busy import busy_core, competitor

    core = busy_core()
    with competitor(core):
        samples, load = _timed(plan, found)
    print(f"{name}: timed again with a competing process on core {core}; load {load[0]} -> {load[1]}",
          file=sys.stderr, flush=True)
    for sys_name in found:
        st = timing.summary(samples[sys_name])
        print(f"  {sys_name:28s} {st['min'] / 1000:9.3f} / {st['median'] / 1000:9.3f} ms (busy)", file=sys.stderr,
              flush=True)
    return {"samples": samples, "load": load, "core": core}


def _timed(plan: Any, found: dict[str, Any]) -> tuple[dict[str, list[float]], tuple[str, str]]:
    """``found`` timed interleaved (``--repeat`` rounds) and the load average before and after."""
    load_before = timing.loadavg()
    samples = timing.interleaved({n: s.run for n, s in found.items()}, plan.opts.repeat, plan.opts.sample_ms)
    return samples, (load_before, timing.loadavg())
