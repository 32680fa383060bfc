#!/usr/bin/env python3
"""Workspace soak (issue 20, "a flat engine"): prints figures, asserts nothing.

N runs the way the GUI makes them: each run is a *different* edit of one of several pipelines on one of
several models (a step's parameter changed, a step disabled, a step added), then — as selecting steps does —
the TVMScript of a few of its steps and the graph of one step are fetched. Nothing is cleared between runs,
so the engine's module cache, the client's text cache and every other cache see ordinary use. Prints the
engine's RSS (its process tree) and this process's RSS (the client) at the end of the warm-up and at the end,
their growth in % (goal: <= 10 %), the engine's cache size, the median run time of the first and last 100
runs, and the load average.

Usage: ``.venv/bin/python -m bench.soak_workspace [--runs 1000] [--warmup 300] [--seed 1]``
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from typing import Any

import psutil

from pipeline_model.document import PipelineDocument, Step
from pipeline_model.engine.client import EngineClient

MODELS = ("builtin:mlp", "builtin:transformer")


def _fusion() -> list[Step]:
    return [Step("relax.LegalizeOps"), Step("relax.AnnotateTIROpPattern"), Step("relax.FoldConstant"),
            Step("relax.FuseOps", {"fuse_opt_level": 2}), Step("relax.FuseTIR"), Step("relax.DeadCodeElimination")]


def _cpu_build() -> list[Step]:
    return [Step("relax.FuseTransposeMatmul"), Step("relax.LegalizeOps"), Step("relax.AnnotateTIROpPattern"),
            Step("relax.FoldConstant"), Step("relax.FuseOps", {"fuse_opt_level": 2}), Step("relax.FuseTIR"),
            Step("relax.DeadCodeElimination")]


def _zero() -> list[Step]:
    return [Step("relax.LegalizeOps"), Step("relax.FoldConstant"), Step("relax.ToNonDataflow"),
            Step("relax.DeadCodeElimination")]


PIPELINES = (_fusion, _cpu_build, _zero)


def edited_document(i: int, rng: random.Random) -> PipelineDocument:
    """Run ``i``'s document: a pipeline and a model by turn, with a random edit."""
    steps = PIPELINES[i % len(PIPELINES)]()
    model = MODELS[(i // len(PIPELINES)) % len(MODELS)]
    for step in steps:  # several edits at once, so nearly every run makes new modules (the cache fills)
        if step.pass_id == "relax.FuseOps":
            step.params["fuse_opt_level"] = rng.choice([0, 1, 2, 3])
        if rng.random() < 0.25:
            step.enabled = False
    for _ in range(rng.randrange(3)):
        steps.insert(rng.randrange(len(steps) + 1), Step(rng.choice(["relax.FoldConstant", "relax.DeadCodeElimination",
                                                                      "relax.CanonicalizeBindings"])))
    return PipelineDocument(model=model, target={"kind": "llvm"}, steps=steps)


def look_at(client: EngineClient, result: Any, rng: random.Random) -> None:
    """What the GUI asks for after a run: a few steps' texts (the diff) and one step's graph."""
    keys = [s.snapshot_key for s in result.steps if s.snapshot_key]
    if result.input_key:
        keys.insert(0, result.input_key)
    for key in rng.sample(keys, min(3, len(keys))):
        client.snapshot(key)
    if keys:
        client.graph(rng.choice(keys))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    me = psutil.Process()
    client = EngineClient()
    try:
        client.ping()
        times: list[float] = []
        engine_rss: list[int] = []
        client_rss: list[int] = []
        for i in range(args.runs):
            doc = edited_document(i, rng)
            t0 = time.perf_counter()
            result = client.run(doc, scripts=False)
            if not result.ok:
                print(f"run {i}: failed: {result.error or result.steps[result.failed_index].error}")
                return 1
            look_at(client, result, rng)
            times.append((time.perf_counter() - t0) * 1000.0)
            engine_rss.append(client.engine_rss())
            client_rss.append(me.memory_info().rss)
            if (i + 1) % 100 == 0:
                info = client.ping()
                print(f"  runs {i - 98}..{i + 1}: engine {engine_rss[-1] / 2**20:.1f} MiB, client "
                      f"{client_rss[-1] / 2**20:.1f} MiB, cache {info.get('cache_entries', '?')} entries / "
                      f"{float(info.get('cache_bytes') or 0) / 2**20:.1f} MiB charged, median run+look "
                      f"{statistics.median(times[-100:]):.1f} ms, load {os.getloadavg()[0]:.2f}", flush=True)
        warm = min(args.warmup, len(times) - 1)
        for name, series in (("engine", engine_rss), ("client", client_rss)):
            start, end = series[warm], series[-1]
            print(f"{name} RSS after warm-up ({warm} runs) {start / 2**20:.1f} MiB, at the end {end / 2**20:.1f} MiB: "
                  f"{(end - start) / start * 100:+.1f} % (goal <= +10 %); peak {max(series) / 2**20:.1f} MiB")
        k = min(100, max(1, len(times) // 4))
        print(f"median run+look: first {k} after warm-up {statistics.median(times[warm:warm + k]):.1f} ms, "
              f"last {k} {statistics.median(times[-k:]):.1f} ms; load {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
