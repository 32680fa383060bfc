"""Engine commands ``build_run`` and ``export_library``: build a pipeline's module, run, time, profile and
check it, or write it out as a shared library with a deploy script.

What a build does (the parts are in :mod:`pipeline_model.engine.build`):

* The module to build is a snapshot of a run (``key``), or, without one, the final module of running
  the document's pipeline. It is compiled with ``tvm.compile`` and the ``default_build`` Relax pipeline
  (legalize what is left, then VM lowering; no extra scheduling or fusion, so the build measures the
  user's pipeline). A module that is already VM-lowered is only code-generated. With ``baseline`` the module
  is the model as loaded, compiled as plain ``tvm.compile(mod, target)`` compiles it (its ``"default"``
  Relax pipeline — on a CPU in TVM 0.27 the same ``default_build``, on a GPU the target's default with DLight —
  and one LLVM module on one core): what the user gets without the app.
* For a GPU target, a module whose PrimFuncs have no thread binding is refused before compiling, with
  the function names and the fix (add a DLight or MetaSchedule step).
* Inputs are seeded random arrays from the entry function's parameter types (symbolic dims from
  ``dims``, default 1) or a user ``.npy``/``.npz`` file; weights are the model's when it has them,
  else seeded random arrays of the right shapes — the same values for the optimized and the baseline
  module.
* The numerical check compares with the model as loaded, compiled by ``tvm.compile`` with the stock
  default pipeline on the CPU.
"""

from __future__ import annotations

import functools
import io
import json
import os
import tempfile
from typing import TYPE_CHECKING, Any

import numpy as np

from pipeline_model import safe_files, safe_write
from pipeline_model import targets as targets_mod
from pipeline_model.build_api import EXPORT_FILES
from pipeline_model.engine.build.deploy import deploy_script
from pipeline_model.engine.build.devices import device_for, target_label
from pipeline_model.engine.build.errors import error_text
from pipeline_model.engine.build.inputs import prepare_inputs
from pipeline_model.engine.build.measure import build_resolved, make_vm, measure_resolved, output_stats, run_function
from pipeline_model.engine.build.profile import callee_nodes, keep_profile
from pipeline_model.engine.build.reference import framework_check, framework_kind, reference_check
from pipeline_model.engine.build.requests import check_settings, progress, resolve_module
from pipeline_model.engine.handler_registry import handler
from pipeline_model.scriptlib.arguments import make_arguments
from pipeline_model.scriptlib.functions import BuildError, entry_function
from pipeline_model.scriptlib.outputs import benchmark

if TYPE_CHECKING:  # the worker imports this module; only type checkers import it back
    from pipeline_model.engine.context import WorkerContext


@handler("build_run")
def handle_build_run(args: dict, ctx: WorkerContext) -> dict:
    """Build the pipeline's module, run it, time it, profile it and check it.

    args: ``document``, ``base_dir``, ``key`` (default: final module of a run), ``target``,
    ``function``, ``inputs`` (``{"seed", "dims"}`` or ``{"path"}``), ``bench`` (``{"warmup", "number",
    "repeat"}`` or null for no timing), ``check`` (``{"rtol", "atol", "scale": "output"|"absolute"}`` or null
    for no check), ``remote`` (``{"tracker": "HOST:PORT", "key"}``: built here, uploaded to an RPC device of
    that key, run and timed there, checked here; :mod:`pipeline_model.engine.build.remote`), ``check_against`` (``"tvm"``: the model as loaded built by ``tvm.compile``'s default
    pipeline; ``"framework"``: the original ONNX/PyTorch file in its runtime; ``"both"``), ``profile``
    (``{"warmup", "repeat"}`` or null: time of every call, see :func:`pipeline_model.engine.build.measure.profile_vm`; kept per snapshot key,
    command ``profile_get``).
    Reply: ``function``, ``target``, ``device``, ``label``, ``key``, ``build_ms``, ``arguments``, ``weights``,
    ``outputs``, ``latency``, ``check`` (vs TVM), ``framework_check``, ``profile`` (with ``nodes``: callee ->
    graph node ids of the entry function), ``dims`` (the inputs' symbolic dims), ``runs``: one entry per
    ``inputs["more_dims"]`` item, the same built module run again on inputs of those symbolic dims
    (``dims``, ``arguments``, ``outputs``, ``latency``, ``check``, ``framework_check``).
    """
    resolved = resolve_module(args, ctx)
    mod, loaded, target, label, key = resolved.mod, resolved.loaded, resolved.target, resolved.label, resolved.key
    func_name = entry_function(mod, args.get("function"))
    prepared = prepare_inputs(mod, func_name, loaded, args.get("inputs"))
    opt = measure_resolved(resolved, func_name, prepared.arrays, args.get("bench", {}), ctx, label,
                           profile=args.get("profile"))
    result: dict[str, Any] = {
        "function": func_name, "target": target, "device": opt["device"], "label": label, "key": key,
        "build_ms": opt["build_ms"], "arguments": prepared.described,
        "weights": "model" if loaded.params else "random",
        "outputs": output_stats(opt["outputs"]), "latency": opt["latency"], "check": None,
        "framework_check": None, "profile": None, "dims": dict((args.get("inputs") or {}).get("dims") or {}),
    }
    if opt["profile_note"]:
        result["profile_note"] = opt["profile_note"]
    if opt["profile"] is not None:
        prof = dict(opt["profile"])
        prof["nodes"] = callee_nodes(mod, func_name, [e["name"] for e in prof["entries"]])
        prof.update({"key": key, "label": label, "function": func_name, "target": target})
        keep_profile(key, prof)
        result["profile"] = prof
    # a tolerance left to the engine: the one for the module's lowest precision (a quantized model's: one step)
    chk = check_settings(args, mod, loaded, opt["outputs"])
    result["check"], result["framework_check"] = _checks(args, chk, loaded, func_name, prepared, opt["outputs"], ctx)
    result["runs"] = [_shape_run(args, chk, resolved, func_name, opt, dims, ctx)
                      for dims in (args.get("inputs") or {}).get("more_dims") or []]
    return result


def _checks(args: dict, chk: Any, loaded: Any, func_name: str, prepared: Any, outputs: list[np.ndarray],
            ctx: "WorkerContext") -> tuple[Any, Any]:
    """The check against TVM's default build and the framework check of one run, as ``check_against`` says."""
    check = framework = None
    if chk is None:
        return check, framework
    if chk["against"] not in ("tvm", "framework", "both"):
        raise BuildError(f"check_against must be tvm, framework or both, not {chk['against']!r}")
    if chk["against"] in ("tvm", "both"):
        failed = args.get("reference_failed")  # the reference crashed an earlier engine (build_api.build_run)
        fallback = (functools.partial(framework_check, loaded, prepared.arrays, prepared.described,
                                      outputs, chk, ctx)
                    if chk["against"] == "tvm" and framework_kind(loaded) is not None else None)
        check = reference_check(loaded, func_name, prepared.for_reference(loaded, func_name), outputs, chk, ctx,
                                failed=str(failed) if failed else None, fallback=fallback)
    if chk["against"] in ("framework", "both"):
        framework = framework_check(loaded, prepared.arrays, prepared.described, outputs, chk, ctx)
    for one in (check, framework):  # the result says which precision chose the tolerance
        if one is not None and chk.get("tolerance_dtype"):
            one["tolerance_dtype"] = chk["tolerance_dtype"]
            if chk.get("quant_step"):
                one.update(quant_step=chk["quant_step"], step_from=chk["step_from"])
    return check, framework


def _shape_run(args: dict, chk: Any, resolved: Any, func_name: str, opt: dict[str, Any], dims: dict,
               ctx: "WorkerContext") -> dict[str, Any]:
    """One more run of the module built for this request (``opt["executable"]``, not rebuilt) on inputs whose
    symbolic dims are ``dims`` (``--input-shape seq=32 --input-shape seq=128``): outputs, latency, checks."""
    inputs = {**(args.get("inputs") or {}), "dims": {str(k): int(v) for k, v in dict(dims).items()}}
    inputs.pop("more_dims", None)
    prepared = prepare_inputs(resolved.mod, func_name, resolved.loaded, inputs)
    dev = device_for(resolved.target)
    vm = make_vm(opt["executable"], dev, resolved.mod)
    progress(ctx, "running", f"running {resolved.label} with {', '.join(f'{k}={v}' for k, v in inputs['dims'].items())}")
    outputs = run_function(vm, func_name, dev, prepared.arrays)
    bench = args.get("bench", {})
    latency = benchmark(vm, func_name, dev, prepared.arrays, bench) if bench is not None else None
    check, framework = _checks(args, chk, resolved.loaded, func_name, prepared, outputs, ctx)
    return {"dims": inputs["dims"], "arguments": prepared.described, "outputs": output_stats(outputs),
            "latency": latency, "check": check, "framework_check": framework}


@handler("export_library")
def handle_export_library(args: dict, ctx: WorkerContext) -> dict:
    """Build the module and write ``model.so``, ``weights.npz``, ``model.json`` and ``deploy.py`` to ``out_dir``.

    args: like ``build_run`` plus ``out_dir``. The weights are the model's (or the seeded random ones
    the build used); ``deploy.py`` loads the library and runs the entry function. Every file is written with
    :mod:`pipeline_model.safe_write` (a temporary file renamed over the name; never through a symlink, into a
    device or under ``/proc``); the library is linked in a private temporary folder first.
    """
    out_dir = str(args.get("out_dir") or "")
    if not out_dir:
        raise BuildError("export_library needs out_dir")
    overwrite = bool(args.get("overwrite"))
    paths = _export_paths(out_dir, overwrite)  # refused before the build: a link, a device, an existing file ...
    resolved = resolve_module(args, ctx)
    mod, loaded, target = resolved.mod, resolved.loaded, resolved.target
    func_name = entry_function(mod, args.get("function"))
    arrays, described = make_arguments(mod, func_name, loaded.params, args.get("inputs"))
    progress(ctx, "building", f"building {resolved.label} for {target_label(target)}")
    ex = build_resolved(resolved)
    progress(ctx, "exporting", f"writing {paths['model.so']}")
    with tempfile.TemporaryDirectory(prefix="rps-export-") as private:  # the linker writes here, never through a link
        built = os.path.join(private, "model.so")
        try:
            ex.export_library(built)
        except Exception as exc:  # noqa: BLE001
            raise BuildError(f"export_library to {paths['model.so']} failed: {error_text(exc)}") from None
        with open(built, "rb") as fh:
            library = fh.read()
    inputs = [d for d in described if not d.get("weight")]
    weights = [d for d in described if d.get("weight")]
    n_in = len(inputs)
    weight_arrays: dict[str, Any] = {f"w{i}": a for i, a in enumerate(arrays[n_in:])}
    npz = io.BytesIO()
    np.savez(npz, **weight_arrays)
    meta = {"library": "model.so", "function": func_name, "target": target,
            "device": targets_mod.device_kind_for(target), "inputs": inputs, "weights": weights}
    files: dict[str, bytes] = {
        "model.so": library, "weights.npz": npz.getvalue(),
        "model.json": json.dumps(meta, indent=2).encode("utf-8"),
        "deploy.py": deploy_script("model.so", target_label(target)).encode("utf-8"),
    }
    try:
        for name, data in files.items():
            safe_write.write_bytes(paths[name], data, "export file", mode=0o755 if name == "model.so" else None,
                                   replace=overwrite)
    except safe_write.OutputPathError as exc:
        raise BuildError(str(exc)) from None
    return {"library": paths["model.so"], "deploy_script": paths["deploy.py"], "weights": paths["weights.npz"],
            "metadata": paths["model.json"], "function": func_name}


def _export_paths(out_dir: str, overwrite: bool = False) -> dict[str, str]:
    """The paths of :data:`pipeline_model.build_api.EXPORT_FILES` in ``out_dir`` (created with its missing
    parents), each written with :mod:`pipeline_model.safe_write`: a folder that is a symlink, or a file there that
    is a symlink, a FIFO, a device or a folder — or, without ``overwrite``, an existing file — is refused with a
    one-line :class:`BuildError` before anything is built or written."""
    full = os.path.abspath(out_dir)
    if not os.path.lexists(full) and safe_files.special_root(full) is None:
        try:
            os.makedirs(os.path.dirname(full), exist_ok=True)
        except OSError as exc:
            raise BuildError(f"export folder {out_dir}: cannot create {os.path.dirname(full)}: "
                             f"{exc.strerror or exc}") from None
    try:
        paths = safe_write.check_new_files(full, EXPORT_FILES, "export folder", overwrite=overwrite)
        safe_write.ensure_folder(full, "export folder")
        return paths
    except safe_write.OutputPathError as exc:
        raise BuildError(str(exc)) from None
