"""The app's CPU convolution schedule (``app.CPUConv2d`` + weights packed once) vs before, TVM's default and ONNX
Runtime, timed interleaved in one process.

For each model of ``bench/conv_models.py`` (torchvision-style ResNet-18 / MobileNetV3-small / EfficientNet-B0 at
224x224, the bench's small CNN and 64x64 ResNet-18), imported like the app does (``from_exported_program``,
weights kept as parameters), it builds:

* "app": ``resources/pipelines/cpu_build.json`` (its steps applied in this process with the app's own pass
  construction), built as the app builds (``scriptlib.building.compile_module``: its TIR pipeline, the PrimFuncs
  on every core), run through :class:`~pipeline_model.scriptlib.arguments.PrepackedVM` (the weights transformed
  once by ``main_transform_params``, as the engine and exported scripts do); "before" is built the same way;
* "before": cpu_build.json as it was before this work (``FoldConstant`` before ``FuseOps``, DLight with
  ``app.CPUParallel`` only, no ``DecomposeOpsForInference`` / ``SplitLayoutRewritePreproc`` /
  ``LiftTransformParams``) — the app default until now;
* "tvm": ``tvm.compile``'s default pipeline (the numerical reference);
* "ort": ONNX Runtime on the legacy TorchScript ONNX export (``intra_op_num_threads`` = threads, its workers
  not spinning between runs: spinning workers took the cores from TVM's threads in the next sample).

Timing: every system warmed up (>= 100 ms), then ``--rounds`` rounds, each one sample per system (mean of enough
calls to last ``--sample-ms``) in rotating order, so load changes hit all alike. Prints min and median per
system, the ratios app/ort and app/before, build times (pipeline + compile vs ``tvm.compile`` default), the
numerical check (max |diff| / max |ref| of the app's output vs the TVM default's and vs PyTorch's) and the load
average. Needs torch, onnx, onnxruntime.

Usage: ``TVM_NUM_THREADS=2 .venv/bin/python -m bench.bench_conv_rule [--models a,b] [--rounds N]
[--sample-ms MS] [--threads N] [--no-before] [--target JSON] [--spin-count N]``. Parallel loops run on the
app's thread pool (:mod:`pipeline_model.scriptlib.pool`); ``RPS_THREAD_POOL=tvm`` runs TVM's, which ``--spin-count``
sets up.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from typing import Any, Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: Steps this work added to cpu_build.json (left out of "before").
NEW_STEPS = ("relax.DecomposeOpsForInference", "relax.SplitLayoutRewritePreproc", "relax.LiftTransformParams")
#: The target as a dict (set by :func:`main`).
TARGET_JSON: dict[str, Any] = {"kind": "llvm"}


def _loadavg() -> str:
    try:
        with open("/proc/loadavg", encoding="utf-8") as fh:
            return " ".join(fh.read().split()[:3])
    except OSError:
        return "n/a"


def _steps(before: bool) -> list[tuple[str, dict[str, Any]]]:
    """The enabled steps of cpu_build.json; ``before``: the pipeline as it was before this work (no
    ``DecomposeOpsForInference``, ``FoldConstant`` before ``FuseOps``, DLight with ``app.CPUParallel`` only,
    no ``SplitLayoutRewritePreproc`` / ``LiftTransformParams`` / ``FoldConstant`` after them)."""
    from pipeline_model.fileformat import load_pipeline

    doc = load_pipeline(os.path.join(ROOT, "resources", "pipelines", "cpu_build.json"))
    steps: list[tuple[str, dict[str, Any]]] = []
    lifted = False
    for step in doc.steps:
        if not step.enabled:
            continue
        params = dict(step.params)
        if before:
            if step.pass_id in NEW_STEPS:
                lifted = lifted or step.pass_id == "relax.LiftTransformParams"
                continue
            if step.pass_id == "relax.FoldConstant" and lifted:
                continue
            if step.pass_id == "dlight.ApplyDefaultSchedule":
                params["rules"] = [r for r in params.get("rules", []) if r != "app.CPUConv2d"]
        steps.append((step.pass_id, params))
        if before and step.pass_id == "relax.AnnotateTIROpPattern":
            steps.append(("relax.FoldConstant", {}))
    return steps


def _apply(mod: Any, steps: list[tuple[str, dict[str, Any]]], target: Any) -> Any:
    """``mod`` after ``steps``, each built like the engine builds it, inside the target and opt level 3."""
    import tvm

    from pipeline_model.passkinds.catalogue_tvm import make_pass
    from pipeline_model.passkinds.context import PassBuildContext

    ctx = PassBuildContext(target=TARGET_JSON)
    with target, tvm.transform.PassContext(opt_level=3):
        for pass_id, params in steps:
            mod = make_pass(pass_id, params, ctx)(mod)
    return mod


def _import(name: str) -> tuple[Any, dict[str, Any], Any, tuple[Any, ...]]:
    import torch
    from tvm import relax
    from tvm.relax.frontend.torch import from_exported_program

    from bench.conv_models import build

    torch.set_num_threads(1)  # torch only exports here; its thread pool must not compete with the timed systems
    model, inputs = build(name)
    with torch.no_grad():
        exported = torch.export.export(model, inputs)
    mod = from_exported_program(exported, keep_params_as_input=True)
    mod, params = relax.frontend.detach_params(mod)
    names = [v.name for v in mod["main"].params[int(mod["main"].attrs["num_input"]):]]
    weights = {n: p.numpy() for n, p in zip(names, params.get("main", []))}
    return mod, weights, model, inputs


def _ort_session(model: Any, inputs: tuple[Any, ...], threads: int, folder: str) -> Callable[[], Any]:
    import onnxruntime as ort
    import torch

    path = os.path.join(folder, "model.onnx")
    torch.onnx.export(model, inputs, path, dynamo=False, input_names=["x"])
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    # Its workers would spin after each run and take the cores from TVM's threads in the next sample.
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    feed = {"x": inputs[0].numpy()}
    return lambda: sess.run(None, feed)


def _tvm_system(mod: Any, weights: dict[str, Any], x: Any, target: Any, steps: Any) -> dict[str, Any]:
    import tvm
    from tvm import relax

    from pipeline_model.scriptlib.arguments import make_arguments, prepacked_vm
    from pipeline_model.scriptlib.building import compile_module

    t0 = time.perf_counter()
    final = mod if steps is None else _apply(mod, steps, target)
    t1 = time.perf_counter()
    ex = tvm.compile(final, target=target) if steps is None else compile_module(final, target)  # as the app builds
    t2 = time.perf_counter()
    dev = tvm.cpu(0)
    vm = prepacked_vm(relax.VirtualMachine(ex, dev), final)
    arrays, _ = make_arguments(final, "main", weights)
    arrays[0] = x
    args = [tvm.runtime.tensor(a, dev) for a in arrays]
    func = vm["main"]
    out = func(*args)
    return {"call": lambda: func(*args), "out": (out[0] if not hasattr(out, "numpy") else out).numpy(),
            "passes_s": t1 - t0, "compile_s": t2 - t1}


def _sample(fn: Callable[[], Any], sample_s: float) -> float:
    """Mean ms per call of enough calls to last ``sample_s`` (at least one)."""
    n, t0 = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        spent = time.perf_counter() - t0
        if spent >= sample_s:
            return spent / n * 1000.0


def _time_interleaved(calls: dict[str, Callable[[], Any]], rounds: int, sample_s: float) -> dict[str, list[float]]:
    names = list(calls)
    for name in names:  # warm-up: >= 100 ms each
        _sample(calls[name], 0.1)
    out: dict[str, list[float]] = {n: [] for n in names}
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            out[name].append(_sample(calls[name], sample_s))
    return out


def run_model(name: str, args: argparse.Namespace, target: Any) -> dict[str, Any]:
    """Build, check and time one model; returns its row."""
    import numpy as np

    mod, weights, model, inputs = _import(name)
    x = inputs[0].numpy()
    systems = {"app": _tvm_system(mod, weights, x, target, _steps(before=False)),
               "tvm": _tvm_system(mod, weights, x, target, None)}
    if not args.no_before:
        systems["before"] = _tvm_system(mod, weights, x, target, _steps(before=True))
    import torch

    def rel_err(got: Any, ref: Any) -> float:
        return float(np.abs(got - ref).max() / max(float(np.abs(ref).max()), 1e-30))

    err = rel_err(systems["app"]["out"], systems["tvm"]["out"])
    with torch.no_grad():
        err_torch = rel_err(systems["app"]["out"], model(*inputs).numpy())
    with tempfile.TemporaryDirectory() as folder:
        calls = {k: v["call"] for k, v in systems.items()}
        calls["ort"] = _ort_session(model, inputs, args.threads, folder)
        load0 = _loadavg()
        times = _time_interleaved(calls, args.rounds, args.sample_ms / 1000.0)
    row = {"model": name, "load": f"{load0} -> {_loadavg()}", "check_rel_err": err, "torch_rel_err": err_torch,
           "build_app_s": systems["app"]["passes_s"] + systems["app"]["compile_s"],
           "build_tvm_s": systems["tvm"]["passes_s"] + systems["tvm"]["compile_s"],
           "build_before_s": (f"{systems['before']['passes_s'] + systems['before']['compile_s']:.1f}"
                              if "before" in systems else "–"),
           "ms": {k: {"min": min(v), "median": statistics.median(v)} for k, v in times.items()}}
    return row


def _warm_up(target: Any) -> None:
    """Build a small model both ways once, so one-time costs (imports, LLVM start-up) fall on no model's build."""
    mod, weights, _model, inputs = _import("cnn")
    for steps in (_steps(before=False), None):
        _tvm_system(mod, weights, inputs[0].numpy(), target, steps)


def _ratio(row: dict[str, Any], a: str, b: str, stat: str) -> str:
    if a not in row["ms"] or b not in row["ms"]:
        return "–"
    return f"{row['ms'][a][stat] / row['ms'][b][stat]:.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="cnn,resnet18_64,resnet18,mobilenet_v3_small,efficientnet_b0")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--sample-ms", type=float, default=60.0)
    parser.add_argument("--threads", type=int, default=int(os.environ.get("TVM_NUM_THREADS", "2")))
    parser.add_argument("--no-before", action="store_true", help="leave out the slow 'before' column")
    parser.add_argument("--target", default=None, help="target JSON (default: llvm with the host mcpu)")
    parser.add_argument("--spin-count", type=int, default=None,
                        help="TVM_THREAD_POOL_SPIN_COUNT for TVM's thread pool (0: workers sleep at once)")
    args = parser.parse_args()
    os.environ.setdefault("TVM_NUM_THREADS", str(args.threads))
    if args.spin_count is not None:
        os.environ["TVM_THREAD_POOL_SPIN_COUNT"] = str(args.spin_count)
    sys.path.insert(0, ROOT)
    from bench.latency.cli import _pool_text
    from pipeline_model.runtime_threads import ensure_runtime_threads

    ensure_runtime_threads()  # before import tvm: the app's thread pool, as the engine runs it
    import tvm
    from tvm.target import codegen

    TARGET_JSON.clear()
    TARGET_JSON.update(json.loads(args.target) if args.target else
                       {"kind": "llvm", "mcpu": str(codegen.llvm_get_system_cpu()), "num-cores": args.threads})
    target = tvm.target.Target(TARGET_JSON)
    print(f"target {target}  TVM_NUM_THREADS={os.environ['TVM_NUM_THREADS']}  ORT threads {args.threads}  "
          f"thread pool {_pool_text()}  load {_loadavg()}",
          flush=True)
    print("| model | app ms (min / median) | ORT ms | before ms | TVM default ms | app ÷ ORT (min / median) | "
          "before ÷ app (median) | build app / before / TVM default s | rel err vs TVM / torch | load |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    _warm_up(target)
    for name in args.models.split(","):
        row = run_model(name.strip(), args, target)

        def cell(k: str, ms: dict[str, Any] = row["ms"]) -> str:
            return f"{ms[k]['min']:.2f} / {ms[k]['median']:.2f}" if k in ms else "–"

        print(f"| {name} | {cell('app')} | {cell('ort')} | {cell('before')} | {cell('tvm')} | "
              f"{_ratio(row, 'app', 'ort', 'min')} / {_ratio(row, 'app', 'ort', 'median')} | "
              f"{_ratio(row, 'before', 'app', 'median')} | {row['build_app_s']:.1f} / {row['build_before_s']} / "
              f"{row['build_tvm_s']:.1f} | "
              f"{row['check_rel_err']:.1e} / {row['torch_rel_err']:.1e} | {row['load']} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
