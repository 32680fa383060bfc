"""The app's own DLight rules: ``app.CPUParallel`` (every block's spatial loops on all cores; ``app.CPUMatmul`` in
``test_dlight_matmul_rule.py``): same results as the unscheduled functions on many
shapes, left alone on GPU targets, declined where they do not fit, unknown app rules refused, and exported
scripts that carry the rules' classes (and the native target) and run."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

from pipeline_model import emit
from pipeline_model.passkinds.dlight import DLightKind
from pipeline_model.passkinds.dlight.rules import rule_sources

tvm = pytest.importorskip("tvm")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _legalized_mlp():
    from tvm import relax
    from tvm.script import relax as R

    @tvm.script.ir_module
    class Mod:
        @R.function
        def main(x: R.Tensor((1, 512), "float32"), w: R.Tensor((512, 256), "float32"), b: R.Tensor((256,), "float32")):
            with R.dataflow():
                y = R.nn.relu(R.add(R.matmul(x, w), b))
                z = R.sum(y, axis=[1])
                R.output(z)
            return z

    passes = [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(),
              relax.transform.FuseTIR()]
    return tvm.ir.transform.Sequential(passes)(Mod)


def _schedule(mod, target):
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds.dlight.rules.cpu_parallel_tvm import CPUParallel

    with tvm.target.Target(target):
        return dl.ApplyDefaultSchedule(CPUParallel())(mod)


def _run(mod, arrays):
    from tvm import relax

    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    return vm["main"](*[tvm.runtime.tensor(a) for a in arrays]).numpy()


def test_big_blocks_get_a_parallel_loop_small_ones_stay_serial_and_results_match():
    from pipeline_model.passkinds.dlight.rules.cpu_parallel_tvm import CPUParallel

    mod = _legalized_mlp()
    scheduled = _schedule(mod, {"kind": "llvm", "num-cores": 2})
    prims = {gv.name_hint: f for gv, f in scheduled.functions_items() if isinstance(f, tvm.tirx.PrimFunc)}
    big = [n for n in prims if "matmul" in n]  # 1 x 512 x 256 = 131,072 iterations
    small = [n for n in prims if n.startswith("sum")]  # 256 iterations: thread start-up would cost more
    assert big and small and 512 * 256 >= CPUParallel.min_work > 256
    for name in big:
        text = prims[name].script()
        assert "T.parallel(" in text and "is_scheduled" in text, name  # DLight marks what a rule scheduled
    for name in small:
        assert "T.parallel(" not in prims[name].script(), name
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype("float32") for s in ((1, 512), (512, 256), (256,))]
    np.testing.assert_allclose(_run(scheduled, arrays), _run(mod, arrays), rtol=1e-4, atol=1e-4)


def test_symbolic_extents_count_as_a_sequence_and_stay_out_of_the_fused_index():
    """A dynamic sequence axis (issue 34) counts as ``symbolic_extent`` rows: a head transpose of 4 x seq x 32
    stays serial like its static versions; a big one runs in parallel over the loops down to the symbolic one
    only (its index divided by ``seq`` once per row of 128), so no element divides by the symbolic extent to find
    its indices (the transposes of a dynamic GPT-2 were 8x slower than the static ones)."""
    from tvm import relax

    from pipeline_model.passkinds.dlight.rules.cpu_parallel_tvm import CPUParallel

    seq = tvm.tirx.Var("seq", "int64")

    def transpose(heads, width):  # type: ignore[no-untyped-def]
        bb = relax.BlockBuilder()
        x = relax.Var("x", relax.TensorType((1, seq, heads, width), "float32"))
        with bb.function("main", [x]):
            with bb.dataflow():
                out = bb.emit_output(bb.emit(relax.op.permute_dims(x, [0, 2, 1, 3])))
            bb.emit_func_output(out)
        return relax.transform.LegalizeOps()(bb.get())

    small, big = (_schedule(transpose(h, w), {"kind": "llvm", "num-cores": 2}) for h, w in ((4, 32), (16, 128)))
    assert 4 * CPUParallel.symbolic_extent * 32 < CPUParallel.min_work <= 16 * CPUParallel.symbolic_extent * 128
    (small_text,) = [f.script() for f in small.functions.values() if isinstance(f, tvm.tirx.PrimFunc)]
    (big_text,) = [f.script() for f in big.functions.values() if isinstance(f, tvm.tirx.PrimFunc)]
    assert "T.parallel(" not in small_text, small_text
    # the row of 128 its own loop (in vector lanes): no "// seq" or "% seq" in its index
    assert re.search(r"T\.parallel\(seq \* T\.int64\(16\)\)", big_text) and re.search(
        r"T\.axis\.spatial\(T\.int64\(128\), ax\d(_0 \* T\.int64\(\d+\) \+ ax\d_1)?\)", big_text), big_text
    data = np.random.default_rng(4).standard_normal((1, 7, 16, 128)).astype("float32")
    np.testing.assert_array_equal(_run(big, [data]), data.transpose(0, 2, 1, 3))


def test_an_innermost_symbolic_loop_runs_inside_the_parallel_static_loops():
    """A transposed key (12 x 64 x seq, the sequence axis innermost: GPT-2's K^T in a dynamic ONNX export) runs its
    12 x 64 static rows in parallel and the symbolic loop inside each: fused with them, every element found its
    indices dividing by ``seq`` (a dynamic GPT-2 h768's transposes 13x their static build's time)."""
    from tvm import relax

    seq = tvm.tirx.Var("seq", "int64")
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((12, seq, 64), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(bb.emit(relax.op.permute_dims(x, [0, 2, 1])))
        bb.emit_func_output(out)
    mod = relax.transform.LegalizeOps()(bb.get())
    scheduled = _schedule(mod, {"kind": "llvm", "num-cores": 2})
    (text,) = [f.script() for f in scheduled.functions.values() if isinstance(f, tvm.tirx.PrimFunc)]
    assert "T.parallel(T.int64(768))" in text and "// seq" not in text and "% seq" not in text, text
    data = np.random.default_rng(7).standard_normal((12, 37, 64)).astype("float32")
    np.testing.assert_array_equal(_run(scheduled, [data]), data.transpose(0, 2, 1))


def _reductions_module():
    from tvm import relax
    from tvm.script import relax as R

    @tvm.script.ir_module
    class Mod:
        @R.function
        def main(x: R.Tensor((1, 96, 32, 32), "float32"), y: R.Tensor((4, 64, 400), "float32")):
            with R.dataflow():
                pooled = R.mean(x, axis=[2, 3], keepdims=True)  # global average pool: 1024 contiguous floats
                peak = R.max(y, axis=[2])  # over the last axis: contiguous
                across = R.sum(y, axis=[1])  # over the middle axis: strided; the last axis in lanes
                R.output(pooled, peak, across)
            return (pooled, peak, across)

    passes = [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(),
              relax.transform.FuseTIR()]
    return tvm.ir.transform.Sequential(passes)(Mod)


def test_contiguous_reductions_are_vectorized_with_rfactor_and_match():
    """A float sum/max over contiguous memory runs in vector lanes (partial results per lane, then one short
    reduction: EfficientNet's 56x56 average pool 10x faster); a reduction over a strided axis whose output's last
    axis is contiguous in its input too (an NHWC mean) has that axis in the lanes and the reduction outside them,
    no ``rfactor``; all three give the unscheduled function's numbers."""
    mod = _reductions_module()
    scheduled = _schedule(mod, {"kind": "llvm", "num-cores": 2})
    prims = {gv.name_hint: f.script() for gv, f in scheduled.functions_items() if isinstance(f, tvm.tirx.PrimFunc)}
    mean = next(t for n, t in prims.items() if n.startswith("mean"))
    peak = next(t for n, t in prims.items() if n.startswith("max"))
    across = next(t for n, t in prims.items() if n.startswith("sum"))
    for text in (mean, peak):
        assert "_rf" in text and "T.vectorized(" in text and "T.parallel(" in text
    assert "_rf" not in across and "T.vectorized(T.int64(16))" in across and "T.parallel(" in across, across
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((1, 96, 32, 32)).astype("float32"), rng.standard_normal((4, 64, 400)).astype("float32")]
    from tvm import relax

    def run(m):
        out = relax.VirtualMachine(tvm.compile(m, target="llvm"), tvm.cpu())["main"](*[tvm.runtime.tensor(a) for a in arrays])
        return [o.numpy() for o in out]

    for got, want in zip(run(scheduled), run(mod)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(run(scheduled)[0].ravel(), arrays[0].mean(axis=(2, 3)).ravel(), rtol=1e-5, atol=1e-6)


def _softmax_module(shape):
    """A Relax softmax over the last axis of ``shape`` (symbolic dims allowed), legalized and fused."""
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType(shape, "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(bb.emit(relax.op.nn.softmax(x, axis=-1)))
        bb.emit_func_output(out)
    passes = [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(),
              relax.transform.FuseTIR()]
    return tvm.ir.transform.Sequential(passes)(bb.get())


def test_a_softmax_over_a_symbolic_axis_runs_in_vector_lanes_on_the_threads_and_matches():
    """A dynamic model's attention softmax (issue 34) reduces over its symbolic key axis: the max and the sum
    run in vector lanes with their guard marked likely (LoopPartition splits off the last partial vector: a
    dynamic Llama's softmax 3.4x its static build's time before, the same after), in parallel (4 heads x seq x
    seq counted at a typical length, 128, as the static build at 128 runs it); right at lengths no vector
    divides, 1 included, with one build."""
    from tvm import relax

    from pipeline_model.passkinds.dlight.rules.cpu_parallel_tvm import CPUParallel

    seq = tvm.tirx.Var("seq", "int64")
    mod = _softmax_module((1, 4, seq, seq))
    scheduled = _schedule(mod, {"kind": "llvm", "num-cores": 2})
    (text,) = [f.script() for f in scheduled.functions.values() if isinstance(f, tvm.tirx.PrimFunc)]
    assert 4 * 64 * 64 < CPUParallel.min_work <= 4 * CPUParallel.symbolic_extent ** 2
    assert text.count("_rf_init") == 2 and "T.likely(" in text and "T.parallel(" in text, text
    lowered = tvm.compile(scheduled, target="llvm")
    vm = relax.VirtualMachine(lowered, tvm.cpu())
    rng = np.random.default_rng(6)
    for length in (1, 37, 128):
        data = rng.standard_normal((1, 4, length, length)).astype("float32") * 4
        want = np.exp(data - data.max(axis=-1, keepdims=True))
        want /= want.sum(axis=-1, keepdims=True)
        np.testing.assert_allclose(vm["main"](tvm.runtime.tensor(data)).numpy(), want, rtol=1e-5, atol=1e-6)


def test_a_small_softmax_runs_its_max_and_sum_in_vector_lanes_on_one_thread():
    """A small model's attention softmax (GPT-2's 4 heads x 32 x 32) is under ``min_work``: it stays on the calling
    thread, but its max and its sum of exponentials run in vector lanes (scalar, they took 32 us where the tuned
    build's lanes took 21 in the model); a block under ``min_vector_work`` stays as it is."""
    from pipeline_model.passkinds.dlight.rules.cpu_parallel_tvm import CPUParallel

    assert CPUParallel.min_vector_work <= 4 * 32 * 32 < CPUParallel.min_work and 2 * 16 < CPUParallel.min_vector_work
    for shape, lanes in (((1, 4, 32, 32), True), ((1, 2, 16), False)):
        mod = _softmax_module(shape)
        scheduled = _schedule(mod, {"kind": "llvm", "num-cores": 2})
        (text,) = [f.script() for f in scheduled.functions.values() if isinstance(f, tvm.tirx.PrimFunc)]
        assert "T.parallel(" not in text, text
        assert (text.count("_rf_init") == 2 and "T.vectorized(" in text) == lanes, text
        data = np.random.default_rng(8).standard_normal(shape).astype("float32") * 4
        np.testing.assert_allclose(_run(scheduled, [data]), _run(mod, [data]), rtol=1e-5, atol=1e-6)


def test_a_whole_tensor_reduced_to_one_value_runs_in_vector_lanes_on_one_thread():
    """A dynamic quantization's min and max reduce a whole activation to a scalar: no spatial loop to run in
    parallel, so the rule left them scalar loops (an int8 BERT's 32 x 512 min took 20 us, vectorized 1.3)."""
    from tvm import relax
    from tvm.script import relax as R

    @tvm.script.ir_module
    class Mod:
        @R.function
        def main(x: R.Tensor((1, 32, 512), "float32")):
            with R.dataflow():
                low = R.min(x)
                high = R.max(x, axis=[0, 1, 2], keepdims=True)
                R.output(low, high)
            return (low, high)

    passes = [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(),
              relax.transform.FuseTIR()]
    mod = tvm.ir.transform.Sequential(passes)(Mod)
    scheduled = _schedule(mod, {"kind": "llvm", "num-cores": 2})
    texts = [f.script() for _, f in scheduled.functions_items() if isinstance(f, tvm.tirx.PrimFunc)]
    assert len(texts) == 2
    for text in texts:
        assert "_rf" in text and "T.vectorized(" in text and "T.parallel(" not in text, text
    data = np.random.default_rng(5).standard_normal((1, 32, 512)).astype("float32")
    out = relax.VirtualMachine(tvm.compile(scheduled, target="llvm"), tvm.cpu())["main"](tvm.runtime.tensor(data))
    assert out[0].numpy() == data.min() and out[1].numpy().ravel()[0] == data.max()


def _weight_matmul_lifted(rows, cols, relu=False):
    """``x[1, rows, 64] @ w[64, cols]`` (``w`` a weight: after ``num_input``), scheduled by ``app.CPUMatmul`` on this
    machine's CPU and its weight-only work lifted as the default pipeline does; returns ``(module, target)``."""
    from tvm import relax
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds.dlight.rules.cpu_matmul_tvm import CPUMatmul
    from pipeline_model.scriptlib.host import native_target

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((1, rows, 64), "float32"))
    w = relax.Var("w", relax.TensorType((64, cols), "float32"))
    with bb.function("main", [x, w], attrs={"num_input": 1}):
        with bb.dataflow():
            y = relax.op.matmul(x, w)
            y = bb.emit_output(relax.op.nn.relu(y) if relu else y)
        bb.emit_func_output(y)
    target = tvm.target.Target(native_target({"kind": "llvm", "mcpu": "native"}))
    with target:
        seq = tvm.transform.Sequential([
            relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(),
            relax.transform.FuseTIR(), dl.ApplyDefaultSchedule(CPUMatmul()),
            relax.transform.SplitLayoutRewritePreproc(), relax.transform.LiftTransformParams()])
        return seq(bb.get()), target


def test_a_weight_read_in_column_panels_is_packed_once_a_one_row_product_too():
    """``B[k, j]`` that the function takes is read through a copy packed ``[j / 48, k, 48]`` (a tile's columns of
    consecutive k contiguous: GPT-2 at 768 hidden, its FFN product 7.6 -> 4.4 ms), marked so that
    SplitLayoutRewritePreproc + LiftTransformParams run it once on the weights; the product gives the same numbers.
    A one-row product (memory-bound, each weight read once) reads a packed copy too: each tile then streams one
    contiguous run of its columns (a classifier's 1 x 1024 @ 1024 x 1000 out of cache 2.6x faster)."""
    from tvm import relax

    from pipeline_model.passkinds.dlight.rules.cpu_matmul_tvm import CPUMatmul

    mod, target = _weight_matmul_lifted(32, 96)
    lanes = CPUMatmul.lanes(target)
    lifted = mod["main_transform_params"].script()
    width = 3 * lanes if lanes >= 16 else 2 * lanes  # the tile's columns
    assert "layout_rewrite_preproc" not in mod["main"].script() and "prepacked" in mod.script()
    assert f"R.Tensor(({96 // width}, 64, {width})" in lifted, lifted
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((1, 32, 64)).astype("float32"), rng.standard_normal((64, 96)).astype("float32")
    vm = relax.VirtualMachine(tvm.compile(mod, target=target), tvm.cpu())
    params = vm["main_transform_params"]([tvm.runtime.tensor(w)])
    np.testing.assert_allclose(vm["main"](tvm.runtime.tensor(x), *params).numpy(), x @ w, rtol=1e-5, atol=1e-4)
    gemv, _ = _weight_matmul_lifted(1, 256)
    gemv_width = max(v * lanes for v in range(1, CPUMatmul.gemv_vectors + 1)
                     if 256 % (v * lanes) == 0 and 256 // (v * lanes) >= CPUMatmul.gemv_min_tiles)
    assert "prepacked" in gemv.script()
    assert f"R.Tensor(({256 // gemv_width}, 64, {gemv_width})" in gemv["main_transform_params"].script()
    x1, w1 = rng.standard_normal((1, 1, 64)).astype("float32"), rng.standard_normal((64, 256)).astype("float32")
    vm = relax.VirtualMachine(tvm.compile(gemv, target=target), tvm.cpu())
    params = vm["main_transform_params"]([tvm.runtime.tensor(w1)])
    np.testing.assert_allclose(vm["main"](tvm.runtime.tensor(x1), *params).numpy(), x1 @ w1, rtol=1e-5, atol=1e-4)


def test_columns_the_vector_width_misses_are_padded_to_whole_tiles_and_the_padded_weight_is_lifted():
    """B[k, j] with 44 columns (Llama's 344 = 8 x 43: tiles of one 8-float vector, 32 x 128 x 344 in 71 us; padded
    to 352, 23 us): the product computes whole tiles of full vectors over a zero-padded weight, which is packed as it
    is padded and lifted out of main; only the 44 real columns are written; same numbers."""
    from tvm import relax

    from pipeline_model.passkinds.dlight.rules.cpu_matmul_tvm import CPUMatmul

    mod, target = _weight_matmul_lifted(16, 44, relu=True)
    lanes = CPUMatmul.lanes(target)
    if lanes < 8:
        pytest.skip("no 256-bit vectors: the rule narrows its lanes instead")
    (product,) = [f.script() for gv, f in mod.functions_items()
                  if isinstance(f, tvm.tirx.PrimFunc) and "matmul" in gv.name_hint and "prepacked" in gv.name_hint]
    assert re.search(rf"T\.vectorized\((T\.int64\()?{lanes}\)", product) and "T.if_then_else" not in product, product
    # (no padding per call: the padded weight, packed in panels, is main's parameter)
    assert "T.if_then_else" in mod.script() and "main_transform_params" in mod.script()  # the padding, lifted
    rng = np.random.default_rng(9)
    xs, ws = rng.standard_normal((1, 16, 64)).astype("float32"), rng.standard_normal((64, 44)).astype("float32")
    vm = relax.VirtualMachine(tvm.compile(mod, target=target), tvm.cpu())
    params = vm["main_transform_params"]([tvm.runtime.tensor(ws)])
    got = vm["main"](tvm.runtime.tensor(xs), *params).numpy()
    assert got.shape == (1, 16, 44)
    np.testing.assert_allclose(got, np.maximum(xs @ ws, 0), rtol=1e-5, atol=1e-4)


def test_an_elementwise_block_runs_its_innermost_loop_in_vector_lanes():
    """A softmax's masked normalization (12 x 128 x 128, elementwise after the two reductions) and a small
    elementwise kernel under the parallel floor: the innermost loop in vector lanes, the rest fused into the
    parallel loop (before: one fused loop, a division and a remainder per element, no lanes: 686 -> 190 us on
    GPT-2 at 768 hidden); a last axis no vector width divides stays as it was; same numbers."""
    from tvm import relax
    from tvm.script import relax as R

    @tvm.script.ir_module
    class Mod:
        @R.function
        def main(x: R.Tensor((1, 12, 128, 128), "float32"), y: R.Tensor((4, 64), "float32"),
                 z: R.Tensor((64, 37), "float32")):
            with R.dataflow():
                soft = R.where(R.isnan(x), R.const(0.0, "float32"), R.nn.softmax(x, axis=-1))
                small = R.multiply(R.add(y, y), y)
                odd = R.multiply(R.add(z, z), z)
                R.output(soft, small, odd)
            return (soft, small, odd)

    passes = [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(),
              relax.transform.FuseTIR()]
    mod = tvm.ir.transform.Sequential(passes)(Mod)
    scheduled = _schedule(mod, {"kind": "llvm", "num-cores": 2})
    texts = {gv.name_hint: f.script() for gv, f in scheduled.functions_items() if isinstance(f, tvm.tirx.PrimFunc)}
    soft = next(t for n, t in texts.items() if "softmax" in n)
    last = soft.split('T.sblock("T_softmax_expsum")')[1]  # the normalization after the two reductions
    assert "T.parallel(" in last and "T.vectorized(" in last, last
    small = next(t for n, t in texts.items() if "softmax" not in n and "T.int64(37)" not in t)
    assert "T.vectorized(" in small and "T.parallel(" not in small, small
    odd = next(t for t in texts.values() if "T.int64(37)" in t)
    assert "T.vectorized(" not in odd, odd
    rng = np.random.default_rng(8)
    arrays = [rng.standard_normal(sh).astype("float32") for sh in ((1, 12, 128, 128), (4, 64), (64, 37))]

    def run(m):
        out = relax.VirtualMachine(tvm.compile(m, target="llvm"), tvm.cpu())["main"](*[tvm.runtime.tensor(a) for a in arrays])
        return [o.numpy() for o in out]

    for got, want in zip(run(scheduled), run(mod)):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_left_alone_on_a_gpu_target():
    mod = _legalized_mlp()
    scheduled = _schedule(mod, {"kind": "cuda", "arch": "sm_80"})
    assert all("T.parallel(" not in f.script() for _, f in scheduled.functions_items()
               if isinstance(f, tvm.tirx.PrimFunc))


@pytest.mark.parametrize("rule", ["app.tvm", "app._dl", "app.Unknown", "app.CPUParallel()"])
def test_unknown_app_rules_are_refused(rule):
    with pytest.raises(emit.EmitError):
        DLightKind().recipe("dlight.ApplyDefaultSchedule", {"rules": [rule]})


def test_exported_script_carries_the_rule_class_and_runs(tmp_path):
    from pipeline_model.export import export_script
    from pipeline_model.fileformat import load_pipeline

    doc = load_pipeline(os.path.join(ROOT, "resources", "pipelines", "cpu_build.json"))
    source = export_script(doc, build=True)
    # The rules' shared base once, before the rules that derive from it.
    assert source.count("class AppRule(tvm.s_tir.dlight.ScheduleRule):") == 1
    assert source.index("class AppRule(") < source.index("class CPUMatmul(AppRule):")
    assert "class CPUParallel(AppRule):" in source and "class CPUMatmul(AppRule):" in source
    # The DLight step with its rules (app.CPUMatmul, app.CPUConv2d, ... before app.CPUParallel in cpu_build.json).
    assert re.search(r"tvm\.s_tir\.dlight\.ApplyDefaultSchedule\((\w+\(\), )*CPUParallel\(\)\)", source)
    assert "CPUMatmul()" in source
    assert "def native_target(" in source and "TARGET = tvm.target.Target(native_target(" in source
    assert "def sink_reshapes(" in source and "relax.transform.FastMathTransform()" in source
    assert "pipeline_model" not in source
    script = tmp_path / "cpu_build.py"
    script.write_text(source)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "T.parallel(" in proc.stdout and "check output 0: PASS" in proc.stdout


def test_rule_source_is_read_without_tvm():
    code = ("import sys; from pipeline_model.passkinds.dlight.rules import rule_sources; "
            "srcs = rule_sources('app.CPUParallel'); print(srcs[0].splitlines()[0]); print(srcs[1].splitlines()[0]); "
            "print(len(srcs)); print('tvm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    base, first, count, loaded = out.stdout.split("\n")[:4]
    assert base.startswith("class AppRule(tvm.s_tir.dlight.ScheduleRule):") and count == "2"
    assert first.startswith("class CPUParallel(AppRule):") and loaded == "False"
    assert rule_sources("app.CPUParallel")[-1].startswith("class CPUParallel(")
    with pytest.raises(emit.EmitError, match="'app.NotThere' is not installed"):
        rule_sources("app.NotThere")


def _pool_module(kind, shape, kernel, stride, padding):
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType(shape, "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            op = relax.op.nn.max_pool2d if kind == "max" else relax.op.nn.avg_pool2d
            out = bb.emit_output(op(x, kernel, stride, padding))
        bb.emit_func_output(out)
    passes = [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(),
              relax.transform.FuseTIR()]
    return tvm.ir.transform.Sequential(passes)(bb.get())


@pytest.mark.parametrize("kind, shape, kernel, stride, padding", [
    ("max", (1, 32, 40, 40), 3, 2, 1),  # ResNet's stem pool, smaller
    ("max", (1, 24, 30, 30), 3, 1, 1),
    ("avg", (1, 16, 32, 32), 3, 1, 1),
])
def test_a_pools_window_runs_on_parallel_channels_with_its_padding_computed_per_channel(kind, shape, kernel, stride,
                                                                                        padding):
    """A pool's window reduction: the channels are the parallel loop and the padded input is computed in it, one
    channel at a time; the rows, columns and window stay plain loops (fused into one parallel loop, every output
    paid a division, a remainder and a guarded read per window element: ResNet-18's pool 773 -> 104 us). The
    results equal the unscheduled function's."""
    mod = _pool_module(kind, shape, kernel, stride, padding)
    scheduled = _schedule(mod, {"kind": "llvm", "num-cores": 2})
    text = next(f.script() for _gv, f in scheduled.functions_items() if isinstance(f, tvm.tirx.PrimFunc)
                and "pool" in _gv.name_hint)
    assert f"for ax0 in T.parallel(T.int64({shape[1]})):" in text, text
    channel_loop = text[text.index("T.parallel("):]
    assert 'T.sblock("pad_temp")' in channel_loop, text  # the padding, per channel inside the parallel loop
    assert "T.if_then_else" not in channel_loop[channel_loop.index('T.sblock("pool_'):], text  # the window reads
    # the padded copy, unguarded
    x = np.random.default_rng(3).standard_normal(shape).astype("float32")
    np.testing.assert_allclose(_run(scheduled, [x]), _run(mod, [x]), rtol=1e-6, atol=1e-6)
