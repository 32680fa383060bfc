"""Command line of ``python -m bench.bench_latency`` (see :mod:`bench.bench_latency` for what it measures)."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from typing import Any, Optional

from bench.latency import docs, exporting, models

#: Default --models: the real architectures (issue 19's bench set).
DEFAULT_MODELS = ("resnet18_tv", "mobilenet_v3_small", "efficientnet_b0", "gpt2_hf", "bert_hf", "llama_hf")


def parser() -> argparse.ArgumentParser:
    """The bench's options."""
    p = argparse.ArgumentParser(prog="python -m bench.bench_latency",
                                description="Latency of the app's CPU pipelines vs tvm.compile, PyTorch eager, "
                                            "torch.compile and ONNX Runtime, interleaved in one process")
    p.add_argument("--models", default=",".join(DEFAULT_MODELS),
                   help="comma-separated subset of: " + ", ".join(models.all_models()) + " (or 'all')")
    p.add_argument("--formats", default="pt2,onnx",
                   help="model files imported through the app: " + ", ".join(exporting.FORMATS)
                        + ", py (the small models' own source)")
    p.add_argument("--threads", type=int, default=2, help="threads of every system (TVM, PyTorch, ONNX Runtime)")
    p.add_argument("--repeat", type=int, default=7, help="interleaved rounds (each times every system once)")
    p.add_argument("--build-rounds", type=int, default=3,
                   help="build the TVM default and app default columns this many times (alternating, the engine's "
                        "module cache cleared each round); the table gives the medians and the median ratio")
    p.add_argument("--sample-ms", type=float, default=50.0, help="about how long one sample of one system lasts")
    p.add_argument("--tol", type=float, default=1e-4, help="numerical check: max |diff| / max |ref| at most this")
    p.add_argument("--image", type=int, default=224, help="image side of the CNNs (1x3xNxN)")
    p.add_argument("--no-compile", action="store_true", help="leave out torch.compile (its first call is slow)")
    p.add_argument("--markdown", action="store_true", help="print the table as Markdown (docs/PERFORMANCE.md)")
    p.add_argument("--work-dir", default=None, help="tuning work folder (one sub-folder per model file; reused "
                                                    "by later runs); default: a temporary folder")
    p.add_argument("--tuned-minutes", default=None,
                   help="add the 'app tuned' column: cpu_tuned_app.json (the default pipeline, tuning seeded with "
                        "its schedules) with time_budget_s = this many minutes per model file (ceiling 10): one "
                        "number or model=minutes pairs")
    p.add_argument("--best", action="store_true",
                   help="add 'app best': the fastest of app tuned (within --tune-minutes), app default and "
                        "--best-from")
    p.add_argument("--tune-minutes", default="15", help="tuning budget of --best (ceiling 15)")
    p.add_argument("--best-from", default="cpu_build_dlight", help="untuned bundled pipelines --best considers")
    p.add_argument("--tuned", action="store_true", help="add cpu_tuned.json (--trials per PrimFunc) as a column")
    p.add_argument("--trials", type=int, default=None, help="MetaSchedule trials of --tuned")
    p.add_argument("--min-trials", type=int, default=8, help="tuned column: fewest trials per PrimFunc (min_trials)")
    p.add_argument("--trials-per-iter", type=int, default=16, help="tuned column: num_trials_per_iter")
    p.add_argument("--search-population", type=int, default=512,
                   help="tuned column: search_population (MetaSchedule's evolutionary search; 512 = TVM's default)")
    p.add_argument("--pipelines", default="", help="bundled pipelines (resources/pipelines/NAME.json) as columns")
    p.add_argument("--dynamic", action="store_true",
                   help="the dynamic-axis bench instead (bench/latency/dynamic.py): GPT-2/BERT/Llama exported with a "
                        "dynamic seq axis vs the same model exported static, and ONNX Runtime, at each of --seqs")
    p.add_argument("--seqs", default="32,128", help="with --dynamic: sequence lengths (default 32,128)")
    p.add_argument("--variants", default="", help="variations of cpu_build_dlight.json: "
                                                  + ", ".join(docs.VARIANT_DOCS) + " (or 'all')")
    p.add_argument("--busy", action="store_true",
                   help="busy-machine mode (issue 35): time every model again with a competing CPU-bound process "
                        "pinned to one core and print a second table (bench/latency/busy.py)")
    p.add_argument("--int8", action="store_true",
                   help="int8 rows instead (issue 34): each model quantized by ONNX Runtime's quantize_static (CNNs, "
                        "QDQ) or quantize_dynamic (transformers), the app default against ONNX Runtime on that file "
                        "(bench/latency/int8.py)")
    return p


def _names(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


class Plan:
    """What the run does: models, formats, the app columns' documents, tuning budgets, folders."""

    def __init__(self, opts: Any) -> None:
        from pipeline_model.fileformat import load_pipeline
        from pipeline_model.passkinds.metaschedule.budget import BudgetError, parse_tune_minutes
        from pipeline_model.resources import resource_path

        self.opts = opts
        self.models = list(models.all_models()) if opts.models.strip() == "all" else _names(opts.models)
        for m in self.models:
            if m not in models.all_models():
                raise SystemExit(f"unknown model {m!r}; known: {', '.join(models.all_models())}")
        self.formats = _names(opts.formats)
        for f in self.formats:
            if f not in (*exporting.FORMATS, "py"):
                raise SystemExit(f"unknown format {f!r}; known: {', '.join(exporting.FORMATS)}, py")
        self.threads = int(opts.threads)
        self.build_rounds = max(1, int(opts.build_rounds))
        folder = str(resource_path("pipelines"))
        variants = list(docs.VARIANT_DOCS) if opts.variants.strip() == "all" else _names(opts.variants)
        self.best_from = ["app default", "tuned", *_names(opts.best_from)] if opts.best else None
        extra = [*_names(opts.pipelines), *(self.best_from[2:] if self.best_from else [])]
        self.docs = {}
        for name in dict.fromkeys(["cpu_build", "cpu_build_dlight", "cpu_tuned", docs.BEST_TUNED, *extra]):
            path = os.path.join(folder, f"{name}.json")
            if not os.path.isfile(path):
                raise SystemExit(f"unknown pipeline {name!r}: no {path}")
            self.docs[name] = load_pipeline(path)
        self.variants = variants
        for v in variants:
            docs.variant_doc(v, self.docs["cpu_build_dlight"], self.docs["cpu_tuned"])  # unknown names fail now
        self.extras = list(dict.fromkeys([*extra, *(["cpu_tuned"] if opts.tuned else []), *variants]))
        self.app_labels = ["app default", *self.extras]
        self.trials = opts.trials if opts.trials is not None else next(
            int(s.params.get("max_trials_global", 64)) for s in self.docs["cpu_tuned"].steps
            if s.pass_id == "relax.MetaScheduleTuneTIR")
        minutes_text = opts.tuned_minutes if opts.tuned_minutes is not None else (opts.tune_minutes if opts.best
                                                                                  else None)
        self.tuned_minutes: dict[str, float] = {}
        if minutes_text is not None:
            try:
                self.tuned_minutes = parse_tune_minutes(minutes_text, self.models)
            except BudgetError as exc:
                raise SystemExit(str(exc)) from None
            parts = [p.strip() for p in str(minutes_text).split(",") if p.strip()]
            if opts.tuned_minutes is not None and all("=" in p for p in parts):  # only the models named are tuned
                named = {p.split("=", 1)[0].strip() for p in parts}
                self.tuned_minutes = {m: v for m, v in self.tuned_minutes.items() if m in named}
            if opts.tuned_minutes is not None and max(self.tuned_minutes.values(), default=0) > 10:
                raise SystemExit("--tuned-minutes: at most 10 minutes per model")
        self.tmp = tempfile.mkdtemp(prefix="bench_latency_")
        self.work_root = os.path.abspath(opts.work_dir) if opts.work_dir else os.path.join(self.tmp, "tuning")
        self.target: dict[str, Any] = {}
        self.onnx: dict[str, str] = {}

    def doc_for(self, label: str) -> Any:
        """The pipeline document of the app column ``label``."""
        if label == "app default":
            return self.docs["cpu_build"]
        if label in self.docs:
            return self.docs[label]
        return docs.variant_doc(label, self.docs["cpu_build_dlight"], self.docs["cpu_tuned"])


def _missing() -> Optional[str]:
    try:
        import onnxruntime  # noqa: F401
        import onnxscript  # noqa: F401
        import torch  # noqa: F401
    except ImportError as exc:
        return str(exc)
    return None


def _pool_text() -> str:
    """The thread pool this process runs the app's columns on: ``the app's (idle workers spin 200 µs)``, or
    ``TVM's (why) TVM_THREAD_POOL_SPIN_COUNT=0 TVM_BIND_THREADS=0`` with TVM's pool variables (``unset``: TVM's
    default). The latency depends on it (a sleeping worker costs a wake-up per parallel loop, a spinning one a
    time slice on a busy core; docs/PERFORMANCE.md)."""
    from pipeline_model.runtime_threads import pool_in_effect, thread_pool

    pool = thread_pool()
    if pool["pool"] == "app":
        return f"the app's (idle workers spin {pool['spin_us']} µs)"
    settings = " ".join(f"{name}={value or 'unset'}" for name, value in pool_in_effect().items())
    return f"TVM's ({pool['why']}) {settings}"


def _print_header(plan: Plan, t_start: float, load: tuple[str, str]) -> None:
    import numpy as np
    import onnxruntime as ort
    import torch
    import tvm

    print(f"target {plan.target}; {plan.threads} threads per system (TVM_NUM_THREADS, torch.set_num_threads, "
          f"ORT intra_op_num_threads); thread pool {_pool_text()}; TVM {tvm.__version__}, torch {torch.__version__}, "
          f"onnxruntime {ort.__version__}, numpy {np.__version__}")
    tuning = (f"app tuned: {docs.BEST_TUNED}.json, time_budget_s = {plan.tuned_minutes} min per model file"
              if plan.tuned_minutes else "no tuning (--tuned-minutes M adds 'app tuned')")
    print(f"{tuning}; {plan.opts.repeat} interleaved rounds of ~{plan.opts.sample_ms:g} ms samples after >= 100 ms "
          f"warm-up each; total {time.perf_counter() - t_start:.0f} s; load average before {load[0]}, after {load[1]}")
    print("ms = min / median of the rounds; ratio = median of the per-round ratios (ratio of the minimums); "
          "build app = the pipeline's passes + the app's build of its module (tvm.compile's steps, the PrimFuncs "
          "compiled on every core), TVM = plain tvm.compile of the model as imported "
          f"(median of {plan.build_rounds} alternating rounds; build ratio = median of the per-round ratios "
          "(ratio of the minimums)); "
          f"check: max |diff| / max |ref| <= {plan.opts.tol:g} against PyTorch and tvm.compile's default build")
    for v in plan.variants:
        print(f"  {v}: {docs.VARIANT_DOCS[v]}")


def _print_busy(plan: Plan, rows: list[dict[str, Any]], timed: dict[str, dict[str, Any]]) -> None:
    """``--busy``: the table again from the rounds timed with a competing process pinned to one core."""
    from bench.latency import report

    busy = {name: {**t, **t["busy"]} for name, t in timed.items()}
    cores = sorted({t["busy"]["core"] for t in timed.values()})
    print(f"\nWith one core kept busy: the same {plan.opts.repeat} interleaved rounds while a competing busy loop "
          f"(another process) runs pinned to core {', '.join(map(str, cores))}; load average per row:")
    header, lines = report.table(rows, busy, plan.extras, plan.best_from)
    report.print_table(header, lines, plan.opts.markdown)


def main(argv: Optional[list[str]] = None) -> int:
    """Run the benchmark and print the table."""
    opts = parser().parse_args(argv)
    missing = _missing()
    if missing:
        print(f"bench_latency needs torch, onnxruntime and onnxscript: {missing}\n"
              "  pip install -r requirements-torch.txt -r requirements-bench.txt", file=sys.stderr)
        return 2
    from bench.latency import archs, report, runner, systems, timing

    if opts.dynamic:
        from bench.latency import dynamic

        if opts.models == ",".join(DEFAULT_MODELS):
            opts.models = "all"
        return dynamic.main(opts)
    archs.IMAGE["size"] = int(opts.image)
    plan = Plan(opts)
    systems.set_threads(plan.threads)  # before TVM's pool starts here and before the engine starts
    load_before, t_start = timing.loadavg(), time.perf_counter()
    if opts.int8:
        from bench.latency import int8

        try:
            int8_rows = int8.run(plan)
        finally:
            shutil.rmtree(plan.tmp, ignore_errors=True)
        print(f"target {plan.target}; {plan.threads} threads per system; thread pool {_pool_text()}; "
              f"{opts.repeat} interleaved rounds; total "
              f"{time.perf_counter() - t_start:.0f} s; load average before {load_before}, after {timing.loadavg()}")
        return int8.print_rows(int8_rows, opts.markdown)
    try:
        rows = runner.engine_phase(plan)
        timed = {name: runner.timing_phase(plan, rows, name) for name in plan.models}
    finally:
        shutil.rmtree(plan.tmp, ignore_errors=True)
    _print_header(plan, t_start, (load_before, timing.loadavg()))
    header, lines = report.table(rows, timed, plan.extras, plan.best_from)
    report.print_table(header, lines, opts.markdown)
    if opts.busy:
        _print_busy(plan, rows, timed)
    if plan.tuned_minutes:
        from bench.latency.tuned import print_profiles

        print_profiles(rows)
    failed = [f"{r['model']}.{r['format']}" for r, line in zip(rows, lines) if not line[-2].startswith("pass")]
    return 1 if failed else 0
