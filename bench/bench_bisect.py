"""Benchmark of ``bisect`` (issue 21): its time against the budget ``(ceil(log2 N) + 2) x`` one build-and-run
of the full pipeline ``+ 10 %``.

For each case a pipeline of N steps with one wrong custom step at a seeded position
(``tests/debug_fixtures.py``) is run once (so both measurements find its steps cached), then one
``build_run`` request with the check (the optimized build, its run and the reference build: what one
"build and run" costs the user; median of ``--repeat``) and one ``bisect`` request are timed in the same engine.
Prints per case: builds, seconds of each, the budget and the ratio (<= 1.0 meets it).

Run: ``.venv/bin/python -m bench.bench_bisect [--sizes 8 16 32] [--repeat 2]``.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import tempfile
import time

from pipeline_model import build_api
from pipeline_model.consent import Consent
from pipeline_model.engine.client import EngineClient
from pipeline_model.fileformat import load_pipeline
from tests.debug_fixtures import ROOT, injected_pipeline

CNN = os.path.join(ROOT, "resources", "models", "cnn_bn.onnx")


def measure(client: EngineClient, path: str, repeat: int) -> dict:
    """Seconds of one build-and-run (median) and of the bisection of ``path``."""
    from pipeline_model.cli.bisect_cmd import bisect_request

    doc = load_pipeline(path)
    client.run(doc, scripts=False)
    request = dict(build_api.module_request(doc), bench=None,
                   check={"rtol": 1e-4, "atol": 1e-4})
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        client.request("build_run", request)
        times.append(time.perf_counter() - t0)
    args = argparse.Namespace(trust=True, rtol=1e-4, atol=1e-4, check_against="tvm", inputs=None)
    t0 = time.perf_counter()
    reply = client.request("bisect", bisect_request(doc, args))
    return {"build_run_s": statistics.median(times), "bisect_s": time.perf_counter() - t0, "reply": reply}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 16, 32])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    print(f"{'case':<26} {'builds':>6} {'build+run s':>11} {'bisect s':>9} {'budget s':>9} {'ratio':>6}")
    with EngineClient(consent=Consent.everything()) as client, tempfile.TemporaryDirectory() as folder:
        for n in args.sizes:
            for level, model, label in (("relax", "builtin:mlp", "mlp"), ("tir", CNN, "cnn_bn.onnx")):
                path, wrong = injected_pipeline(folder, n, n, level, model=model, name=f"{label}_{level}_{n}")
                got = measure(client, path, args.repeat)
                budget = (math.ceil(math.log2(n)) + 2) * got["build_run_s"] * 1.1
                ok = got["reply"].get("culprit_step") == wrong
                print(f"{label + ' ' + level + ' N=' + str(n):<26} {got['reply']['builds']:>6} "
                      f"{got['build_run_s']:>11.2f} {got['bisect_s']:>9.2f} {budget:>9.2f} "
                      f"{got['bisect_s'] / budget:>6.2f}" + ("" if ok else "  WRONG CULPRIT"))


if __name__ == "__main__":
    main()
