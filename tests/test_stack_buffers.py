"""The app's TIR pipeline for CPU builds (``scriptlib.building.tir_pipeline``): a kernel's small constant-size
buffers stay on its thread's stack instead of TVM's workspace pool — same results, no workspace call left in the
kernel — larger ones keep the pool, and ``compile_module`` builds with it on both of its paths."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline_model.scriptlib import building

tvm = pytest.importorskip("tvm")


def _tile_func(rows: int):
    """A PrimFunc whose parallel loop computes each task's ``rows`` x 32 tile in a ``local`` buffer first (the
    shape of a scheduled matmul's accumulator), ``b = a * 2 + 1``."""
    from tvm.script import tirx as T

    @T.prim_func
    def tile(a: T.Buffer((8 * rows, 32), "float32"), b: T.Buffer((8 * rows, 32), "float32")):
        T.func_attr({"global_symbol": "tile", "tirx.noalias": True})
        for i in T.parallel(8):
            acc = T.alloc_buffer((rows, 32), "float32", scope="local")
            for r, c in T.grid(rows, 32):
                acc[r, c] = a[i * rows + r, c] * T.float32(2)
            for r, c in T.grid(rows, 32):
                b[i * rows + r, c] = acc[r, c] + T.float32(1)

    return tile


def _llvm_text(lib) -> str:
    """The LLVM IR of every LLVM module in ``lib`` and its imports."""
    text = lib.inspect_source("ll") if lib.kind == "llvm" else ""
    return text + "".join(_llvm_text(m) for m in lib.imports)


def _llvm_modules(lib) -> int:
    """How many LLVM modules ``lib`` and its imports hold (``compile_module``'s parts)."""
    return (lib.kind == "llvm") + sum(_llvm_modules(m) for m in lib.imports)


def _run_tile(lib, rows: int) -> bool:
    data = np.random.default_rng(0).standard_normal((8 * rows, 32)).astype("float32")
    out = tvm.runtime.tensor(np.zeros_like(data))
    lib["tile"](tvm.runtime.tensor(data), out)
    return bool(np.array_equal(out.numpy(), data * 2 + 1))


def test_a_small_local_tile_leaves_the_workspace_pool_with_the_same_results():
    mod = tvm.IRModule({"tile": _tile_func(8)})  # 8 x 32 floats: 1 KB, a matmul tile's accumulator
    plain = tvm.tirx.build(mod, target="llvm", pipeline="default")
    app = tvm.tirx.build(mod, target="llvm", pipeline=building.tir_pipeline())
    assert "TVMBackendAllocWorkspace" in _llvm_text(plain)  # TVM's lowering: one pool allocation per task
    assert "TVMBackendAllocWorkspace" not in _llvm_text(app)
    assert _run_tile(plain, 8) and _run_tile(app, 8)


def test_a_buffer_over_the_limit_keeps_the_workspace_pool():
    rows = building.STACK_BUFFER_BYTES // (32 * 4) + 1
    app = tvm.tirx.build(tvm.IRModule({"tile": _tile_func(rows)}), target="llvm", pipeline=building.tir_pipeline())
    assert "TVMBackendAllocWorkspace" in _llvm_text(app)
    assert _run_tile(app, rows)


def test_the_pass_marks_only_constant_buffers_within_the_limit():
    func = _tile_func(8)
    marked = building.stack_buffers_pass(limit=1024)(tvm.IRModule({"tile": func}))["tile"]
    kept = building.stack_buffers_pass(limit=1023)(tvm.IRModule({"tile": func}))["tile"]
    assert "disable_lower_builtin" in marked.script()
    assert "disable_lower_builtin" not in kept.script()


@pytest.mark.parametrize("count", [1, 12])  # the fallback to tvm.compile, and the build split into parts
def test_compile_module_builds_with_the_apps_pipeline(count):
    from tvm import relax
    from tvm.script import relax as R

    bb = relax.BlockBuilder()
    funcs = [bb.add_func(_tile_func(8).with_attr("global_symbol", f"tile{i}"), f"tile{i}") for i in range(count)]
    x = relax.Var("x", R.Tensor((64, 32), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            value = x
            for gv in funcs:
                value = bb.emit(relax.call_tir(gv, (value,), R.Tensor((64, 32), "float32")))
            out = bb.emit_output(value)
        bb.emit_func_output(out)
    lower = tvm.transform.Sequential([  # the VM lowering of default_build (its op-pattern pass wants blocks)
        relax.transform.ToNonDataflow(), relax.transform.RemovePurityChecking(), relax.transform.CallTIRRewrite(),
        relax.transform.StaticPlanBlockMemory(), relax.transform.LowerAllocTensor(),
        relax.transform.KillAfterLastUse(), relax.transform.LowerRuntimeBuiltin(),
        relax.transform.VMShapeLower(), relax.transform.AttachGlobalSymbol()])
    ex = building.compile_module(bb.get(), tvm.target.Target("llvm"), relax_pipeline=lower, threads=2)
    assert (_llvm_modules(ex.mod) > 1) == (count > 1)  # the path this case is about was taken
    assert "TVMBackendAllocWorkspace" not in _llvm_text(ex.mod)
    data = np.random.default_rng(0).standard_normal((64, 32)).astype("float32")
    got = relax.VirtualMachine(ex, tvm.cpu())["main"](tvm.runtime.tensor(data)).numpy()
    expected = data
    for _ in range(count):
        expected = expected * 2 + 1
    np.testing.assert_allclose(got, expected, rtol=1e-6)
