"""Issue 34: quantized (int8) models compile to integer kernels and the check judges them at one quantization step.

A QDQ model (``quantize_static``'s form) and a ``MatMulInteger`` model (``quantize_dynamic``'s), both tiny and built
with ``onnx.helper`` (:mod:`tests.int8_models`): ``app.QuantizedToInteger`` turns their convolution, Gemm and
MatMulInteger into uint8 x int8 -> int32 ``qdot`` products; the default CPU pipeline builds them with ``vpdpbusd``
where the CPU has VNNI; the check passes at the int8 tolerance and says so."""

from __future__ import annotations

import io

import pytest

from pipeline_model import build_api
from pipeline_model.fileformat import load_pipeline
from pipeline_model.resources import bundled_pipeline
from tests.int8_models import matmul_integer_model, qdq_conv_model

FAST = build_api.BenchSettings(warmup=1, number=1, repeat=1)


def _has_vnni() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            return "avx512_vnni" in fh.read()
    except OSError:
        return False


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    pytest.importorskip("onnx")
    folder = str(tmp_path_factory.mktemp("int8"))
    return {"qdq": qdq_conv_model(folder), "dynamic": matmul_integer_model(folder)}


def _calls(mod):
    """``(callee name, argument dtypes, result dtype)`` of every ``call_tir`` and the names of the Relax ops of
    ``main``."""
    from tvm import relax

    calls, ops = [], []

    def visit(expr):
        if isinstance(expr, relax.Call) and getattr(expr.op, "name", "") == "relax.call_tir":
            args = expr.args[1].fields
            calls.append((expr.args[0].name_hint, [str(a.ty.dtype) for a in args], str(expr.ty.dtype)))
        elif isinstance(expr, relax.Call) and hasattr(expr.op, "name"):
            ops.append(expr.op.name)

    relax.analysis.post_order_visit(mod["main"], visit)
    return calls, ops


@pytest.mark.parametrize("which, folded", [("qdq", 2), ("dynamic", 1)])
def test_fold_makes_integer_products(models, which, folded):
    pytest.importorskip("tvm")
    from pipeline_model.importers.load_tvm import load_model
    from pipeline_model.passkinds.quantized_int.script import quantized_to_integer

    mod = load_model(models[which], None).mod
    calls, ops = _calls(mod)
    assert not calls and "relax.matmul" in ops  # as imported: float conv/Gemm on dequantized values, or int32 matmul
    new = quantized_to_integer()(mod)
    calls, ops = _calls(new)
    products = [c for c in calls if c[0].startswith("qdot")]
    assert len(products) == folded
    for _name, args, out in products:
        assert args == ["uint8", "int8"] and out == "int32"  # uint8 activations x packed int8 weights -> int32
    assert "relax.matmul" not in ops and "relax.nn.conv2d" not in ops
    import tvm

    with tvm.target.Target({"kind": "llvm", "mcpu": "haswell"}):  # no VNNI: the float kernels stay
        assert not [c for c in _calls(quantized_to_integer()(mod))[0] if c[0].startswith("qdot")]


@pytest.mark.e2e
@pytest.mark.parametrize("which, step, source", [("qdq", 0.1, "scale"), ("dynamic", None, "range")])
def test_check_passes_at_the_int8_tolerance_and_says_so(engine, models, which, step, source):
    from pipeline_model.cli.build_options import print_check

    doc = load_pipeline(str(bundled_pipeline("cpu_build")))
    doc.model = models[which]
    result = build_api.build_run(engine, doc, bench=FAST, check=(None, None))
    check = result.check
    assert check is not None and check.passed, (check.max_abs, check.quant_step)
    assert check.tolerance_dtype == "int8" and check.step_from == source and check.scale == "absolute"
    assert check.rtol == 0.0 and check.atol == pytest.approx(check.quant_step, rel=1e-4)
    if step is not None:  # the scale of the output's last DequantizeLinear
        assert check.quant_step == pytest.approx(step)
    else:  # derived: the output's range / 255
        values = result.outputs[0]
        assert check.quant_step == pytest.approx((values.max - values.min) / 255, rel=1e-3)
    out = io.StringIO()
    print_check("check", check, out)
    assert f"int8 model: tolerance = 1 quantization step ({check.quant_step:.3g}" in out.getvalue()
    from pipeline_model.scriptlib.quant_reference import QUANT_REFERENCE  # exact: each op in float64

    assert check.reference == QUANT_REFERENCE and f"vs {QUANT_REFERENCE}" in out.getvalue()


def test_float_models_keep_the_float_tolerance():
    pytest.importorskip("tvm")
    from pipeline_model.importers.load_tvm import load_model
    from pipeline_model.scriptlib.outputs import default_tolerance, module_is_quantized

    mod = load_model("builtin:mlp", None).mod
    assert not module_is_quantized(mod)
    assert default_tolerance(mod, mod, None, None) == {"rtol": 1e-4, "atol": 1e-4, "dtype": "float32"}
    from tvm import relax  # a float model reading uint8 pixels is not quantized

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((1, 4), "uint8"))
    with bb.function("main", [x], attrs={"num_input": 1}):
        with bb.dataflow():
            y = bb.emit_output(relax.op.multiply(relax.op.astype(x, "float32"), relax.const(2.0)))
        bb.emit_func_output(y)
    assert not module_is_quantized(bb.get())
    # a float model computing an int8 value on the way (torch's SDPA reduces a boolean mask as int8) is not quantized
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((2, 4), "float32"))
    with bb.function("main", [x], attrs={"num_input": 1}):
        with bb.dataflow():
            mask = bb.emit(relax.op.astype(relax.op.greater(x, relax.const(0.0)), "int8"))
            y = bb.emit_output(relax.op.multiply(x, relax.op.astype(relax.op.max(mask, axis=[-1], keepdims=True),
                                                                    "float32")))
        bb.emit_func_output(y)
    assert not module_is_quantized(bb.get())
    assert default_tolerance(bb.get(), bb.get(), None, None)["dtype"] == "float32"


@pytest.mark.skipif(not _has_vnni(), reason="the CPU has no AVX-512 VNNI")
def test_int8_kernels_use_vpdpbusd(models):
    tvm = pytest.importorskip("tvm")
    from tvm import relax

    from pipeline_model.importers.load_tvm import load_model
    from pipeline_model.passkinds.dlight.rules.cpu_int8_tvm import CPUInt8
    from pipeline_model.passkinds.quantized_int.script import quantized_to_integer
    from pipeline_model.scriptlib.host import native_target

    target = tvm.target.Target(native_target({"kind": "llvm", "mcpu": "native"}))
    mod = quantized_to_integer()(load_model(models["dynamic"], None).mod)
    seq = tvm.transform.Sequential([relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(),
                                    relax.transform.FuseOps(), relax.transform.FuseTIR()])
    with target, tvm.transform.PassContext(opt_level=3):
        mod = seq(mod)
        products = {gv: f for gv, f in mod.functions_items()
                    if isinstance(f, tvm.tirx.PrimFunc) and CPUInt8.has_product(f.body)}
        assert products
        for gv, func in products.items():
            sch = CPUInt8().apply(func, target, False)
            assert sch is not None, gv.name_hint
            mod[gv] = sch.mod["main"]
    lib = tvm.compile(tvm.IRModule({"main": mod[next(iter(products))].with_attr("global_symbol", "main")}),
                      target=target)
    assert "vpdpbusd" in lib.mod.inspect_source("asm")


@pytest.mark.skipif(not _has_vnni(), reason="the CPU has no AVX-512 VNNI")
def test_a_batched_product_and_its_dequantization_are_one_kernel(tmp_path):
    """A [batch, rows, k] MatMulInteger with 40 output channels (not a multiple of 16): the product writes the
    model's shape itself (the rows unflattened, the padding channels dropped), so FuseOps fuses the dequantization
    into it; a reshape and slice after it kept them apart (an int8 BERT's FFN: product and GELU, 2 kernels and an
    int32 tensor between). Same values as the float path of the model as loaded."""
    pytest.importorskip("onnx")
    tvm = pytest.importorskip("tvm")
    import numpy as np
    from tvm import relax

    from pipeline_model.importers.load_tvm import load_model
    from pipeline_model.passkinds.quantized_int.script import quantized_to_integer
    from tests.int8_models import matmul_integer_model

    loaded = load_model(matmul_integer_model(str(tmp_path), rows=6, k=32, n=40, batch=2), None)
    mod = relax.transform.BindParams("main", loaded.params)(loaded.mod)
    fuse = tvm.transform.Sequential([relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(),
                                     relax.transform.FuseOps(), relax.transform.FuseTIR()])
    calls, _ops = _calls(fuse(quantized_to_integer()(mod)))
    (product,) = [c for c in calls if "qdot" in c[0]]
    assert product[1][:3] == ["uint8", "uint8", "int8"] and product[2] == "float32", product  # the epilogue in it
    # the only int32 tensor left is the weights' column sum (weight-only work, lifted and run once)
    assert [c[0] for c in calls if c[2] == "int32"] == ["fused_cast2_sum"], calls
    x = np.random.default_rng(6).standard_normal((2, 6, 32)).astype("float32")

    def run(m):
        return relax.VirtualMachine(tvm.compile(m, target="llvm"), tvm.cpu())["main"](tvm.runtime.tensor(x)).numpy()

    got, want = run(quantized_to_integer()(mod)), run(mod)
    assert got.shape == (2, 6, 40)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_bench_int8_table_says_the_tolerance_and_fails_honestly(capsys):
    from bench.latency.int8 import print_rows

    def row(passed):
        chk = build_api.CheckResult(passed=passed, rtol=0.0, atol=0.05, max_abs=0.05 if passed else 0.1,
                                    max_rel=0.0, quant_step=0.05, step_from="scale", tolerance_dtype="int8")
        return {"model": "m", "kind": "static", "app": {"lib": "x"}, "check": chk, "vs_ort_steps": 1.0,
                "app_ms": {"min": 1.0, "median": 1.1}, "ort_ms": {"min": 1.0, "median": 1.0},
                "ratio": {"median": 1.1, "min": 1.0}, "load": ("1", "1")}

    assert print_rows([row(True)], markdown=True) == 0
    assert "pass (max |diff| 0.05, step 0.05)" in capsys.readouterr().out
    assert print_rows([row(True), row(False)], markdown=False) == 1


def test_exported_script_holds_the_pass_and_the_rule():
    from pipeline_model.export import export_script

    source = export_script(load_pipeline(str(bundled_pipeline("cpu_build"))), build=True)
    for name in ("def quant_patterns(", "def quant_kernels(", "def quant_rewrites(", "def quantized_to_integer(",
                 "class CPUInt8(", "quantized_to_integer()", "CPUInt8()", "def check_reference(",
                 "def float64_reference("):
        assert name in source, name
    assert source.index("def quant_patterns(") < source.index("def quantized_to_integer(")
    assert "pipeline_model" not in source
