"""Latency and build time of the app's CPU pipelines vs TVM's default build, PyTorch eager and ONNX Runtime.

Bench set (defined here in PyTorch with random weights, no downloads, imported into Relax through the
app's own importer, weights kept): the tutorial MLP (784-256-10), a small CNN (2 conv + pool + linear on
1x3x32x32), a transformer encoder block (seq 32, hidden 128, 4 heads), a ResNet-18-style CNN (ResNet-18's
stages on 1x3x64x64) and a GPT-2-style decoder (2 pre-LN blocks, hidden 128, vocab 2048, seq 32, integer
token ids). Each is run through the engine on the host CPU target and timed with ``time_evaluator``:

* "TVM default": ``tvm.compile``'s stock default pipeline (the numerical check's reference), and its
  build time;
* "app default": ``resources/pipelines/cpu_build.json`` (untuned); its build time is the pipeline's passes
  plus ``tvm.compile`` of the result (what the user waits for);
* optional ``--pipelines``: other bundled pipelines (``cpu_build_dlight``, ``cpu_build_no_transpose``,
  ``cpu_build_nhwc``, ...) as extra columns; ``--variants``: variations of ``cpu_build_dlight.json``;
* optional ``--tuned``: ``resources/pipelines/cpu_tuned.json`` (MetaSchedule, ``--trials`` per PrimFunc;
  minutes per model, off by default);
* optional ``--best`` ("app best"): a wall-clock tuning budget per model (``--tune-minutes``, default and
  ceiling 15), spent by ``resources/pipelines/cpu_tuned_focus.json``: its tuning step is *targeted* (the
  app's own focus: the PrimFuncs holding at least ``--min-share`` of the untuned profile, trials allocated
  by share); a calibration round measures
  the pace (trials per second), the final round gets the trials that fit in the minutes left, and the app's
  Stop Tuning ends it at the deadline. The plan is stored in ``--work-dir`` (``<model>.best/``), so a re-run
  replays it and only re-measures. "app best" is the fastest of that tuned pipeline, the app default and the
  untuned ``--best-from`` pipelines (numerical check passed), named in the table; a profile of the tuned
  module (where the time goes after tuning) is printed after the table.

The same model is timed in PyTorch eager (``torch.inference_mode``) and in ONNX Runtime (legacy
TorchScript ONNX export), on the same inputs and thread count. Latencies are "min / median" of the
repeats (each the mean of ``--number`` runs). Prints one table with the ratios (< 1.0 means the app is
faster) and the load average before and after.

Needs ``requirements-torch.txt`` and ``onnxruntime`` (benchmark only, see docs/PERFORMANCE.md).
Usage: ``.venv/bin/python -m bench.bench_latency [--models mlp,cnn,...] [--pipelines NAME,...]
[--variants all|NAME,...] [--tuned [--trials N]] [--best [--tune-minutes M|model=M,...]] [--work-dir DIR]
[--number N] [--repeat N] [--markdown]``
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
    "resnet18": '''
import torch

class Basic(torch.nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = torch.nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = torch.nn.BatchNorm2d(cout)
        self.c2 = torch.nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = torch.nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 1, stride, bias=False),
                                            torch.nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        return torch.relu(y + (x if self.down is None else self.down(x)))

class ResNet18(torch.nn.Module):
    """ResNet-18 layout (64-128-256-512 channels, 2 basic blocks per stage), random weights."""
    def __init__(self, classes=1000):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 64, 7, 2, 3, bias=False), torch.nn.BatchNorm2d(64),
                                        torch.nn.ReLU(), torch.nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            blocks += [Basic(cin, cout, stride), Basic(cout, cout, 1)]
            cin = cout
        self.blocks = torch.nn.Sequential(*blocks)
        self.fc = torch.nn.Linear(512, classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))

torch.manual_seed(0)
model = ResNet18().eval()
example_inputs = (torch.randn(1, 3, 64, 64),)
''',
    "gpt2": '''
import torch

class Block(torch.nn.Module):
    def __init__(self, hidden, heads, seq):
        super().__init__()
        self.heads, self.dim = heads, hidden // heads
        self.ln1 = torch.nn.LayerNorm(hidden)
        self.attn = torch.nn.Linear(hidden, 3 * hidden)
        self.proj = torch.nn.Linear(hidden, hidden)
        self.ln2 = torch.nn.LayerNorm(hidden)
        self.fc = torch.nn.Linear(hidden, 4 * hidden)
        self.out = torch.nn.Linear(4 * hidden, hidden)
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq, dtype=torch.bool)))

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.attn(self.ln1(x)).split(h, dim=-1)
        q, k, v = [t.reshape(b, s, self.heads, self.dim).transpose(1, 2) for t in (q, k, v)]
        att = (q @ k.transpose(-1, -2)) / self.dim ** 0.5
        att = torch.softmax(att.masked_fill(~self.mask[:s, :s], float("-inf")), dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, s, h))
        return x + self.out(torch.nn.functional.gelu(self.fc(self.ln2(x)), approximate="tanh"))

class GPT2(torch.nn.Module):
    """GPT-2-style decoder (token + position embeddings, 2 pre-LN blocks, tied LM head), random weights."""
    def __init__(self, vocab=2048, hidden=128, heads=4, layers=2, seq=32):
        super().__init__()
        self.wte = torch.nn.Embedding(vocab, hidden)
        self.wpe = torch.nn.Embedding(seq, hidden)
        self.blocks = torch.nn.ModuleList([Block(hidden, heads, seq) for _ in range(layers)])
        self.ln = torch.nn.LayerNorm(hidden)
        self.register_buffer("pos", torch.arange(seq).unsqueeze(0))

    def forward(self, ids):
        x = self.wte(ids) + self.wpe(self.pos[:, :ids.shape[1]])
        for blk in self.blocks:
            x = blk(x)
        return self.ln(x) @ self.wte.weight.t()

torch.manual_seed(0)
model = GPT2().eval()
example_inputs = (torch.randint(0, 2048, (1, 32)),)
''',
}

#: The quick bench set (run by default): every model above.
QUICK_MODELS = ("mlp", "cnn", "transformer", "resnet18", "gpt2")



#: Untuned variations of cpu_build_dlight.json (``--variants``; the app default before issue 11, with DLight's
#: CPU rules): name -> what it is.
VARIANT_DOCS = {
    "no_dlight": "cpu_build without the DLight step",
    "no_fuse": "cpu_build without FuseOps/FuseTIR",
    "no_mcpu": "cpu_build on the target without 'mcpu' (generic x86-64 code)",
    "no_transpose_matmul": "cpu_build without its FuseTransposeMatmul step (a weight transpose per call)",
    "no_transpose_matmul_no_dlight": "cpu_build without FuseTransposeMatmul and without the DLight step",
    "tuned_no_transpose_matmul": "cpu_tuned without its FuseTransposeMatmul step (tunes: costs --trials)",
}


def _time_callable(fn: Callable[[], Any], warmup: int, number: int, repeat: int) -> tuple[float, float]:
    """(min, median) over ``repeat`` of the mean per-call time of ``number`` calls, in µs, after ``warmup`` calls
    and at least 100 ms of calls (the engine's warm-up rule, so every column is measured in steady state)."""
    start, done = time.perf_counter(), 0
    while done < warmup or time.perf_counter() - start < 0.1:
        fn()
        done += 1
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number * 1e6)
    return min(samples), statistics.median(samples)


def _loadavg() -> str:
    try:
        with open("/proc/loadavg", encoding="utf-8") as fh:
            return " ".join(fh.read().split()[:3])
    except OSError:
        return "n/a"


def _set_tuning(doc: Any, trials: Optional[int], work_dir: str) -> None:
    """Point the document's MetaSchedule steps at ``work_dir`` and give them the trial budget."""
    from pipeline_model.passkinds.metaschedule.config import tuning_mode

    for step in doc.steps:
        mode = tuning_mode(step.pass_id)
        if mode is not None:
            step.params["work_dir"] = work_dir
            if trials is not None and mode != "apply":
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


#: The tuned candidate of "app best" (``resources/pipelines/cpu_tuned_focus.json``, total_trials sized to the minutes).
BEST_TUNED = "cpu_tuned_focus"

#: Where the "app best" column keeps its final tuning plan (in the model's work folder): a re-run with the
#: same ``--work-dir`` and minutes applies that folder's database without tuning (only re-measures).
BEST_PLAN_FILE = "bench_best_plan.json"


def _targeted(doc: Any, params: dict[str, Any]) -> Any:
    """``doc`` with its ``relax.MetaScheduleTuneTIR`` step made targeted (``focus`` etc. from ``params``)."""
    from pipeline_model.passkinds.metaschedule.config import tuning_mode

    for step in doc.steps:
        if tuning_mode(step.pass_id) == "tir":
            step.params.update(params)
            step.params["num_trials_per_iter"] = min(int(step.params.get("num_trials_per_iter", 16)),
                                                     int(params.get("total_trials") or 16))
    doc.name = f"{doc.name} (targeted)"
    return doc


def _replayed(doc: Any) -> Any:
    """``doc`` without its tuning step: its ``MetaScheduleApplyDatabase`` applies what the work folder's
    database already holds (a tuning step leaves the module unchanged, so the result is the tuned
    pipeline's). A re-run of "app best" uses it to re-measure without tuning again, also for tasks that
    Stop Tuning ended at the deadline (which the reuse state would tune again)."""
    from pipeline_model.passkinds.metaschedule.config import tuning_mode

    doc.steps = [s for s in doc.steps if tuning_mode(s.pass_id) not in ("tir", "irmod")]
    doc.name = f"{doc.name} (stored database)"
    return doc


def _read_json(path: str) -> Optional[dict[str, Any]]:
    import json

    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else None
    except (OSError, ValueError):
        return None


def _write_json(path: str, data: dict[str, Any]) -> None:
    import json

    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, sort_keys=True)


def _progress_printer(label: str) -> Callable[[str, dict], None]:
    """An engine event listener printing one line per finished tuning round to stderr."""
    def on_event(name: str, data: dict) -> None:
        if name == "tuning_progress":
            print(f"  [{label}] tuning {data.get('done')}/{data.get('total')} trials, "
                  f"{float(data.get('elapsed_s') or 0):.0f} s", file=sys.stderr, flush=True)
    return on_event


def _number_for(name: str, number: int) -> int:
    """Fewer runs per measurement for the big models (ResNet-18 runs ~0.1-1 s each on 2 cores)."""
    return max(1, number // 10) if name == "resnet18" else number


def main() -> int:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--trials", type=int, default=None,
                        help="MetaSchedule trials per PrimFunc of the tuned column "
                             "(default: cpu_tuned.json's max_trials_global)")
    parser.add_argument("--work-dir", default=None,
                        help="tuning work directory (one sub-folder per model; reused by later runs); "
                             "default: a temporary folder, deleted afterwards")
    parser.add_argument("--tuned", action="store_true", help="add the tuned column (MetaSchedule: minutes per model)")
    parser.add_argument("--best", action="store_true",
                        help="add the 'app best' column: targeted MetaSchedule tuning within --tune-minutes per "
                             "model, then the fastest of the tuned pipeline, the app default and --best-from")
    parser.add_argument("--tune-minutes", default="15",
                        help="tuning budget of the 'app best' column, minutes per model (ceiling 15): one number "
                             "or model=minutes pairs, e.g. 15 or mlp=4,cnn=6,transformer=12")
    parser.add_argument("--best-from", default="cpu_build_dlight",
                        help="untuned bundled pipelines that 'app best' also considers (comma-separated; '' none)")
    parser.add_argument("--min-share", type=float, default=0.02,
                        help="'app best': tune the PrimFuncs holding at least this share of the untuned time")
    parser.add_argument("--min-trials", type=int, default=8, help="'app best': fewest trials per tuned PrimFunc")
    parser.add_argument("--calibration-trials", type=int, default=64,
                        help="'app best': trials of the first round, which measures the pace (trials per second)")
    parser.add_argument("--trials-per-iter", type=int, default=16,
                        help="'app best': MetaSchedule's num_trials_per_iter (candidates per round)")
    parser.add_argument("--no-tuned", action="store_true", help=argparse.SUPPRESS)  # the default now
    parser.add_argument("--pipelines", default="",
                        help="comma-separated bundled pipelines (resources/pipelines/NAME.json) to add as columns, "
                             "e.g. cpu_build_dlight,cpu_build_no_transpose,cpu_build_nhwc")
    parser.add_argument("--variants", default="",
                        help="comma-separated variations of cpu_build_dlight.json: " + ", ".join(VARIANT_DOCS)
                             + " (or 'all')")
    parser.add_argument("--models", default=",".join(QUICK_MODELS),
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
    from pipeline_model.consent import Consent
    from pipeline_model.engine.client import EngineClient
    from pipeline_model.resources import resource_path
    from pipeline_model.fileformat import load_pipeline

    models = [m.strip() for m in opts.models.split(",") if m.strip()]
    for m in models:
        if m not in MODELS_SOURCE:
            raise SystemExit(f"unknown model {m!r}; known: {', '.join(MODELS_SOURCE)}")
    variants = list(VARIANT_DOCS) if opts.variants.strip() == "all" else \
        [v.strip() for v in opts.variants.split(",") if v.strip()]
    pipelines = str(resource_path("pipelines"))
    extra = [p.strip() for p in opts.pipelines.split(",") if p.strip()]
    extra_docs = {}
    for name in extra:
        path = os.path.join(pipelines, f"{name}.json")
        if not os.path.isfile(path):
            raise SystemExit(f"unknown pipeline {name!r}: no {path}")
        extra_docs[name] = load_pipeline(path)
    cpu_doc = load_pipeline(os.path.join(pipelines, "cpu_build.json"))
    dlight_doc = load_pipeline(os.path.join(pipelines, "cpu_build_dlight.json"))
    tuned_doc = load_pipeline(os.path.join(pipelines, "cpu_tuned.json"))
    focus_doc = load_pipeline(os.path.join(pipelines, "cpu_tuned_focus.json"))
    for v in variants:
        _variant_doc(v, dlight_doc, tuned_doc)  # unknown names fail before any work
    from pipeline_model.passkinds.metaschedule.budget import BudgetError, parse_tune_minutes, pick_best, trials_for_budget, \
        trials_per_second

    try:
        minutes = parse_tune_minutes(opts.tune_minutes, models)
    except BudgetError as exc:
        raise SystemExit(str(exc)) from None
    best_from = [p.strip() for p in opts.best_from.split(",") if p.strip()] if opts.best else []
    for name in best_from:
        path = os.path.join(pipelines, f"{name}.json")
        if not os.path.isfile(path):
            raise SystemExit(f"--best-from: unknown pipeline {name!r}: no {path}")
        extra_docs.setdefault(name, load_pipeline(path))
    tuning_trials = opts.trials
    if tuning_trials is None:
        tuning_trials = next(int(s.params.get("max_trials_global", 64)) for s in tuned_doc.steps
                             if s.pass_id == "relax.MetaScheduleTuneTIR")

    load_before = _loadavg()
    t_start = time.perf_counter()
    client = EngineClient(step_timeout_s=900.0, consent=Consent.everything())  # the models are .py files
    target = client.request("devices", {})["devices"][0]["target"]
    check = (1e-3, 1e-4)
    rows: dict[str, dict[str, Any]] = {}
    tmp = tempfile.mkdtemp(prefix="bench_latency_")
    work_root = os.path.abspath(opts.work_dir) if opts.work_dir else os.path.join(tmp, "tuning")
    columns = ([*extra] + (["tuned"] if opts.tuned else []) + variants)
    try:
        # Phase 1: TVM in the engine (nothing else runs: TVM's and torch's thread pools spin after work).
        for name in models:
            path = os.path.join(tmp, f"{name}.py")
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(MODELS_SOURCE[name])
            bench = build_api.BenchSettings(warmup=2, number=_number_for(name, opts.number), repeat=opts.repeat)

            def prepared(doc: Any, label: str, path: str = path, name: str = name) -> Any:
                doc = doc.clone()
                drop = {"mcpu"} if label == "no_mcpu" else set()
                doc.model, doc.path = path, None
                doc.target = {k: v for k, v in target.items() if k not in drop}
                doc.name = f"{label} on {name}"
                _set_tuning(doc, tuning_trials, os.path.join(work_root, f"{name}.{label}"))
                return doc

            def app_column(doc: Any, label: str, name: str = name, bench: Any = bench,
                           deadline_s: Optional[float] = None, profile_top: int = 0,
                           build: bool = True) -> dict[str, Any]:
                """Run the pipeline (its passes are part of the app's build), then build, time and check its module.

                ``deadline_s``: stop tuning (the app's Stop Tuning) that many seconds after the run starts;
                ``profile_top``: also profile the built module and keep its largest entries; ``build``:
                False runs the pipeline only (a calibration round)."""
                import threading

                timer = None
                if deadline_s is not None:
                    timer = threading.Timer(max(0.0, deadline_s), client.stop_tuning)
                    timer.daemon = True
                    timer.start()
                printer = _progress_printer(f"{name} {label}")
                paces: list[tuple[int, float]] = []  # (done, elapsed_s) of each progress event

                def on_event(event: str, data: dict) -> None:
                    if event == "tuning_progress":
                        paces.append((int(data.get("done") or 0), float(data.get("elapsed_s") or 0.0)))
                    printer(event, data)

                try:
                    # The bench's own generated model files: consented (they are Python code).
                    # No step texts: the app's build does not print modules (the GUI asks for a text when shown).
                    run = client.run(doc, on_event=on_event, scripts=False)
                finally:
                    if timer is not None:
                        timer.cancel()
                # The pipeline's passes (the steps' own times); like the TVM column, the model import is not counted.
                pipeline_s = sum(float(s.elapsed_ms or 0.0) for s in run.steps) / 1000.0
                tuning = [s.report["tuning"] for s in run.steps if isinstance(s.report, dict) and s.report.get("tuning")]
                tuning_s = sum(float(s.elapsed_ms or 0.0) for s in run.steps
                               if isinstance(s.report, dict) and s.report.get("tuning")) / 1000.0
                if not run.ok:
                    return {"error": run.error or f"step {run.failed_index} failed", "tuning": tuning, "tuning_s": tuning_s}
                if not build:
                    # the pace of the search itself: from the first progress event (after the profile and
                    # the one-time set-up) to the last
                    started = [p for p in paces if p[0] > 0]  # from the first measured round (after the
                    # profile, the one-time set-up and the first round's builds) to the last
                    return {"tuning": tuning, "tuning_s": tuning_s,
                            "pace": (started[-1][0] - started[0][0], started[-1][1] - started[0][1])
                            if len(started) > 1 else (0, 0.0)}
                key = next((s.snapshot_key for s in reversed(run.steps) if s.snapshot_key), run.input_key)
                res = build_api.compare(client, build_api.module_request(doc, baseline=True),
                                        build_api.module_request(doc, key=key),
                                        bench=bench, check=check)
                out = {"min": res.b.latency.min_us, "median": res.b.latency.median_us,
                       "build_s": pipeline_s + res.b.build_ms / 1000.0, "ok": bool(res.check and res.check.passed),
                       "tuning": tuning, "tuning_s": tuning_s,
                       "default": {"min": res.a.latency.min_us, "median": res.a.latency.median_us,
                                   "build_s": res.a.build_ms / 1000.0}}
                if profile_top:
                    prof = build_api.profile(client, doc, key=key)
                    out["profile"] = [(e.name, e.kind, e.share, e.total_us) for e in prof.top(profile_top)]
                return out

            def best_column(name: str = name) -> dict[str, Any]:
                """The tuned candidate of "app best": cpu_tuned_focus.json (a targeted tuning step: the
                PrimFuncs holding >= --min-share of the untuned profile, trials by share) whose trial
                budget is sized to the minutes: a calibration round measures the pace, the final round
                gets the trials that fit in the time left (Stop Tuning at the deadline). With a stored plan
                for the same minutes in the work folder, its database is applied instead (only re-measured)."""
                work = os.path.join(work_root, f"{name}.best")
                os.makedirs(work, exist_ok=True)
                plan_path = os.path.join(work, BEST_PLAN_FILE)
                budget_s = minutes[name] * 60.0
                settings = {"focus": "share", "min_share": float(opts.min_share),
                            "num_trials_per_iter": int(opts.trials_per_iter)}
                stored = _read_json(plan_path)
                t0 = time.perf_counter()
                info: dict[str, Any] = {"minutes": minutes[name], "settings": settings}
                if stored and stored.get("minutes") == minutes[name] and stored.get("settings") == settings \
                        and stored.get("chosen"):
                    print(f"  {name} best: applying the database tuned by the stored plan {plan_path}",
                          file=sys.stderr, flush=True)
                    doc = _replayed(prepared(focus_doc, "best"))
                    col = app_column(doc, "best", deadline_s=budget_s, profile_top=6)
                    col["tuning_first_s"] = float(stored.get("tuning_s") or 0.0)
                    col["plan"] = stored
                    return col
                cal = _targeted(prepared(focus_doc, "best"), {**settings, "min_trials": 1,
                                                              "total_trials": int(opts.calibration_trials)})
                first = app_column(cal, "best/calibration", deadline_s=budget_s, build=False)
                if "error" in first:
                    return first
                done = sum(int(t.get("done") or 0) for t in first["tuning"])
                rate = trials_per_second(*first["pace"]) or trials_per_second(done, first["tuning_s"])
                if rate <= 0:  # nothing measured (every task already tuned in the work folder): an earlier pace
                    rate = float((stored or {}).get("rate_per_min") or 20.0) / 60.0
                # the final round profiles its input and sets up again before it searches: that overhead
                # is the calibration's time outside its search
                overhead = max(0.0, first["tuning_s"] - float(first["pace"][1])) if first["pace"][1] else 0.0
                left = budget_s - (time.perf_counter() - t0)
                total = trials_for_budget(rate, left - overhead, safety=0.9, minimum=int(opts.calibration_trials))
                print(f"  {name} best: calibration {done} trials in {first['tuning_s']:.0f} s (search pace "
                      f"{rate * 60:.0f} trials/min, set-up {overhead:.0f} s); {left:.0f} s left -> {total} trials",
                      file=sys.stderr, flush=True)
                doc = _targeted(prepared(focus_doc, "best"), {**settings, "min_trials": int(opts.min_trials),
                                                              "total_trials": total})
                col = app_column(doc, "best", deadline_s=max(0.0, left), profile_top=6)
                col["tuning_s"] = float(col.get("tuning_s") or 0.0) + first["tuning_s"]
                plan = next((t.get("focus") for t in col.get("tuning") or [] if t.get("focus")), None) or {}
                info.update({"tuning_s": col["tuning_s"], "rate_per_min": rate * 60, "calibration": done,
                             "total_trials": total, "stopped": any(t.get("stopped") for t in col.get("tuning") or []),
                             "chosen": [{"name": c["name"], "trials": c["trials"], "share": c.get("share")}
                                        for c in plan.get("chosen") or []],
                             "skipped": plan.get("skipped") or []})
                if "error" not in col:
                    _write_json(plan_path, info)
                col["plan"] = info
                return col

            row: dict[str, Any] = {"cols": {}}
            app = app_column(prepared(cpu_doc, "cpu_build"), "cpu_build")
            if "error" in app:
                raise SystemExit(f"{name}: cpu_build failed: {app['error']}")
            row["default"], row["app"] = app.pop("default"), app
            print(f"  {name}: TVM default {row['default']['median']:.1f} us (build {row['default']['build_s']:.1f} s), "
                  f"app default {app['median']:.1f} us (pipeline+build {app['build_s']:.1f} s)",
                  file=sys.stderr, flush=True)
            for label in columns:
                if label == "tuned":
                    base = tuned_doc
                elif label in extra_docs:
                    base = extra_docs[label]
                else:
                    base = _variant_doc(label, dlight_doc, tuned_doc)
                col = app_column(prepared(base, label), label)
                col.pop("default", None)
                row["cols"][label] = col
                print(f"  {name} {label}: " + (col["error"] if "error" in col else
                      f"{col['median']:.1f} us, pipeline+build {col['build_s']:.1f} s, "
                      f"check {'pass' if col['ok'] else 'FAIL'}"), file=sys.stderr, flush=True)
            if opts.best:
                best = best_column()
                row["best_tuned"] = best
                print(f"  {name} best (tuned): " + (best["error"] if "error" in best else
                      f"{best['median']:.1f} us, tuning {best['tuning_s'] / 60:.1f} min, "
                      f"check {'pass' if best['ok'] else 'FAIL'}"), file=sys.stderr, flush=True)
                for label in best_from:
                    if label not in row["cols"]:
                        col = app_column(prepared(extra_docs[label], label), label)
                        col.pop("default", None)
                        row.setdefault("best_from", {})[label] = col
                candidates = {BEST_TUNED: best, "cpu_build": row["app"],
                              **{k: v for k, v in row["cols"].items() if k in best_from},
                              **row.get("best_from", {})}
                row["best_name"] = pick_best(candidates)
                row["best"] = candidates.get(row["best_name"] or "", {"error": "no candidate passed"})
            rows[name] = row
        client.close()
        t_tvm = time.perf_counter() - t_start
        # Phase 2: PyTorch eager and ONNX Runtime, same models and inputs, same thread count.
        torch.set_num_threads(int(target.get("num-cores", os.cpu_count() or 1)))
        for name in models:
            ns: dict = {}
            exec(compile(MODELS_SOURCE[name], name, "exec"), ns)  # noqa: S102 - our own model definitions
            model, inputs = ns["model"], ns["example_inputs"]
            number = _number_for(name, opts.number)
            with torch.inference_mode():
                rows[name]["torch"] = _time_callable(lambda model=model, inputs=inputs: model(*inputs), 2, number, opts.repeat)
            onnx_path = os.path.join(tmp, f"{name}.onnx")
            torch.onnx.export(model, inputs, onnx_path, dynamo=False)
            options = ort.SessionOptions()
            options.intra_op_num_threads = torch.get_num_threads()
            sess = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
            feed = {i.name: t.numpy() for i, t in zip(sess.get_inputs(), inputs)}
            rows[name]["ort"] = _time_callable(lambda sess=sess, feed=feed: sess.run(None, feed), 2, number, opts.repeat)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    def lat(c: dict[str, Any]) -> str:
        return "error" if "error" in c else f"{c['min']:.0f} / {c['median']:.0f}"

    best_header = ["app best min/med (us)", "app best pipeline", "best/PyTorch", "best/ORT", "tuning (min)"] \
        if opts.best else []
    header = ["model", "TVM default min/med (us)", "app default min/med (us)", "app/TVM",
              *(f"{c} min/med (us)" for c in columns), *best_header[:2], "PyTorch min/med (us)", "ORT min/med (us)",
              "app/PyTorch", "app/ORT", *best_header[2:], "TVM build (s)", "app build (s)", "build ratio",
              *(f"{c} build (s)" for c in columns), "check"]
    lines = []
    for name in models:
        row = rows[name]
        d, a = row["default"], row["app"]
        (t_min, t_med), (o_min, o_med) = row["torch"], row["ort"]
        best_cells: list[str] = []
        if opts.best:
            b, tuned = row["best"], row["best_tuned"]
            tuning_min = (f"{tuned['tuning_s'] / 60:.1f}" if not tuned.get("tuning_first_s") else
                          f"{tuned['tuning_first_s'] / 60:.1f} (re-run {tuned['tuning_s'] / 60:.1f})") \
                if "tuning_s" in tuned else "-"
            best_cells = [lat(b), row["best_name"] or "none",
                          "-" if "error" in b else f"{b['median'] / t_med:.2f}x",
                          "-" if "error" in b else f"{b['median'] / o_med:.2f}x", tuning_min]
        cells = [name, lat(d), lat(a), f"{a['median'] / d['median']:.2f}x",
                 *(lat(row["cols"][c]) for c in columns), *best_cells[:2],
                 f"{t_min:.0f} / {t_med:.0f}", f"{o_min:.0f} / {o_med:.0f}",
                 f"{a['median'] / t_med:.2f}x", f"{a['median'] / o_med:.2f}x", *best_cells[2:],
                 f"{d['build_s']:.1f}", f"{a['build_s']:.1f}", f"{a['build_s'] / d['build_s']:.2f}x",
                 *("-" if "error" in row["cols"][c] else f"{row['cols'][c]['build_s']:.1f}" for c in columns)]
        checked = [("app", a), *row["cols"].items(), *row.get("best_from", {}).items()]
        if opts.best:
            checked.append((BEST_TUNED, row["best_tuned"]))
        failed = [k for k, c in checked if not c.get("ok")]
        cells.append("pass" if not failed else "FAIL: " + ", ".join(failed))
        lines.append(cells)
    print(f"target {target}; torch {torch.__version__} ({torch.get_num_threads()} threads), "
          f"onnxruntime {ort.__version__}, numpy {np.__version__}")
    tuning_note = ("off (the tuned columns take minutes per model; --tuned / --best add them)"
                   if not (opts.tuned or opts.best) else
                   "; ".join(([f"--tuned: {tuning_trials} trials per PrimFunc"] if opts.tuned else [])
                             + ([f"--best: {opts.tune_minutes} min per model"] if opts.best else [])))
    print(f"tuning: {tuning_note}; "
          f"TVM phase {t_tvm:.0f} s, total {time.perf_counter() - t_start:.0f} s; "
          f"load average before {load_before}, after {_loadavg()}")
    print("app build = the pipeline's passes + tvm.compile of its module; TVM build = tvm.compile's default build")
    for v in variants:
        print(f"  {v}: {VARIANT_DOCS[v]}")
    if opts.best:
        print(f"app best: targeted tuning (focus share >= {opts.min_share:g}, trials by share, "
              f"{opts.trials_per_iter} per round) within {opts.tune_minutes} min per model, or the fastest of "
              f"{', '.join(['cpu_build', *best_from])}; work dir {work_root}")
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
    if opts.best:
        print("\nWhere the time goes in the tuned module (profile after tuning; share of the run, us per run):")
        for name in models:
            tuned = rows[name]["best_tuned"]
            plan = tuned.get("plan") or {}
            head = (f"  {name}: {len(plan.get('chosen') or [])} PrimFuncs tuned, {sum(int(c['trials']) for c in plan.get('chosen') or [])} trials"
                    + (f" (pace {plan['rate_per_min']:.0f} trials/min)" if plan.get("rate_per_min") else "")
                    + (", stopped at the deadline" if plan.get("stopped") else ""))
            print(head)
            tuned_names = {c["name"] for c in plan.get("chosen") or []}
            for entry_name, kind, share, total_us in tuned.get("profile") or []:
                mark = "tuned" if entry_name in tuned_names else ("not tuned" if kind == "prim_func" else kind)
                print(f"    {entry_name:40s} {share * 100:5.1f} %  {total_us:9.1f} us  ({mark})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
