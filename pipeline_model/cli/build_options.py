"""Build options of ``main.py run``: ``--build``, ``--bench``, ``--profile``, ``--top``, ``--inputs``,
``--rtol``, ``--atol``, ``--check-against``, ``--tracker``/``--rpc-key`` (an RPC device), ``--export-lib``, and what to do with them after the pipeline ran.

``add_arguments(parser)`` adds the options; ``run_build(args, client, doc, run_result)`` builds the
final module of the run in the engine, prints the outputs, the latency and the numerical check (or one
JSON object with ``--json``) and returns the exit code: 0 ok, 1 build/run failed or the check failed,
2 bad input (options, inputs file).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Optional, TextIO

from pipeline_model import build_api
from pipeline_model.cli import shape_arg
from pipeline_model.cli.common import engine_failure
from pipeline_model.document import PipelineDocument, target_label

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the build options to the ``run`` sub-command's parser."""
    group = parser.add_argument_group("build and run (needs the pipeline to succeed)")
    group.add_argument("--build", action="store_true",
                       help="build the final module with tvm.compile, run it and check it numerically "
                            "against the unoptimized model (default pipeline, CPU)")
    group.add_argument("--bench", action="store_true",
                       help="also measure latency (time_evaluator: warm-up, then repeats); implies --build")
    group.add_argument("--inputs", metavar="FILE",
                       help=".npy/.npz file with the model inputs (arrays named like the inputs); "
                            "default: seeded random inputs")
    shape_arg.add_input_shape_argument(group)
    group.add_argument("--rtol", type=float, default=None, help="relative tolerance of the check (default: for "
                       "the built module's lowest float precision, 1e-4 for float32, 1e-2 for float16)")
    group.add_argument("--atol", type=float, default=None, help="absolute tolerance of the check (default: as "
                       "--rtol's)")
    group.add_argument("--check-against", choices=build_api.CHECK_AGAINST, default="tvm",
                       help="reference of the check: tvm (the model as loaded, tvm.compile's default build; "
                            "default), framework (the original ONNX/PyTorch file in ONNX Runtime/PyTorch) or both")
    group.add_argument("--profile", action="store_true",
                       help="time every PrimFunc/packed call of one run (VM instrumentation, median of 5 runs) "
                            "and print where the time goes; implies --build")
    group.add_argument("--tracker", metavar="HOST:PORT",
                       help="run, time and profile on a device of this RPC tracker (python -m tvm.exec.rpc_tracker): "
                            "built here for the pipeline's target, uploaded there, checked here; with --rpc-key "
                            "(main.py devices --tracker lists the keys). The profile there times every kernel by "
                            "itself on the device")
    group.add_argument("--rpc-key", metavar="KEY", help="with --tracker: the key of the device to run on")
    group.add_argument("--top", metavar="N", type=int, default=10,
                       help="with --profile: how many functions to print (default 10)")
    group.add_argument("--export-lib", metavar="DIR",
                       help="write the built library (model.so), its weights and a deploy.py into DIR; implies --build")


def wants_build(args: argparse.Namespace) -> bool:
    """True when any build option was given."""
    return bool(getattr(args, "build", False) or getattr(args, "bench", False) or getattr(args, "export_lib", None)
                or getattr(args, "profile", False) or getattr(args, "tracker", None))


def _final_key(run_result: Any) -> Optional[str]:
    for step in reversed(list(getattr(run_result, "steps", []) or [])):
        if getattr(step, "snapshot_key", None) and step.state in ("changed", "unchanged", "skipped"):
            return str(step.snapshot_key)
    return getattr(run_result, "input_key", None)


def _fmt(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.6g}"


def print_build_result(result: build_api.BuildRunResult, stream: TextIO, top: int = 10) -> None:
    """Human-readable report of a build run (``top``: profile entries shown)."""
    print(f"build: {result.label} -> {target_label(result.target)} on {result.device}, "
          f"function {result.function}, built in {result.build_ms:.0f} ms, weights: {result.weights}"
          + (f", inputs at {', '.join(f'{k}={v}' for k, v in result.dims.items())}" if result.dims else ""), file=stream)
    for out in result.outputs:
        bad = f"  NaN={out.nan} Inf={out.inf}" if (out.nan or out.inf) else ""
        print(f"  output {out.index}: {out.dtype}{out.shape}  min={_fmt(out.min)} max={_fmt(out.max)} "
              f"mean={_fmt(out.mean)} std={_fmt(out.std)}{bad}", file=stream)
    if result.latency is not None:
        lat = result.latency
        print(f"latency: median {lat.median_us:.1f} us per run (min {lat.min_us:.1f}, max {lat.max_us:.1f}, "
              f"std {lat.std_us:.1f}; {lat.repeat} x {lat.number} runs after {lat.warmup} warm-up runs"
              f"{f' in {lat.warmup_ms:.0f} ms' if lat.warmup_ms else ''})", file=stream)
    for name, chk in (("check", result.check), ("framework check", result.framework_check)):
        if chk is not None:
            print_check(name, chk, stream)
    for run in result.runs:
        print_shape_run(run, stream)
    if result.profile is not None:
        print_profile(result.profile, stream, top)
    elif result.profile_note:
        print(f"profile: none ({result.profile_note})", file=stream)


def print_shape_run(run: build_api.ShapeRun, stream: TextIO) -> None:
    """One more run of the same built module at other symbolic dims (``--input-shape``)."""
    dims = ", ".join(f"{k}={v}" for k, v in run.dims.items())
    print(f"run at {dims} (same built module):", file=stream)
    for out in run.outputs:
        print(f"  output {out.index}: {out.dtype}{out.shape}  min={_fmt(out.min)} max={_fmt(out.max)} "
              f"mean={_fmt(out.mean)} std={_fmt(out.std)}", file=stream)
    if run.latency is not None:
        print(f"  latency: median {run.latency.median_us:.1f} us per run (min {run.latency.min_us:.1f}, "
              f"max {run.latency.max_us:.1f})", file=stream)
    for name, chk in (("check", run.check), ("framework check", run.framework_check)):
        if chk is not None:
            print_check(f"  {name}", chk, stream)


def quant_tolerance_text(step: float, source: Optional[str]) -> str:
    """How a quantized model's tolerance reads: ``int8 model: tolerance = 1 quantization step (0.0459, ...)``."""
    why = "the output's range / 255" if source == "range" else "the scale of the last DequantizeLinear"
    return f"int8 model: tolerance = 1 quantization step ({step:.3g}, {why})"


def print_check(name: str, chk: build_api.CheckResult, stream: TextIO) -> None:
    """One check: verdict, max |diff|, max |diff| / max |ref|, tolerance, reference, warnings."""
    verdict = "PASS" if chk.passed else "FAIL"
    detail = f" ({chk.error})" if chk.error else ""
    tol = (f"atol {chk.atol:g} x max|ref| + rtol {chk.rtol:g}" if chk.scale == "output"
           else f"rtol {chk.rtol:g}, atol {chk.atol:g}")
    if chk.quant_step:
        tol = quant_tolerance_text(chk.quant_step, chk.step_from)
    elif chk.tolerance_dtype:
        tol += f", for {chk.tolerance_dtype}, the module's lowest precision"
    print(f"{name}: {verdict}  max |diff| {_fmt(chk.max_abs)}, max |diff|/max |ref| {_fmt(chk.max_abs_over_ref)} "
          f"(max |ref| {_fmt(chk.max_ref)}), max rel err {_fmt(chk.max_rel)} ({tol}) vs {chk.reference}{detail}",
          file=stream)
    if chk.reference_failure:
        print(f"  the default-pipeline reference failed ({chk.reference_failure}): "
              + (f"checked against {chk.reference} instead" if chk.max_abs is not None
                 else "the check could not be done; the module itself built and ran"), file=stream)
    for warning in chk.warnings:
        print(f"  warning: {warning}", file=stream)


def print_profile(prof: build_api.Profile, stream: TextIO, top: int = 10) -> None:
    """The ``top`` entries of a profile as a table (function, kind, calls, total, mean, share)."""
    entries = prof.top(top)
    if prof.method == build_api.PROFILE_KERNELS:
        print(f"profile: {len(prof.entries)} kernels, {prof.total_us:.1f} us per run, each timed by itself on the "
              f"RPC device (the whole run there {prof.run_us:.1f} us; the VM's work between the kernels is not in "
              f"the rows; median of {prof.repeat} runs); top {len(entries)}:", file=stream)
        if prof.skipped:
            print(f"  not timed on the device: {', '.join(prof.skipped)}", file=stream)
    else:
        print(f"profile: {len(prof.entries)} callees, {prof.total_us:.1f} us of calls per run "
              f"(instrumented run {prof.run_us:.1f} us; median of {prof.repeat} runs); top {len(entries)}:",
              file=stream)
    width = max([len("function")] + [len(e.name) for e in entries])
    print(f"  {'function'.ljust(width)}  {'kind':<14} {'calls':>5} {'total us':>10} {'mean us':>10} {'share':>6}",
          file=stream)
    for e in entries:
        print(f"  {e.name.ljust(width)}  {e.kind:<14} {e.calls:>5} {e.total_us:>10.1f} {e.mean_us:>10.1f} "
              f"{e.share * 100:>5.1f}%", file=stream)


def run_build(args: argparse.Namespace, client: Any, doc: PipelineDocument, run_result: Any,
              out: Optional[dict[str, Any]] = None) -> int:
    """Build, run, time, check and export as the options say; returns the exit code.

    With ``--json`` (``args.json``) the results go into ``out["build"]``/``out["export"]`` when ``out``
    is given (so the caller prints one JSON document), else one JSON object is printed on stdout.
    """
    from pipeline_model.engine.client import EngineError

    as_json = bool(getattr(args, "json", False))
    report: dict[str, Any] = {}

    def finish(code: int) -> int:
        if as_json:
            if out is not None:
                out.update(report)
            else:
                print(json.dumps(report, indent=2))
        return code

    def fail(code: int, message: str) -> int:
        report["build_error"] = message
        if not as_json:
            print(f"error: {message}", file=sys.stderr)
        return finish(code)

    if args.rtol is not None and args.rtol < 0 or args.atol is not None and args.atol < 0:
        return fail(EXIT_BAD_INPUT, "--rtol and --atol must be >= 0")
    top = getattr(args, "top", None)
    top = 10 if top is None else int(top)
    if top < 1:
        return fail(EXIT_BAD_INPUT, "--top must be >= 1")
    inputs_path = os.path.abspath(args.inputs) if getattr(args, "inputs", None) else None
    if inputs_path:
        from pipeline_model.safe_files import input_problem

        problem = input_problem(args.inputs, "--inputs")  # missing, or a FIFO/device/folder: said as such
        if problem:
            return fail(EXIT_BAD_INPUT, problem)
    if inputs_path and not inputs_path.endswith((".npy", ".npz")):
        return fail(EXIT_BAD_INPUT, f"--inputs {args.inputs}: expected a .npy or .npz file")
    try:
        runs = shape_arg.input_runs(getattr(args, "input_shape", None))
    except shape_arg.DimsError as exc:
        return fail(EXIT_BAD_INPUT, str(exc).replace("--shape", "--input-shape", 1))
    if bool(getattr(args, "tracker", None)) != bool(getattr(args, "rpc_key", None)):
        return fail(EXIT_BAD_INPUT, "--tracker and --rpc-key go together (main.py devices --tracker lists the keys)")
    remote = {"tracker": args.tracker, "key": args.rpc_key} if getattr(args, "tracker", None) else None
    if run_result is not None and not getattr(run_result, "ok", True):
        return fail(EXIT_FAILED, "not building: the pipeline run did not succeed")

    key = _final_key(run_result) if run_result is not None else None
    progress = None if as_json else (lambda name, data: print(f"  {data.get('message', '')}", file=sys.stderr)
                                     if name == "build_progress" else None)
    try:
        result = build_api.build_run(
            client, doc, key=key, inputs=build_api.InputSpec(path=inputs_path, dims=runs[0], more_dims=runs[1:]),
            bench=build_api.BenchSettings() if args.bench else None,
            check=(args.rtol, args.atol), on_event=progress,
            profile=build_api.ProfileSettings() if getattr(args, "profile", False) else None,
            check_against=str(getattr(args, "check_against", None) or "tvm"), remote=remote)
    except EngineError as exc:
        message, code = engine_failure(exc.message)
        return fail(code, f"build failed: {message}")
    report["build"] = result.to_json()
    if not as_json:
        print_build_result(result, sys.stdout, top=top)
    code = EXIT_OK if result.ok else EXIT_FAILED

    if getattr(args, "export_lib", None):
        try:
            exported = build_api.export_library(client, doc, args.export_lib, key=key, on_event=progress,
                                                overwrite=bool(getattr(args, "force", False)))
        except EngineError as exc:
            return fail(EXIT_FAILED, f"export failed: {exc.message}")
        report["export"] = exported.__dict__
        if not as_json:
            print(f"exported: {exported.library}; run it with: python {exported.deploy_script}")
    return finish(code)
