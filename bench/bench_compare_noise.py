"""Does a comparison tell noise from a real difference? (issue 18, "Numbers without noise"; not a timed test).

Two small TVMScript models with the same signature, built by the same pipeline (``cpu_build.json``) through
the engine's ``compare`` (:func:`pipeline_model.build_api.compare_many`, the code path of ``main.py compare``
and the GUI):

* ``A``: ``relu(x @ w)`` (x 64×256, w 256×256);
* ``B``: the same plus extra work of known size: the product of the first ``K`` rows of ``x`` with ``w``,
  summed and added times zero (its value changes nothing). ``K`` is calibrated first so that ``B`` is about
  ``--slowdown`` (default 1.3) times slower than ``A``, measured on many interleaved repeats.

Then ``--runs`` comparisons (default 20) of ``A`` against ``A`` (two identical builds: the engine reports
"same build", and the timing alone — ``vs_first.measured`` — must say "no significant difference") and
``--runs`` of ``A`` against ``B`` (must say "slower"). Prints the counts, the rates and the load average
before and after; exit code 0 when both rates reach ``--target`` (default 95 %), else 1.

Usage: ``.venv/bin/python -m bench.bench_compare_noise [--runs N] [--number N] [--repeat N] [--slowdown F]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

ROWS = 64

#: Both models' beginning: ``z = relu(x @ w)``.
MODEL_HEAD = '''from tvm.script import ir as I
from tvm.script import relax as R


@I.ir_module
class Module:
    @R.function
    def forward(x: R.Tensor((64, 256), "float32"), w: R.Tensor((256, 256), "float32")) -> R.Tensor((64, 256), "float32"):
        with R.dataflow():
            y = R.matmul(x, w)
            z = R.nn.relu(y)
'''

MODEL_A = MODEL_HEAD + '''            R.output(z)
        return z
'''

MODEL_B = MODEL_HEAD + '''            xs = R.strided_slice(x, axes=[0], begin=[0], end=[{rows}])
            e = R.matmul(xs, w)
            s = R.sum(e)
            t = R.multiply(s, R.const(0.0, "float32"))
            o = R.add(z, t)
            R.output(o)
        return o
'''


def _docs(folder: str, rows: int) -> tuple[Any, Any]:
    """Documents of A and B (B with ``rows`` extra rows of work) on the ``cpu_build`` pipeline."""
    from pipeline_model.fileformat import load_pipeline

    path_a, path_b = os.path.join(folder, "model_a.py"), os.path.join(folder, f"model_b{rows}.py")
    with open(path_a, "w", encoding="utf-8") as fh:
        fh.write(MODEL_A)
    with open(path_b, "w", encoding="utf-8") as fh:
        fh.write(MODEL_B.format(rows=rows))
    docs = []
    for path in (path_a, path_b):
        doc = load_pipeline(os.path.join(ROOT, "resources", "pipelines", "cpu_build.json"))
        doc.model = path
        docs.append(doc)
    return docs[0], docs[1]


def _compare(client: Any, docs: list[tuple[str, Any]], number: int, repeat: int) -> Any:
    from pipeline_model import build_api

    modules = []
    for label, doc in docs:
        req = build_api.module_request(doc)
        req["label"] = label
        modules.append(req)
    return build_api.compare_many(client, modules, bench=build_api.BenchSettings(number=number, repeat=repeat),
                                  check=None)


def _calibrate(client: Any, folder: str, slowdown: float, number: int) -> tuple[int, float, Any]:
    """Rows of extra work making B ``slowdown`` times slower than A: measured with 60 interleaved repeats,
    corrected once. Returns (rows, measured ratio, B's document)."""
    rows = max(1, round(ROWS * (slowdown - 1.0)))
    ratio = 1.0
    doc_b = None
    for _ in range(3):
        doc_a, doc_b = _docs(folder, rows)
        result = _compare(client, [("A", doc_a), ("B", doc_b)], number, 60)
        ratio = result.rows[1].latency.median_us / result.rows[0].latency.median_us
        if abs(ratio - slowdown) < 0.04 or ratio <= 1.0:
            break
        rows = max(1, min(ROWS, round(rows * (slowdown - 1.0) / (ratio - 1.0))))
    return rows, ratio, doc_b


def main(argv: list[str] | None = None) -> int:
    """Run the comparisons and print the counts; 0 when both rates reach the target."""
    from pipeline_model.consent import Consent
    from pipeline_model.engine.client import EngineClient
    from pipeline_model.latency_stats import NO_DIFFERENCE, SAME_BUILD, SLOWER, verdict_text

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--number", type=int, default=None, help="runs per repeat (default: the app's)")
    parser.add_argument("--repeat", type=int, default=None, help="repeats (default: the app's)")
    parser.add_argument("--slowdown", type=float, default=1.3)
    parser.add_argument("--target", type=float, default=0.95)
    args = parser.parse_args(argv)
    from pipeline_model.build_api import BenchSettings

    number = args.number or BenchSettings().number
    repeat = args.repeat or BenchSettings().repeat
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    client = EngineClient()
    try:
        with client.consented(Consent(trust_all=True)), tempfile.TemporaryDirectory() as folder:
            rows, ratio, doc_b = _calibrate(client, folder, args.slowdown, number)
            doc_a, _ = _docs(folder, rows)
            print(f"B = A + {rows}/{ROWS} rows of extra matmul: {ratio:.2f}x slower (median of 60 interleaved repeats)")
            same_ok = slower_ok = 0
            for i in range(args.runs):
                res = _compare(client, [("A", doc_a), ("A again", doc_a)], number, repeat)
                cmp = res.rows[1].vs_first
                ok = cmp is not None and cmp.verdict == SAME_BUILD and cmp.measured == NO_DIFFERENCE
                same_ok += ok
                print(f"  identical {i + 1:2d}: {verdict_text(cmp) if cmp else '-'}; timing alone: "
                      f"{cmp.measured if cmp else '-'} (ratio {cmp.ratio:.3f}, interval {cmp.low:.3f}..{cmp.high:.3f})"
                      if cmp else "  identical: no comparison")
                res = _compare(client, [("A", doc_a), ("B", doc_b)], number, repeat)
                cmp = res.rows[1].vs_first
                slower_ok += bool(cmp is not None and cmp.verdict == SLOWER)
                print(f"  slower    {i + 1:2d}: {verdict_text(cmp) if cmp else '-'}")
    finally:
        client.close()
    load_after = os.getloadavg()
    n = args.runs
    print(f"settings: {repeat} repeats x {number} runs per module, interleaved; {n} runs of each comparison")
    print(f"identical builds: 'no significant difference' (timing) in {same_ok}/{n} = {100.0 * same_ok / n:.0f} %")
    print(f"{ratio:.2f}x slower build: 'slower' in {slower_ok}/{n} = {100.0 * slower_ok / n:.0f} %")
    print(f"load average before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
          f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}; {os.cpu_count()} CPUs; "
          f"{time.perf_counter() - t0:.0f} s")
    return 0 if same_ok >= args.target * n and slower_ok >= args.target * n else 1


if __name__ == "__main__":
    sys.exit(main())
