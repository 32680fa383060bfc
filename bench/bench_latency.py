"""Latency of the bundled CPU pipeline vs PyTorch eager and ONNX Runtime, on three small models.

Models (defined here in PyTorch, imported into Relax through the app's own importer, weights kept):
the tutorial MLP (784-256-10), a small CNN (2 conv + pool + linear on 1x3x32x32) and a transformer
encoder block (seq 32, hidden 128, 4 heads, MLP 4x). Each is run through the engine with the steps of
``resources/pipelines/cpu_build.json`` on the host CPU target and timed with ``time_evaluator``; the
same model is timed in PyTorch eager (``torch.inference_mode``) and in ONNX Runtime (legacy TorchScript
ONNX export), on the same inputs. Prints one table with the ratios (< 1.0 means TVM is faster).

Needs ``requirements-torch.txt`` and ``onnxruntime`` (benchmark only, see docs/PERFORMANCE.md).
Usage: ``.venv/bin/python bench/bench_latency.py [--repeat N] [--markdown]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

MODELS_SOURCE = {
    "mlp": '''
import torch

class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(784, 256)
        self.fc2 = torch.nn.Linear(256, 10, bias=False)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))

torch.manual_seed(0)
model = MLP().eval()
example_inputs = (torch.randn(1, 784),)
''',
    "cnn": '''
import torch

class CNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.c2 = torch.nn.Conv2d(16, 32, 3, padding=1)
        self.fc = torch.nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        x = torch.nn.functional.max_pool2d(torch.relu(self.c1(x)), 2)
        x = torch.nn.functional.max_pool2d(torch.relu(self.c2(x)), 2)
        return self.fc(torch.flatten(x, 1))

torch.manual_seed(0)
model = CNN().eval()
example_inputs = (torch.randn(1, 3, 32, 32),)
''',
    "transformer": '''
import torch

class Block(torch.nn.Module):
    def __init__(self, hidden=128, heads=4):
        super().__init__()
        self.heads, self.dim = heads, hidden // heads
        self.ln1 = torch.nn.LayerNorm(hidden)
        self.qkv = torch.nn.ModuleList([torch.nn.Linear(hidden, hidden) for _ in range(3)])
        self.o = torch.nn.Linear(hidden, hidden)
        self.ln2 = torch.nn.LayerNorm(hidden)
        self.fc1 = torch.nn.Linear(hidden, 4 * hidden)
        self.fc2 = torch.nn.Linear(4 * hidden, hidden)

    def forward(self, x):
        b, s, h = x.shape
        y = self.ln1(x)
        q, k, v = [p(y).reshape(b, s, self.heads, self.dim).transpose(1, 2) for p in self.qkv]
        att = torch.softmax(q @ k.transpose(-1, -2) / self.dim ** 0.5, dim=-1)
        x = x + self.o((att @ v).transpose(1, 2).reshape(b, s, h))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))

torch.manual_seed(0)
model = Block().eval()
example_inputs = (torch.randn(1, 32, 128),)
''',
}


def _time_callable(fn, warmup: int, number: int, repeat: int) -> float:
    """Median over ``repeat`` of the mean per-call time of ``number`` calls, in µs."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number * 1e6)
    return statistics.median(samples)


def main() -> int:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    opts = parser.parse_args()

    try:
        import numpy as np
        import onnxruntime as ort
        import torch
    except ImportError as exc:
        print(f"bench_latency needs torch and onnxruntime: {exc}\n"
              "  pip install -r requirements-torch.txt onnxruntime==1.32.0", file=sys.stderr)
        return 2

    from pipeline_model import build_api
    from pipeline_model.engine.client import EngineClient
    from pipeline_model.fileformat import load_pipeline

    cpu_doc = load_pipeline(os.path.join(ROOT, "resources", "pipelines", "cpu_build.json"))
    client = EngineClient(step_timeout_s=600.0)
    target = client.request("devices", {})["devices"][0]["target"]
    bench = build_api.BenchSettings(warmup=5, number=opts.number, repeat=opts.repeat)
    tvm_rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        # Phase 1: TVM in the engine (nothing else runs: TVM's and torch's thread pools spin after work).
        for name, source in MODELS_SOURCE.items():
            path = os.path.join(tmp, f"{name}.py")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(source)
            doc = cpu_doc.clone()
            doc.model, doc.target, doc.path = path, dict(target), None
            doc.name = f"cpu_build on {name}"
            tvm_rows[name] = build_api.compare(client, build_api.module_request(doc, baseline=True),
                                               build_api.module_request(doc), bench=bench, check=(1e-3, 1e-4))
        client.close()
        # Phase 2: PyTorch eager and ONNX Runtime, same models and inputs, same thread count.
        torch.set_num_threads(int(target.get("num-cores", os.cpu_count() or 1)))
        rows = []
        for name, source in MODELS_SOURCE.items():
            ns: dict = {}
            exec(compile(source, name, "exec"), ns)  # noqa: S102 - our own model definitions
            model, inputs = ns["model"], ns["example_inputs"]
            with torch.inference_mode():
                t_torch = _time_callable(lambda: model(*inputs), 5, opts.number, opts.repeat)
            onnx_path = os.path.join(tmp, f"{name}.onnx")
            torch.onnx.export(model, inputs, onnx_path, dynamo=False)
            options = ort.SessionOptions()
            options.intra_op_num_threads = torch.get_num_threads()
            sess = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
            feed = {i.name: t.numpy() for i, t in zip(sess.get_inputs(), inputs)}
            t_ort = _time_callable(lambda: sess.run(None, feed), 5, opts.number, opts.repeat)
            result = tvm_rows[name]
            rows.append((name, result.a.latency.median_us, result.b.latency.median_us, t_torch, t_ort,
                         bool(result.check and result.check.passed)))

    header = ("model", "TVM default (us)", "TVM cpu_build (us)", "PyTorch eager (us)", "ONNX Runtime (us)",
              "cpu_build/PyTorch", "cpu_build/ORT", "check")
    lines = []
    for name, base, opt, t_torch, t_ort, ok in rows:
        lines.append((name, f"{base:.1f}", f"{opt:.1f}", f"{t_torch:.1f}", f"{t_ort:.1f}",
                      f"{opt / t_torch:.2f}x", f"{opt / t_ort:.2f}x", "pass" if ok else "FAIL"))
    print(f"target {target}; torch {torch.__version__} ({torch.get_num_threads()} threads), "
          f"onnxruntime {ort.__version__}, numpy {np.__version__}")
    if opts.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for line in lines:
            print("| " + " | ".join(line) + " |")
    else:
        widths = [max(len(h), *(len(r[i]) for r in lines)) for i, h in enumerate(header)]
        print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
        for line in lines:
            print("  ".join(c.ljust(w) for c, w in zip(line, widths)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
