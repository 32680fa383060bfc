"""The app's own DLight rules: ``app.CPUParallel`` (every block's spatial loops on all cores) and ``app.CPUMatmul``
(register-blocked, vectorized matmuls with their epilogues): same results as the unscheduled functions on many
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
                across = R.sum(y, axis=[1])  # over the middle axis: strided, stays scalar
                R.output(pooled, peak, across)
            return (pooled, peak, across)

    passes = [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(),
              relax.transform.FuseTIR()]
    return tvm.ir.transform.Sequential(passes)(Mod)


def test_contiguous_reductions_are_vectorized_with_rfactor_and_match():
    """A float sum/max over contiguous memory runs in vector lanes (partial results per lane, then one short
    reduction: EfficientNet's 56x56 average pool 10x faster); a reduction over a strided axis keeps the scalar
    loop; all three give the unscheduled function's numbers."""
    mod = _reductions_module()
    scheduled = _schedule(mod, {"kind": "llvm", "num-cores": 2})
    prims = {gv.name_hint: f.script() for gv, f in scheduled.functions_items() if isinstance(f, tvm.tirx.PrimFunc)}
    mean = next(t for n, t in prims.items() if n.startswith("mean"))
    peak = next(t for n, t in prims.items() if n.startswith("max"))
    across = next(t for n, t in prims.items() if n.startswith("sum"))
    for text in (mean, peak):
        assert "_rf" in text and "T.vectorized(" in text and "T.parallel(" in text
    assert "_rf" not in across and "T.vectorized(" not in across and "T.parallel(" in across
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((1, 96, 32, 32)).astype("float32"), rng.standard_normal((4, 64, 400)).astype("float32")]
    from tvm import relax

    def run(m):
        out = relax.VirtualMachine(tvm.compile(m, target="llvm"), tvm.cpu())["main"](*[tvm.runtime.tensor(a) for a in arrays])
        return [o.numpy() for o in out]

    for got, want in zip(run(scheduled), run(mod)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(run(scheduled)[0].ravel(), arrays[0].mean(axis=(2, 3)).ravel(), rtol=1e-5, atol=1e-6)


def test_a_softmax_over_a_symbolic_axis_runs_in_vector_lanes_on_the_threads_and_matches():
    """A dynamic model's attention softmax (issue 34) reduces over its symbolic key axis: the max and the sum
    run in vector lanes with their guard marked likely (LoopPartition splits off the last partial vector: a
    dynamic Llama's softmax 3.4x its static build's time before, the same after), in parallel (4 heads x seq x
    seq counted at a typical length, 128, as the static build at 128 runs it); right at lengths no vector
    divides, 1 included, with one build."""
    from tvm import relax

    from pipeline_model.passkinds.dlight.rules.cpu_parallel_tvm import CPUParallel

    seq = tvm.tirx.Var("seq", "int64")
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((1, 4, seq, seq), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(bb.emit(relax.op.nn.softmax(x, axis=-1)))
        bb.emit_func_output(out)
    passes = [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(),
              relax.transform.FuseTIR()]
    mod = tvm.ir.transform.Sequential(passes)(bb.get())
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


def test_a_weight_read_in_column_panels_is_packed_once_and_a_one_row_product_reads_it_as_it_is():
    """``B[k, j]`` that the function takes is read through a copy packed ``[j / 48, k, 48]`` (a tile's columns of
    consecutive k contiguous: GPT-2 at 768 hidden, its FFN product 7.6 -> 4.4 ms), marked so that
    SplitLayoutRewritePreproc + LiftTransformParams run it once on the weights; the product gives the same numbers.
    A one-row product (memory-bound, each weight read once) keeps the weight as it is."""
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
    gemv, _ = _weight_matmul_lifted(1, 96)
    assert "prepacked" not in gemv.script()


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


# ---- app.CPUMatmul ----

def _native():
    from pipeline_model.scriptlib.host import native_target

    return native_target({"kind": "llvm", "mcpu": "native"})


def _matmul_module(m, k, n, *, nt=False, batch=(), bias=False, gelu=False, residual=False, dtype="float32"):
    """A Relax ``x @ w`` (``w`` given as ``[n, k]`` and transposed when ``nt``) with the requested epilogue,
    legalized and fused as the default CPU pipeline does (FuseTransposeMatmul makes NT_matmul)."""
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((*batch, m, k), dtype))
    w = relax.Var("w", relax.TensorType((n, k) if nt else (k, n), dtype))
    params = [x, w]
    if bias:
        params.append(relax.Var("b", relax.TensorType((n,), dtype)))
    if residual:
        params.append(relax.Var("r", relax.TensorType((*batch, m, n), dtype)))
    with bb.function("main", params):
        with bb.dataflow():
            y = bb.emit(relax.op.matmul(x, bb.emit(relax.op.permute_dims(w)) if nt else w))
            if bias:
                y = bb.emit(relax.op.add(y, params[2]))
            if gelu:
                y = bb.emit(relax.op.nn.gelu_tanh(y))
            if residual:
                y = bb.emit(relax.op.add(y, params[-1]))
            out = bb.emit_output(y)
        bb.emit_func_output(out)
    passes = [relax.transform.FuseTransposeMatmul(), relax.transform.LegalizeOps(),
              relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(), relax.transform.FuseTIR(),
              relax.transform.DeadCodeElimination()]
    return tvm.ir.transform.Sequential(passes)(bb.get()), [tuple(int(d) for d in p.ty.shape) for p in params]


def _prims(mod):
    return {gv.name_hint: f for gv, f in mod.functions_items() if isinstance(f, tvm.tirx.PrimFunc)}


def _run_on(mod, target, arrays):
    from tvm import relax

    vm = relax.VirtualMachine(tvm.compile(mod, target=tvm.target.Target(target)), tvm.cpu())
    return vm["main"](*[tvm.runtime.tensor(a) for a in arrays]).numpy()


MATMUL_CASES = [  # (m, k, n, nt, batch, bias, gelu, residual)
    (32, 128, 256, False, (), True, True, False),   # GPT-2 style Conv1D + bias + GELU
    (32, 128, 256, True, (), True, True, False),    # nn.Linear (NT) + bias + GELU
    (64, 256, 128, True, (), True, False, True),    # projection + bias + residual add
    (64, 256, 128, False, (), False, False, False),  # plain matmul writing the output
    (13, 64, 48, False, (), True, False, False),    # odd rows, n = 3 x 16
    (7, 72, 40, True, (), True, False, False),      # odd rows, odd n, k = 72 (8-lane vectors)
    (17, 40, 24, False, (3,), False, False, True),  # batch, n = 24 (8-lane vectors)
    (32, 32, 32, True, (1, 4), False, False, False),  # attention q @ k^T (batch x heads)
    (32, 32, 32, False, (1, 4), False, False, False),  # attention att @ v
    (1, 256, 512, True, (), True, False, False),    # one row (decode step)
    (1, 1280, 1000, False, (), True, False, False),  # a CNN's classifier (EfficientNet-B0): wide one-row tiles
    (64, 256, 384, False, (), True, False, False),  # 6.3 M multiply-adds: over the floor, tiles in parallel
]


@pytest.mark.parametrize("target_kind", ["native", "generic"])
@pytest.mark.parametrize("case", MATMUL_CASES, ids=lambda c: "x".join(map(str, c[:3])) + ("_nt" if c[3] else "")
                         + ("_b" + "x".join(map(str, c[4])) if c[4] else "") + ("_bias" if c[5] else "")
                         + ("_gelu" if c[6] else "") + ("_res" if c[7] else ""))
def test_matmul_rule_schedules_and_matches_the_unscheduled_function(case, target_kind):
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds.dlight.rules.cpu_matmul_tvm import CPUMatmul

    m, k, n, nt, batch, bias, gelu, residual = case
    target = _native() if target_kind == "native" else {"kind": "llvm"}
    mod, shapes = _matmul_module(m, k, n, nt=nt, batch=batch, bias=bias, gelu=gelu, residual=residual)
    with tvm.target.Target(target):
        scheduled = dl.ApplyDefaultSchedule(CPUMatmul())(mod)
    (name, func), = _prims(scheduled).items()
    text = func.script()
    assert "is_scheduled" in text and "T.vectorized(" in text, (name, text)
    parallel = m == 1 or m * k * n * int(np.prod(batch)) >= CPUMatmul.min_parallel_flops
    assert ("T.parallel(" in text) == parallel, (name, text)
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s).astype("float32") for s in shapes]
    got, want = _run_on(scheduled, target, arrays), _run_on(mod, target, arrays)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


def test_matmul_rule_gives_a_narrow_output_one_vector_and_one_tile_no_thread_pool():
    """A classifier head (1 x 2048 @ 2048 x 10 + bias: no vector width divides 10) ran as a serial scalar loop
    (23 us of the bench CNN's 84); now one 10-lane vector accumulates over k, without starting the threads."""
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds.dlight.rules.cpu_matmul_tvm import CPUMatmul

    target = _native()
    mod, shapes = _matmul_module(1, 2048, 10, bias=True)
    with tvm.target.Target(target):
        scheduled = dl.ApplyDefaultSchedule(CPUMatmul())(mod)
    (name, func), = _prims(scheduled).items()
    text = func.script()
    if CPUMatmul.lanes(tvm.target.Target(target)) == 4:  # 128-bit vectors: 10 is over two of them, declined
        assert "is_scheduled" not in text
        return
    assert "is_scheduled" in text and "T.vectorized(T.int64(10))" in text and "T.parallel(" not in text, text
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s).astype("float32") for s in shapes]
    got, want = _run_on(scheduled, target, arrays), _run_on(mod, target, arrays)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


@pytest.mark.parametrize("mcpu, n, columns, vectors", [
    ("skylake-avx512", 1000, 40, 5),   # 8-float vectors (16 does not divide 1000)
    ("skylake-avx512", 1024, 128, 8),
    ("haswell", 1000, 40, 5),
    ("skylake-avx512", 64, 32, 2),     # too narrow for wider tiles: the register tile of 2 vectors, as before
])
def test_one_row_matmul_tiles_read_weight_rows_in_long_runs(mcpu, n, columns, vectors):
    """A one-row ``x @ W[k, j]`` (a classifier at batch 1) is memory-bound: a tile of 8 columns read 32 bytes of
    each weight row (549 us for EfficientNet-B0's 1280 x 1000 with the weights out of cache, 376 us with 40);
    tiles are now up to 8 vectors wide while at least 4 tiles are left for the cores."""
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds.dlight.rules.cpu_matmul_tvm import CPUMatmul

    mod, _shapes = _matmul_module(1, 256, n)
    with tvm.target.Target({"kind": "llvm", "mcpu": mcpu}):
        scheduled = dl.ApplyDefaultSchedule(CPUMatmul())(mod)
    (_name, func), = _prims(scheduled).items()
    text = func.script()
    tiles = re.findall(r"T\.parallel\(T\.int64\((\d+)\)\)", text)
    assert tiles == [str(n // columns)], text
    assert f"T.unroll(T.int64({vectors}))" in text and f"T.vectorized(T.int64({columns // vectors}))" in text, text


def test_matmul_rule_vector_width_follows_the_target():
    from pipeline_model.passkinds.dlight.rules.cpu_matmul_tvm import CPUMatmul

    lanes = {mcpu: CPUMatmul.lanes(tvm.target.Target({"kind": "llvm", "mcpu": mcpu}))
             for mcpu in ("skylake-avx512", "haswell", "x86-64")}
    assert lanes == {"skylake-avx512": 16, "haswell": 8, "x86-64": 4}
    assert CPUMatmul.lanes(tvm.target.Target({"kind": "llvm", "mcpu": "x86-64", "mattr": ["+avx512f"]})) == 16


def _declines(mod, target=None):
    from pipeline_model.passkinds.dlight.rules.cpu_matmul_tvm import CPUMatmul

    rule = CPUMatmul()
    return all(rule.apply(f, tvm.target.Target(target or _native()), False) is None for f in _prims(mod).values())


def _symbolic_matmul(x_shape, w_shape):
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType(x_shape, "float32"))
    w = relax.Var("w", relax.TensorType(w_shape, "float32"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            out = bb.emit_output(bb.emit(relax.op.matmul(x, w)))
        bb.emit_func_output(out)
    return tvm.ir.transform.Sequential([relax.transform.LegalizeOps()])(bb.get())


def _symbolic_batch_matmul(x_shape, w_shape):
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType(x_shape, "float32"))
    w = relax.Var("w", relax.TensorType(w_shape, "float32"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            out = bb.emit_output(bb.emit(relax.op.nn.gelu(relax.op.matmul(x, w))))
        bb.emit_func_output(out)
    passes = [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(),
              relax.transform.FuseTIR()]
    return tvm.ir.transform.Sequential(passes)(bb.get())


@pytest.mark.parametrize("case", ["rows", "columns", "attention"])
def test_matmul_rule_pads_symbolic_extents_to_whole_tiles_and_stays_correct(case):
    """A dynamic sequence axis (issue 34) as the rows, as ``B[k, j]``'s columns, or both (attention scores with
    a fused GELU epilogue): the matmul computes whole register tiles of a zero-padded copy (``pad_einsum``), its
    accumulators a fixed-size local tile (not sized by the symbolic extent, which kept them off the registers),
    and the valid part is written out; right at lengths no tile divides, with one build."""
    from tvm import relax
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds.dlight.rules.cpu_matmul_tvm import CPUMatmul

    m = tvm.tirx.Var("m", "int64")
    mod = {"rows": lambda: _symbolic_matmul((m, 64), (64, 64)),
           "columns": lambda: _symbolic_matmul((32, 64), (64, m)),
           "attention": lambda: _symbolic_batch_matmul((4, m, 32), (4, 32, m))}[case]()
    with tvm.target.Target(_native()):
        scheduled = dl.ApplyDefaultSchedule(CPUMatmul())(mod)
    (_name, func), = _prims(scheduled).items()
    text = func.script()
    assert "is_scheduled" in text and "_pad" in text and "T.vectorized(" in text, text
    # A symbolic extent counts as a typical sequence (128) against the work floor: these stay serial; an MLP of
    # m x 128 x 384 (6.3 M multiply-adds at 128 rows, 3.1 M at the 64 rows the rule's size test counts) runs on
    # the threads, as its static build at 128 does.
    assert "T.parallel(" not in text, text
    assert 64 * 128 * 384 < CPUMatmul.min_parallel_flops <= 128 * 128 * 384
    with tvm.target.Target(_native()):
        wide = dl.ApplyDefaultSchedule(CPUMatmul())(_symbolic_matmul((m, 128), (128, 384)))
    wide_text = next(iter(_prims(wide).values())).script()
    assert "T.parallel(" in wide_text
    # its write-back guard is the rows' bound alone: pad_einsum's "tile % tiles - tiles < 0 or ..." (always true)
    # dropped, so no clause LoopPartition cannot split stays in front of the vector stores
    (guard,) = [ln for ln in wide_text.splitlines() if "T.where(" in ln]
    assert " or " not in guard and "T.likely(" in guard, guard
    # A symbolic-row input is read in place, its row clamped to the last one (no padded copy: copying a dynamic
    # Llama's 128 x 344 activation made its product 2.2x the static one's time); B's symbolic columns are a
    # padded copy (clamped, its vector lanes would gather).
    assert '"x_pad"' not in text and ("T.min(" in text) == (case != "columns"), text
    assert ('"w_pad"' in text) == (case != "rows"), text
    # The guards are marked likely, so LoopPartition splits off the last partial tile and the whole tiles'
    # stores are vectors; serial tiles of a symbolic extent are loops of their own (no index divided by the
    # symbolic tile count, which LoopPartition cannot split).
    assert "T.likely(" in text and " // ((m + " not in text and " % ((m + " not in text, text
    # B's padded columns stay a copy: a big one (3072 x m: 393 k elements at 128 columns) copies its rows in
    # parallel, a small one (64 x m above) on the calling thread.
    with tvm.target.Target(_native()):
        tall = dl.ApplyDefaultSchedule(CPUMatmul())(_symbolic_matmul((32, 3072), (3072, m)))
    pad_loop = r'in T\.parallel\([^\n]*\n(\s*for [^\n]*\n)*?\s*with T\.sblock\("w_pad"\)'
    tall_text = next(iter(_prims(tall).values())).script()
    assert re.search(pad_loop, tall_text), tall_text
    assert not re.search(pad_loop, text), text
    # No reduction block under a guard (the last tile's, inside the k loop: what padding avoids).
    guarded = [b for b in text.split("with T.sblock(")[1:] if "T.axis.reduce" in b and "T.where(" in b]
    assert not guarded, text
    vm = relax.VirtualMachine(tvm.compile(scheduled, target=tvm.target.Target(_native())), tvm.cpu())
    rng = np.random.default_rng(5)
    for length in (1, 37, 50, 128):
        shapes = {"rows": [(length, 64), (64, 64)], "columns": [(32, 64), (64, length)],
                  "attention": [(4, length, 32), (4, 32, length)]}[case]
        x, w = (rng.standard_normal(s).astype("float32") for s in shapes)
        want = x @ w
        if case == "attention":
            from math import erf

            want = want * 0.5 * (1.0 + np.vectorize(erf)(want / np.sqrt(2.0)))
        got = vm["main"](tvm.runtime.tensor(x), tvm.runtime.tensor(w)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


def test_an_epilogue_over_padded_columns_runs_in_vectors_the_column_count_divides():
    """Llama's 344 columns are padded to whole tiles of 16-float vectors; the fused epilogue (here GELU) is written
    in vectors of 8, which 344 divides, so each vector is wholly in or out and the guard, once simplified, tests the
    vector (in 16-lane vectors it tested each lane and the whole epilogue ran lane by lane: a dynamic Llama's
    gate product 1.39x its static build's time, the same after). Right at lengths no tile divides."""
    from tvm import relax
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds.dlight.rules.cpu_matmul_tvm import CPUMatmul

    m = tvm.tirx.Var("m", "int64")
    mod = _symbolic_batch_matmul((m, 64), (64, 344))
    target = tvm.target.Target(_native())
    if CPUMatmul.lanes(target) < 16:
        pytest.skip("padded columns are a 16-lane target's case")
    with target:
        scheduled = dl.ApplyDefaultSchedule(CPUMatmul())(mod)
    (_name, func), = _prims(scheduled).items()
    text = func.script()
    epilogue = text[text.index("with T.sblock(\"T_multiply"):]
    assert '"w_pad"' in text and "T.vectorized(T.int64(8))" in text[:text.index("with T.sblock(\"T_multiply")], text
    assert "T.likely(" in epilogue and "< T.int64(344)" in epilogue, text
    vm = relax.VirtualMachine(tvm.compile(scheduled, target=target), tvm.cpu())
    rng = np.random.default_rng(8)
    from math import erf

    for length in (1, 37, 128):
        x = rng.standard_normal((length, 64)).astype("float32")
        w = rng.standard_normal((64, 344)).astype("float32")
        want = x @ w
        want = want * 0.5 * (1.0 + np.vectorize(erf)(want / np.sqrt(2.0)))
        got = vm["main"](tvm.runtime.tensor(x), tvm.runtime.tensor(w)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


def test_matmul_rule_declines_tiny_non_float32_and_non_matmul_functions():
    assert _declines(_matmul_module(2, 4, 16)[0])  # 256 flops: not worth a schedule
    assert _declines(_matmul_module(32, 64, 64, dtype="float16")[0])
    # n = 34: no 4-lane vector fits; with 8 or 16 lanes it is padded to whole tiles, on 128-bit vectors declined
    assert _declines(_matmul_module(32, 64, 34)[0], {"kind": "llvm", "mcpu": "x86-64"})
    mlp = _legalized_mlp()  # fused matmul + add + relu (one output row: scheduled), then a sum (declined)
    sums = tvm.IRModule({n: f for n, f in _prims(mlp).items() if n.startswith("sum")})
    assert len(sums.functions) == 1 and _declines(sums) and not _declines(mlp)
    assert _declines(_matmul_module(32, 64, 64)[0], {"kind": "cuda", "arch": "sm_80"})


def test_matmul_rule_runs_before_parallel_in_the_default_pipeline():
    from pipeline_model.fileformat import load_pipeline

    for name in ("cpu_build", "cpu_build_bound", "cpu_build_nhwc", "cpu_build_fuse_transpose", "cpu_build_dlight"):
        doc = load_pipeline(os.path.join(ROOT, "resources", "pipelines", f"{name}.json"))
        rules = [s.params["rules"] for s in doc.steps if s.pass_id == "dlight.ApplyDefaultSchedule"]
        assert len(rules) == 1 and rules[0].index("app.CPUMatmul") < rules[0].index("app.CPUParallel"), name
        assert doc.target == {"kind": "llvm", "mcpu": "native", "opt-level": 2}, name


def test_native_target_is_this_machines_cpu_and_other_targets_are_kept():
    from tvm.target import codegen

    from pipeline_model.scriptlib.host import native_target
    from pipeline_model.targets import is_native

    host = native_target({"kind": "llvm", "mcpu": "native", "opt-level": 3})
    assert host.get("mcpu") != "native" and host["num-cores"] >= 1 and host["opt-level"] == 3
    if str(codegen.llvm_get_system_cpu()) not in ("", "generic"):
        assert host["mcpu"] == str(codegen.llvm_get_system_cpu())
    assert native_target({"kind": "llvm", "mcpu": "native", "num-cores": 7})["num-cores"] == 7
    for other in ({"kind": "llvm"}, {"kind": "llvm", "mcpu": "haswell"}, {"kind": "cuda", "arch": "sm_80"}):
        assert native_target(other) is other and not is_native(other)
    assert is_native({"kind": "llvm", "mcpu": "native"})
    tvm.target.Target(host)  # TVM accepts it


# ---- the rules' shared base (AppRule): unchecked schedules and a look at the blocks without one ----


def _legalized_net():
    """A small network after FuseTIR: a padded convolution with ReLU, a mean, a matmul with bias, a softmax."""
    from tvm import relax
    from tvm.script import relax as R

    @tvm.script.ir_module
    class Mod:
        @R.function
        def main(x: R.Tensor((1, 16, 8, 8), "float32"), w: R.Tensor((32, 16, 3, 3), "float32"),
                 m: R.Tensor((32, 64), "float32"), b: R.Tensor((64,), "float32")):
            with R.dataflow():
                c = R.nn.relu(R.nn.conv2d(x, w, padding=[1, 1, 1, 1]))
                p = R.mean(c, axis=[2, 3])
                y = R.nn.softmax(R.add(R.matmul(p, m), b), axis=-1)
                R.output(y)
            return y

    passes = [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(),
              relax.transform.FuseTIR()]
    return tvm.ir.transform.Sequential(passes)(Mod)


def test_unchecked_schedules_give_the_same_schedules_as_checked_ones(monkeypatch):
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds.dlight.rules.app_rule_tvm import AppRule
    from pipeline_model.passkinds.dlight.rules.cpu_conv2d_tvm import CPUConv2d
    from pipeline_model.passkinds.dlight.rules.cpu_matmul_tvm import CPUMatmul
    from pipeline_model.passkinds.dlight.rules.cpu_parallel_tvm import CPUParallel

    mod = _legalized_net()
    func = next(f for _, f in mod.functions_items() if isinstance(f, tvm.tirx.PrimFunc))
    sch = AppRule.schedule(func)
    assert isinstance(sch, tvm.s_tir.Schedule)
    assert type(sch).split is tvm.s_tir.Schedule.split.__wrapped__  # TVM's Python-side type check skipped
    with pytest.raises(Exception):  # noqa: B017 - TVM's C++ side still refuses a wrong argument
        sch.get_loops("not a block")

    def apply(m):
        with tvm.target.Target({"kind": "llvm", "mcpu": "skylake-avx512", "num-cores": 2}):
            return dl.ApplyDefaultSchedule(CPUMatmul(), CPUConv2d(), CPUParallel())(m)

    fast = apply(tvm.ir.load_json(tvm.ir.save_json(mod)))
    monkeypatch.setattr(AppRule, "schedule", staticmethod(tvm.s_tir.Schedule))
    checked = apply(tvm.ir.load_json(tvm.ir.save_json(mod)))
    tvm.ir.assert_structural_equal(fast, checked)
    texts = {gv.name_hint: f.script() for gv, f in fast.functions_items() if isinstance(f, tvm.tirx.PrimFunc)}
    conv = next(t for name, t in texts.items() if "conv2d" in name)
    assert "T.vectorized(" in conv and "T.parallel(" in conv  # the rules did schedule


def test_reductions_are_the_reduction_blocks_the_schedule_sees():
    from tvm.s_tir.dlight.analysis import get_root_block

    from pipeline_model.passkinds.dlight.rules.app_rule_tvm import AppRule

    seen = []
    for mod in (_legalized_net(), _legalized_mlp()):
        for _, func in mod.functions_items():
            if not isinstance(func, tvm.tirx.PrimFunc):
                continue
            sch = tvm.s_tir.Schedule(func)
            kinds = [[int(iv.iter_type) for iv in sch.get(b).iter_vars] for b in sch.get_child_blocks(get_root_block(sch))]
            expected = [k for k in kinds if 2 in k]
            assert AppRule.reductions(func) == expected, func.script()
            seen.extend(map(tuple, expected))
    # The convolution (SSSSRRR), the mean and softmax sums, the matmul reductions were all there to be found.
    assert (0, 0, 0, 0, 2, 2, 2) in seen and (0, 0, 2, 2) in seen and (0, 0, 2) in seen


def test_matmul_rule_runs_small_matmuls_on_the_calling_thread_and_big_ones_in_parallel():
    """Issue 35: TVM's pool waits for every thread's part of a parallel loop, and a part costs a worker's wake-up
    (on a busy machine a time slice of a shared core). GPT-2's 32-row matmuls (32 x 128 @ 128 x 512: 2.1 M
    multiply-adds) run their tiles serially; a matmul over ``min_parallel_flops`` (its LM head, 32 x 128 @
    128 x 2048: 8.4 M) and one-row matmuls (memory-bound) keep parallel tiles."""
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds.dlight.rules.cpu_matmul_tvm import CPUMatmul

    assert 32 * 128 * 512 < CPUMatmul.min_parallel_flops <= 32 * 128 * 2048
    found = {}
    for m, k, n in ((32, 128, 512), (32, 128, 2048), (1, 128, 512)):
        mod, _shapes = _matmul_module(m, k, n)
        with tvm.target.Target(_native()):
            scheduled = dl.ApplyDefaultSchedule(CPUMatmul())(mod)
        (_name, func), = _prims(scheduled).items()
        text = func.script()
        assert "is_scheduled" in text and "T.vectorized(" in text, text
        found[m, n] = "T.parallel(" in text
    assert found == {(32, 512): False, (32, 2048): True, (1, 512): True}
