"""Latency of the bundled CPU pipelines vs PyTorch eager and ONNX Runtime, on three small models.

Models (defined here in PyTorch, imported into Relax through the app's own importer, weights kept):
the tutorial MLP (784-256-10), a small CNN (2 conv + pool + linear on 1x3x32x32) and a transformer
encoder block (seq 32, hidden 128, 4 heads, MLP 4x). Each is run through the engine on the host CPU
target and timed with ``time_evaluator``:

* "TVM default": ``tvm.compile``'s stock default pipeline (the numerical check's reference);
* "TVM cpu_build": the steps of ``resources/pipelines/cpu_build.json`` (untuned);
* "TVM tuned": the steps of ``resources/pipelines/cpu_tuned.json`` (MetaSchedule, ``--trials`` per
  PrimFunc; the database goes to ``--work-dir`` or a temporary folder);
* optional ``--variants``: untuned variations of cpu_build, to see what each step is worth.

The same model is timed in PyTorch eager (``torch.inference_mode``) and in ONNX Runtime (legacy
TorchScript ONNX export), on the same inputs. Prints one table with the ratios (< 1.0 means TVM is
faster) and the load average before and after.

Needs ``requirements-torch.txt`` and ``onnxruntime`` (benchmark only, see docs/PERFORMANCE.md).
Usage: ``.venv/bin/python -m bench.bench_latency [--trials N] [--work-dir DIR] [--no-tuned]
[--variants all|NAME,...] [--models mlp,cnn] [--repeat N] [--markdown]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from typing import Any, Callable, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

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



#: Untuned variations of cpu_build.json (``--variants``): name -> (what it is, edit of the document).
VARIANT_DOCS = {
    "no_dlight": "cpu_build without the DLight step",
    "no_fuse": "cpu_build without FuseOps/FuseTIR",
    "no_mcpu": "cpu_build on the target without 'mcpu' (generic x86-64 code)",
    "no_transpose_matmul": "cpu_build without its FuseTransposeMatmul step (a weight transpose per call)",
    "no_transpose_matmul_no_dlight": "cpu_build without FuseTransposeMatmul and without the DLight step",
    "tuned_no_transpose_matmul": "cpu_tuned without its FuseTransposeMatmul step (tunes: costs --trials)",
}


def _time_callable(fn: Callable[[], Any], warmup: int, number: int, repeat: int) -> float:
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


def _loadavg() -> str:
    try:
        with open("/proc/loadavg", encoding="utf-8") as fh:
            return " ".join(fh.read().split()[:3])
    except OSError:
        return "n/a"


def _set_tuning(doc: Any, trials: Optional[int], work_dir: str) -> None:
    """Point the document's MetaSchedule steps at ``work_dir`` and give them the trial budget."""
    for step in doc.steps:
        if step.pass_id in ("relax.MetaScheduleTuneTIR", "relax.MetaScheduleTuneIRMod",
                            "relax.MetaScheduleApplyDatabase"):
            step.params["work_dir"] = work_dir
            if trials is not None and step.pass_id != "relax.MetaScheduleApplyDatabase":
                step.params["max_trials_global"] = int(trials)
                step.params["num_trials_per_iter"] = min(int(step.params.get("num_trials_per_iter", 16)),
                                                         int(trials))


def _variant_doc(name: str, cpu_doc: Any, tuned_doc: Any) -> Any:
    """The document of an untuned (or tuned) variation named in :data:`VARIANT_DOCS`."""

    if name == "no_dlight":
        doc = cpu_doc.clone()
        doc.steps = [s for s in doc.steps if s.pass_id != "dlight.ApplyDefaultSchedule"]
    elif name == "no_fuse":
        doc = cpu_doc.clone()
        doc.steps = [s for s in doc.steps if s.pass_id not in ("relax.FuseOps", "relax.FuseTIR")]
    elif name == "no_mcpu":
        doc = cpu_doc.clone()  # the bench drops 'mcpu' from the host target for this column
    elif name == "no_transpose_matmul":
        doc = cpu_doc.clone()
        doc.steps = [s for s in doc.steps if s.pass_id != "relax.FuseTransposeMatmul"]
    elif name == "no_transpose_matmul_no_dlight":
        doc = cpu_doc.clone()
        doc.steps = [s for s in doc.steps
                     if s.pass_id not in ("relax.FuseTransposeMatmul", "dlight.ApplyDefaultSchedule")]
    elif name == "tuned_no_transpose_matmul":
        doc = tuned_doc.clone()
        doc.steps = [s for s in doc.steps if s.pass_id != "relax.FuseTransposeMatmul"]
    else:
        raise SystemExit(f"unknown variant {name!r}; known: {', '.join(VARIANT_DOCS)}")
    doc.name = name
    return doc


def _progress_printer(label: str) -> Callable[[str, dict], None]:
    """An engine event listener printing one line per finished tuning round to stderr."""
    def on_event(name: str, data: dict) -> None:
        if name == "tuning_progress":
            print(f"  [{label}] tuning {data.get('done')}/{data.get('total')} trials, "
                  f"{float(data.get('elapsed_s') or 0):.0f} s", file=sys.stderr, flush=True)
    return on_event


def main() -> int:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--trials", type=int, default=None,
                        help="MetaSchedule trials per PrimFunc of the tuned column "
                             "(default: cpu_tuned.json's max_trials_global)")
    parser.add_argument("--work-dir", default=None,
                        help="tuning work directory (one sub-folder per model; reused by later runs); "
                             "default: a temporary folder, deleted afterwards")
    parser.add_argument("--no-tuned", action="store_true", help="skip the tuned column (no tuning)")
    parser.add_argument("--variants", default="",
                        help="comma-separated extra columns from: " + ", ".join(VARIANT_DOCS) + " (or 'all')")
    parser.add_argument("--models", default=",".join(MODELS_SOURCE),
                        help="comma-separated subset of: " + ", ".join(MODELS_SOURCE))
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

    models = [m.strip() for m in opts.models.split(",") if m.strip()]
    for m in models:
        if m not in MODELS_SOURCE:
            raise SystemExit(f"unknown model {m!r}; known: {', '.join(MODELS_SOURCE)}")
    variants = list(VARIANT_DOCS) if opts.variants.strip() == "all" else \
        [v.strip() for v in opts.variants.split(",") if v.strip()]
    pipelines = os.path.join(ROOT, "resources", "pipelines")
    cpu_doc = load_pipeline(os.path.join(pipelines, "cpu_build.json"))
    tuned_doc = load_pipeline(os.path.join(pipelines, "cpu_tuned.json"))
    for v in variants:
        _variant_doc(v, cpu_doc, tuned_doc)  # unknown names fail before any work
    tuning_trials = opts.trials
    if tuning_trials is None:
        tuning_trials = next(int(s.params.get("max_trials_global", 64)) for s in tuned_doc.steps
                             if s.pass_id == "relax.MetaScheduleTuneTIR")

    load_before = _loadavg()
    t_start = time.perf_counter()
    # A tuning step reports progress after every round, which restarts the engine's step watchdog.
    client = EngineClient(step_timeout_s=900.0)
    target = client.request("devices", {})["devices"][0]["target"]
    bench = build_api.BenchSettings(warmup=5, number=opts.number, repeat=opts.repeat)
    check = (1e-3, 1e-4)
    tvm_rows: dict[str, dict[str, Any]] = {}
    tmp = tempfile.mkdtemp(prefix="bench_latency_")
    work_root = os.path.abspath(opts.work_dir) if opts.work_dir else os.path.join(tmp, "tuning")
    try:
        # Phase 1: TVM in the engine (nothing else runs: TVM's and torch's thread pools spin after work).
        for name in models:
            path = os.path.join(tmp, f"{name}.py")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(MODELS_SOURCE[name])

            def prepared(doc: Any, label: str, path: str = path, name: str = name) -> Any:
                doc = doc.clone()
                # The host target (mcpu, num-cores) for every column; no_mcpu drops 'mcpu'.
                drop = {"mcpu"} if label == "no_mcpu" else set()
                doc.model, doc.path = path, None
                doc.target = {k: v for k, v in target.items() if k not in drop}
                doc.name = f"{label} on {name}"
                _set_tuning(doc, tuning_trials, os.path.join(work_root, f"{name}.{label}"))
                return doc

            row: dict[str, Any] = {}
            doc = prepared(cpu_doc, "cpu_build")
            res = build_api.compare(client, build_api.module_request(doc, baseline=True),
                                    build_api.module_request(doc), bench=bench, check=check)
            row["default"], row["cpu_build"] = res.a.latency.median_us, res.b.latency.median_us
            row["checks"] = {"cpu_build": bool(res.check and res.check.passed)}
            row["tuning_s"] = {}
            columns = ([] if opts.no_tuned else ["tuned"]) + variants
            for label in columns:
                base = tuned_doc if label == "tuned" else _variant_doc(label, cpu_doc, tuned_doc)
                doc = prepared(base, label)
                t0 = time.perf_counter()
                out = build_api.build_run(client, doc, bench=bench, check=check,
                                          on_event=_progress_printer(f"{name} {label}"))
                row[label] = out.latency.median_us if out.latency else float("nan")
                row["checks"][label] = out.ok
                row["tuning_s"][label] = time.perf_counter() - t0
                print(f"  {name} {label}: {row[label]:.1f} us ({row['tuning_s'][label]:.0f} s incl. "
                      f"pipeline and build), check {'pass' if out.ok else 'FAIL'}", file=sys.stderr, flush=True)
            tvm_rows[name] = row
        client.close()
        t_tvm = time.perf_counter() - t_start
        # Phase 2: PyTorch eager and ONNX Runtime, same models and inputs, same thread count.
        torch.set_num_threads(int(target.get("num-cores", os.cpu_count() or 1)))
        for name in models:
            ns: dict = {}
            exec(compile(MODELS_SOURCE[name], name, "exec"), ns)  # noqa: S102 - our own model definitions
            model, inputs = ns["model"], ns["example_inputs"]
            with torch.inference_mode():
                t_torch = _time_callable(lambda model=model, inputs=inputs: model(*inputs), 5, opts.number, opts.repeat)
            onnx_path = os.path.join(tmp, f"{name}.onnx")
            torch.onnx.export(model, inputs, onnx_path, dynamo=False)
            options = ort.SessionOptions()
            options.intra_op_num_threads = torch.get_num_threads()
            sess = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
            feed = {i.name: t.numpy() for i, t in zip(sess.get_inputs(), inputs)}
            t_ort = _time_callable(lambda sess=sess, feed=feed: sess.run(None, feed), 5, opts.number, opts.repeat)
            tvm_rows[name]["torch"], tvm_rows[name]["ort"] = t_torch, t_ort
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    tvm_cols = ["default", "cpu_build"] + ([] if opts.no_tuned else ["tuned"]) + variants
    header = ["model", *(f"TVM {c} (us)" for c in tvm_cols), "PyTorch eager (us)", "ONNX Runtime (us)",
              "cpu_build/PyTorch"]
    if not opts.no_tuned:
        header += ["tuned/PyTorch", "tuned/ORT", "tuning (s)"]
    header += ["check"]
    lines = []
    for name in models:
        row = tvm_rows[name]
        t_torch, t_ort = row["torch"], row["ort"]
        cells = [name, *(f"{row[c]:.1f}" for c in tvm_cols), f"{t_torch:.1f}", f"{t_ort:.1f}",
                 f"{row['cpu_build'] / t_torch:.2f}x"]
        if not opts.no_tuned:
            cells += [f"{row['tuned'] / t_torch:.2f}x", f"{row['tuned'] / t_ort:.2f}x",
                      f"{row['tuning_s']['tuned']:.0f}"]
        failed = [k for k, ok in row["checks"].items() if not ok]
        cells.append("pass" if not failed else "FAIL: " + ", ".join(failed))
        lines.append(cells)
    print(f"target {target}; torch {torch.__version__} ({torch.get_num_threads()} threads), "
          f"onnxruntime {ort.__version__}, numpy {np.__version__}")
    print(f"tuning: {'off' if opts.no_tuned else f'{tuning_trials} trials per PrimFunc'}; "
          f"TVM phase {t_tvm:.0f} s, total {time.perf_counter() - t_start:.0f} s; "
          f"load average before {load_before}, after {_loadavg()}")
    for v in variants:
        print(f"  {v}: {VARIANT_DOCS[v]}")
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
