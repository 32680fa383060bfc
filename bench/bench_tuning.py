"""Tuning throughput: our path (progress callback, stoppable builder, DB reuse checks) vs TVM's own
``tune_relax`` with the same builder function and runner, called directly; and the tuned MLP's
latency vs the untuned build.

Usage: ``.venv/bin/python -m bench.bench_tuning [--trials 32] [--per-iter 8]``. Prints trials/minute for
both and their ratio (target: ours within 5 %), and the latencies. Each side tunes in a fresh work
directory; the one-time intrinsics import is done before timing either side.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np
import tvm
from tvm import relax
from tvm.s_tir import meta_schedule as ms

from pipeline_model.importers import load_tvm
from pipeline_model.passkinds.metaschedule import builder_tvm, tasks_tvm
from pipeline_model.passkinds.metaschedule.config import TuningConfig
from tests.tuning_fixtures import lowered

TARGET = {"kind": "llvm", "num-cores": 2}


def lowered_mlp():
    return lowered(load_tvm.load_model("builtin:mlp", None).mod)


def count_records(work_dir: str) -> int:
    path = os.path.join(work_dir, "database_tuning_record.json")
    with open(path) as fh:
        return sum(1 for line in fh if line.strip())


def latency_us(mod, repeat: int = 20) -> float:
    ex = tvm.compile(mod, target=tvm.target.Target(TARGET))
    vm = relax.VirtualMachine(ex, tvm.cpu())
    args = [tvm.runtime.tensor(np.random.default_rng(0).standard_normal([int(s) for s in p.ty.shape]).astype("float32"))
            for p in mod["forward"].params]
    timer = vm.time_evaluator("forward", tvm.cpu(), number=50, repeat=repeat)
    return float(np.median(timer(*args).results)) * 1e6


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=32)
    ap.add_argument("--per-iter", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=1, help="alternate ours/stock this many times")
    args = ap.parse_args()
    mod = lowered_mlp()
    target = builder_tvm.tuning_target(TARGET)  # loads the CPU intrinsics once, before timing
    cfg = TuningConfig(num_trials_per_iter=args.per_iter, builder_workers=2, seed=0)
    ours_rates, stock_rates = [], []
    tuned_us = float("nan")
    with tempfile.TemporaryDirectory() as wd:  # warm-up: first-use costs (xgboost, LLVM) paid by neither side
        tasks_tvm.tune_module(mod, target, wd, 2, runner_config=TuningConfig(num_trials_per_iter=2))

    def run_ours() -> None:
        nonlocal tuned_us
        with tempfile.TemporaryDirectory() as wd:
            t0 = time.perf_counter()
            summary = tasks_tvm.tune_module(mod, target, wd, args.trials, runner_config=cfg,
                                             on_progress=lambda p: None)
            dt = time.perf_counter() - t0
            ours_rates.append(summary["done"] / dt * 60)
            print(f"ours : {summary['done']} trials ({summary['measured']} measured) in {dt:.1f} s "
                  f"-> {ours_rates[-1]:.1f} trials/min", flush=True)
            tuned, _ = tasks_tvm.apply_database(mod, target, wd)
            tuned_us = latency_us(tuned)

    def run_stock() -> None:
        with tempfile.TemporaryDirectory() as wd:
            t0 = time.perf_counter()
            ms.relax_integration.tune_relax(
                mod=mod, params={}, target=target, work_dir=wd, max_trials_global=args.trials,
                num_trials_per_iter=args.per_iter, builder=builder_tvm.make_stock_builder(cfg),
                runner=builder_tvm.make_runner(cfg), seed=0,
            )
            dt = time.perf_counter() - t0
            n = count_records(wd)
            stock_rates.append(n / dt * 60)
            print(f"stock: {n} trials in {dt:.1f} s -> {stock_rates[-1]:.1f} trials/min", flush=True)

    for i in range(args.rounds):  # alternate the order so neither side always runs first
        for fn in ((run_ours, run_stock) if i % 2 == 0 else (run_stock, run_ours)):
            fn()
    ours, stock = float(np.mean(ours_rates)), float(np.mean(stock_rates))
    print(f"throughput ratio ours/stock: {ours / stock:.3f} (target >= 0.95)")
    untuned_us = latency_us(mod)
    print(f"MLP forward: untuned {untuned_us:.1f} us, tuned {tuned_us:.1f} us, speed-up {untuned_us / tuned_us:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
