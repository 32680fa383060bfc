"""Pipelines against each other on model files, interleaved in one process, ONNX Runtime in the same rounds.

Each ``MODEL:PIPELINE`` pair is run through the app's engine (the pipeline's steps, then the app's build and
export, as ``bench_latency``'s app column does) and timed with the others in rotating rounds, so load changes hit
all alike; an ``.onnx`` model also gets ONNX Runtime (``intra_op_num_threads`` = threads) on the same inputs. Inputs
are random, of the shapes and dtypes the first export describes (static shapes only). Prints per column the min and
median of the rounds, the median of the per-round ratios to the first column and to ONNX Runtime, and the largest
|difference| of its first output to the first column's over that column's largest |value|, and the load average.
It is how docs/PERFORMANCE.md "Channels last" compared the NCHW default with the channels-last one.

Usage: ``TVM_NUM_THREADS=2 .venv/bin/python -m bench.bench_pipeline_ab [--rounds N] [--threads N]
MODEL:PIPELINE [MODEL:PIPELINE ...]`` (e.g. ``model.onnx:resources/pipelines/cpu_build.json
model.onnx:/tmp/old_cpu_build.json``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from typing import Any, Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _inputs(lib_dir: str, seed: int = 0) -> tuple[Any, ...]:
    """Random torch tensors of the inputs the export in ``lib_dir`` describes."""
    import json

    import numpy as np
    import torch

    with open(os.path.join(lib_dir, "model.json"), encoding="utf-8") as fh:
        described = json.load(fh)["inputs"]
    rng = np.random.default_rng(seed)
    out = []
    for d in described:
        shape = [int(s) for s in d["shape"]]
        if str(d["dtype"]).startswith("int"):
            out.append(torch.from_numpy(rng.integers(0, 100, shape).astype(d["dtype"])))
        else:
            out.append(torch.from_numpy(rng.standard_normal(shape).astype(d["dtype"])))
    return tuple(out)


def _ort(model: str, inputs: tuple[Any, ...], threads: int) -> Callable[[], Any]:
    """ONNX Runtime on ``model`` with ``inputs`` (in the order of the session's inputs)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    feed = {i.name: t.numpy() for i, t in zip(session.get_inputs(), inputs)}
    return lambda: session.run(None, feed)


def _first_output(value: Any) -> Any:
    import numpy as np

    while isinstance(value, (list, tuple)):
        value = value[0]
    return np.asarray(value.numpy() if hasattr(value, "numpy") else value, dtype="float64").reshape(-1)


def main(argv: list[str]) -> int:
    """Entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pairs", nargs="+", help="MODEL:PIPELINE")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=int(os.environ.get("TVM_NUM_THREADS", "2")))
    args = parser.parse_args(argv)
    sys.path.insert(0, ROOT)
    import numpy as np

    from bench.latency import appside, systems, timing
    from pipeline_model.fileformat import load_pipeline

    systems.set_threads(args.threads)
    runs: dict[str, Callable[[], Any]] = {}
    outputs: dict[str, Any] = {}
    inputs: tuple[Any, ...] = ()
    client = appside.make_client()
    with tempfile.TemporaryDirectory() as folder:
        try:
            for i, pair in enumerate(args.pairs):
                model, sep, pipeline = pair.rpartition(":")
                if not sep or not model:
                    parser.error(f"{pair}: not MODEL:PIPELINE")
                doc = load_pipeline(pipeline)
                doc.model = model
                column = appside.app_column(client, doc, os.path.basename(model), os.path.join(folder, str(i)))
                if "error" in column:
                    print(f"{pair}: {column['error']}")
                    return 1
                if not inputs:
                    inputs = _inputs(column["lib"])
                label = f"{i}:{os.path.basename(model)}:{os.path.basename(pipeline)}"
                system = systems.tvm_system(label, column["lib"], inputs)
                runs[label] = system.run
                outputs[label] = _first_output(system.outputs())
        finally:
            client.close()
        for model in dict.fromkeys(p.rpartition(":")[0] for p in args.pairs):
            if model.endswith(".onnx"):
                label = f"ort:{os.path.basename(model)}"
                runs[label] = _ort(model, inputs, args.threads)
                outputs[label] = _first_output(runs[label]())
        samples = timing.interleaved(runs, args.rounds, 50.0)
    names = list(samples)
    first = names[0]
    ort_name = next((n for n in names if n.startswith("ort:")), None)
    print(f"{args.rounds} interleaved rounds, {args.threads} threads; load average {timing.loadavg()}")
    for name in names:
        ratio = statistics.median(a / b for a, b in zip(samples[name], samples[first]))
        vs_ort = (f"  ÷ ORT {statistics.median(a / b for a, b in zip(samples[name], samples[ort_name])):.3f}"
                  if ort_name else "")
        ref = outputs[first]
        diff = float(np.max(np.abs(outputs[name] - ref)) / max(float(np.max(np.abs(ref))), 1e-30))
        print(f"{name:60s} {min(samples[name]) / 1000:.3f} / {statistics.median(samples[name]) / 1000:.3f} ms"
              f"  ÷ first {ratio:.3f}{vs_ort}  |diff| / max|first| {diff:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
