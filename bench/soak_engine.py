#!/usr/bin/env python3
"""Engine soak (issue 9, "Engine memory is flat"): prints figures, asserts nothing.

N engine runs of a fusion pipeline on ``builtin:mlp`` with an edit before each (a step parameter
toggled), and the engine's module cache emptied before each run (``cache_clear`` with the loaded
model kept), so every step really runs — the worst case for memory. Prints the engine's RSS (its
whole process tree) after warm-up and at the end, its growth in % (goal: < 10 %), and the median run
time of the first and the last 50 runs, with the load average.

Usage: ``.venv/bin/python -m bench.soak_engine [--runs 1000] [--warmup 50]``
(run from the repository root, or with the repository on ``PYTHONPATH``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from pipeline_model.document import PipelineDocument, Step
from pipeline_model.engine.client import EngineClient


def pipeline(i: int) -> PipelineDocument:
    """The MLP fusion pipeline with run ``i``'s edit (FuseOps' level toggled)."""
    return PipelineDocument(model="builtin:mlp", target={"kind": "llvm"}, steps=[
        Step("relax.LegalizeOps"), Step("relax.AnnotateTIROpPattern"),
        Step("relax.FuseOps", {"fuse_opt_level": 1 + i % 2}), Step("relax.FuseTIR"),
        Step("relax.DeadCodeElimination"),
    ])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--warmup", type=int, default=50)
    args = ap.parse_args()
    client = EngineClient()
    try:
        client.ping()
        times: list[float] = []
        rss: list[int] = []
        for i in range(args.runs):
            client.request("cache_clear", {"models": False})
            client.forget_scripts()
            t0 = time.perf_counter()
            result = client.run(pipeline(i))
            times.append((time.perf_counter() - t0) * 1000.0)
            if not result.ok:
                print(f"run {i}: failed: {result.error or result.steps[result.failed_index].error}")
                return 1
            rss.append(client.engine_rss())
            if (i + 1) % 100 == 0:
                print(f"  runs {i - 98}..{i + 1}: RSS {rss[-1] / 2**20:.1f} MiB, median run "
                      f"{statistics.median(times[-100:]):.1f} ms, load {os.getloadavg()[0]:.2f}", flush=True)
        warm = min(args.warmup, len(rss) - 1)
        start, end = rss[warm], rss[-1]
        k = min(50, max(1, len(times) // 4))
        first = statistics.median(times[warm:warm + k])
        last = statistics.median(times[-k:])
        print(f"runs: {args.runs} (warm-up {warm})   load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"engine RSS after warm-up: {start / 2**20:.1f} MiB   at the end: {end / 2**20:.1f} MiB   "
              f"growth: {(end - start) / start * 100:+.1f} %  (goal < 10 %)")
        print(f"median run time, runs {warm}..{warm + k}: {first:.1f} ms   last {k} runs: {last:.1f} ms   "
              f"ratio {last / first:.2f}")
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
