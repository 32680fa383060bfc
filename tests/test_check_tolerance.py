"""Issue 33: the numerical check's default tolerance follows the lowest float precision of the built module.
A mixed-precision (float16) MLP differs from the float32 reference by float16's rounding (max |diff| ~1e-3 of
the output); at float32's 1e-4 it always failed. Left to the engine, the tolerance is float16's, and the
result says which dtype chose it."""

from __future__ import annotations

import pytest

from pipeline_model import build_api
from pipeline_model.document import PipelineDocument, Step

FAST = build_api.BenchSettings(warmup=1, number=1, repeat=1)
FP16 = [Step("relax.ToMixedPrecision", {"out_dtype": "float16"}), Step("relax.LegalizeOps")]


def test_default_tolerance_by_lowest_precision():
    tvm = pytest.importorskip("tvm")
    from tvm import relax

    from pipeline_model.importers.load_tvm import load_model
    from pipeline_model.scriptlib.outputs import CHECK_TOLERANCE, default_tolerance

    mod = load_model("builtin:mlp", None).mod
    assert default_tolerance(mod) == {"rtol": 1e-4, "atol": 1e-4, "dtype": "float32"}
    with tvm.transform.PassContext(opt_level=3):
        half = relax.transform.ToMixedPrecision(out_dtype="float16")(mod)
    assert default_tolerance(half) == {"rtol": CHECK_TOLERANCE["float16"], "atol": CHECK_TOLERANCE["float16"],
                                       "dtype": "float16"}


@pytest.mark.e2e
def test_fp16_pipeline_passes_the_default_check_and_says_why(engine):
    doc = PipelineDocument(model="builtin:mlp", steps=list(FP16))
    result = build_api.build_run(engine, doc, bench=FAST, check=(None, None))
    check = result.check
    assert check is not None and check.tolerance_dtype == "float16" and check.rtol == check.atol == 1e-2
    assert check.passed, (check.max_abs, check.max_abs_over_ref)
    assert check.max_abs_over_ref > 1e-4  # float32's tolerance would have failed it: the test means something
    same = build_api.build_run(engine, doc, bench=FAST, check=(1e-4, 1e-4))  # a tolerance given is used
    assert same.check is not None and same.check.rtol == 1e-4 and same.check.tolerance_dtype is None


def test_cli_leaves_the_tolerance_to_the_engine_and_says_which():
    import argparse
    import io

    from pipeline_model.cli import build_options

    parser = argparse.ArgumentParser()
    build_options.add_arguments(parser)
    args = parser.parse_args([])
    assert args.rtol is None and args.atol is None  # `run --build`: the engine's default for the module
    out = io.StringIO()
    chk = build_api.CheckResult(passed=True, rtol=1e-2, atol=1e-2, max_abs=1e-3, max_rel=1e-3,
                                tolerance_dtype="float16")
    build_options.print_check("check", chk, out)
    assert "rtol 0.01" in out.getvalue() and "for float16" in out.getvalue()
