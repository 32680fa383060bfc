"""The app's step ``app.ExpandSigmoid`` (sigmoid / SiLU written with ``exp`` so FastMathTransform vectorizes
them) and the two schedule changes that make SiLU epilogues cheap: ``app.CPUParallel`` keeps a small
producer (a squeeze-excitation's sigmoid over channels) as a stage of its own instead of recomputing it for
every element of the feature map, and ``app.CPUConv2d`` computes its write-back epilogue a vector of output
channels at a time."""

from __future__ import annotations

import os

import numpy as np
import pytest

from pipeline_model import emit
from pipeline_model.passkinds.registry import kind_for

tvm = pytest.importorskip("tvm")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPU_BUILD = os.path.join(ROOT, "resources", "pipelines", "cpu_build.json")


def _silu_module():
    """sigmoid(x) * y and silu(x) on float32 tensors, and a sigmoid of an int tensor's cast."""
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((4, 37), "float32"))
    y = relax.Var("y", relax.TensorType((4, 37), "float32"))
    with bb.function("main", [x, y]):
        with bb.dataflow():
            a = bb.emit(relax.op.multiply(relax.op.sigmoid(x), y))
            b = bb.emit(relax.op.nn.silu(y))
            out = bb.emit_output(relax.Tuple([a, b]))
        bb.emit_func_output(out)
    return bb.get()


def _ops(mod):
    return [line for line in mod["main"].script().splitlines() if "R." in line]


def _expand(mod):
    from pipeline_model.passkinds.expand_sigmoid.script import expand_sigmoid

    return expand_sigmoid()(mod)


def _run(mod, arrays, target="llvm"):
    from tvm import relax

    mod = relax.transform.LegalizeOps()(mod)
    vm = relax.VirtualMachine(tvm.compile(mod, target=target), tvm.cpu())
    out = vm["main"](*[tvm.runtime.tensor(a) for a in arrays])
    return [o.numpy() for o in out]


def test_sigmoid_and_silu_become_exp_and_fast_math_then_takes_them():
    from tvm import relax

    mod = _silu_module()
    text = "\n".join(_ops(_expand(mod)))
    assert "R.sigmoid" not in text and "R.nn.silu" not in text and text.count("R.exp(") == 2
    fast = relax.transform.LegalizeOps()(relax.transform.FastMathTransform()(_expand(mod)))
    assert "fast_exp" in fast.script()  # the vectorizable polynomial, not libm's expf
    plain = relax.transform.LegalizeOps()(relax.transform.FastMathTransform()(mod))
    assert "fast_exp" not in plain.script()  # FastMathTransform alone leaves sigmoid to T.sigmoid


def test_same_values_as_sigmoid_within_float_rounding_also_through_fast_exp():
    from tvm import relax

    mod = _silu_module()
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((4, 37)) * 30).astype("float32")  # saturating values included
    y = rng.standard_normal((4, 37)).astype("float32")
    want = _run(mod, [x, y])
    for got in (_run(_expand(mod), [x, y]), _run(relax.transform.FastMathTransform()(_expand(mod)), [x, y])):
        for g, w in zip(got, want):
            assert np.isfinite(g).all()
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_a_module_without_sigmoid_comes_back_as_it_was():
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((3,), "float32"))
    with bb.function("main", [x]):
        out = bb.emit(relax.op.exp(x))
        bb.emit_func_output(out)
    mod = bb.get()
    assert _expand(mod).same_as(mod)


def test_kind_is_in_the_catalogue_and_exported_scripts_carry_its_code():
    from pipeline_model.export import export_script
    from pipeline_model.fileformat import load_pipeline
    from pipeline_model.passkinds.catalogue_tvm import catalogue

    kind = kind_for("app.ExpandSigmoid")
    assert kind is not None and kind.name == "expand_sigmoid"
    expr = kind.recipe("app.ExpandSigmoid", {})
    assert isinstance(expr, emit.ScriptCall) and expr.attr == "expand_sigmoid"
    source = emit.script_source("pipeline_model.passkinds.expand_sigmoid.script", "expand_sigmoid")
    assert source.startswith("def expand_sigmoid(") and "pipeline_model" not in source
    spec = catalogue().get("app.ExpandSigmoid")
    assert spec is not None and spec.kind == "expand_sigmoid" and spec.available
    script = export_script(load_pipeline(CPU_BUILD))
    assert "def expand_sigmoid(" in script and "expand_sigmoid()" in script


def test_default_cpu_pipelines_expand_sigmoid_before_fast_math_and_drop_batch_norm_tuples():
    from pipeline_model.fileformat import load_pipeline

    for name in ("cpu_build", "cpu_build_nhwc", "cpu_build_fuse_transpose", "cpu_build_dlight"):
        ids = [s.pass_id for s in load_pipeline(os.path.join(ROOT, "resources", "pipelines", f"{name}.json")).steps]
        if name != "cpu_build_dlight":  # TVM's own DLight rules, no FastMathTransform
            assert ids.index("app.ExpandSigmoid") < ids.index("relax.FastMathTransform"), name
            if "app.ChannelsLast" in ids:  # FastMathTransform writes exp as a TIR call ConvertLayout cannot carry
                # (only app.Winograd, which adds no exp, between them)
                between = ids[ids.index("app.ChannelsLast") + 1:ids.index("relax.FastMathTransform")]
                assert between in ([], ["app.Winograd"]), name
        decompose = ids.index("relax.DecomposeOpsForInference")
        assert ids[decompose + 1:decompose + 3] == ["relax.CanonicalizeBindings", "relax.DeadCodeElimination"], name


def test_batch_norm_tuple_no_longer_keeps_silu_out_of_the_convolution():
    """torch.export's batch norm returns (out, mean, var); decomposed, the tuple stays bound and its first
    element is read through it, so FuseOps stopped at the tuple and SiLU ran as a kernel of its own."""
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((1, 16, 8, 8), "float32"))
    w = relax.Var("w", relax.TensorType((16, 16, 3, 3), "float32"))
    stats = [relax.Var(n, relax.TensorType((16,), "float32")) for n in ("gamma", "beta", "mean", "var")]
    with bb.function("main", [x, w, *stats]):
        with bb.dataflow():
            y = bb.emit(relax.op.nn.conv2d(x, w, padding=1))
            bn = bb.emit(relax.op.nn.batch_norm(y, *stats, axis=1, training=False))
            z = bb.emit(relax.TupleGetItem(bn, 0))
            out = bb.emit_output(relax.op.multiply(z, relax.op.sigmoid(z)))
        bb.emit_func_output(out)
    fuse = [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(),
            relax.transform.FuseTIR()]

    def kernels(extra):
        seq = [relax.transform.DecomposeOpsForInference(), *extra, *fuse]
        mod = tvm.ir.transform.Sequential(seq)(bb.get())
        return [gv.name_hint for gv, f in mod.functions_items() if isinstance(f, tvm.tirx.PrimFunc)]

    assert len(kernels([])) == 2  # convolution + batch norm, then the SiLU on its own
    fused = kernels([relax.transform.CanonicalizeBindings(), relax.transform.DeadCodeElimination()])
    assert len(fused) == 1 and "sigmoid" in fused[0]


def _squeeze_excitation():
    """x * sigmoid(s + b): a [1, 64, 1, 1] channel scale (its sigmoid) times a 1x64x32x32 feature map."""
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((1, 64, 32, 32), "float32"))
    s = relax.Var("s", relax.TensorType((1, 64, 1, 1), "float32"))
    b = relax.Var("b", relax.TensorType((1, 64, 1, 1), "float32"))
    with bb.function("main", [x, s, b]):
        with bb.dataflow():
            out = bb.emit_output(relax.op.multiply(x, relax.op.sigmoid(relax.op.add(s, b))))
        bb.emit_func_output(out)
    seq = [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(),
           relax.transform.FuseTIR()]
    return tvm.ir.transform.Sequential(seq)(bb.get())


def test_parallel_rule_computes_a_small_producer_once_not_per_element_of_the_big_block():
    from tvm import relax
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds.dlight.rules.cpu_parallel_tvm import CPUParallel

    mod = _squeeze_excitation()
    with tvm.target.Target({"kind": "llvm", "num-cores": 2}):
        scheduled = dl.ApplyDefaultSchedule(CPUParallel())(mod)
    (func,) = [f for _, f in scheduled.functions_items() if isinstance(f, tvm.tirx.PrimFunc)]
    text = func.script()
    assert "T.parallel(" in text
    body = text.split("T.parallel(")[1]  # the big multiply's loop reads the sigmoid's buffer, computes none
    assert "T.sigmoid" not in body and "T.sigmoid" in text.split("T.parallel(")[0]
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(sh).astype("float32") for sh in ((1, 64, 32, 32), (1, 64, 1, 1), (1, 64, 1, 1))]

    def run(m):
        vm = relax.VirtualMachine(tvm.compile(m, target="llvm"), tvm.cpu())
        return vm["main"](*[tvm.runtime.tensor(a) for a in arrays]).numpy()

    np.testing.assert_allclose(run(scheduled), run(mod), rtol=1e-6, atol=1e-6)


def test_conv_rule_writes_its_epilogue_back_a_vector_of_channels_at_a_time():
    from tvm import relax
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds.dlight.rules.cpu_conv2d_tvm import CPUConv2d

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((1, 16, 14, 14), "float32"))
    w = relax.Var("w", relax.TensorType((32, 16, 1, 1), "float32"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            y = bb.emit(relax.op.nn.conv2d(x, w))
            out = bb.emit_output(relax.op.multiply(y, relax.op.sigmoid(y)))
        bb.emit_func_output(out)
    seq = [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(),
           relax.transform.FuseTIR()]
    mod = tvm.ir.transform.Sequential(seq)(bb.get())
    target = {"kind": "llvm", "num-cores": 2, "mcpu": "skylake-avx512"}
    with tvm.target.Target(target):
        scheduled = dl.ApplyDefaultSchedule(CPUConv2d())(mod)
    (func,) = [f for _, f in scheduled.functions_items() if isinstance(f, tvm.tirx.PrimFunc)]
    text = func.script()
    write_back = text.split("conv2d_nchw_update")[-1]  # after the accumulation: the epilogue's write-back
    assert "T.vectorized(T.int64(16))" in write_back and "T.sigmoid" in write_back
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(sh).astype("float32") for sh in ((1, 16, 14, 14), (32, 16, 1, 1))]

    def run(m):
        vm = relax.VirtualMachine(tvm.compile(m, target="llvm"), tvm.cpu())
        return vm["main"](*[tvm.runtime.tensor(a) for a in arrays]).numpy()

    np.testing.assert_allclose(run(scheduled), run(mod), rtol=1e-5, atol=1e-5)


def _gelu_module():
    """gelu(x) (erf, as ONNX's and torch's exact GELU import) and gelu_tanh(y) on float32 tensors."""
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((4, 37), "float32"))
    y = relax.Var("y", relax.TensorType((4, 37), "float32"))
    with bb.function("main", [x, y]):
        with bb.dataflow():
            a = bb.emit(relax.op.nn.gelu(x))
            b = bb.emit(relax.op.nn.gelu_tanh(y))
            out = bb.emit_output(relax.Tuple([a, b]))
        bb.emit_func_output(out)
    return bb.get()


def test_gelu_becomes_erf_and_tanh_that_fast_math_vectorizes():
    """A legalized GELU calls libm's erff per element (a BERT FFN's 32 x 512 GELU took 60 us); written with
    R.erf / R.tanh, FastMathTransform gives TVM's polynomials."""
    from tvm import relax

    mod = _gelu_module()
    text = "\n".join(_ops(_expand(mod)))
    assert "R.nn.gelu" not in text and "R.erf(" in text and "R.tanh(" in text
    fast = relax.transform.LegalizeOps()(relax.transform.FastMathTransform()(_expand(mod))).script()
    assert "fast_erf" in fast and "fast_tanh" in fast and "T.erf(" not in fast and "T.tanh(" not in fast
    plain = relax.transform.LegalizeOps()(relax.transform.FastMathTransform()(mod)).script()
    assert "T.erf(" in plain  # FastMathTransform alone leaves the GELU to libm


def test_gelu_values_as_tvm_legalizes_them_also_through_fast_math():
    from tvm import relax

    mod = _gelu_module()
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((4, 37)) * 4).astype("float32")
    y = (rng.standard_normal((4, 37)) * 4).astype("float32")
    want = _run(mod, [x, y])
    for got in (_run(_expand(mod), [x, y]), _run(relax.transform.FastMathTransform()(_expand(mod)), [x, y])):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_a_float16_gelu_is_left_to_tvm():
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((3,), "float16"))
    with bb.function("main", [x]):
        out = bb.emit(relax.op.nn.gelu(x))
        bb.emit_func_output(out)
    mod = bb.get()
    assert _expand(mod).same_as(mod)
