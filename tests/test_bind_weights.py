"""``weights.BindAsConstants``: the model's own weights bound as constants, batch norm folded into the
convolutions, the build checked against the unbound model and its framework, compared and exported."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pipeline_model import build_api
from pipeline_model.document import PipelineDocument, Step
from pipeline_model.export import export_script
from pipeline_model.fileformat import load_pipeline
from tests.test_build_models import scalar_model

pytest.importorskip("onnx")
tvm = pytest.importorskip("tvm")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOUND = os.path.join(ROOT, "resources", "pipelines", "cpu_build_bound.json")
CNN_BN = os.path.join(ROOT, "resources", "models", "cnn_bn.onnx")
FAST = build_api.BenchSettings(warmup=1, warmup_ms=0, number=2, repeat=2)


def _bound_doc() -> PipelineDocument:
    doc = load_pipeline(BOUND)
    doc.model = CNN_BN
    return doc


def test_batch_norm_folds_and_the_build_matches_the_model_and_onnxruntime(engine):
    doc = _bound_doc()
    run = engine.run(doc)
    assert run.ok, (run.error, [s.error for s in run.steps if s.error])
    first = run.steps[0]
    assert "R.nn.batch_norm" in run.input_script and "p_" not in first.script.split("def main(")[1].split(")")[0]
    main_sig = run.final_script.split("def main(")[1].split(") ->")[0]
    assert main_sig.count(": R.Tensor") == 1  # only the input x is left; the 12 weights are constants
    assert "batch_norm" not in run.final_script and "metadata[" in run.final_script
    result = build_api.build_run(engine, doc, bench=FAST, check_against="both")
    assert [a["name"] for a in result.arguments] == ["x"]
    assert result.check is not None and result.check.passed, result.check
    assert result.check.max_abs_over_ref is not None and result.check.max_abs_over_ref < 1e-5
    fw = result.framework_check
    assert fw is not None and fw.passed and "onnxruntime" in fw.reference


def test_compare_bound_and_unbound_on_the_same_inputs(engine):
    bound = _bound_doc()
    plain = load_pipeline(os.path.join(ROOT, "resources", "pipelines", "cpu_build.json"))
    plain.model = CNN_BN
    for first, second in ((bound, plain), (plain, bound)):  # either side first: arguments go by name
        result = build_api.compare(engine, build_api.module_request(first), build_api.module_request(second),
                                   bench=FAST)
        assert result.a.latency.median_us > 0 and result.b.latency.median_us > 0
        assert result.check is not None and result.check.passed, result.check
    many = build_api.compare_many(engine, [build_api.module_request(d) for d in (bound, plain, bound)], bench=FAST)
    assert [row.error for row in many.rows] == [None, None, None]
    assert all(row.check is not None and row.check.passed for row in many.rows)


def test_a_model_without_weights_says_so(engine):
    doc = PipelineDocument(name="nothing to bind", model="builtin:mlp",
                           steps=[Step(pass_id="weights.BindAsConstants"), Step(pass_id="relax.FoldConstant")])
    run = engine.run(doc)
    assert not run.ok
    assert "carries no weights of its own" in (run.steps[0].error or "")


def test_zero_dim_weights_keep_their_shape(engine, tmp_path):
    """A 0-d initializer is bound as a 0-d constant (np.ascontiguousarray would make it (1,))."""
    doc = PipelineDocument(name="scalar", model=scalar_model(tmp_path / "scalar.onnx"),
                           steps=[Step(pass_id="weights.BindAsConstants"), Step(pass_id="relax.FoldConstant"),
                                  Step(pass_id="relax.LegalizeOps")])
    result = build_api.build_run(engine, doc, bench=None)
    assert result.check is not None and result.check.passed


def test_exported_script_binds_the_same_weights(tmp_path):
    source = export_script(_bound_doc(), build=True)
    assert "def bind_model_weights(params):" in source and "pass_ = bind_model_weights(params)" in source
    script = tmp_path / "bound.py"
    script.write_text(source)
    proc = subprocess.run([sys.executable, str(script), "--quiet"], capture_output=True, text=True, timeout=300,
                          cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "check output 0: PASS" in proc.stdout
