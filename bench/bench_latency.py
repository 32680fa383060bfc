"""Latency and build time of the app's CPU pipelines vs ``tvm.compile``, PyTorch eager, ``torch.compile`` and
ONNX Runtime, on real architectures (issue 19), all interleaved in one process on the same thread count.

Models (random weights, no downloads; :mod:`bench.latency.models`, :mod:`bench.latency.archs`): torchvision-style
ResNet-18, MobileNetV3-small and EfficientNet-B0 (plain torch, torchvision's blocks; 1x3x224x224), Hugging Face
GPT-2, BERT and Llama from small configs (``transformers``; seq 32), and the small models of the first bench set
(mlp, cnn, transformer, resnet18, gpt2). Each is written as the files a user opens: a ``torch.export`` archive
(``.pt2``) and a dynamo ONNX file (``--formats pt2,onnx``; the small models also ``py``), and every file is
imported through the app's importers in the app's engine.

Columns (:mod:`bench.latency.appside`, :mod:`bench.latency.systems`):

* TVM default: the model as imported, built by ``tvm.compile``'s default pipeline;
* app default: ``resources/pipelines/cpu_build.json`` run by the engine, built, exported with the app's
  ``export_library``; its build time is the pipeline's passes plus the build;
* app tuned (``--tuned-minutes M``, at most 10 per model file): ``cpu_tuned_app.json``, the default pipeline with a
  tuning step seeded with its own schedules and ``time_budget_s`` = M minutes (one run; :mod:`bench.latency.tuned`); ``--best`` adds "app best" (the fastest of app tuned within ``--tune-minutes``,
  app default and ``--best-from``); ``--tuned`` adds ``cpu_tuned.json`` with ``--trials``; ``--pipelines`` and
  ``--variants`` add other untuned app pipelines;
* PyTorch eager, ``torch.compile`` (inductor, CPU; warmed by a first call) and ONNX Runtime (on the same ONNX file);
* tuned vs default: app tuned against app default over the interleaved rounds (paired) with the app's honest-numbers
  verdict (``pipeline_model.latency_stats.compare_runs``: faster / SLOWER beyond noise, or within noise), and how
  many PrimFuncs the apply step's ``keep_wins`` left with a tuned schedule.

Every system runs on ``--threads`` threads (TVM_NUM_THREADS, ``torch.set_num_threads``, ORT
``intra_op_num_threads``; default 2) in this process, warmed up (>= 100 ms) and timed round-robin
(:mod:`bench.latency.timing`): each of ``--repeat`` rounds times every system once. The table
(:mod:`bench.latency.report`; ``--markdown`` for docs/PERFORMANCE.md) gives per model file the latencies, the
ratios (median of the per-round ratios and the ratio of minimums) of app default and app tuned against ONNX
Runtime, torch.compile and eager, app default ÷ TVM default, the build times, the numerical check of every
column against ``tvm.compile``'s default build and PyTorch (max |diff| / max |ref|) and the load average before
and after. ``--busy`` times every model a second time with a competing busy loop pinned to one core
(:mod:`bench.latency.busy`) and prints that table too (issue 35's busy-machine mode). Exit status 1 when a check
fails.

Needs ``requirements-torch.txt`` and ``requirements-bench.txt`` (onnxruntime, onnxscript, transformers).
Usage: ``.venv/bin/python -m bench.bench_latency [--models resnet18_tv,gpt2_hf,...|all] [--formats pt2,onnx]
[--repeat N] [--tuned-minutes M] [--best [--tune-minutes M]] [--tuned [--trials N]] [--pipelines NAME,...]
[--variants all|NAME,...] [--busy] [--work-dir DIR] [--markdown]``
"""

from __future__ import annotations

import sys

from bench.latency.cli import main
from bench.latency.docs import BEST_PLAN_FILE, BEST_TUNED, VARIANT_DOCS
from bench.latency.docs import replayed as _replayed
from bench.latency.docs import set_tuning as _set_tuning
from bench.latency.docs import targeted as _targeted
from bench.latency.docs import variant_doc as _variant_doc
from bench.latency.models import MODELS_SOURCE, SMALL_MODELS

__all__ = ["BEST_PLAN_FILE", "BEST_TUNED", "MODELS_SOURCE", "SMALL_MODELS", "VARIANT_DOCS", "_replayed",
           "_set_tuning", "_targeted", "_variant_doc", "main"]

if __name__ == "__main__":
    sys.exit(main())
