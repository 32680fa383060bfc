"""Tuning on a device farm: trials per minute measured through an RPC tracker with one and with two servers
(``runner = rpc``, :mod:`pipeline_model.passkinds.metaschedule.script_farm`), on loopback (tests/rpc_farm.py
starts and ends the tracker and the servers).

Usage: ``.venv/bin/python -m bench.bench_rpc [--trials 32] [--per-iter 8]``. Each farm size tunes the MLP's
``fused_matmul_add_relu`` in a fresh work folder (no user database); prints trials/minute, the devices that
served and what each measured, and the machine's load (``os.getloadavg``) before and after. On loopback the
servers share this machine's cores with the builder, so two servers show the farm's overhead and its
parallel measuring, not the speed-up of two boards.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from pipeline_model.passkinds.metaschedule import builder_tvm, tasks_tvm
from pipeline_model.passkinds.metaschedule.config import TuningConfig
from bench.bench_tuning import TARGET, lowered_mlp
from tests.rpc_farm import local_farm


def load() -> str:
    """The 1/5/15-minute load averages."""
    return "load %.2f %.2f %.2f" % os.getloadavg()


def tune_on(farm, mod, trials: int, per_iter: int) -> tuple[float, dict]:
    """Trials per minute of one tuning run through ``farm``, and its summary."""
    cfg = TuningConfig(runner="rpc", rpc_host="127.0.0.1", rpc_port=farm.port, rpc_key=farm.key,
                       num_trials_per_iter=per_iter, search_population=64, user_database=False, seed=0)
    with tempfile.TemporaryDirectory(prefix="rps-bench-rpc-") as work:
        start = time.perf_counter()
        summary = tasks_tvm.tune_module(mod, TARGET, os.path.join(work, "wd"), max_trials_global=trials,
                                        runner_config=cfg, op_names=["fused_matmul_add_relu"])
        elapsed = time.perf_counter() - start
    return summary["measured"] / elapsed * 60.0, summary


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=32)
    ap.add_argument("--per-iter", type=int, default=8)
    args = ap.parse_args()
    mod = lowered_mlp()
    builder_tvm.tuning_target(TARGET)  # the one-time intrinsics import, before timing
    print(f"before: {load()}", flush=True)
    with local_farm(servers=1) as farm:
        for servers in (1, 2):
            if servers == 2:
                farm.add_server()
            rate, summary = tune_on(farm, mod, args.trials, args.per_iter)
            per = ", ".join(f"{d} {c['measured']}" for d, c in sorted(summary["devices"].items()))
            print(f"{servers} server(s): {rate:.1f} trials/min ({summary['measured']}/{summary['done']} measured; "
                  f"devices served {summary['devices_served']}: {per}); {load()}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
