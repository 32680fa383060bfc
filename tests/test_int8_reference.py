"""Issue 34: a quantized model's check compares with the model evaluated exactly, at one quantization step.

On a model whose quantizations land on rounding ties (:func:`tests.int8_models.qdq_ties_model`: exact in float32, so
every correct implementation gives the same bytes), the check's reference of a quantized model
(:func:`pipeline_model.scriptlib.quant_reference.check_reference`: each op in float64, rounded once to float32)
gives the bytes ONNX defines (half to even, saturated) and the default CPU pipeline (``app.QuantizedToInteger``'s
integer kernels) the reference's. The check fails a lowering whose activation zero point is off by one.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.int8_models import qdq_conv_model, qdq_ties_model


def _run(mod, params, x=None):  # type: ignore[no-untyped-def]
    """``mod`` built by ``tvm.compile``'s default pipeline for the CPU and run on the seeded inputs (or ``x``)."""
    import tvm
    from tvm import relax

    from pipeline_model.scriptlib.arguments import make_arguments
    from pipeline_model.scriptlib.outputs import flatten_outputs

    arrays, _described = make_arguments(mod, "main", params)
    if x is not None:
        arrays[0] = x
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu(0))
    return flatten_outputs(vm["main"](*[tvm.runtime.tensor(a) for a in arrays])), arrays


def _ties_expected(path: str, x: np.ndarray) -> tuple[np.ndarray, int]:
    """The model's output by ONNX's definitions in numpy (exact here) and how many quantizations were ties."""
    import onnx
    from onnx import numpy_helper

    w = {i.name: numpy_helper.to_array(i).astype(np.float64) for i in onnx.load(path).graph.initializer}
    ties = 0

    def quantize(v, scale, zp):  # type: ignore[no-untyped-def]
        nonlocal ties
        ties += int(np.count_nonzero(v / scale - np.floor(v / scale) == 0.5))
        return np.clip(np.round(v / scale) + zp, 0, 255)  # numpy rounds half to even

    xq = quantize(x.astype(np.float64), 0.5, 128)
    conv = np.einsum("bchw,oc->bohw", (xq - 128) * 0.5, w["w_q"][:, :, 0, 0] * 0.25)
    yq = quantize(conv + (w["b_q"] * 0.125).reshape(1, -1, 1, 1), 1.0, 3)
    gemm = ((yq - 3) * 1.0).reshape(1, -1) @ (w["fc_q"] * w["fc_scale"][:, None]).T
    return (quantize(gemm, 4.0, 128) - 128) * 4.0, ties


def test_reference_rounds_ties_like_quantizelinear(tmp_path):
    pytest.importorskip("onnx")
    pytest.importorskip("tvm")
    from pipeline_model.importers.load_tvm import load_model
    from pipeline_model.scriptlib.quant_reference import QUANT_REFERENCE, check_reference

    path, x = qdq_ties_model(str(tmp_path))
    expected, count = _ties_expected(path, x)
    assert count >= 20  # the test is about ties: a rounding half away from zero would give other bytes
    loaded = load_model(path, None)
    reference, label = check_reference(loaded.mod)
    assert label == QUANT_REFERENCE
    np.testing.assert_array_equal(_run(reference, loaded.params, x)[0][0], expected)


def test_check_fails_a_wrong_zero_point(tmp_path, monkeypatch):
    from tvm import relax

    from pipeline_model.importers.load_tvm import load_model
    from pipeline_model.passkinds.quantized_int import script
    from pipeline_model.scriptlib.outputs import compare_outputs, default_tolerance
    from pipeline_model.scriptlib.quant_reference import check_reference

    loaded = load_model(qdq_conv_model(str(tmp_path)), None)
    ref, _ = _run(check_reference(loaded.mod)[0], loaded.params)

    def check(mod):  # type: ignore[no-untyped-def]
        got, _ = _run(mod, loaded.params)
        tol = default_tolerance(mod, loaded.mod, loaded.params, got)
        assert tol["dtype"] == "int8" and tol["atol"] == pytest.approx(0.1, rel=1e-4)  # one step of the output
        return compare_outputs(got, ref, tol["rtol"], tol["atol"], tol["scale"])

    # (the right lowering of the same model passes this check: tests/test_int8.py's
    # test_check_passes_at_the_int8_tolerance_and_says_so, through the whole default CPU pipeline)
    real_patterns = script.quant_patterns

    def off_by_one():  # type: ignore[no-untyped-def]
        """The patterns with the uint8 activations' zero point read one too high (a wrong lowering)."""
        patterns = real_patterns()
        real = patterns.dequantized

        def dequantized(expr, var2val, want, bb=None):  # type: ignore[no-untyped-def]
            got = real(expr, var2val, want, bb)
            if got is None or want != "uint8":
                return got
            zero = patterns.const_of(got[2], var2val)
            return got[0], got[1], relax.const((zero.astype(np.int32) + 1).astype(np.uint8)), got[3]

        patterns.dequantized = dequantized
        return patterns

    monkeypatch.setattr(script, "quant_patterns", off_by_one)
    wrong = check(script.quantized_to_integer()(loaded.mod))
    assert not wrong["passed"] and wrong["max_abs"] > 1.5 * 0.1, wrong["max_abs"]


@pytest.mark.e2e
def test_default_cpu_pipeline_is_exact_on_ties(engine, tmp_path):
    """The whole default CPU pipeline through the engine (``app.QuantizedToInteger``'s integer products with
    ``app.CPUInt8``'s VNNI schedule where the CPU has it, the requantization fused and vectorized) gives the
    reference's bytes on the ties input (the expected ones: :func:`test_reference_rounds_ties_like_quantizelinear`),
    and the check says against what."""
    pytest.importorskip("onnx")
    from pipeline_model import build_api
    from pipeline_model.fileformat import load_pipeline
    from pipeline_model.resources import bundled_pipeline
    from pipeline_model.scriptlib.quant_reference import QUANT_REFERENCE

    path, x = qdq_ties_model(str(tmp_path))
    inputs = str(tmp_path / "x.npz")
    np.savez(inputs, x=x)
    doc = load_pipeline(str(bundled_pipeline("cpu_build")))
    doc.model = path
    result = build_api.build_run(engine, doc, inputs=build_api.InputSpec(path=inputs),
                                 bench=build_api.BenchSettings(warmup=1, number=1, repeat=1), check=(None, None))
    check = result.check
    assert check is not None and check.passed and check.max_abs == 0.0, check.max_abs
    assert check.reference == QUANT_REFERENCE and check.quant_step == pytest.approx(4.0)
