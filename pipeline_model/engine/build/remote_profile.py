"""The profile of a module run on an RPC device (engine side; imports TVM inside the functions).

TVM cannot call the VM instrument :func:`pipeline_model.engine.build.measure.profile_vm` uses (a Python
callback) from a VM on another machine, and 0.27's runtime has no VM profiler. So on an RPC device every
kernel (PrimFunc) the entry function calls is timed there by itself: the compiled kernels (the executable's
library, without the VM) are exported and uploaded beside the VM's library, and TVM's ``time_evaluator`` over RPC
runs each kernel on tensors of its arguments' shapes and dtypes, allocated on the device and filled with zeros
(zero is a valid index for a gather). The shapes come from the calls in the Relax function before VM lowering
(``call_tir``: inputs and outputs; VM lowering keeps only the rank of a symbolic shape), symbolic dims bound
from the run's input shapes; how often each kernel runs, from the calls in the built module. A kernel per call
site counts once per call; two calls with the same shapes are timed once.

The result has the structure of :func:`~pipeline_model.engine.build.measure.profile_vm`'s, with ``method``
:data:`~pipeline_model.build_api.PROFILE_KERNELS` (the local one's is ``PROFILE_INSTRUMENT``) and ``skipped``
(kernels not timed: their argument shapes could not be known, e.g. a dim a ``match_cast`` reads from data, or
the library lacks them): ``total_us`` is the sum of the kernels' own times, ``run_us`` the whole run timed on
the device (``time_evaluator`` of the entry function). Between the two lies roughly the VM's own work between
the kernels (allocations, shape checks); a kernel timed alone also runs with warm caches.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from typing import Any, Iterator, Optional

import numpy as np

from pipeline_model.build_api import PROFILE_KERNELS
from pipeline_model.engine.build.errors import error_text
from pipeline_model.scriptlib.functions import BuildError
from pipeline_model.scriptlib.outputs import benchmark

#: Each timed repeat of a kernel lasts at least this long (a µs kernel runs many times per repeat).
KERNEL_REPEAT_MS = 1

_CALL_TIR_OPS = ("relax.call_tir", "relax.call_tir_inplace")


def _bindings(expr: Any) -> Iterator[Any]:
    """Every binding of ``expr`` (a function body), the branches of an ``If`` included, in order."""
    import tvm

    if isinstance(expr, tvm.relax.SeqExpr):
        for block in expr.blocks:
            for binding in block.bindings:
                yield binding
                if isinstance(binding.value, tvm.relax.If):
                    yield from _bindings(binding.value.true_branch)
                    yield from _bindings(binding.value.false_branch)


def _is_host_func(func: Any) -> bool:
    attrs = func.attrs or {}
    return "tir.is_host_func" in attrs or "tirx.is_host_func" in attrs


def kernel_names(mod: Any) -> set[str]:
    """The PrimFuncs of ``mod`` that are kernels (not the shape computation VM lowering adds)."""
    import tvm

    return {gv.name_hint for gv, func in mod.functions_items()
            if isinstance(func, tvm.tirx.PrimFunc) and not _is_host_func(func)}


def _direct_callee(call: Any, kernels: set[str]) -> Optional[str]:
    """The kernel a (VM-lowered) ``call`` calls directly, else ``None``."""
    import tvm

    if isinstance(call, tvm.ir.Call) and isinstance(call.op, tvm.ir.GlobalVar) and call.op.name_hint in kernels:
        return str(call.op.name_hint)
    return None


def built_calls(lowered: Any, func_name: str) -> dict[str, int]:
    """How often ``func_name`` of the built module ``lowered`` calls each kernel (PrimFunc), in call order."""
    kernels = kernel_names(lowered)
    calls: dict[str, int] = {}
    for binding in _bindings(lowered[func_name].body):
        name = _direct_callee(binding.value, kernels)
        if name is not None:
            calls[name] = calls.get(name, 0) + 1
    return calls


def _call_types(call: Any) -> Optional[tuple[str, list[Any]]]:
    """The callee and the types of the kernel's parameters of a ``call_tir`` (inputs, then the outputs it
    allocates; ``call_tir_inplace`` writes some outputs into inputs), or ``None`` for another call."""
    import tvm

    if not isinstance(call, tvm.ir.Call) or not isinstance(call.op, tvm.ir.Op) or call.op.name not in _CALL_TIR_OPS:
        return None
    args = call.args[1]
    arg_types = [a.ty for a in args.fields] if isinstance(args, tvm.relax.Tuple) else [args.ty]
    out = call.ty
    outs = list(out.fields) if isinstance(out, tvm.relax.TupleType) else [out]
    if call.op.name == "relax.call_tir_inplace":
        inplace = [int(i) for i in call.attrs.inplace_indices]
        outs = [t for t, i in zip(outs, inplace) if i < 0]
    return str(call.args[0].name_hint), arg_types + outs


def shaped_calls(mod: Any, func_name: str) -> dict[str, list[list[Any]]]:
    """Per kernel, the parameter types of each call of it in ``func_name`` of ``mod`` (legalized first, as the
    build does): ``call_tir`` calls, or direct calls of a module lowered already."""
    import tvm

    with tvm.target.Target({"kind": "llvm"}):
        legal = tvm.relax.transform.LegalizeOps()(mod)
    kernels = kernel_names(legal)
    out: dict[str, list[list[Any]]] = {}
    for binding in _bindings(legal[func_name].body):
        typed = _call_types(binding.value)
        if typed is None and _direct_callee(binding.value, kernels) is not None:
            typed = (str(binding.value.op.name_hint), [a.ty for a in binding.value.args])
        if typed is not None:
            out.setdefault(typed[0], []).append(typed[1])
    return out


def bind_dims(func: Any, arrays: list[np.ndarray]) -> Any:
    """An analyzer with the symbolic dims of ``func``'s tensor parameters bound to the shapes of ``arrays``
    (the run's inputs; a parameter that is not a tensor of the array's rank, e.g. lifted weights, binds none)."""
    import tvm
    from tvm.sym.analyzer import Analyzer

    analyzer = Analyzer()
    bound: set[str] = set()
    for param, array in zip(func.params, arrays):
        ty = param.ty
        if not isinstance(ty, tvm.relax.TensorType) or ty.shape is None:
            continue
        dims = list(ty.shape.values)
        if len(dims) != np.ndim(array):
            continue
        for dim, size in zip(dims, np.shape(array)):
            if isinstance(dim, tvm.tirx.Var) and dim.name not in bound:
                analyzer.bind(dim, int(size))
                bound.add(dim.name)
    return analyzer


def concrete(ty: Any, analyzer: Any) -> Optional[tuple[tuple[int, ...], str]]:
    """``(shape, dtype)`` of tensor type ``ty`` with its dims evaluated, or ``None`` if one stays unknown."""
    import tvm

    if not isinstance(ty, tvm.relax.TensorType) or ty.shape is None:
        return None
    shape = []
    for dim in ty.shape.values:
        value = analyzer.simplify(dim)
        if not isinstance(value, tvm.tirx.IntImm):
            return None
        shape.append(int(value))
    return tuple(shape), str(ty.dtype)


def kernel_signatures(mod: Any, lowered: Any, func_name: str, arrays: list[np.ndarray]
                      ) -> tuple[dict[str, list[tuple[Any, float]]], dict[str, int], list[str]]:
    """What to time: per kernel the distinct argument signatures (a list of ``(shape, dtype)``) with the calls
    each stands for; the calls per kernel of the built module; the kernels whose shapes stay unknown."""
    calls = built_calls(lowered, func_name)
    view = mod if mod is not None else lowered
    sites = shaped_calls(view, func_name)
    analyzer = bind_dims(view[func_name], arrays)
    low_sites = shaped_calls(lowered, func_name) if mod is not None else sites
    plans: dict[str, list[tuple[Any, float]]] = {}
    skipped: list[str] = []
    for name, count in calls.items():
        known = [[concrete(t, analyzer) for t in types] for types in sites.get(name) or low_sites.get(name) or []]
        if not known or any(None in types for types in known):
            skipped.append(name)
            continue
        weights: dict[tuple[Any, ...], float] = {}
        for types in known:  # a call site stands for count / sites calls (equal when lowering kept them all)
            weights[tuple(types)] = weights.get(tuple(types), 0.0) + count / len(known)
        plans[name] = list(weights.items())
    return plans, calls, skipped


def _zeros(shape: tuple[int, ...], dtype: str, dev: Any) -> Any:
    import tvm

    try:
        host = np.zeros(shape, dtype=np.dtype(dtype))
    except TypeError:  # a dtype numpy lacks: uninitialised memory (not an index, not read as data)
        return tvm.runtime.empty(shape, dtype, dev)
    return tvm.runtime.tensor(host, dev)


def kernel_library(placed: Any, symbols: list[str]) -> tuple[Any, set[str]]:
    """The executable's compiled kernels (its library module holding most of ``symbols``) exported, uploaded to
    the device of ``placed`` (:class:`~pipeline_model.engine.build.remote.RemoteRun`) and loaded there, and which
    of ``symbols`` it holds: TVM's ``time_evaluator`` looks a function up in the module it is given, not in its
    imports (where the VM's library keeps the kernels)."""
    held = [(m, {s for s in symbols if m.implements_function(s)}) for m in placed.executable.mod.imports]
    chosen, found = max(held, key=lambda pair: len(pair[1]), default=(None, set()))
    if chosen is None or not found:
        raise BuildError("the built library has none of the kernels the entry function calls")
    with tempfile.TemporaryDirectory(prefix="rps-rpc-") as private:
        name = f"rps_kernels_{uuid.uuid4().hex[:12]}.so"
        path = os.path.join(private, name)
        try:
            chosen.export_library(path)
            placed.session.upload(path)
            return placed.session.load_module(name), found
        except Exception as exc:  # noqa: BLE001 - export, connection, upload
            raise BuildError(f"uploading the kernels to the RPC device failed: {error_text(exc)}") from None


def profile_remote(placed: Any, mod: Any, lowered: Any, func_name: str, vm: Any, arrays: list[np.ndarray],
                   repeat: int, warmup: int) -> dict[str, Any]:
    """Time every kernel ``func_name`` of the built module ``lowered`` calls, one by one on the RPC device of
    ``placed``, and the whole run there (``vm``, the remote VM), ``repeat`` times each after ``warmup`` runs;
    ``mod`` is the module that was built (its calls carry the shapes). Returns the structure of
    :func:`~pipeline_model.engine.build.measure.profile_vm` (``entries``, ``total_us``, ``run_us``, ``runs_us``,
    ``repeat``, ``warmup``) plus ``method`` and ``skipped`` (kernels not timed: shapes unknown, or not in the
    library). Raises :class:`BuildError` when the kernels cannot be uploaded or timed."""
    plans, calls, skipped = kernel_signatures(mod, lowered, func_name, arrays)
    entries: list[dict[str, Any]] = []
    if plans:
        library, found = kernel_library(placed, list(plans))
        skipped += [name for name in plans if name not in found]
        zeros: dict[tuple[Any, int], Any] = {}  # one tensor per (shape, dtype) and position among equal ones
        for name, signatures in plans.items():
            if name not in found:
                continue
            totals = np.zeros(repeat)
            for types, weight in signatures:
                seen: dict[Any, int] = {}
                args = []
                for item in types:
                    seen[item] = seen.get(item, -1) + 1
                    key = (item, seen[item])
                    if key not in zeros:
                        zeros[key] = _zeros(item[0], item[1], placed.dev)
                    args.append(zeros[key])
                try:
                    timed = library.time_evaluator(name, placed.dev, number=1, repeat=repeat,
                                                   min_repeat_ms=KERNEL_REPEAT_MS)(*args)
                except Exception as exc:  # noqa: BLE001 - the device failed to run it
                    raise BuildError(f"timing kernel {name} on the RPC device failed: {error_text(exc)}") from None
                totals += np.asarray(timed.results, dtype=np.float64) * 1e6 * weight
            total = float(np.median(totals))
            entries.append({"name": name, "kind": "prim_func", "calls": calls[name], "total_us": total,
                            "mean_us": total / calls[name], "min_total_us": float(totals.min()),
                            "max_total_us": float(totals.max()), "totals_us": [float(t) for t in totals]})
    grand = sum(e["total_us"] for e in entries) or 1.0
    for e in entries:
        e["share"] = e["total_us"] / grand
    entries.sort(key=lambda e: (-e["total_us"], e["name"]))
    run = benchmark(vm, func_name, placed.dev, arrays, {"warmup": warmup, "warmup_ms": 0, "number": 1,
                                                        "repeat": repeat, "min_repeat_ms": KERNEL_REPEAT_MS})
    return {"entries": entries, "total_us": grand, "run_us": float(run["median_us"]), "repeat": repeat,
            "warmup": warmup, "runs_us": list(run["runs_us"]), "method": PROFILE_KERNELS, "skipped": skipped}
