"""Real-model build issues (issue 11): 0-d (scalar) weights, integer inputs that index a table, the
scaled check and its warnings, the check against the original framework, full error text, and
``.pt2`` archives whose output type pytree does not know."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from pipeline_model import build_api
from pipeline_model.document import PipelineDocument, Step

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _save(model, path) -> str:
    model.opset_import[0].version = 17
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return str(path)


def scalar_model(path, scale: float = 2.0) -> str:
    """y = x * s + b with a 0-d float initializer ``s`` (what torch's dynamo exporter emits)."""
    s = helper.make_tensor("s", TensorProto.FLOAT, [], [scale])
    b = helper.make_tensor("b", TensorProto.FLOAT, [3], [0.5, -0.25, 1.0] if scale >= 1e-3 else [0.0, 0.0, 0.0])
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "s"], ["t"]), helper.make_node("Add", ["t", "b"], ["y"])],
        "scalar", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], initializer=[s, b])
    return _save(helper.make_model(graph), path)


def embedding_model(path, vocab: int = 7) -> str:
    """y = table[ids] (Gather on axis 0): integer inputs must stay in [0, vocab)."""
    table = helper.make_tensor("table", TensorProto.FLOAT, [vocab, 4],
                               np.arange(vocab * 4, dtype=np.float32).tolist())
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "ids"], ["y"], axis=0)],
        "embed", [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 4])], initializer=[table])
    return _save(helper.make_model(graph), path)


def _doc(path: str) -> PipelineDocument:
    return PipelineDocument(model=path, target={"kind": "llvm"},
                            steps=[Step("relax.LegalizeOps"), Step("relax.FuseOps"), Step("relax.FuseTIR")])


def test_scalar_initializer_builds_and_runs(engine, tmp_path):
    path = scalar_model(tmp_path / "scalar.onnx")
    result = build_api.build_run(engine, _doc(path), check=(1e-5, 1e-5))
    assert result.weights == "model"
    scalar = [a for a in result.arguments if a.get("weight") and a["shape"] == []]
    assert scalar, result.arguments  # the 0-d weight kept its shape ()
    assert result.check is not None and result.check.passed and not result.check.warnings
    assert result.check.max_ref and result.check.max_ref > 0.1


def test_scalar_initializer_direct_engine_values():
    """The weight array fed to the VM is 0-d, and the output is x * 2 + b exactly."""
    from pipeline_model.scriptlib.arguments import contiguous

    arr = contiguous(np.array(3.0, dtype=np.float32))
    assert arr.shape == ()
    sliced = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]
    assert contiguous(sliced).flags.c_contiguous and contiguous(sliced).shape == (3, 2)


def test_check_warns_when_outputs_are_tiny(engine, tmp_path):
    path = scalar_model(tmp_path / "tiny.onnx", scale=1e-9)
    result = build_api.build_run(engine, _doc(path))
    chk = result.check
    assert chk is not None and chk.max_ref is not None and chk.max_ref < 1e-6
    assert chk.warnings and "tiny" in chk.warnings[0]


def test_compare_outputs_scales_tolerance():
    from pipeline_model.scriptlib.outputs import compare_outputs

    ref = [np.full((4,), 1e-12)]
    wrong = [np.full((4,), 5e-12)]  # 5x off: a fixed atol=1e-4 would pass it
    scaled = compare_outputs(wrong, ref, 1e-4, 1e-4)
    absolute = compare_outputs(wrong, ref, 1e-4, 1e-4, scale="absolute")
    assert not scaled["passed"] and absolute["passed"]
    assert scaled["max_abs_over_ref"] == pytest.approx(4.0)
    assert scaled["warnings"]
    zeros = compare_outputs([np.zeros(3)], [np.zeros(3)], 1e-4, 1e-4)
    assert zeros["passed"] and "all zeros" in zeros["warnings"][0]
    fine = compare_outputs([np.array([1.0, 2.0 + 1e-6])], [np.array([1.0, 2.0])], 1e-4, 1e-4)
    assert fine["passed"] and not fine["warnings"] and fine["max_abs_over_ref"] == pytest.approx(5e-7)


def test_integer_inputs_stay_inside_the_table(engine, tmp_path):
    path = embedding_model(tmp_path / "embed.onnx", vocab=7)
    result = build_api.build_run(engine, _doc(path), inputs=build_api.InputSpec(seed=3))
    ids = [a for a in result.arguments if a["name"] == "ids"][0]
    assert ids.get("range") == [0, 7]
    out = result.outputs[0]
    assert out.min is not None and out.min >= 0 and out.max <= 27
    assert out.max > 4  # ids above 1 were drawn (the old [0, 2) range gave max 7)


def test_check_against_framework_onnxruntime(engine, tmp_path):
    pytest.importorskip("onnxruntime")
    path = scalar_model(tmp_path / "fw.onnx")
    result = build_api.build_run(engine, _doc(path), check_against="both")
    fw = result.framework_check
    assert fw is not None and fw.error is None, fw
    assert fw.passed and "onnxruntime" in fw.reference
    assert result.check is not None and result.check.passed


def test_check_against_framework_needs_a_model_file(engine):
    doc = PipelineDocument(model="builtin:mlp", target={"kind": "llvm"}, steps=[Step("relax.LegalizeOps")])
    result = build_api.build_run(engine, doc, check_against="framework")
    assert result.check is None
    assert result.framework_check is not None and not result.framework_check.passed
    assert "no framework" in (result.framework_check.error or "")
    assert not result.ok


def test_error_text_keeps_every_line():
    from pipeline_model.engine.build.errors import error_text

    exc = ValueError("Mismatched s.ndim on argument #1 when calling:\n  `multiply(x: Tensor([2], float32), "
                     "s: Tensor([], float32))`,\n  expected 0")
    text = error_text(exc)
    assert text.endswith("expected 0") and "multiply(" in text


_FAKE_PACKAGE = '''
import dataclasses
import torch
from torch.utils import _pytree


@dataclasses.dataclass
class Out:
    y: torch.Tensor


_pytree.register_dataclass(Out, serialized_type_name="rps_fake_out.Out")


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        return Out(y=self.fc(x))
'''

_LOAD = '''
import sys
from pipeline_model.importers import pt2_tvm
from pipeline_model.importers import ModelLoadError
path, mode = sys.argv[1], sys.argv[2]
if mode == "import":
    sys.path.insert(0, sys.argv[3])
try:
    loaded = pt2_tvm.load_pt2(path, "k", allow_imports=(mode != "plain"))
    print("LOADED", sorted(loaded.params))
except ModelLoadError as exc:
    print("ERROR", exc)
'''


def test_pt2_unregistered_output_type(tmp_path):
    pytest.importorskip("torch")
    pkg = tmp_path / "pkgs" / "rps_fake_out"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(_FAKE_PACKAGE)
    archive = tmp_path / "m.pt2"
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "pkgs")}
    subprocess.run([sys.executable, "-c", "import sys, torch, rps_fake_out\n"
                    "ep = torch.export.export(rps_fake_out.Model().eval(), (torch.randn(1, 4),))\n"
                    "torch.export.save(ep, sys.argv[1])", str(archive)], check=True, env=env, timeout=300)
    env = {**os.environ, "PYTHONPATH": ROOT}

    def load(mode: str, *extra: str, path: str = ROOT) -> str:
        out = subprocess.run([sys.executable, "-c", _LOAD, str(archive), mode, *extra], capture_output=True,
                             text=True, env={**env, "PYTHONPATH": path}, timeout=300)
        return out.stdout.strip().splitlines()[-1]

    missing = load("allow")  # the package is not importable: say "install it" / re-export
    assert missing.startswith("ERROR") and "rps_fake_out.Out" in missing and "pytree" in missing
    assert "install rps_fake_out" in missing and "tuple outputs" in missing
    assert "warnings above" not in missing
    imported = load("import", str(tmp_path / "pkgs"))
    assert imported.startswith("LOADED") and "p_fc_weight" in imported
    no_consent = load("plain", path=ROOT + os.pathsep + str(tmp_path / "pkgs"))
    assert no_consent.startswith("ERROR") and "allow the model's code to run" in no_consent
