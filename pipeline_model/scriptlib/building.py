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

On a CPU target the PrimFuncs are lowered by TVM's default TIR pipeline plus one pass,
:func:`stack_buffers_pass`: a kernel's small constant-size buffers (a matmul's or convolution's accumulator tile)
live on its thread's stack instead of TVM's workspace pool (the pipeline :data:`TIR_PIPELINE`, registered by
:func:`tir_pipeline`).

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


#: Largest constant-size buffer (bytes) a kernel keeps on its thread's stack (:func:`stack_buffers_pass`).
STACK_BUFFER_BYTES = 8192
#: The name the app's CPU lowering is registered under among TVM's TIR pipelines (:func:`tir_pipeline`).
TIR_PIPELINE = "rps_cpu"
#: The allocation annotation TVM's ``LowerTVMBuiltin`` reads (``tirx::transform::kDisableLowerTVMBuiltin``):
#: set, the buffer stays an LLVM stack allocation.
_KEEP_ON_STACK = "disable_lower_builtin"


def _stack_buffer(alloc: Any, limit: int) -> Any:
    """``alloc`` (an ``AllocBuffer``) marked to stay on the stack when its size is constant and at most
    ``limit`` bytes; else ``alloc`` itself."""
    import tvm

    buf = alloc.buffer
    if _KEEP_ON_STACK in alloc.annotations or not all(isinstance(d, tvm.tirx.IntImm) for d in buf.shape):
        return alloc
    size = buf.dtype.bits * buf.dtype.lanes // 8
    for dim in buf.shape:
        size *= int(dim)
    if not 0 < size <= limit:
        return alloc
    return tvm.tirx.AllocBuffer(buf, {**dict(alloc.annotations), _KEEP_ON_STACK: tvm.tirx.IntImm("int32", 1)})


def _stack_buffers(stmt: Any, limit: int) -> Any:
    """``stmt`` with its small buffers marked by :func:`_stack_buffer` (statements rebuilt only where something
    inside them changed; a kind of statement not listed here is left as it is)."""
    import tvm

    tir = tvm.tirx
    if isinstance(stmt, tir.AllocBuffer):
        return _stack_buffer(stmt, limit)
    if isinstance(stmt, tir.SeqStmt):
        seq = [_stack_buffers(part, limit) for part in stmt.seq]
        return stmt if all(a.same_as(b) for a, b in zip(seq, stmt.seq)) else tir.SeqStmt(seq, stmt.span)
    if isinstance(stmt, (tir.For, tir.AttrStmt, tir.While)):
        body = _stack_buffers(stmt.body, limit)
        if body.same_as(stmt.body):
            return stmt
        if isinstance(stmt, tir.For):
            return tir.For(stmt.loop_var, stmt.min, stmt.extent, stmt.kind, body, stmt.thread_binding,
                           stmt.annotations, stmt.step, stmt.span)
        if isinstance(stmt, tir.AttrStmt):
            return tir.AttrStmt(stmt.node, stmt.attr_key, stmt.value, body, stmt.span)
        return tir.While(stmt.condition, body, stmt.span)
    if isinstance(stmt, tir.IfThenElse):
        then = _stack_buffers(stmt.then_case, limit)
        other = None if stmt.else_case is None else _stack_buffers(stmt.else_case, limit)
        if then.same_as(stmt.then_case) and (other is None or other.same_as(stmt.else_case)):
            return stmt
        return tir.IfThenElse(stmt.condition, then, other, stmt.span)
    return stmt


def stack_buffers_pass(limit: int = STACK_BUFFER_BYTES) -> Any:
    """A PrimFunc pass (after TVM's lowering, before its ``LowerTVMBuiltin``) keeping each constant-size buffer of
    at most ``limit`` bytes on the stack. TVM 0.27 gives every ``local`` buffer, and every ``global`` one of 1 KB
    or more, an allocation from its workspace pool — inside a parallel loop, one per task: the 8 x 32
    accumulator of a matmul tile (1 KB) was allocated and freed by every task, and LLVM could not keep it in
    registers. On the stack LLVM promotes it (same results; measured kernel alone, 2 threads: GPT-2's LM head
    80.9 -> 73.7 us, EfficientNet-B0's 112 x 112 expand convolution 446 -> 366 us)."""
    import tvm

    @tvm.tirx.transform.prim_func_pass(opt_level=0, name="StackBuffers")
    def stack_buffers(func: Any, _mod: Any, _ctx: Any) -> Any:
        body = _stack_buffers(func.body, limit)
        return func if body.same_as(func.body) else func.with_body(body)

    return stack_buffers


def tir_pipeline() -> str:
    """The name of the app's TIR pipeline for CPU targets (:data:`TIR_PIPELINE`), registered with TVM on first
    use: TVM's default lowering, then :func:`stack_buffers_pass`; its finalization is TVM's."""
    import tvm
    from tvm.tirx import compilation_pipeline

    if TIR_PIPELINE not in compilation_pipeline.PIPELINE_MAP:
        def factory() -> Any:
            lower, finalize_host, finalize_device = compilation_pipeline.get_tir_pipeline("default")
            return tvm.transform.Sequential([lower, stack_buffers_pass()]), finalize_host, finalize_device

        compilation_pipeline.register_tir_pipeline(TIR_PIPELINE, factory)
    return TIR_PIPELINE


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
    """``tvm.tirx.build`` of each IRModule in ``parts`` for its (CPU) target in ``targets`` with the app's TIR
    pipeline (:func:`tir_pipeline`), in one thread each; the first error is raised."""
    import tvm

    libs: list[Any] = [None] * len(parts)
    errors: list[BaseException] = []
    lowering = tir_pipeline()  # registered here, before the threads

    def build(index: int) -> None:
        try:
            libs[index] = tvm.tirx.build(parts[index], target=targets[index], pipeline=lowering)
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
        lowering = tir_pipeline() if target.kind.name == "llvm" else "default"
        return tvm.compile(mod, target=target, relax_pipeline=None, tir_pipeline=lowering)
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
