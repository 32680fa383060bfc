#!/usr/bin/env python3
"""Engine benchmarks (issue 2, "Speed"): prints figures and ratios, asserts nothing.

(a) Engine overhead per step over TVM's own cost, on ``builtin:transformer`` with a 20-step pipeline:
    TVM's own cost = for every step, building the pass, applying it and ``mod.script()``, measured in
    this process; engine cost = wall time of ``EngineClient.run`` seen by the client (pass, instrument,
    structural equality, caching, JSON, pipe), with the engine's cache and the client's script cache
    emptied before each run so every step really runs. Target: <= 1.15x.
(b) Re-running the pipeline after an edit of its last step (the 19 earlier steps come from the cache)
    vs TVM's cost of that one step (pass + script). Target: <= 1.2x.
(c) Issue 10, "the engine stays light": the 5-step pipeline (LegalizeOps, AnnotateTIROpPattern, FuseOps,
    FuseTIR, DeadCodeElimination) on ``builtin:decoder`` (32 layers) as the GUI runs it (no TVMScript
    printed: ``scripts=False``; texts come on demand), engine caches emptied, vs the same passes in plain
    TVM (make pass + apply, nothing printed) in this process, same run. Target: <= 1.1x. The run with
    every step's text printed and sent (``scripts=True``, the CLI's ``--emit-ir``) is shown beside it.

Usage: ``.venv/bin/python -m bench.bench_engine [--repeat N] [--only c]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from pipeline_model.document import PipelineDocument, Step
from pipeline_model.engine.client import EngineClient

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MODEL = "builtin:transformer"
TARGET = {"kind": "llvm"}
DLIGHT_CPU = {"rules": ["cpu.GEMV", "cpu.Reduction"]}
STEPS: list[tuple[str, dict]] = [
    ("relax.CanonicalizeBindings", {}),
    ("relax.FoldConstant", {}),
    ("relax.DeadCodeElimination", {}),
    ("relax.LegalizeOps", {}),
    ("relax.AnnotateTIROpPattern", {}),
    ("relax.FoldConstant", {}),
    ("relax.FuseOps", {}),
    ("relax.FuseTIR", {}),
    ("relax.DeadCodeElimination", {}),
    ("relax.RemoveUnusedOutputs", {}),
    ("relax.CanonicalizeBindings", {}),
    ("relax.EliminateCommonSubexpr", {}),
    ("relax.RewriteDataflowReshape", {}),
    ("relax.ToNonDataflow", {}),
    ("relax.RemovePurityChecking", {}),
    ("relax.CallTIRRewrite", {}),
    ("relax.StaticPlanBlockMemory", {}),
    ("relax.KillAfterLastUse", {}),
    ("relax.LowerAllocTensor", {}),
    ("dlight.ApplyDefaultSchedule", DLIGHT_CPU),
]


def tvm_own_cost(steps: list[tuple[str, dict]], repeat: int) -> tuple[float, list[float], list]:
    """Median ms of (make pass + apply + script) summed over ``steps``; per-step medians; modules."""
    import tvm

    from pipeline_model.importers.load_tvm import load_model
    from pipeline_model.passkinds import catalogue_tvm

    target = tvm.target.Target(TARGET)
    base = load_model(MODEL).mod
    totals, per_step = [], [[] for _ in steps]
    modules = []
    for _ in range(repeat):
        mod = base
        modules = [mod]
        total = 0.0
        for i, (pass_id, params) in enumerate(steps):
            t0 = time.perf_counter()
            the_pass = catalogue_tvm.make_pass(pass_id, params, catalogue_tvm.PassBuildContext(target=TARGET))
            with target, tvm.transform.PassContext(opt_level=3):
                mod = the_pass(mod.clone())
            mod.script()
            ms = (time.perf_counter() - t0) * 1000.0
            per_step[i].append(ms)
            total += ms
            modules.append(mod)
        totals.append(total)
    return statistics.median(totals), [statistics.median(v) for v in per_step], modules


def one_step_cost(before_mod, pass_id: str, params: dict, repeat: int) -> float:
    """Median ms of TVM running one step (make pass + apply + script) on ``before_mod``."""
    import tvm

    from pipeline_model.passkinds import catalogue_tvm

    target = tvm.target.Target(TARGET)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        the_pass = catalogue_tvm.make_pass(pass_id, params, catalogue_tvm.PassBuildContext(target=TARGET))
        with target, tvm.transform.PassContext(opt_level=3):
            mod = the_pass(before_mod.clone())
        mod.script()
        times.append((time.perf_counter() - t0) * 1000.0)
    return statistics.median(times)


def doc_for(steps: list[tuple[str, dict]], model: str = MODEL) -> PipelineDocument:
    return PipelineDocument(model=model, target=dict(TARGET), steps=[Step(p, dict(a)) for p, a in steps])


DECODER = "builtin:decoder"
DECODER_STEPS: list[tuple[str, dict]] = [
    ("relax.LegalizeOps", {}),
    ("relax.AnnotateTIROpPattern", {}),
    ("relax.FuseOps", {}),
    ("relax.FuseTIR", {}),
    ("relax.DeadCodeElimination", {}),
]


def plain_tvm_passes(model: str, steps: list[tuple[str, dict]], repeat: int) -> tuple[float, list[float]]:
    """Median ms of the passes alone in plain TVM (make pass + apply; nothing printed, no copy, no
    comparison); per-step medians."""
    import tvm

    from pipeline_model.importers.load_tvm import load_model
    from pipeline_model.passkinds import catalogue_tvm

    target = tvm.target.Target(TARGET)
    base = load_model(model).mod
    totals, per_step = [], [[] for _ in steps]
    for _ in range(repeat):
        mod = base
        total = 0.0
        for i, (pass_id, params) in enumerate(steps):
            t0 = time.perf_counter()
            the_pass = catalogue_tvm.make_pass(pass_id, params, catalogue_tvm.PassBuildContext(target=TARGET))
            with target, tvm.transform.PassContext(opt_level=3):
                mod = the_pass(mod)
            ms = (time.perf_counter() - t0) * 1000.0
            per_step[i].append(ms)
            total += ms
        totals.append(total)
    return statistics.median(totals), [statistics.median(v) for v in per_step]


def engine_run_cost(client: EngineClient, doc: PipelineDocument, repeat: int, scripts: bool) -> tuple[float, float]:
    """Median wall ms (seen by the client) and engine-side ms of a run with the module cache emptied
    (the loaded model kept), texts printed and sent only with ``scripts``."""
    walls, inner = [], []
    for _ in range(repeat):
        client.request("cache_clear", {"models": False})
        client.forget_scripts()
        t0 = time.perf_counter()
        result = client.run(doc, scripts=scripts)
        walls.append((time.perf_counter() - t0) * 1000.0)
        inner.append(result.total_ms)
        assert result.ok, result.error or [s.error for s in result.steps if s.error]
        assert not any(s.cached for s in result.steps)
    return statistics.median(walls), statistics.median(inner)


def bench_light(client: EngineClient, repeat: int) -> float:
    """(c): the 5-step pipeline on the 32-layer decoder, engine (no texts) / plain TVM; prints figures."""
    doc = doc_for(DECODER_STEPS, DECODER)
    print(f"\n(c) {DECODER}, {len(DECODER_STEPS)} steps ({', '.join(p.split('.')[-1] for p, _ in DECODER_STEPS)}), "
          f"median of {repeat}; load average before {_load()}")
    client.run(doc, scripts=False)  # warm-up: the model load and first-use costs
    plain_tvm_passes(DECODER, DECODER_STEPS, 1)
    # Interleaved so that a change of the machine's load hits both sides alike.
    tvm_total, tvm_steps, wall, inner, wall_txt = [], [], [], [], []
    for _ in range(repeat):
        t, steps = plain_tvm_passes(DECODER, DECODER_STEPS, 1)
        tvm_total.append(t)
        tvm_steps.append(steps)
        w, i = engine_run_cost(client, doc, 1, scripts=False)
        wall.append(w)
        inner.append(i)
        wall_txt.append(engine_run_cost(client, doc, 1, scripts=True)[0])
    tvm_ms, wall_ms, inner_ms, txt_ms = (statistics.median(v) for v in (tvm_total, wall, inner, wall_txt))
    per_step = [statistics.median(col) for col in zip(*tvm_steps)]
    print("    plain TVM, the passes alone:                   "
          f"{tvm_ms:8.1f} ms  (" + ", ".join(f"{ms:.0f}" for ms in per_step) + " ms)")
    print(f"    engine run, wall time seen by the client:      {wall_ms:8.1f} ms  (inside the engine {inner_ms:.1f} ms)")
    print(f"    engine run printing and sending every text:    {txt_ms:8.1f} ms  ({txt_ms / tvm_ms:.3f}x)")
    ratio = wall_ms / tvm_ms
    print(f"    ratio engine / plain TVM: {ratio:.3f}x   (target <= 1.1x)  {'OK' if ratio <= 1.1 else 'OVER'}")
    print(f"    load average after {_load()}")
    return ratio


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def engine_cold_cost(client: EngineClient, steps: list[tuple[str, dict]], repeat: int) -> tuple[float, float]:
    """Median wall ms of a full run with empty caches, and the median of the engine's own total_ms."""
    doc = doc_for(steps)
    walls, inner = [], []
    for _ in range(repeat):
        client.request("cache_clear", {"models": False})
        client.forget_scripts()
        t0 = time.perf_counter()
        result = client.run(doc)
        walls.append((time.perf_counter() - t0) * 1000.0)
        inner.append(result.total_ms)
        assert result.ok, result.error or [s.error for s in result.steps if s.error]
        assert not any(s.cached for s in result.steps)
    return statistics.median(walls), statistics.median(inner)


def engine_edit_last_cost(client: EngineClient, steps: list[tuple[str, dict]], edited_last: tuple[str, dict],
                          repeat: int) -> float:
    """Median wall ms of re-running after the last step was edited (earlier steps cached)."""
    doc = doc_for(steps)
    assert client.run(doc).ok  # warm the prefix
    edited = doc_for(steps[:-1] + [edited_last])
    walls = []
    for _ in range(repeat):
        first = client.run(edited)
        last_key = first.steps[-1].snapshot_key
        # Forget the edited step's result (engine and client) so the next run really re-runs it.
        client.request("cache_clear", {"keys": [last_key]})
        client.forget_scripts([last_key])
        t0 = time.perf_counter()
        result = client.run(edited)
        walls.append((time.perf_counter() - t0) * 1000.0)
        assert result.ok and all(s.cached for s in result.steps[:-1]) and not result.steps[-1].cached
        client.request("cache_clear", {"keys": [last_key]})
        client.forget_scripts([last_key])
    return statistics.median(walls)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--only", choices=("c",), help="run part (c) only")
    args = parser.parse_args()
    repeat = max(3, args.repeat)

    client = EngineClient()
    try:
        info = client.ping()
        print(f"engine: tvm {info['tvm']}, tvm_ffi {info['tvm_ffi']}, pid {info['pid']}; {os.cpu_count()} CPUs")
        if args.only == "c":
            bench_light(client, repeat)
            return 0
        client.run(doc_for(STEPS))  # warm-up: imports, catalogue, first-use costs
        tvm_own_cost(STEPS, 1)

        # (a)
        tvm_total, tvm_steps, modules = tvm_own_cost(STEPS, repeat)
        wall, inner = engine_cold_cost(client, STEPS, repeat)
        n = len(STEPS)
        print(f"\n(a) {MODEL}, {n}-step pipeline, every step run (caches emptied), median of {repeat}")
        print(f"    TVM's own cost (make pass + apply + script()): {tvm_total:8.1f} ms  ({tvm_total / n:.2f} ms/step)")
        print(f"    engine run, wall time seen by the client:      {wall:8.1f} ms  ({wall / n:.2f} ms/step)")
        print(f"    engine run, time inside the engine:            {inner:8.1f} ms")
        ratio_a = wall / tvm_total
        print(f"    ratio engine / TVM: {ratio_a:.3f}x   (target <= 1.15x)  {'OK' if ratio_a <= 1.15 else 'OVER'}")

        # (b)
        print(f"\n(b) re-run after an edit of the last step ({n - 1} earlier steps cached), median of {repeat}")
        ratios = []
        variants = [
            ("dlight.ApplyDefaultSchedule", {"rules": ["cpu.Reduction", "cpu.GEMV"]}),
            ("relax.DeadCodeElimination", {}),
        ]
        for pass_id, params in variants:
            one = one_step_cost(modules[-2], pass_id, params, repeat)
            rerun = engine_edit_last_cost(client, STEPS, (pass_id, params), repeat)
            ratio = rerun / one
            ratios.append(ratio)
            print(f"    last step -> {pass_id} {params or ''}")
            print(f"      TVM cost of that one step (make + apply + script()): {one:7.2f} ms")
            print(f"      engine re-run of the whole pipeline:                 {rerun:7.2f} ms")
            print(f"      ratio: {ratio:.3f}x   (target <= 1.2x)  {'OK' if ratio <= 1.2 else 'OVER'}")
        if args.only is None:
            bench_light(client, repeat)
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
