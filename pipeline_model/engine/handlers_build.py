"""Engine commands that build and run modules: ``build_run``, ``compare``, ``export_library``,
``devices`` and ``validate_target``.

Runs in the engine process (imports TVM). What a build does:

* The module to build is a snapshot of a run (``key``), or, without one, the final module of running
  the document's pipeline. It is compiled with ``tvm.compile`` and the ``default_build`` Relax pipeline
  (legalize what is left, then VM lowering; no extra scheduling or fusion, so the build measures the
  user's pipeline). A module that is already VM-lowered is only code-generated.
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

import json
import os
import re
import time
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from pipeline_model import targets as targets_mod
from pipeline_model.engine.handler_registry import HANDLERS, handler

if TYPE_CHECKING:  # the worker imports this module; only type checkers import it back
    from pipeline_model.engine.worker import WorkerContext

# ----------------------------------------------------------------------------------------- settings

#: ``warmup_ms``: warm-up runs go on until this much time has passed (after at least ``warmup`` runs). On a
#: 2-core machine a tuned MLP ran 21 µs per call for its first ~500 calls (~10 ms) and 11-12 µs after: the
#: runtime's worker threads and the CPU clock settle first. One warm-up run measured the settling.
DEFAULT_BENCH = {"warmup": 1, "warmup_ms": 100, "number": 10, "repeat": 5, "min_repeat_ms": 0}
DEFAULT_CHECK = {"rtol": 1e-4, "atol": 1e-4}
DEFAULT_SEED = 0
DEFAULT_DIM = 1


class BuildError(RuntimeError):
    """A build or run failed; the message says what failed and, where known, how to fix it."""


# ------------------------------------------------------------------------------------------ targets


def tvm_target(target: dict[str, Any]) -> Any:
    """``tvm.target.Target`` from a target dict; ``BuildError`` with TVM's reason when invalid."""
    import tvm

    try:
        return tvm.target.Target(dict(target))
    except Exception as exc:  # noqa: BLE001 - TVM raises ValueError/TVMError
        raise BuildError(f"invalid target {target!r}: {_first_line(exc)}") from None


def host_cpu_target() -> dict[str, Any]:
    """The CPU target for this machine: ``{"kind": "llvm", "mcpu": <host>, "num-cores": N}``."""
    from tvm.target import codegen

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    target: dict[str, Any] = {"kind": "llvm", "num-cores": int(cores)}
    try:
        cpu = str(codegen.llvm_get_system_cpu())
        if cpu and cpu != "generic" and codegen.llvm_is_valid_cpu(cpu, ""):
            target["mcpu"] = cpu
    except Exception:  # noqa: BLE001 - host detection is best effort; plain llvm always works
        pass
    return target


def _device_for(target: dict[str, Any], index: int = 0) -> Any:
    import tvm

    kind = targets_mod.device_kind_for(target)
    dev = getattr(tvm, kind)(index)
    if not dev.exist:
        raise BuildError(
            f"no {kind} device {index} on this machine: the module was built for {target.get('kind')}, "
            f"but it can only run where such a device exists (detected devices: "
            f"{', '.join(d['kind'] for d in detect_devices())})"
        )
    return dev


def detect_devices() -> list[dict[str, Any]]:
    """Local devices: the CPU always, and each GPU kind whose device 0 exists."""
    import tvm

    cpu_target = host_cpu_target()
    devices = [targets_mod.DeviceInfo(
        kind="cpu", index=0,
        name=f"{cpu_target.get('mcpu', 'generic')}, {cpu_target['num-cores']} cores",
        target=cpu_target).to_json()]
    for kind in targets_mod.DEVICE_KINDS[1:]:
        try:
            dev = getattr(tvm, kind)(0)
            exists = bool(dev.exist)
        except Exception:  # noqa: BLE001 - a runtime without this backend
            exists = False
        if not exists:
            continue
        details: dict[str, Any] = {}
        for attr in ("device_name", "compute_version", "max_threads_per_block", "warp_size", "total_global_memory"):
            try:
                value = getattr(dev, attr)
                details[attr] = value if isinstance(value, (int, float, str)) or value is None else str(value)
            except Exception:  # noqa: BLE001 - not every backend reports everything
                pass
        target: dict[str, Any] = {"kind": kind}
        if kind == "cuda" and details.get("compute_version"):
            target["arch"] = "sm_" + str(details["compute_version"]).replace(".", "")
        devices.append(targets_mod.DeviceInfo(kind=kind, index=0, name=str(details.get("device_name") or kind),
                                              target=target, details=details).to_json())
    return devices


# ---------------------------------------------------------------------------------------- functions


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if re.match(r"^[A-Za-z_.]*(Error|Exception)\b", ln):
            return ln
    return lines[0] if lines else text


_TRACE_LINE = re.compile(r"^\s*(File \"|Traceback \(|\d+: |at |\[bt\]|Stack trace)")


def error_text(exc: BaseException, limit: int = 4000) -> str:
    """The whole message of ``exc`` (every line), without Python/C++ backtrace lines.

    TVM's runtime errors span several lines ("Mismatched x.ndim on argument #1 when calling:" then the
    callee's signature and what was expected); the first or last line alone does not say what failed.
    """
    text = str(exc).strip() or type(exc).__name__
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip() and not _TRACE_LINE.match(ln)]
    joined = "\n".join(lines) if lines else text
    if len(joined) > limit:
        joined = joined[:limit] + " ..."
    return joined


def relax_function_names(mod: Any) -> list[str]:
    """Names of the Relax functions in ``mod``."""
    import tvm

    return [gv.name_hint for gv, f in mod.functions_items() if isinstance(f, tvm.relax.Function)]


def entry_function(mod: Any, requested: Optional[str] = None) -> str:
    """The function to run: ``requested``, else ``main``, ``forward``, or the only public Relax function."""
    names = relax_function_names(mod)
    if requested:
        if requested not in names:
            raise BuildError(f"the module has no Relax function {requested!r} (it has: {', '.join(names) or 'none'})")
        return requested
    for name in ("main", "forward"):
        if name in names:
            return name
    public = [n for n in names if mod[n].attrs is None or "global_symbol" in (mod[n].attrs or {})]
    if len(public) == 1:
        return public[0]
    if len(names) == 1:
        return names[0]
    raise BuildError(f"cannot tell which function to run among {', '.join(names) or 'none'}: name one")


def _num_input(func: Any) -> int:
    attrs = func.attrs
    if attrs is not None and "num_input" in attrs:
        return int(attrs["num_input"])
    return len(func.params)


def _param_types(func: Any) -> list[dict[str, Any]]:
    """Name, shape (ints and symbolic names) and dtype of each parameter of ``func``."""
    import tvm

    out = []
    for var in func.params:
        ty = var.ty
        if not isinstance(ty, tvm.relax.TensorType) or ty.shape is None:
            raise BuildError(
                f"parameter {var.name!r} of the entry function is not a tensor of known rank ({ty}); "
                "only tensor parameters can be fed"
            )
        dims: list[Any] = []
        for d in ty.shape.values:
            if isinstance(d, tvm.tirx.IntImm):
                dims.append(int(d))
            elif isinstance(d, tvm.tirx.Var):
                dims.append(str(d.name))
            else:
                dims.append(str(d))
        out.append({"name": str(var.name), "shape": dims, "dtype": str(ty.dtype)})
    return out


def _concrete_shape(param: dict[str, Any], dims: dict[str, int]) -> tuple[int, ...]:
    shape = []
    for d in param["shape"]:
        if isinstance(d, int):
            shape.append(d)
        elif str(d).isidentifier():
            shape.append(int(dims.get(str(d), DEFAULT_DIM)))
        else:
            raise BuildError(
                f"parameter {param['name']!r} has the shape expression {d!r}: give inputs from a .npz file"
            )
    return tuple(shape)


def _random_array(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, weight: bool,
                  high: Optional[int] = None) -> np.ndarray:
    """Seeded random data that keeps activations bounded (weights scaled by 1/sqrt(fan-in)).

    Integer data is drawn from ``[0, high)`` (default ``[0, 2)``): ``high`` is the table size of the
    embedding lookup the input feeds (see :func:`integer_input_bounds`).
    """
    np_dtype = np.dtype(dtype) if dtype != "bfloat16" else np.dtype("float32")
    if np_dtype.kind == "f":
        if weight and len(shape) >= 2:
            data = rng.standard_normal(shape) / np.sqrt(max(shape[-1], 1))
        elif weight:
            data = rng.uniform(0.5, 1.0, shape)  # biases, norm scales, variances: positive is safe
        else:
            data = rng.standard_normal(shape)
        return np.asarray(data).astype(np_dtype)
    if np_dtype.kind == "b":
        return np.asarray(rng.integers(0, 2, shape)).astype(bool)
    if np_dtype.kind in "iu":
        return np.asarray(rng.integers(0, max(1, int(high or 2)), shape)).astype(np_dtype)
    raise BuildError(f"cannot make random data of dtype {dtype}")


#: Ops through which an integer input keeps its values (its ids reach the lookup unchanged).
_VALUE_PRESERVING_OPS = {"relax.astype", "relax.reshape", "relax.expand_dims", "relax.squeeze",
                         "relax.permute_dims", "relax.flatten", "relax.broadcast_to", "relax.strided_slice",
                         "relax.take_along_axis", "relax.add"}
#: Lookup ops: (op name, index of the table argument, index of the indices argument).
_LOOKUP_OPS = {"relax.take": (0, 1), "relax.gather_elements": (0, 1), "relax.gather_nd": (0, 1)}


def integer_input_bounds(mod: Any, func_name: str) -> dict[str, int]:
    """Upper bounds (exclusive) for integer inputs of ``func_name`` that index a table.

    An input feeding ``R.take(table, ids, axis)`` (embeddings, ONNX ``Gather``), directly or through
    value-preserving ops (``astype``, ``reshape``, ...), must stay below ``table.shape[axis]``; random
    inputs for it are drawn from ``[0, bound)``. Inputs whose bound cannot be derived are left out.
    """
    import tvm

    if func_name not in relax_function_names(mod):
        return {}
    func = mod[func_name]
    origin: dict[Any, str] = {}
    for var in func.params:
        ty = var.ty
        if isinstance(ty, tvm.relax.TensorType) and str(ty.dtype).startswith(("int", "uint")):
            origin[var] = str(var.name)
    bounds: dict[str, int] = {}
    body = func.body
    for block in getattr(body, "blocks", []):
        for binding in block.bindings:
            value = binding.value
            if not isinstance(value, tvm.relax.Call) or not hasattr(value.op, "name"):
                continue
            op = str(value.op.name)
            args = list(value.args)
            if op in _VALUE_PRESERVING_OPS and args and args[0] in origin:
                origin[binding.var] = origin[args[0]]
            elif op == "relax.where" and len(args) == 3 and (args[1] in origin or args[2] in origin):
                # ONNX Gather wraps negative ids: where(ids < 0, ids + n, ids)
                origin[binding.var] = origin[args[2] if args[2] in origin else args[1]]
            elif op in _LOOKUP_OPS:
                t_i, i_i = _LOOKUP_OPS[op]
                if len(args) <= max(t_i, i_i) or args[i_i] not in origin:
                    continue
                table_ty = args[t_i].ty
                axis = int(getattr(value.attrs, "axis", 0) or 0) if value.attrs is not None else 0
                shape = getattr(table_ty, "shape", None)
                if shape is None or not hasattr(shape, "values"):
                    continue
                dims = list(shape.values)
                if not dims:
                    continue
                dim = dims[axis if axis >= 0 else len(dims) + axis] if -len(dims) <= axis < len(dims) else None
                if isinstance(dim, tvm.tirx.IntImm):
                    name = origin[args[i_i]]
                    bounds[name] = min(bounds.get(name, int(dim)), int(dim))
    return bounds


def _load_user_inputs(path: str, names: list[str]) -> list[np.ndarray]:
    if not os.path.isfile(path):
        raise BuildError(f"inputs file {path}: no such file")
    try:
        data = np.load(path, allow_pickle=False)
    except Exception as exc:  # noqa: BLE001
        raise BuildError(f"inputs file {path}: not a readable .npy/.npz file ({_first_line(exc)})") from None
    if isinstance(data, np.ndarray):
        if len(names) != 1:
            raise BuildError(f"inputs file {path}: a .npy holds one array but the model takes "
                             f"{len(names)} inputs ({', '.join(names)}); use a .npz")
        return [data]
    with data:
        keys = list(data.files)
        if all(n in keys for n in names):
            return [data[n] for n in names]
        if len(keys) == len(names):
            return [data[k] for k in keys]  # positional, in file order
        raise BuildError(f"inputs file {path}: it holds {', '.join(keys) or 'nothing'} but the model takes "
                         f"{', '.join(names)} (name the arrays like the inputs, or give exactly "
                         f"{len(names)} arrays in order)")


def make_arguments(
    mod: Any,
    func_name: str,
    params: Optional[dict[str, np.ndarray]],
    inputs: Optional[dict[str, Any]] = None,
    bounds: Optional[dict[str, int]] = None,
) -> tuple[list[np.ndarray], list[dict[str, Any]]]:
    """The arguments for ``func_name``: inputs then weights, as numpy arrays, and a description of each.

    ``inputs`` is ``{"seed": int, "dims": {name: int}}`` or ``{"path": ".npy/.npz file"}``;
    ``bounds``: exclusive upper bounds of integer inputs (:func:`integer_input_bounds`; default: derived
    from ``mod`` itself).
    """
    if bounds is None:
        bounds = integer_input_bounds(mod, func_name)
    inputs = dict(inputs or {})
    func = mod[func_name]
    ptypes = _param_types(func)
    n_in = _num_input(func)
    if params and n_in == len(ptypes):
        n_in = len([p for p in ptypes if p["name"] not in params])
    seed = int(inputs.get("seed", DEFAULT_SEED))
    rng = np.random.default_rng(seed)
    dims = {str(k): int(v) for k, v in (inputs.get("dims") or {}).items()}
    arrays: list[np.ndarray] = []
    described: list[dict[str, Any]] = []
    input_params = ptypes[:n_in]
    if inputs.get("path"):
        user = _load_user_inputs(str(inputs["path"]), [p["name"] for p in input_params])
        for p, arr in zip(input_params, user):
            if len(arr.shape) != len(p["shape"]):
                raise BuildError(f"input {p['name']!r}: the file gives shape {list(arr.shape)}, the model expects "
                                 f"rank {len(p['shape'])} {p['shape']}")
            for d, n in zip(p["shape"], arr.shape):
                if isinstance(d, int) and d != n:
                    raise BuildError(f"input {p['name']!r}: the file gives shape {list(arr.shape)}, the model "
                                     f"expects {p['shape']}")
                if isinstance(d, str) and d.isidentifier():
                    if dims.setdefault(d, int(n)) != int(n):
                        raise BuildError(f"input {p['name']!r}: dimension {d} is {n} here but {dims[d]} elsewhere")
            if str(arr.dtype) != p["dtype"]:
                arr = arr.astype(p["dtype"])
            arrays.append(contiguous(arr))
            described.append({"name": p["name"], "shape": list(arr.shape), "dtype": p["dtype"], "source": "file"})
    else:
        for p in input_params:
            high = bounds.get(p["name"])
            arr = _random_array(rng, _concrete_shape(p, dims), p["dtype"], weight=False, high=high)
            arrays.append(arr)
            entry = {"name": p["name"], "shape": list(arr.shape), "dtype": p["dtype"],
                     "source": f"random(seed={seed})"}
            if high is not None and np.dtype(p["dtype"]).kind in "iu":
                entry["range"] = [0, int(high)]
            described.append(entry)
    wrng = np.random.default_rng(seed + 1)
    for p in ptypes[n_in:]:
        shape = _concrete_shape(p, dims)
        value = _lookup_param(params, p["name"]) if params else None
        if value is not None:
            if tuple(value.shape) != shape:
                raise BuildError(f"weight {p['name']!r}: the model's value has shape {list(value.shape)}, "
                                 f"the function expects {list(shape)}")
            arr, source = contiguous(value.astype(p["dtype"], copy=False)), "model"
        else:
            arr, source = _random_array(wrng, shape, p["dtype"], weight=True), f"random(seed={seed + 1})"
        arrays.append(arr)
        described.append({"name": p["name"], "shape": list(shape), "dtype": p["dtype"], "source": source,
                          "weight": True})
    return arrays, described


def reference_entry(loaded: Any, func_name: str) -> str:
    """The loaded model's function that ``func_name`` of a pipeline's module stands for (the reference)."""
    return entry_function(loaded.mod, func_name if func_name in relax_function_names(loaded.mod) else None)


def reference_values(mod: Any, func_name: str, loaded: Any, arrays: list[np.ndarray],
                     described: list[dict[str, Any]], inputs: Optional[dict[str, Any]],
                     bounds: Optional[dict[str, int]]) -> dict[str, np.ndarray]:
    """Every argument value by parameter name, read with :func:`arguments_by_name`: ``mod``'s own
    (``arrays``/``described``), plus the loaded model's values for the parameters its entry takes and
    ``mod``'s no longer does — weights bound as constants (``weights.BindAsConstants``): a bound module takes
    only its inputs, the reference (and an unbound module compared with it) still takes the weights. The
    inputs are the same seeded arrays either way."""
    values = {d["name"]: a for d, a in zip(described, arrays)}
    ref_func = reference_entry(loaded, func_name)
    if any(var.name not in values for var in loaded.mod[ref_func].params):
        ref_arrays, ref_described = make_arguments(loaded.mod, ref_func, loaded.params, inputs, bounds)
        for d, a in zip(ref_described, ref_arrays):
            values.setdefault(d["name"], a)
    return values


def arguments_by_name(mod: Any, func_name: str, values: dict[str, np.ndarray],
                      default: list[np.ndarray]) -> list[np.ndarray]:
    """The arguments of ``mod``'s ``func_name`` taken from ``values`` by parameter name (modules compared side
    by side may differ in signature: one with its weights bound as constants takes only its inputs);
    ``default`` when a parameter has no value there."""
    names = [var.name for var in mod[func_name].params]
    if any(name not in values for name in names):
        return default
    return [values[name] for name in names]


def contiguous(arr: np.ndarray) -> np.ndarray:
    """``arr`` as a C-contiguous array of the same shape.

    Unlike ``np.ascontiguousarray`` (which returns at least 1-d arrays), a 0-d (scalar) array keeps its
    shape ``()``: ONNX models exported by torch's dynamo exporter have 0-d initializers, and the VM
    refuses a ``(1,)`` tensor for a ``R.Tensor((), ...)`` parameter ("Mismatched ... ndim").
    """
    arr = np.asarray(arr)
    return arr if arr.flags.c_contiguous else np.array(arr, order="C", copy=True)


def _lookup_param(params: dict[str, np.ndarray], name: str) -> Optional[np.ndarray]:
    if name in params:
        return params[name]
    canon = re.sub(r"\W", "_", name)
    for key, value in params.items():
        if re.sub(r"\W", "_", key) == canon:
            return value
    return None


# -------------------------------------------------------------------------------------------- build


def _is_vm_lowered(mod: Any) -> bool:
    """True when the Relax functions were already lowered for the VM (``default_build`` ran)."""
    import tvm

    for _gv, func in mod.functions_items():
        if isinstance(func, tvm.relax.Function):
            text = func.script()
            if "vm.builtin." in text or "R.vm.alloc" in text:
                return True
    return False


_THREAD_MARKERS = ("T.thread_binding(", "T.launch_thread(", '"thread_extent"', "threadIdx.", "blockIdx.")


def unscheduled_prim_funcs(mod: Any) -> list[str]:
    """Names of the PrimFuncs with no GPU thread binding (after legalizing what is left)."""
    import tvm

    with tvm.target.Target({"kind": "llvm"}):
        legal = tvm.relax.transform.LegalizeOps()(mod)
    missing = []
    for gv, func in legal.functions_items():
        if not isinstance(func, tvm.tirx.PrimFunc):
            continue
        attrs = func.attrs or {}
        if "tir.is_host_func" in attrs or "tirx.is_host_func" in attrs:
            continue
        text = func.script()
        if not any(marker in text for marker in _THREAD_MARKERS):
            missing.append(gv.name_hint)
    return sorted(missing)


def build_module(mod: Any, target: dict[str, Any], *, baseline: bool = False) -> Any:
    """Compile ``mod`` for ``target`` with ``tvm.compile``.

    ``baseline``: the stock default pipeline (``relax_pipeline="default"``) — the reference build.
    Otherwise the ``default_build`` Relax pipeline (or none when the module is VM-lowered already),
    after refusing unscheduled PrimFuncs for a GPU target.
    """
    import tvm

    tgt = tvm_target(target)
    if baseline:
        pipeline: Any = "default"
    else:
        if targets_mod.is_gpu_target(target):
            missing = unscheduled_prim_funcs(mod)
            if missing:
                shown = ", ".join(missing[:12]) + (f" and {len(missing) - 12} more" if len(missing) > 12 else "")
                raise BuildError(
                    f"refusing to build for {target.get('kind')}: {len(missing)} PrimFunc(s) have no GPU thread "
                    f"binding and would run unscheduled: {shown}. Fix: add a DLight step "
                    "(dlight.ApplyDefaultSchedule with gpu rules such as gpu.Matmul, gpu.GEMV, gpu.Reduction, "
                    "gpu.GeneralReduction, gpu.Fallback) or a MetaSchedule tuning step after legalization"
                )
        pipeline = None if _is_vm_lowered(mod) else tvm.relax.get_pipeline("default_build")
    try:
        return tvm.compile(mod, target=tgt, relax_pipeline=pipeline)
    except Exception as exc:  # noqa: BLE001
        raise BuildError(f"tvm.compile for {target.get('kind')} failed: {error_text(exc)}") from None


def _flatten_outputs(value: Any) -> list[np.ndarray]:
    if hasattr(value, "numpy"):
        return [value.numpy()]
    if isinstance(value, (int, float, bool, np.generic)):
        return [np.asarray(value)]
    out: list[np.ndarray] = []
    for item in value:
        out.extend(_flatten_outputs(item))
    return out


def _vm(executable: Any, dev: Any) -> Any:
    import tvm

    return tvm.relax.VirtualMachine(executable, dev)


def run_function(vm: Any, func_name: str, dev: Any, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """Run ``func_name`` once on ``dev`` and return its outputs (flattened) as numpy arrays."""
    import tvm

    args = [tvm.runtime.tensor(a, dev) for a in arrays]
    try:
        result = vm[func_name](*args)
    except Exception as exc:  # noqa: BLE001
        raise BuildError(f"running {func_name} failed: {error_text(exc)}") from None
    return _flatten_outputs(result)


def output_stats(arrays: list[np.ndarray]) -> list[dict[str, Any]]:
    """Shape, dtype and min/max/mean/std with NaN/Inf counts of each output."""
    stats = []
    for i, arr in enumerate(arrays):
        entry: dict[str, Any] = {"index": i, "shape": list(arr.shape), "dtype": str(arr.dtype)}
        if arr.size and arr.dtype.kind in "fiub":
            data = arr.astype(np.float64)
            finite = data[np.isfinite(data)]
            entry.update({
                "nan": int(np.isnan(data).sum()), "inf": int(np.isinf(data).sum()),
                "min": float(finite.min()) if finite.size else None,
                "max": float(finite.max()) if finite.size else None,
                "mean": float(finite.mean()) if finite.size else None,
                "std": float(finite.std()) if finite.size else None,
            })
        stats.append(entry)
    return stats


def benchmark(vm: Any, func_name: str, dev: Any, arrays: list[np.ndarray], settings: dict[str, Any]) -> dict[str, Any]:
    """Latency with ``time_evaluator``: warm-up runs, then ``repeat`` x ``number`` runs (µs)."""
    import tvm

    s = {**DEFAULT_BENCH, **{k: v for k, v in (settings or {}).items() if v is not None}}
    number, repeat = max(1, int(s["number"])), max(1, int(s["repeat"]))
    args = [tvm.runtime.tensor(a, dev) for a in arrays]
    warmed, warm_s = warm_up(lambda: vm[func_name](*args), dev.sync, max(0, int(s["warmup"])),
                             max(0.0, float(s.get("warmup_ms") or 0)) / 1000.0)
    evaluator = vm.time_evaluator(func_name, dev, number=number, repeat=repeat,
                                  min_repeat_ms=int(s.get("min_repeat_ms") or 0))
    res = evaluator(*args)
    runs = [float(r) * 1e6 for r in res.results]
    return {
        "median_us": float(np.median(runs)), "mean_us": float(np.mean(runs)), "std_us": float(np.std(runs)),
        "min_us": float(np.min(runs)), "max_us": float(np.max(runs)), "runs_us": runs,
        "number": number, "repeat": repeat, "warmup": warmed, "warmup_ms": warm_s * 1000.0,
    }


def warm_up(call: Any, sync: Any, runs: int, seconds: float, max_runs: int = 1_000_000) -> tuple[int, float]:
    """Call ``call()`` at least ``runs`` times and until ``seconds`` have passed (``sync()`` before reading
    the clock, so queued device work counts); at most ``max_runs`` calls. Returns (calls made, seconds spent).
    """
    start = time.perf_counter()
    done = 0
    while done < max_runs:
        if done >= runs:
            sync()
            if time.perf_counter() - start >= seconds:
                break
        call()
        done += 1
    sync()
    return done, time.perf_counter() - start


#: Below this largest reference magnitude the check compares rounding noise and says nothing.
TINY_OUTPUT = 1e-6


def compare_outputs(got: list[np.ndarray], ref: list[np.ndarray], rtol: float, atol: float,
                    scale: str = "output") -> dict[str, Any]:
    """Compare outputs with a tolerance scaled to each output; pass/fail, errors and warnings.

    ``scale="output"`` (default): an element passes when ``|got - ref| <= atol * max|ref| + rtol * |ref|``,
    so the absolute tolerance follows the output's magnitude (a fixed ``atol=1e-4`` passes anything when
    outputs are ~1e-12). ``scale="absolute"``: ``|got - ref| <= atol + rtol * |ref|``.
    Reported per output and overall: ``max_abs`` (max |diff|), ``max_ref`` (max |ref|), ``max_abs_over_ref``
    (max |diff| / max |ref|, the figure to read) and ``max_rel`` (elementwise, where |ref| is above the
    absolute tolerance). ``warnings`` says when an output is all zeros or so small (max |ref| <
    :data:`TINY_OUTPUT`) that the check cannot tell a right result from a wrong one.
    """
    base = {"rtol": rtol, "atol": atol, "scale": scale}
    if len(got) != len(ref):
        return {"passed": False, **base, "max_abs": None, "max_rel": None, "max_ref": None,
                "max_abs_over_ref": None, "warnings": [],
                "error": f"the optimized module returns {len(got)} outputs, the reference {len(ref)}", "outputs": []}
    per: list[dict[str, Any]] = []
    warnings: list[str] = []
    passed, max_abs, max_rel, max_ref, max_ratio = True, 0.0, 0.0, 0.0, 0.0
    for i, (a, b) in enumerate(zip(got, ref)):
        if a.shape != b.shape:
            per.append({"index": i, "passed": False, "error": f"shape {list(a.shape)} vs reference {list(b.shape)}"})
            passed = False
            continue
        a64, b64 = np.asarray(a).astype(np.float64), np.asarray(b).astype(np.float64)
        diff = np.abs(a64 - b64)
        both_nan = np.isnan(a64) & np.isnan(b64)
        diff = np.where(both_nan, 0.0, diff)
        finite_ref = np.abs(b64[np.isfinite(b64)])
        m_ref = float(finite_ref.max()) if finite_ref.size else 0.0
        abs_tol = atol * m_ref if scale == "output" and m_ref > 0 else atol
        ok = bool(np.all(diff <= abs_tol + rtol * np.abs(b64)) and not np.isnan(diff).any())
        m_abs = float(np.nanmax(diff)) if diff.size else 0.0
        mask = np.abs(b64) > abs_tol
        m_rel = float(np.max(diff[mask] / np.abs(b64[mask]))) if mask.any() else 0.0
        ratio = m_abs / m_ref if m_ref > 0 else (0.0 if m_abs == 0 else float("inf"))
        entry: dict[str, Any] = {"index": i, "passed": ok, "max_abs": m_abs, "max_rel": m_rel, "max_ref": m_ref,
                                 "max_abs_over_ref": ratio, "abs_tolerance": abs_tol}
        if b64.size and m_ref == 0.0:
            warnings.append(f"output {i}: the reference is all zeros: the check cannot tell a right result "
                            "from a wrong one (use real inputs/weights)")
        elif b64.size and m_ref < TINY_OUTPUT:
            warnings.append(f"output {i}: the reference is tiny (max |ref| = {m_ref:.3g} < {TINY_OUTPUT:g}): "
                            "the check compares rounding noise (use real inputs/weights)")
        per.append(entry)
        passed &= ok
        max_abs, max_rel = max(max_abs, m_abs), max(max_rel, m_rel)
        max_ref, max_ratio = max(max_ref, m_ref), max(max_ratio, ratio)
    return {"passed": passed, **base, "max_abs": max_abs, "max_rel": max_rel, "max_ref": max_ref,
            "max_abs_over_ref": max_ratio, "warnings": warnings, "outputs": per}


# ------------------------------------------------------------------------------------ module lookup


def _progress(ctx: WorkerContext, phase: str, message: str) -> None:
    ctx.emit("build_progress", {"phase": phase, "message": message})


def _check_cancel(ctx: WorkerContext) -> None:
    if ctx.cancelled():
        raise BuildError("cancelled")


def _document(args: dict[str, Any]) -> Any:
    from pipeline_model.document import PipelineDocument

    data = args.get("document")
    if not isinstance(data, dict):
        raise BuildError("build request without a document")
    return PipelineDocument.from_dict(data)


def _final_key(run_reply: dict[str, Any]) -> str:
    if run_reply.get("error"):
        raise BuildError(f"the pipeline run failed: {run_reply['error']}")
    if run_reply.get("failed_index") is not None:
        steps = run_reply.get("steps") or []
        idx = run_reply["failed_index"]
        step = steps[idx] if 0 <= idx < len(steps) else {}
        raise BuildError(f"the pipeline failed at step {idx + 1} ({step.get('pass_id', '?')}): {step.get('error')}")
    if run_reply.get("cancelled"):
        raise BuildError("cancelled")
    for step in reversed(run_reply.get("steps") or []):
        if step.get("snapshot_key"):
            return str(step["snapshot_key"])
    if run_reply.get("input_key"):
        return str(run_reply["input_key"])
    raise BuildError("the pipeline run produced no module")


def resolve_module(args: dict[str, Any], ctx: WorkerContext) -> tuple[Any, Any, dict[str, Any], str]:
    """``(module to build, LoadedModel, target dict, label)`` for a build request (see :func:`resolve_module_key`)."""
    mod, loaded, target, label, _key = resolve_module_key(args, ctx)
    return mod, loaded, target, label


def resolve_module_key(args: dict[str, Any], ctx: WorkerContext) -> tuple[Any, Any, dict[str, Any], str, str]:
    """``(module to build, LoadedModel, target dict, label, snapshot key)`` for a build request.

    ``args``: ``document`` (pipeline document dict) with ``base_dir`` and ``trust_custom_code``, or
    ``run`` (the ``run`` request arguments, ``EngineClient.run_args(doc)``); optional ``key`` (a snapshot
    key; default: run the pipeline and take the final module); ``baseline`` (build the model as loaded
    instead); ``target`` (overrides the document's).
    """
    run_args = args.get("run")
    if not isinstance(run_args, dict):
        from pipeline_model.engine.client import EngineClient

        doc = _document(args)
        run_args = EngineClient.run_args(doc, trust_custom_code=bool(args.get("trust_custom_code")))
        run_args["base_dir"] = args.get("base_dir", run_args.get("base_dir"))
        name = doc.name
    else:
        run_args = dict(run_args)
        name = str(run_args.get("name") or "pipeline")
    if args.get("target"):
        run_args["target"] = dict(args["target"])
    target = dict(run_args.get("target") or {"kind": "llvm"})
    model = str(run_args.get("model") or "")
    _progress(ctx, "loading", f"loading model {model}")
    loaded = ctx.load_model(model, run_args.get("base_dir"))
    if args.get("baseline"):
        return loaded.mod, loaded, target, "baseline (model as loaded)", f"baseline:{loaded.key}"
    key = args.get("key")
    if not key:
        run = HANDLERS.get("run")
        if run is None:
            raise BuildError("this engine has no run command")
        run_args["until"] = None
        run_args["scripts"] = False  # a build needs the final module, not every step's TVMScript
        _progress(ctx, "pipeline", f"running the pipeline ({len(run_args.get('steps') or [])} steps)")
        key = _final_key(run(run_args, ctx))
    mod = ctx.cache.get(str(key))
    if mod is None:
        raise BuildError(f"module {key!r} is not in the engine's cache (evicted or from an earlier engine); run again")
    return mod, loaded, target, f"pipeline {name!r}" if name != "pipeline" else "pipeline", str(key)


# ------------------------------------------------------------------------------- framework reference


def framework_kind(loaded: Any) -> Optional[str]:
    """``"onnx"``, ``"pt2"`` or ``"torch_py"`` when the model was imported from such a file, else None."""
    source = str(getattr(loaded, "source", "") or "")
    lower = source.lower()
    if not os.path.isfile(source):
        return None
    if lower.endswith(".onnx"):
        return "onnx"
    if lower.endswith(".pt2"):
        return "pt2"
    if lower.endswith(".py"):
        with open(source, encoding="utf-8", errors="replace") as fh:
            return "torch_py" if "torch" in fh.read() else None
    return None


def _torch_outputs(value: Any) -> list[np.ndarray]:
    import torch

    leaves = torch.utils._pytree.tree_leaves(value)
    return [np.asarray(t.detach().cpu().numpy()) if isinstance(t, torch.Tensor) else np.asarray(t) for t in leaves]


def framework_outputs(loaded: Any, inputs: list[np.ndarray]) -> tuple[list[np.ndarray], str]:
    """Run the original model file in its own framework on ``inputs``; ``(outputs, reference label)``.

    ONNX files run in ONNX Runtime (CPU provider), ``.pt2`` archives through ``torch.export.load(...).module()``,
    torch ``.py`` files (already run once to import them) through their ``model``. ``BuildError`` says what is
    missing (the runtime, the model's own weights) when it cannot be done.
    """
    kind = framework_kind(loaded)
    path = str(getattr(loaded, "source", ""))
    if kind is None:
        raise BuildError("the model did not come from an ONNX or PyTorch file: there is no framework to check against")
    if not loaded.params:
        raise BuildError(f"{path}: the model carries no weights of its own, so its framework output would use "
                         "other weights than the build")
    if kind == "onnx":
        try:
            import onnxruntime as ort
        except ImportError:
            raise BuildError("checking against ONNX needs onnxruntime (pip install onnxruntime)") from None
        try:
            options = ort.SessionOptions()
            options.log_severity_level = 3
            sess = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
            names = [i.name for i in sess.get_inputs()]
            if len(names) != len(inputs):
                raise BuildError(f"{path}: ONNX Runtime sees {len(names)} inputs, the build feeds {len(inputs)}")
            outs = sess.run(None, dict(zip(names, inputs)))
        except BuildError:
            raise
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own exception types
            raise BuildError(f"{path}: ONNX Runtime failed: {error_text(exc)}") from None
        return [np.asarray(o) for o in outs], f"onnxruntime {ort.__version__} on {os.path.basename(path)}"
    try:
        import torch
    except ImportError:
        raise BuildError("checking against PyTorch needs torch (pip install -r requirements-torch.txt)") from None
    try:
        if kind == "pt2":
            module = torch.export.load(path).module()
        else:
            import runpy

            module = runpy.run_path(path, run_name="__rps_model__")["model"]
        tensors = [torch.from_numpy(np.array(x)) for x in inputs]
        with torch.no_grad():
            value = module(*tensors)
    except Exception as exc:  # noqa: BLE001 - anything the user's model raises
        raise BuildError(f"{path}: running the model in PyTorch failed: {error_text(exc)}") from None
    return _torch_outputs(value), f"PyTorch {torch.__version__} eager on {os.path.basename(path)}"


# ------------------------------------------------------------------------------------------ profile

#: Profiles of built modules by snapshot key (the module that was built), newest last.
PROFILES: "dict[str, dict[str, Any]]" = {}
_PROFILES_KEPT = 32
DEFAULT_PROFILE = {"warmup": 1, "repeat": 5}


def _callee_kind(name: str, prim_funcs: set[str], relax_funcs: set[str]) -> str:
    if name in prim_funcs:
        return "prim_func"
    if name in relax_funcs:
        return "relax_function"
    if name.startswith("vm.builtin."):
        return "builtin"
    return "packed"


def profile_vm(vm: Any, func_name: str, dev: Any, arrays: list[np.ndarray], settings: Optional[dict[str, Any]],
               mod: Any = None) -> dict[str, Any]:
    """Time every call the VM makes while running ``func_name``, aggregated per callee.

    Uses ``relax.VirtualMachine.set_instrument``: the instrument is called before and after each
    ``call_tir``/packed call; the device is synchronised at both points and the time between them is
    the call's time. ``warmup`` runs, then ``repeat`` instrumented runs; per callee the reported total is
    the median over the runs of that callee's time in one run. Returns ``{"entries": [...] (sorted by
    total, largest first: name, kind, calls, total_us, mean_us, share, min_total_us, max_total_us),
    "total_us" (sum of the entries' totals), "run_us" (median wall time of one instrumented run),
    "repeat", "warmup"}``. Nested calls (a Relax function calling PrimFuncs) count inclusively.
    """
    import tvm

    s = {**DEFAULT_PROFILE, **{k: v for k, v in (settings or {}).items() if v is not None}}
    repeat, warmup = max(1, int(s["repeat"])), max(0, int(s["warmup"]))
    prim_funcs: set[str] = set()
    relax_funcs: set[str] = set()
    if mod is not None:
        for gv, func in mod.functions_items():
            (prim_funcs if isinstance(func, tvm.tirx.PrimFunc) else relax_funcs).add(gv.name_hint)
    args = [tvm.runtime.tensor(a, dev) for a in arrays]
    for _ in range(warmup):
        vm[func_name](*args)
    dev.sync()
    runs: list[dict[str, list[float]]] = []
    stack: list[tuple[str, float]] = []
    current: dict[str, list[float]] = {}

    def instrument(func: Any, symbol: Any, before: bool, ret: Any, *call_args: Any) -> int:
        if before:
            dev.sync()
            stack.append((str(symbol), time.perf_counter()))
        else:
            dev.sync()
            t1 = time.perf_counter()
            name, t0 = stack.pop() if stack else (str(symbol), t1)
            current.setdefault(name, []).append((t1 - t0) * 1e6)
        return 0

    wall: list[float] = []
    vm.set_instrument(instrument)
    try:
        for _ in range(repeat):
            current = {}
            stack.clear()
            t0 = time.perf_counter()
            vm[func_name](*args)
            dev.sync()
            wall.append((time.perf_counter() - t0) * 1e6)
            runs.append(current)
    finally:
        vm.set_instrument(None)
    names = sorted({n for run in runs for n in run})
    entries: list[dict[str, Any]] = []
    for name in names:
        totals = [sum(run.get(name, [])) for run in runs]
        calls = max(len(run.get(name, [])) for run in runs)
        total = float(np.median(totals))
        entries.append({"name": name, "kind": _callee_kind(name, prim_funcs, relax_funcs), "calls": int(calls),
                        "total_us": total, "mean_us": total / calls if calls else 0.0,
                        "min_total_us": float(min(totals)), "max_total_us": float(max(totals))})
    grand = sum(e["total_us"] for e in entries if e["kind"] != "relax_function") or 1.0
    for e in entries:
        e["share"] = e["total_us"] / grand
    entries.sort(key=lambda e: (-e["total_us"], e["name"]))
    return {"entries": entries, "total_us": grand, "run_us": float(np.median(wall)), "repeat": repeat,
            "warmup": warmup}


def callee_nodes(mod: Any, func_name: str, names: list[str]) -> dict[str, list[str]]:
    """Graph node ids (of :func:`pipeline_model.engine.graph_extract_tvm.extract_graph_json` for ``func_name``) calling each name."""
    from pipeline_model.engine import graph_extract_tvm

    try:
        graph = graph_extract_tvm.extract_graph_json(mod, func_name)
    except Exception:  # noqa: BLE001 - a module the graph extractor cannot walk: no mapping, the table stays
        return {}
    wanted = set(names)
    out: dict[str, list[str]] = {}
    for node in graph["nodes"]:
        callee = node.get("callee")
        if callee in wanted:
            out.setdefault(str(callee), []).append(str(node["id"]))
    return out


def _keep_profile(key: str, profile: dict[str, Any]) -> None:
    PROFILES.pop(key, None)
    PROFILES[key] = profile
    while len(PROFILES) > _PROFILES_KEPT:
        PROFILES.pop(next(iter(PROFILES)))


def profile_module(mod: Any, target: dict[str, Any], key: Optional[str] = None,
                   settings: Optional[dict[str, Any]] = None) -> tuple[dict[str, Any], str]:
    """The profile of snapshot ``key`` kept by this engine, else ``mod`` built, run on seeded random
    inputs (integer ids within their tables) and profiled now with :func:`profile_vm` (kept under
    ``key``). Returns ``(profile, "stored" | "measured")``; raises :class:`BuildError` when it cannot
    be built or run. Used by targeted tuning (:mod:`pipeline_model.passkinds.metaschedule.focus`)."""
    if key and PROFILES.get(str(key)):
        return PROFILES[str(key)], "stored"
    func_name = entry_function(mod)
    arrays, _described = make_arguments(mod, func_name, None)
    ex = build_module(mod, target)
    dev = _device_for(target)
    vm = _vm(ex, dev)
    run_function(vm, func_name, dev, arrays)
    prof = profile_vm(vm, func_name, dev, arrays, settings or DEFAULT_PROFILE, mod)
    prof.update({"key": key, "label": "tuning step input", "function": func_name, "target": target})
    if key:
        _keep_profile(str(key), prof)
    return prof, "measured"


# ------------------------------------------------------------------------------------------ handlers


def _build_and_measure(mod: Any, target: dict[str, Any], func_name: str, arrays: list[np.ndarray],
                       bench: Optional[dict[str, Any]], ctx: WorkerContext, what: str,
                       baseline: bool = False, profile: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    _check_cancel(ctx)
    _progress(ctx, "building", f"building {what} for {targets_mod_label(target)}")
    t0 = time.perf_counter()
    ex = build_module(mod, target, baseline=baseline)
    build_ms = (time.perf_counter() - t0) * 1000.0
    dev = _device_for(target)
    vm = _vm(ex, dev)
    _check_cancel(ctx)
    _progress(ctx, "running", f"running {what}")
    outputs = run_function(vm, func_name, dev, arrays)
    latency = None
    if bench is not None:
        _check_cancel(ctx)
        _progress(ctx, "benchmarking", f"timing {what}")
        latency = benchmark(vm, func_name, dev, arrays, bench)
    prof = None
    if profile is not None:
        _check_cancel(ctx)
        _progress(ctx, "profiling", f"profiling {what} (time of every call)")
        prof = profile_vm(vm, func_name, dev, arrays, profile, mod)
    return {"build_ms": build_ms, "outputs": outputs, "latency": latency, "device": str(dev), "executable": ex,
            "profile": prof}


def targets_mod_label(target: dict[str, Any]) -> str:
    """Short label of a target dict (``llvm znver4``)."""
    from pipeline_model.document import target_label

    return target_label(target)


def _check_settings(args: dict[str, Any]) -> Optional[dict[str, Any]]:
    check = args.get("check", {})
    if check is None:
        return None
    return {"rtol": float(check.get("rtol", DEFAULT_CHECK["rtol"])),
            "atol": float(check.get("atol", DEFAULT_CHECK["atol"])),
            "scale": str(check.get("scale", "output")),
            "against": str(args.get("check_against") or check.get("against") or "tvm")}


def _reference_check(loaded: Any, func_name: str, ref_arrays: list[np.ndarray], outputs: list[np.ndarray],
                     chk: dict[str, Any], ctx: WorkerContext) -> dict[str, Any]:
    ref = _build_and_measure(loaded.mod, {"kind": "llvm"}, reference_entry(loaded, func_name), ref_arrays, None, ctx,
                             "the reference (model as loaded, default pipeline, CPU)", baseline=True)
    _progress(ctx, "checking", "comparing outputs")
    return {**compare_outputs(outputs, ref["outputs"], chk["rtol"], chk["atol"], chk["scale"]),
            "reference": "model as loaded, tvm.compile default pipeline, llvm"}


def _framework_check(loaded: Any, arrays: list[np.ndarray], described: list[dict[str, Any]],
                     outputs: list[np.ndarray], chk: dict[str, Any], ctx: WorkerContext) -> dict[str, Any]:
    n_in = len([d for d in described if not d.get("weight")])
    _progress(ctx, "checking", "running the original model in its framework")
    try:
        ref, label = framework_outputs(loaded, arrays[:n_in])
    except BuildError as exc:
        return {"passed": False, "rtol": chk["rtol"], "atol": chk["atol"], "scale": chk["scale"], "max_abs": None,
                "max_rel": None, "max_ref": None, "max_abs_over_ref": None, "warnings": [], "outputs": [],
                "error": str(exc), "reference": "framework"}
    return {**compare_outputs(outputs, ref, chk["rtol"], chk["atol"], chk["scale"]), "reference": label}


@handler("build_run")
def handle_build_run(args: dict, ctx: WorkerContext) -> dict:
    """Build the pipeline's module, run it, time it, profile it and check it.

    args: ``document``, ``base_dir``, ``key`` (default: final module of a run), ``target``,
    ``function``, ``inputs`` (``{"seed", "dims"}`` or ``{"path"}``), ``bench`` (``{"warmup", "number",
    "repeat"}`` or null for no timing), ``check`` (``{"rtol", "atol", "scale": "output"|"absolute"}`` or null
    for no check), ``check_against`` (``"tvm"``: the model as loaded built by ``tvm.compile``'s default
    pipeline; ``"framework"``: the original ONNX/PyTorch file in its runtime; ``"both"``), ``profile``
    (``{"warmup", "repeat"}`` or null: time of every call, see :func:`profile_vm`; kept per snapshot key,
    command ``profile_get``).
    Reply: ``function``, ``target``, ``device``, ``label``, ``key``, ``build_ms``, ``arguments``, ``weights``,
    ``outputs``, ``latency``, ``check`` (vs TVM), ``framework_check``, ``profile`` (with ``nodes``: callee ->
    graph node ids of the entry function).
    """
    mod, loaded, target, label, key = resolve_module_key(args, ctx)
    func_name = entry_function(mod, args.get("function"))
    bounds = integer_input_bounds(loaded.mod, func_name) if func_name in relax_function_names(loaded.mod) else None
    arrays, described = make_arguments(mod, func_name, loaded.params, args.get("inputs"), bounds)
    values = reference_values(mod, func_name, loaded, arrays, described, args.get("inputs"), bounds)
    ref_arrays = arguments_by_name(loaded.mod, reference_entry(loaded, func_name), values, arrays)
    bench = args.get("bench", {})
    profile = args.get("profile")
    opt = _build_and_measure(mod, target, func_name, arrays, bench, ctx, label, profile=profile)
    result: dict[str, Any] = {
        "function": func_name, "target": target, "device": opt["device"], "label": label, "key": key,
        "build_ms": opt["build_ms"], "arguments": described,
        "weights": "model" if loaded.params else "random",
        "outputs": output_stats(opt["outputs"]), "latency": opt["latency"], "check": None,
        "framework_check": None, "profile": None,
    }
    if opt["profile"] is not None:
        prof = dict(opt["profile"])
        prof["nodes"] = callee_nodes(mod, func_name, [e["name"] for e in prof["entries"]])
        prof.update({"key": key, "label": label, "function": func_name, "target": target})
        _keep_profile(key, prof)
        result["profile"] = prof
    chk = _check_settings(args)
    if chk is not None:
        if chk["against"] not in ("tvm", "framework", "both"):
            raise BuildError(f"check_against must be tvm, framework or both, not {chk['against']!r}")
        if chk["against"] in ("tvm", "both"):
            result["check"] = _reference_check(loaded, func_name, ref_arrays, opt["outputs"], chk, ctx)
        if chk["against"] in ("framework", "both"):
            result["framework_check"] = _framework_check(loaded, arrays, described, opt["outputs"], chk, ctx)
    return result


@handler("profile")
def handle_profile(args: dict, ctx: WorkerContext) -> dict:
    """Build and profile a module without timing or checking it: ``build_run`` with ``profile`` on.

    args: like ``build_run`` (``profile`` defaults to :data:`DEFAULT_PROFILE`). Reply: the profile
    (``entries``, ``total_us``, ``run_us``, ``nodes``, ``key``, ...).
    """
    req = dict(args)
    req.setdefault("profile", dict(DEFAULT_PROFILE))
    if req["profile"] is None:
        req["profile"] = dict(DEFAULT_PROFILE)
    req["bench"], req["check"] = None, None
    return handle_build_run(req, ctx)["profile"]


@handler("profile_get")
def handle_profile_get(args: dict, ctx: WorkerContext) -> dict:
    """The profiles kept by this engine: ``{"keys": [...]}``, or ``{"profile": ...}`` for ``key`` (null if none)."""
    key = args.get("key")
    if key:
        return {"profile": PROFILES.get(str(key))}
    return {"keys": list(PROFILES)}


def _ir_summary(mod: Any) -> str:
    try:
        return str(mod.script())
    except Exception:  # noqa: BLE001 - a module that cannot be printed: no diff for it
        return ""


def _compare_many(args: dict, ctx: WorkerContext) -> dict:
    """``compare`` with ``modules``: build each, run on the same inputs, time, check, diff the final IRs."""
    from pipeline_model import diff as diff_mod

    specs = list(args.get("modules") or [])
    if len(specs) < 2:
        raise BuildError("compare: give at least two modules")
    func_name = args.get("function")
    arrays = described = None
    values: dict[str, np.ndarray] = {}
    chk = _check_settings(args)
    ref_outputs: Optional[list[np.ndarray]] = None
    rows: list[dict[str, Any]] = []
    scripts: list[str] = []
    for i, spec in enumerate(specs):
        spec = dict(spec or {})
        mod, loaded, target, label, key = resolve_module_key(spec, ctx)
        label = str(spec.get("label") or label)
        fname = entry_function(mod, func_name)
        if arrays is None:
            bounds = integer_input_bounds(loaded.mod, fname) if fname in relax_function_names(loaded.mod) else None
            arrays, described = make_arguments(mod, fname, loaded.params, args.get("inputs"), bounds)
            values = reference_values(mod, fname, loaded, arrays, described, args.get("inputs"), bounds)
            func_name = fname
            if chk is not None:
                ref_func = reference_entry(loaded, fname)
                ref = _build_and_measure(loaded.mod, {"kind": "llvm"}, ref_func,
                                         arguments_by_name(loaded.mod, ref_func, values, arrays), None, ctx,
                                         "the reference (model as loaded, default pipeline, CPU)", baseline=True)
                ref_outputs = ref["outputs"]
        try:
            res = _build_and_measure(mod, target, fname, arguments_by_name(mod, fname, values, arrays),
                                     args.get("bench", {}), ctx,
                                     f"{i + 1}/{len(specs)}: {label}", baseline=bool(spec.get("baseline")))
        except BuildError as exc:
            rows.append({"label": label, "key": key, "target": target, "error": str(exc), "build_ms": None,
                         "latency": None, "outputs": [], "check": None})
            scripts.append("")
            continue
        row = {"label": label, "key": key, "target": target, "device": res["device"], "build_ms": res["build_ms"],
               "latency": res["latency"], "outputs": output_stats(res["outputs"]), "check": None, "error": None}
        if chk is not None and ref_outputs is not None:
            row["check"] = {**compare_outputs(res["outputs"], ref_outputs, chk["rtol"], chk["atol"], chk["scale"]),
                            "reference": "model as loaded, tvm.compile default pipeline, llvm"}
        rows.append(row)
        scripts.append(_ir_summary(mod))
    diffs = []
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            if not scripts[i] or not scripts[j]:
                continue
            d = diff_mod.diff_snapshots(scripts[i], scripts[j])
            diffs.append({"a": i, "b": j, "identical": not d.changed, "stats": d.stats(),
                          "functions": [{"name": f.name, "status": f.status, "added": f.added_lines,
                                         "removed": f.removed_lines}
                                        for f in d.functions if f.status != "unchanged" and f.is_function]})
    timed = [r for r in rows if r.get("latency")]
    best = min(timed, key=lambda r: r["latency"]["median_us"]) if timed else None
    return {"function": func_name, "arguments": described, "rows": rows, "diffs": diffs,
            "best": rows.index(best) if best is not None else None}


@handler("compare")
def handle_compare(args: dict, ctx: WorkerContext) -> dict:
    """Build modules, run them on the same inputs and compare latencies (and, with ``modules``, more).

    Two-module form: ``a`` and ``b`` (each a module request like ``build_run``'s: ``document``, ``base_dir``,
    ``key``, ``baseline``, ``target``), ``inputs``, ``bench``, ``check`` (compare ``b`` against ``a``);
    ``speedup`` = latency(a) / latency(b).
    Many-module form: ``modules`` (a list of such requests, each with an optional ``label``), ``inputs``,
    ``bench``, ``check``: reply ``{"function", "arguments", "rows": [{label, key, target, device, build_ms,
    latency, outputs, check (vs the model as loaded), error}], "diffs": [{a, b, added, removed, identical,
    functions}] (final IR of every pair, :func:`pipeline_model.diff.diff_scripts`), "best": index of the
    fastest}``. A module that fails to build gets its ``error``; the others still run.
    """
    if args.get("modules") is not None:
        return _compare_many(args, ctx)
    sides = []
    arrays = described = None
    values: dict[str, np.ndarray] = {}
    func_name = None
    for side in ("a", "b"):
        spec = dict(args.get(side) or {})
        if not spec:
            raise BuildError(f"compare: module {side!r} is missing")
        mod, loaded, target, label = resolve_module(spec, ctx)
        func_name = entry_function(mod, args.get("function") or func_name)
        if arrays is None:
            bounds = integer_input_bounds(loaded.mod, func_name) \
                if func_name in relax_function_names(loaded.mod) else None
            arrays, described = make_arguments(mod, func_name, loaded.params, args.get("inputs"), bounds)
            values = reference_values(mod, func_name, loaded, arrays, described, args.get("inputs"), bounds)
        res = _build_and_measure(mod, target, func_name, arguments_by_name(mod, func_name, values, arrays),
                                 args.get("bench", {}), ctx,
                                 f"{side}: {label}", baseline=bool(spec.get("baseline")))
        sides.append((label, target, res))
    (la, ta, ra), (lb, tb, rb) = sides
    out: dict[str, Any] = {"function": func_name, "arguments": described}
    for name, label, target, res in (("a", la, ta, ra), ("b", lb, tb, rb)):
        out[name] = {"label": label, "target": target, "device": res["device"], "build_ms": res["build_ms"],
                     "latency": res["latency"], "outputs": output_stats(res["outputs"])}
    out["speedup"] = ra["latency"]["median_us"] / rb["latency"]["median_us"]
    chk = _check_settings(args)
    if chk is not None:
        out["check"] = compare_outputs(rb["outputs"], ra["outputs"], chk["rtol"], chk["atol"], chk["scale"])
    return out


DEPLOY_SCRIPT = '''\
"""Run the exported model: {library} (built by Relax Pipeline Studio for target {target_label}).

Usage: python deploy.py [inputs.npz]      (needs apache-tvm; arrays in the .npz named like the inputs)
Without an inputs file it runs on seeded random inputs.
"""
import json
import os
import sys

import numpy as np
import tvm
from tvm import relax

HERE = os.path.dirname(os.path.abspath(__file__))
META = json.load(open(os.path.join(HERE, "model.json")))


def main() -> None:
    lib = tvm.runtime.load_module(os.path.join(HERE, META["library"]))
    dev = getattr(tvm, META["device"])(0)
    vm = relax.VirtualMachine(lib, dev)
    rng = np.random.default_rng(0)
    if len(sys.argv) > 1:
        data = np.load(sys.argv[1])
        inputs = [data[a["name"]] for a in META["inputs"]]
    else:
        inputs = [rng.standard_normal(a["shape"]).astype(a["dtype"]) for a in META["inputs"]]
    weights = np.load(os.path.join(HERE, "weights.npz"))
    args = [tvm.runtime.tensor(np.asarray(x), dev) for x in inputs]
    args += [tvm.runtime.tensor(weights[f"w{{i}}"], dev) for i in range(len(META["weights"]))]
    out = vm[META["function"]](*args)
    outs = [out] if hasattr(out, "numpy") else list(out)
    for i, o in enumerate(outs):
        arr = o.numpy()
        print(f"output {{i}}: shape={{list(arr.shape)}} dtype={{arr.dtype}} mean={{float(arr.mean()):.6g}}")
    np.savez(os.path.join(HERE, "outputs.npz"), *[o.numpy() for o in outs])


if __name__ == "__main__":
    main()
'''


@handler("export_library")
def handle_export_library(args: dict, ctx: WorkerContext) -> dict:
    """Build the module and write ``model.so``, ``weights.npz``, ``model.json`` and ``deploy.py`` to ``out_dir``.

    args: like ``build_run`` plus ``out_dir``. The weights are the model's (or the seeded random ones
    the build used); ``deploy.py`` loads the library and runs the entry function.
    """
    out_dir = str(args.get("out_dir") or "")
    if not out_dir:
        raise BuildError("export_library needs out_dir")
    mod, loaded, target, label = resolve_module(args, ctx)
    func_name = entry_function(mod, args.get("function"))
    arrays, described = make_arguments(mod, func_name, loaded.params, args.get("inputs"))
    _progress(ctx, "building", f"building {label} for {targets_mod_label(target)}")
    ex = build_module(mod, target)
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as exc:
        raise BuildError(f"cannot create {out_dir}: {exc.strerror or exc}") from None
    lib_path = os.path.join(out_dir, "model.so")
    _progress(ctx, "exporting", f"writing {lib_path}")
    try:
        ex.export_library(lib_path)
    except Exception as exc:  # noqa: BLE001
        raise BuildError(f"export_library to {lib_path} failed: {error_text(exc)}") from None
    inputs = [d for d in described if not d.get("weight")]
    weights = [d for d in described if d.get("weight")]
    n_in = len(inputs)
    weight_arrays: dict[str, Any] = {f"w{i}": a for i, a in enumerate(arrays[n_in:])}
    np.savez(os.path.join(out_dir, "weights.npz"), **weight_arrays)
    meta = {"library": "model.so", "function": func_name, "target": target,
            "device": targets_mod.device_kind_for(target), "inputs": inputs, "weights": weights}
    with open(os.path.join(out_dir, "model.json"), "w", encoding="utf-8") as fh:
        json.dump(meta, fh, indent=2)
    deploy = os.path.join(out_dir, "deploy.py")
    with open(deploy, "w", encoding="utf-8") as fh:
        fh.write(DEPLOY_SCRIPT.format(library="model.so", target_label=targets_mod_label(target)))
    return {"library": lib_path, "deploy_script": deploy, "weights": os.path.join(out_dir, "weights.npz"),
            "metadata": os.path.join(out_dir, "model.json"), "function": func_name}


@handler("devices")
def handle_devices(args: dict, ctx: WorkerContext) -> dict:
    """Local devices and the suggested target of each (CPU first)."""
    return {"devices": detect_devices()}


def _jsonable(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): _jsonable(v) for k, v in value.items()}
    try:
        return [_jsonable(v) for v in value]
    except TypeError:
        return str(value)


@handler("validate_target")
def handle_validate_target(args: dict, ctx: WorkerContext) -> dict:
    """Construct ``tvm.target.Target`` from ``target``: TVM's canonical form, or its error message."""
    target = args.get("target")
    if not isinstance(target, dict):
        return {"ok": False, "error": "the target must be a JSON object with a \"kind\""}
    try:
        tgt = tvm_target(target)
    except BuildError as exc:
        return {"ok": False, "error": str(exc)}
    canonical = {str(k): _jsonable(v) for k, v in dict(tgt.export()).items()}
    return {"ok": True, "target": canonical, "keys": [str(k) for k in tgt.keys]}

