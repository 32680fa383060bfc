"""``scriptlib.building.compile_module``: ``tvm.compile`` with the PrimFuncs compiled in several LLVM modules at
once. Same numbers as ``tvm.compile``, the parts really are separate modules, the executable exports and loads,
it falls back where splitting does not apply, an error in any part reaches the caller, and the engine and
exported scripts build with it."""

from __future__ import annotations

import inspect
import textwrap

import numpy as np
import pytest

from pipeline_model.document import PipelineDocument, Step
from pipeline_model.export import export_script
from pipeline_model.scriptlib import building

tvm = pytest.importorskip("tvm")


def _chain_module(count: int):
    """A Relax module whose ``main`` calls ``count`` different elementwise PrimFuncs in a chain."""
    from tvm import relax, te, topi
    from tvm.script import relax as R

    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((4, 16), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            value = x
            for i in range(count):
                value = bb.emit_te(lambda a, k=i: topi.add(topi.multiply(a, float(k + 2)), te.const(1.0 + k)),
                                   value, primfunc_name_hint=f"step{i}")
            out = bb.emit_output(value)
        bb.emit_func_output(out)
    return bb.get()


def _expected(data: np.ndarray, count: int) -> np.ndarray:
    for k in range(count):
        data = data * (k + 2) + (1.0 + k)
    return data


def _run(ex, data):
    from tvm import relax

    vm = relax.VirtualMachine(ex, tvm.cpu())
    return vm["main"](tvm.runtime.tensor(data)).numpy()


def _llvm_modules(lib) -> int:
    count = 1 if lib.kind == "llvm" else 0
    return count + sum(_llvm_modules(m) for m in lib.imports)


def test_split_build_runs_like_tvm_compile_and_exports(tmp_path):
    mod = _chain_module(10)
    data = np.random.default_rng(0).standard_normal((4, 16)).astype("float32")
    plain = tvm.compile(mod, target="llvm")
    split = building.compile_module(mod, "llvm", threads=2)
    assert _llvm_modules(split.mod) == 2  # two LLVM modules: the PrimFuncs really were compiled in parts
    assert _llvm_modules(plain.mod) == 1
    np.testing.assert_array_equal(_run(split, data), _run(plain, data))
    np.testing.assert_allclose(_run(split, data), _expected(data, 10), rtol=1e-5)
    path = tmp_path / "lib.so"
    split.export_library(str(path))
    from tvm import relax

    loaded = tvm.runtime.load_module(str(path))
    np.testing.assert_array_equal(_run(relax.VMExecutable(loaded), data), _run(plain, data))


def test_split_build_falls_back_where_it_does_not_apply():
    few = _chain_module(building.MIN_FUNCS_PER_PART * 2 - 1)  # not enough PrimFuncs for two parts
    assert _llvm_modules(building.compile_module(few, "llvm", threads=2).mod) == 1
    many = _chain_module(12)
    assert _llvm_modules(building.compile_module(many, "llvm", threads=1).mod) == 1
    assert _llvm_modules(building.compile_module(many, "llvm", threads=3).mod) == 3
    system_lib = many.with_attr("system_lib_prefix", "")
    assert not building._split_build_possible(system_lib, tvm.target.Target("llvm"))
    assert not building._split_build_possible(many, tvm.target.Target({"kind": "cuda", "arch": "sm_80"}))


def test_an_error_in_any_part_reaches_the_caller(monkeypatch):
    real_build = tvm.tirx.build
    calls = []

    def failing_build(mod, *args, **kwargs):
        calls.append(mod)
        if len(calls) == 2:
            raise RuntimeError("LLVM failed on part two")
        return real_build(mod, *args, **kwargs)

    monkeypatch.setattr(tvm.tirx, "build", failing_build)
    with pytest.raises(RuntimeError, match="part two"):
        building.compile_module(_chain_module(8), "llvm", threads=2)
    assert len(calls) == 2


def test_build_threads_follow_the_runtime_thread_count(monkeypatch):
    monkeypatch.setenv("TVM_NUM_THREADS", "3")
    assert building.build_threads() == 3
    monkeypatch.setenv("TVM_NUM_THREADS", "64")
    assert building.build_threads() == building.MAX_BUILD_THREADS
    assert building.split_functions(list(range(7)), 3) == [[0, 3, 6], [1, 4], [2, 5]]  # equal costs: dealt in turn
    assert building.split_functions([1], 4) == [[1]]


def test_engine_and_exported_scripts_build_with_it():
    from pipeline_model.engine.build import measure

    assert measure.compile_module is building.compile_module
    assert "compile_module(lowered, tgt, relax_pipeline=None)" in inspect.getsource(measure.build_lowered_module)
    source = export_script(PipelineDocument(name="b", model="builtin:mlp", steps=[Step(pass_id="relax.LegalizeOps")]),
                           build=True)
    assert textwrap.dedent(inspect.getsource(building.compile_module)) in source
    assert "ex = compile_module(final, TARGET)" in source
    assert "pipeline_model" not in source
    compile(source, "<exported>", "exec")


def test_parts_are_balanced_by_the_expected_llvm_work():
    # Heavy and light kernels alternate in a network; dealt in turn, the heavy ones all went to one part.
    kernels = [("conv1", 9), ("add1", 1), ("conv2", 8), ("add2", 1), ("conv3", 7), ("add3", 1), ("conv4", 6),
               ("add4", 1)]
    parts = building.split_functions(kernels, 2, cost=lambda k: k[1])
    assert sorted(sum(k[1] for k in p) for p in parts) == [17, 17]
    assert all(p == sorted(p, key=kernels.index) for p in parts)  # each part keeps the module's order
    assert building.split_functions(kernels, 2) == [kernels[0::2], kernels[1::2]]  # without costs: in turn


def test_llvm_cost_counts_stores_times_the_unrolled_loops_around_them():
    from tvm.script import tirx as T

    @T.prim_func(s_tir=True)
    def unrolled(a: T.Buffer((64,), "float32"), b: T.Buffer((64,), "float32")):
        for i in range(8):
            for j in T.unroll(8):
                with T.sblock("copy"):
                    v = T.axis.spatial(64, i * 8 + j)
                    b[v] = a[v] * T.float32(2)

    @T.prim_func(s_tir=True)
    def plain(a: T.Buffer((64,), "float32"), b: T.Buffer((64,), "float32")):
        for i in range(64):
            with T.sblock("copy"):
                v = T.axis.spatial(64, i)
                b[v] = a[v] * T.float32(2)

    assert building.llvm_cost(plain) == building.FIXED_COST + 1
    assert building.llvm_cost(unrolled) == building.FIXED_COST + 8


def _module_with_a_parameter_transform(count: int):
    """``_chain_module(count)`` plus ``main_transform_params`` calling a PrimFunc of its own (``pack``) and one
    that ``main`` calls too (``step0``, which must keep the model's optimization)."""
    from tvm import relax, topi
    from tvm.script import relax as R

    bb = relax.BlockBuilder(_chain_module(count))
    w = relax.Var("w", R.Tensor((4, 16), "float32"))
    with bb.function("main_transform_params", [w]):
        with bb.dataflow():
            packed = bb.emit_te(topi.transpose, w, primfunc_name_hint="pack")
            out = bb.emit_output(relax.call_tir(bb.get().get_global_var("step0"), [w],
                                                R.Tensor((4, 16), "float32")))
        bb.emit_func_output(relax.Tuple([packed, out]))
    return bb.get()


def test_functions_only_parameter_transforms_call_are_compiled_without_optimization(monkeypatch):
    mod = _module_with_a_parameter_transform(8)
    assert building.run_once_functions(mod) == {"pack"}
    real_build = tvm.tirx.build
    built = []

    def recording_build(part, *args, **kwargs):
        names = sorted(gv.name_hint for gv in part.functions)
        built.append((names, int(kwargs["target"].attrs.get("opt-level", 3))))
        return real_build(part, *args, **kwargs)

    monkeypatch.setattr(tvm.tirx, "build", recording_build)
    target = tvm.target.Target({"kind": "llvm", "opt-level": 2})
    ex = building.compile_module(mod, target, threads=2)
    once = [level for names, level in built if names == ["pack"]]
    assert once == [building.ONCE_OPT_LEVEL] and len(built) == 3
    assert all(level == 2 for names, level in built if names != ["pack"])  # the model's kernels as asked
    assert any("step0" in names for names, _ in built)
    from tvm import relax

    vm = relax.VirtualMachine(ex, tvm.cpu())
    data = np.random.default_rng(1).standard_normal((4, 16)).astype("float32")
    packed, stepped = vm["main_transform_params"](tvm.runtime.tensor(data))
    np.testing.assert_array_equal(packed.numpy(), data.T)
    np.testing.assert_allclose(stepped.numpy(), data * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(_run(ex, data), _expected(data, 8), rtol=1e-5)


def test_dynamic_shape_build_keeps_the_kernels_alias_information():
    """A module with a symbolic shape gets ``relax.transform.VMShapeLower``'s ``shape_func``, which has no
    ``"tirx.noalias"``; built with it, the kernels' buffer accesses got TVM's one shared TBAA type (``tvm-alias``)
    and a matmul's accumulator tile left the registers (issue 34). The app's build marks PrimFuncs with at most
    one pointer (nothing to alias): no access of the module uses the shared type."""
    from tvm import relax

    n = tvm.tirx.Var("n", "int64")
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((n, 16), "float32"))
    w = relax.Var("w", relax.TensorType((16, 16), "float32"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            out = bb.emit_output(bb.emit(relax.op.add(relax.op.matmul(x, w), x)))
        bb.emit_func_output(out)
    with tvm.target.Target("llvm"):
        lowered = relax.get_pipeline("default_build")(bb.get())
    shape_funcs = [f for gv, f in lowered.functions_items() if gv.name_hint == "shape_func"]
    assert shape_funcs and not (shape_funcs[0].attrs and shape_funcs[0].attrs.get("tirx.noalias"))
    marked = building.mark_unaliased(lowered)
    assert all(f.attrs.get("tirx.noalias") for f in marked.functions.values() if isinstance(f, tvm.tirx.PrimFunc))

    def llvm_ir(ex):  # type: ignore[no-untyped-def]
        return "".join(m.inspect_source("ll") for m in ex.mod.imports if m.kind == "llvm")

    assert "tvm-alias" in llvm_ir(tvm.compile(lowered, target="llvm", relax_pipeline=None))  # TVM's own build
    ex = building.compile_module(lowered, "llvm", relax_pipeline=None)
    assert "tvm-alias" not in llvm_ir(ex)
    data = np.random.default_rng(2).standard_normal((5, 16)).astype("float32")
    weight = np.eye(16, dtype="float32")
    got = relax.VirtualMachine(ex, tvm.cpu())["main"](tvm.runtime.tensor(data), tvm.runtime.tensor(weight))
    np.testing.assert_allclose(got.numpy(), data * 2, rtol=1e-6)
