"""Building and measuring a module: ``tvm.compile`` with the ``default_build`` Relax pipeline (legalize
what is left, then VM lowering; no extra scheduling or fusion, so the build measures the user's pipeline;
the PrimFuncs of a CPU build compiled on every core, :func:`pipeline_model.scriptlib.building.compile_module`),
refusing unscheduled PrimFuncs for a GPU target; one run, timing and profiling on the target's device.
Imports TVM inside the functions.

:func:`profile_vm` times every call the VM makes (the ``profile`` of ``build_run``)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from pipeline_model import targets as targets_mod
from pipeline_model.build_api import PROFILE_INSTRUMENT
from pipeline_model.engine.build.devices import device_for, target_label, tvm_target
from pipeline_model.engine.build.errors import error_text
from pipeline_model.engine.build.requests import ResolvedModule, check_cancel, progress
from pipeline_model.scriptlib.arguments import prepacked_vm
from pipeline_model.scriptlib.building import compile_module
from pipeline_model.scriptlib.functions import BuildError
from pipeline_model.scriptlib.outputs import Timer, benchmark, benchmark_interleaved, flatten_outputs

if TYPE_CHECKING:  # the worker imports the handlers; only type checkers import it here
    from pipeline_model.engine.context import WorkerContext


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


def _refuse_unscheduled(mod: Any, target: dict[str, Any]) -> None:
    """Raise :class:`BuildError` naming the PrimFuncs a GPU build would leave unscheduled."""
    missing = unscheduled_prim_funcs(mod)
    if missing:
        shown = ", ".join(missing[:12]) + (f" and {len(missing) - 12} more" if len(missing) > 12 else "")
        raise BuildError(
            f"refusing to build for {target.get('kind')}: {len(missing)} PrimFunc(s) have no GPU thread "
            f"binding and would run unscheduled: {shown}. Fix: add a DLight step "
            "(dlight.ApplyDefaultSchedule with gpu rules such as gpu.Matmul, gpu.GEMV, gpu.Reduction, "
            "gpu.GeneralReduction, gpu.Fallback) or a MetaSchedule tuning step after legalization"
        )


def _relax_pipeline(mod: Any, tgt: Any, baseline: bool) -> Any:
    """The Relax pipeline ``tvm.compile`` would run: for the baseline its ``"default"`` (the target's own
    default pipeline on a GPU), else ``default_build`` (``None`` when the module is VM-lowered already)."""
    import tvm

    if baseline:
        if "gpu" in tgt.keys:
            try:
                return tvm.relax.get_default_pipeline(tgt)
            except (ValueError, AttributeError):
                pass
        return tvm.relax.get_pipeline("default")
    return None if _is_vm_lowered(mod) else tvm.relax.get_pipeline("default_build")


def build_lowered(mod: Any, target: dict[str, Any], *, baseline: bool = False) -> tuple[Any, str]:
    """Compile ``mod`` for ``target`` (as :func:`build_module`) and return ``(executable, fingerprint)``:
    the fingerprint is the structural hash of the module after the Relax pipeline, the module that is
    compiled, so two builds with the same fingerprint are the same build (nothing to compare)."""
    ex, fingerprint, _lowered = build_lowered_module(mod, target, baseline=baseline)
    return ex, fingerprint


def build_lowered_module(mod: Any, target: dict[str, Any], *, baseline: bool = False) -> tuple[Any, str, Any]:
    """:func:`build_lowered` and the module it compiled (after the Relax pipeline: the VM-lowered calls)."""
    import tvm
    import tvm_ffi

    tgt = tvm_target(target)
    if not baseline and targets_mod.is_gpu_target(target):
        _refuse_unscheduled(mod, target)
    try:
        pipeline = _relax_pipeline(mod, tgt, baseline)
        lowered = mod
        if pipeline is not None:
            with tgt:
                lowered = pipeline(mod)
        try:
            fingerprint = f"{int(tvm_ffi.structural_hash(lowered)) & 0xFFFFFFFFFFFFFFFF:016x}"
        except Exception:  # noqa: BLE001 - a module that cannot be hashed is never "the same build"
            fingerprint = ""
        if baseline:
            return tvm.compile(lowered, target=tgt, relax_pipeline=None), fingerprint, lowered
        return compile_module(lowered, tgt, relax_pipeline=None), fingerprint, lowered
    except BuildError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise BuildError(f"tvm.compile for {target.get('kind')} failed: {error_text(exc)}") from None


def build_module(mod: Any, target: dict[str, Any], *, baseline: bool = False) -> Any:
    """Compile ``mod`` for ``target`` with ``tvm.compile``.

    ``baseline``: the stock default pipeline (``relax_pipeline="default"``) — the reference build.
    Otherwise the ``default_build`` Relax pipeline (or none when the module is VM-lowered already),
    after refusing unscheduled PrimFuncs for a GPU target.
    """
    return build_lowered(mod, target, baseline=baseline)[0]


def build_resolved(resolved: ResolvedModule) -> Any:
    """:func:`build_module` of a resolved request's module, with its ``baseline``."""
    return build_module(resolved.mod, resolved.target, baseline=resolved.baseline)


def make_vm(executable: Any, dev: Any, mod: Any = None) -> Any:
    """``relax.VirtualMachine`` of ``executable`` on ``dev``; with ``mod`` (the module that was built) a
    function lifted by ``relax.LiftTransformParams`` takes its original arguments and runs its
    ``<f>_transform_params`` once (:func:`~pipeline_model.scriptlib.arguments.prepacked_vm`)."""
    import tvm

    vm = tvm.relax.VirtualMachine(executable, dev)
    return vm if mod is None else prepacked_vm(vm, mod)


def run_function(vm: Any, func_name: str, dev: Any, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """Run ``func_name`` once on ``dev`` and return its outputs (flattened) as numpy arrays."""
    import tvm

    args = [tvm.runtime.tensor(a, dev) for a in arrays]
    try:
        result = vm[func_name](*args)
    except Exception as exc:  # noqa: BLE001
        raise BuildError(f"running {func_name} failed: {error_text(exc)}") from None
    return flatten_outputs(result)


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


#: Instrumented runs of a profile: ``warmup`` plain runs, then ``repeat`` timed ones.
DEFAULT_PROFILE = {"warmup": 1, "repeat": 5}


def profile_counts(settings: Optional[dict[str, Any]]) -> tuple[int, int]:
    """``(repeat, warmup)`` of a profile's ``settings`` (:data:`DEFAULT_PROFILE` for what they leave out)."""
    s = {**DEFAULT_PROFILE, **{k: v for k, v in (settings or {}).items() if v is not None}}
    return max(1, int(s["repeat"])), max(0, int(s["warmup"]))


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
    total, largest first: name, kind, calls, total_us, mean_us, share, min_total_us, max_total_us,
    totals_us (its time in each run)), "total_us" (sum of the entries' totals), "run_us" (median wall time
    of one instrumented run), "runs_us" (each run's wall time), "repeat", "warmup"}``. Nested calls (a Relax function calling PrimFuncs) count inclusively.
    """
    import tvm

    repeat, warmup = profile_counts(settings)
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
                        "min_total_us": float(min(totals)), "max_total_us": float(max(totals)),
                        "totals_us": [float(t) for t in totals]})
    grand = sum(e["total_us"] for e in entries if e["kind"] != "relax_function") or 1.0
    for e in entries:
        e["share"] = e["total_us"] / grand
    entries.sort(key=lambda e: (-e["total_us"], e["name"]))
    return {"entries": entries, "total_us": grand, "run_us": float(np.median(wall)), "repeat": repeat,
            "warmup": warmup, "runs_us": [float(w) for w in wall], "method": PROFILE_INSTRUMENT}


def build_and_measure(mod: Any, target: dict[str, Any], func_name: str, arrays: list[np.ndarray],
                       bench: Optional[dict[str, Any]], ctx: WorkerContext, what: str,
                       baseline: bool = False, profile: Optional[dict[str, Any]] = None,
                       time_later: bool = False, remote: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """Build ``mod`` for ``target``, run ``func_name`` once on ``arrays``, then time it (``bench``) and profile it
    (``profile``) when asked; progress events name the module ``what``. Returns ``build_ms``, ``outputs``,
    ``latency``, ``device``, ``executable``, ``profile``, ``fingerprint`` (:func:`build_lowered`) and, with
    ``time_later``, a ``timer`` instead of the latency (for :func:`time_together`). With ``remote`` it runs and
    is timed on that RPC device (:class:`pipeline_model.engine.build.remote.RemoteRun`), and its profile is
    every kernel timed there by itself (:func:`pipeline_model.engine.build.remote_profile.profile_remote`;
    ``profile_note`` says why there is none when that fails)."""
    check_cancel(ctx)
    progress(ctx, "building", f"building {what} for {target_label(target)}")
    t0 = time.perf_counter()
    ex, fingerprint, lowered = build_lowered_module(mod, target, baseline=baseline)
    build_ms = (time.perf_counter() - t0) * 1000.0
    placed = None
    if remote is not None:
        from pipeline_model.engine.build.remote import RemoteRun

        check_cancel(ctx)
        progress(ctx, "uploading", f"uploading {what} to {targets_mod.remote_label(remote)}")
        placed = RemoteRun(ex, target, remote)
        dev, device_name = placed.dev, placed.device
        vm = placed.vm if mod is None else prepacked_vm(placed.vm, mod)
    else:
        dev = device_for(target)
        vm, device_name = make_vm(ex, dev, mod), str(dev)
    check_cancel(ctx)
    progress(ctx, "running", f"running {what}")
    outputs = run_function(vm, func_name, dev, arrays)
    latency = None
    timer = None
    if bench is not None and time_later:
        timer = Timer(vm, func_name, dev, arrays, bench)
    elif bench is not None:
        check_cancel(ctx)
        progress(ctx, "benchmarking", f"timing {what}")
        latency = benchmark(vm, func_name, dev, arrays, bench)
    prof, note = None, ""
    if profile is not None and placed is not None:
        from pipeline_model.engine.build.remote_profile import profile_remote

        check_cancel(ctx)
        progress(ctx, "profiling", f"profiling {what} on {device_name} (every kernel timed there)")
        try:
            prof = profile_remote(placed, mod, lowered, func_name, vm, arrays, *profile_counts(profile))
        except BuildError as exc:  # the run and its timing stand; the profile is what failed
            note = str(exc)
    elif profile is not None:
        check_cancel(ctx)
        progress(ctx, "profiling", f"profiling {what} (time of every call)")
        prof = profile_vm(vm, func_name, dev, arrays, profile, mod)
    return {"build_ms": build_ms, "outputs": outputs, "latency": latency, "device": device_name, "executable": ex,
            "profile": prof, "profile_note": note, "fingerprint": fingerprint, "timer": timer, "remote": placed}


def time_together(results: list[dict[str, Any]], ctx: WorkerContext) -> None:
    """Time the built modules of ``results`` (each :func:`build_and_measure` with ``time_later``) in rotating
    rounds (:func:`benchmark_interleaved`) and set each one's ``latency``; cancellable between rounds."""
    timed = [r for r in results if r.get("timer") is not None]
    if not timed:
        return

    def between(round_index: int) -> None:
        check_cancel(ctx)
        if round_index == 0:
            progress(ctx, "benchmarking", f"timing {len(timed)} modules in turn (warmed up)")

    check_cancel(ctx)
    progress(ctx, "benchmarking", f"warming up {len(timed)} modules")
    for res, latency in zip(timed, benchmark_interleaved([r["timer"] for r in timed], between)):
        res["latency"] = {**latency, "interleaved": True}
        res["timer"] = None


def measure_resolved(resolved: ResolvedModule, func_name: str, arrays: list[np.ndarray],
                     bench: Optional[dict[str, Any]], ctx: WorkerContext, what: str,
                     profile: Optional[dict[str, Any]] = None, time_later: bool = False) -> dict[str, Any]:
    """:func:`build_and_measure` of a resolved request's module, with its ``baseline``."""
    return build_and_measure(resolved.mod, resolved.target, func_name, arrays, bench, ctx, what,
                             baseline=resolved.baseline, profile=profile, time_later=time_later,
                             remote=resolved.remote)
