"""Compiling a Relax module with its PrimFuncs compiled by LLVM on several cores at once.

``tvm.compile`` hands every PrimFunc of a module to LLVM as one module, on one core. For a CPU build with many
kernels (ResNet-18: 35 PrimFuncs, ~1.5 s of LLVM) :func:`compile_module` does what ``tvm.relax.build`` does —
the Relax pipeline, the VM code generation, ``tvm.tirx.build`` of the PrimFuncs, the link — but splits the
PrimFuncs into one LLVM module per thread (TVM releases the GIL while it compiles) and links the parts
together, parts of about equal expected work (:func:`llvm_cost`). Each of the model's PrimFuncs is compiled by
the same passes with the same target as in one module, so the kernels are the same code; only their grouping
into object files differs. The PrimFuncs only parameter transforms call (the weight packing that
``LiftTransformParams`` moved out of the hot path, run once at load) are compiled without LLVM optimization
(:data:`ONCE_OPT_LEVEL`): a fifth of the LLVM time of a CNN, for a load that copies memory either way.

The engine builds the pipeline's module with it and exported scripts contain this code (copied by
:func:`pipeline_model.scriptlib.module_source`), so a script builds as the app builds. TVM is imported inside
the functions; the module itself needs the standard library and :mod:`.threads` only.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from pipeline_model.scriptlib.threads import explicit_thread_count, usable_cores

#: A part below this many PrimFuncs is not worth its own LLVM module (each costs ~20 ms of set-up).
MIN_FUNCS_PER_PART = 4
#: At most this many LLVM modules are compiled at once, whatever the core count.
MAX_BUILD_THREADS = 8


def build_threads() -> int:
    """How many LLVM modules to compile at once: the runtime's thread count (``TVM_NUM_THREADS`` /
    ``OMP_NUM_THREADS`` when set, else every usable core), at most :data:`MAX_BUILD_THREADS`."""
    chosen = explicit_thread_count(os.environ)
    return max(1, min(MAX_BUILD_THREADS, chosen[0] if chosen else usable_cores()))


#: LLVM optimization level of the PrimFuncs only parameter transforms call (:func:`run_once_functions`): at 0
#: ResNet-18's weight packing compiles in 30 ms instead of 252 (EfficientNet-B0: 111 instead of 627) and runs as
#: fast (13.1 ms vs 12.6 at -O2, once per load: copying the weights is what takes the time).
ONCE_OPT_LEVEL = 0
#: LLVM's fixed share of a PrimFunc, in :func:`llvm_cost` units (set-up, the packed-function wrapper): measured
#: on EfficientNet-B0's 121 PrimFuncs, a function took about 1.7 ms per unit plus 21 ms.
FIXED_COST = 13


def llvm_cost(func: Any) -> int:
    """A PrimFunc's expected LLVM work, in units of one stored value: each store counts as often as the
    unrolled loops around it repeat it, plus :data:`FIXED_COST`. Read from the statements (a few microseconds);
    it follows the measured compile time (correlation 0.88 over EfficientNet-B0's PrimFuncs)."""
    import tvm

    total = FIXED_COST
    todo = [(func.body, 1)]
    while todo:
        stmt, repeat = todo.pop()
        if isinstance(stmt, tvm.tirx.SeqStmt):
            todo.extend((part, repeat) for part in stmt.seq)
        elif isinstance(stmt, tvm.tirx.For):
            unrolled = stmt.kind == tvm.tirx.ForKind.UNROLLED and isinstance(stmt.extent, tvm.tirx.IntImm)
            todo.append((stmt.body, repeat * (int(stmt.extent) if unrolled else 1)))
        elif isinstance(stmt, tvm.s_tir.SBlockRealize):
            todo.extend((part, repeat) for part in (stmt.block.body, stmt.block.init) if part is not None)
        elif isinstance(stmt, tvm.tirx.BufferStore):
            total += repeat
        elif isinstance(stmt, tvm.tirx.IfThenElse):
            todo.extend((part, repeat) for part in (stmt.then_case, stmt.else_case) if part is not None)
        elif isinstance(getattr(stmt, "body", None), tvm.tirx.Stmt):
            todo.append((stmt.body, repeat))
    return total


def split_functions(funcs: list, parts: int, cost: Any = None) -> list[list]:
    """``funcs`` split into at most ``parts`` lists of about equal total ``cost(func)`` (default: each counts 1):
    the costliest first, each into the lightest list so far (a network alternates heavy convolutions and
    small kernels, so dealing them in turn put EfficientNet-B0's convolutions in one part: 2.6 s vs 0.9 s)."""
    weigh = cost or (lambda _item: 1)
    weighed = sorted(((weigh(item), index, item) for index, item in enumerate(funcs)), key=lambda w: (-w[0], w[1]))
    lists: list[list] = [[] for _ in range(max(1, min(parts, len(funcs))))]
    loads = [0] * len(lists)
    for weight, index, item in weighed:
        lightest = loads.index(min(loads))
        lists[lightest].append((index, item))
        loads[lightest] += weight
    return [[item for _index, item in sorted(chunk, key=lambda c: c[0])] for chunk in lists if chunk]


def _split_build_possible(mod: Any, target: Any) -> bool:
    """Whether the PrimFuncs of ``mod`` (after VM code generation) may be compiled in parts: a plain CPU target
    (``llvm`` without a separate host, not WebAssembly) and no system-library prefix or external modules."""
    if target.kind.name != "llvm" or target.host is not None and target.host.kind.name != "llvm":
        return False
    if "wasm" in str(target.attrs.get("mtriple", "")):
        return False
    attrs = dict(mod.attrs) if mod.attrs else {}
    return not attrs.get("external_mods") and attrs.get("system_lib_prefix") is None


def run_once_functions(mod: Any) -> set[str]:
    """Names of the PrimFuncs of ``mod`` that only parameter transforms call (``<f>_transform_params``, made by
    ``relax.transform.LiftTransformParams``: run once when the module is loaded, the weight packing and
    transposes), not the model's functions."""
    from tvm import relax

    hot: set[str] = set()
    once: set[str] = set()
    for gv, func in mod.functions.items():
        if isinstance(func, relax.Function):
            called = {g.name_hint for g in relax.analysis.all_global_vars(func)}
            (once if gv.name_hint.endswith("_transform_params") else hot).update(called)
    return once - hot


def _build_parts(parts: list[Any], targets: list[Any]) -> list[Any]:
    """``tvm.tirx.build`` of each IRModule in ``parts`` for its target in ``targets``, in one thread each; the
    first error is raised."""
    import tvm

    libs: list[Any] = [None] * len(parts)
    errors: list[BaseException] = []

    def build(index: int) -> None:
        try:
            libs[index] = tvm.tirx.build(parts[index], target=targets[index], pipeline="default")
        except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread
            errors.append(exc)

    threads = [threading.Thread(target=build, args=(i,), name=f"llvm-part-{i}") for i in range(1, len(parts))]
    for thread in threads:
        thread.start()
    build(0)
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return libs


def mark_unaliased(mod: Any) -> Any:
    """``mod`` with ``"tirx.noalias"`` on its PrimFuncs that take at most one pointer (nothing for it to alias).

    The legalized kernels have it; the ``shape_func`` that ``relax.transform.VMShapeLower`` adds to a module with
    symbolic shapes (the shape arithmetic of a dynamic sequence axis) does not, and built with it the kernels'
    buffer accesses all got TVM 0.27's one shared TBAA type ``tvm-alias`` (reproducer:
    tests/data/tvm_bugs_unfiled/llvm_alias_lost_with_shape_func.py). LLVM then could no longer keep a matmul's
    accumulator tile in registers: it stored and reloaded it after every FMA (issue 34: a 32 x 128 @ 128 x 2048
    matmul 2.5x slower than the same kernel in a static build). ``shape_func`` reads and writes one shape heap
    only, so marking it changes nothing but that."""
    import tvm

    functions, changed = {}, False
    for gv, func in mod.functions_items():
        if (isinstance(func, tvm.tirx.PrimFunc) and not (func.attrs and func.attrs.get("tirx.noalias"))
                and sum(1 for p in func.params if str(p.dtype) == "handle") <= 1):
            func, changed = func.with_attr("tirx.noalias", True), True
        functions[gv] = func
    return tvm.IRModule(functions, attrs=mod.attrs, global_infos=mod.global_infos) if changed else mod


def compile_module(mod: Any, target: Any, relax_pipeline: Any = "default_build", threads: "int | None" = None) -> Any:
    """``tvm.compile(mod, target=target, relax_pipeline=relax_pipeline)`` for a Relax module, with the PrimFuncs
    compiled in up to ``threads`` (default :func:`build_threads`) LLVM modules at once on a CPU target. Falls back
    to plain ``tvm.compile`` where splitting does not apply (another target, too few PrimFuncs, a system library,
    external modules). Returns the ``relax.VMExecutable``."""
    import tvm
    from tvm import relax
    from tvm.relax import vm_build

    if not isinstance(target, tvm.target.Target):
        target = tvm.target.Target(target)
    if isinstance(relax_pipeline, str):
        relax_pipeline = relax.get_pipeline(relax_pipeline)
    if relax_pipeline is not None:
        with target:
            mod = relax_pipeline(mod)
    mod = mark_unaliased(mod)
    count = sum(isinstance(f, tvm.tirx.PrimFunc) for f in mod.functions.values())
    parts_wanted = min(threads or build_threads(), count // MIN_FUNCS_PER_PART)
    if parts_wanted < 2 or not _split_build_possible(mod, target):
        return tvm.compile(mod, target=target, relax_pipeline=None)
    attrs = dict(mod.attrs) if mod.attrs else {}
    once_names = run_once_functions(mod)
    builder = relax.ExecBuilder()
    leftover = vm_build._vmcodegen(builder, mod, "bytecode")
    prim_funcs = [(gv, f) for gv, f in leftover.functions.items() if isinstance(f, tvm.tirx.PrimFunc)]
    once = [(gv, f) for gv, f in prim_funcs if gv.name_hint in once_names]
    hot = [(gv, f) for gv, f in prim_funcs if gv.name_hint not in once_names]
    chunks = split_functions(hot, parts_wanted, cost=lambda item: llvm_cost(item[1]))
    targets = [target] * len(chunks)
    if once:  # run once at load and memory-bound: LLVM without optimization, in a part of their own
        chunks.append(once)
        targets.append(tvm.target.Target({**dict(target.export()), "opt-level": ONCE_OPT_LEVEL}))
    libs = _build_parts([tvm.IRModule(dict(chunk), attrs=leftover.attrs) for chunk in chunks], targets)
    lib = libs[0]
    for other in libs[1:]:
        lib.import_module(other)
    params = dict(attrs.get("const_name_to_constant", {}))
    return vm_build.VMExecutable(vm_build._ffi_api.VMLink(builder, target, lib, [], params))
