"""Importers: ONNX and PyTorch models made in the test, corrupt files, unsupported ops, script export."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from pipeline_model.importers import ModelLoadError, emit_loader, importer_kind, is_torch_python_file

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

try:
    import torch  # noqa: F401

    HAS_TORCH = True
except ImportError:  # pragma: no cover - CI installs requirements-torch.txt
    HAS_TORCH = False

needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="torch not installed (pip install -r requirements-torch.txt)")


def _run(mod, params, x):
    """Compile ``main`` for the CPU and run it on ``x`` with the imported weights."""
    import tvm

    ex = tvm.compile(mod, target=tvm.target.Target({"kind": "llvm"}))
    vm = tvm.relax.VirtualMachine(ex, tvm.cpu())
    main = mod["main"]
    n = int(main.attrs["num_input"])
    args = [tvm.runtime.tensor(x)] + [tvm.runtime.tensor(params[p.name]) for p in main.params[n:]]
    out = vm["main"](*args)
    return (out if hasattr(out, "numpy") else out[0]).numpy()


@pytest.fixture()
def onnx_mlp(tmp_path):
    """A MatMul+Add+Relu+Reshape graph with a symbolic batch dim ``N`` and dotted weight names."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((8, 4)).astype("float32")
    b = rng.standard_normal(4).astype("float32")
    nodes = [
        helper.make_node("MatMul", ["x", "fc.weight"], ["h"]),
        helper.make_node("Add", ["h", "fc.bias"], ["h2"]),
        helper.make_node("Relu", ["h2"], ["h3"]),
        helper.make_node("Reshape", ["h3", "shape"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 2, 2])],
        [numpy_helper.from_array(w, "fc.weight"), numpy_helper.from_array(b, "fc.bias"),
         numpy_helper.from_array(np.array([-1, 2, 2], dtype=np.int64), "shape")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = tmp_path / "mlp.onnx"
    onnx.save(model, str(path))
    return str(path), w, b


def test_onnx_import_keeps_weights_and_symbolic_dim(onnx_mlp):
    from pipeline_model.importers.load_tvm import load_file

    path, w, b = onnx_mlp
    loaded = load_file(path)
    script = loaded.mod.script()
    assert 'N = TypeVar("N")' in script  # the symbolic batch dimension stays symbolic
    assert "R.Tensor((N, 8)" in script and "R.Tensor((N, 2, 2)" in script
    assert sorted(loaded.params) == ["fc_bias", "fc_weight"]  # weights are parameters, names sanitized
    assert "fc_weight: R.Tensor((8, 4)" in script  # not folded into constants
    np.testing.assert_array_equal(loaded.params["fc_weight"], w)
    assert loaded.key.startswith("onnx:") and loaded.source == path
    x = np.random.default_rng(0).standard_normal((5, 8)).astype("float32")
    got = _run(loaded.mod, loaded.params, x)
    np.testing.assert_allclose(got, np.maximum(x @ w + b, 0).reshape(5, 2, 2), rtol=1e-5, atol=1e-6)


def test_onnx_emit_loader_matches_importer(onnx_mlp):
    import tvm

    from pipeline_model.importers.load_tvm import load_file

    path, _, _ = onnx_mlp
    loaded = load_file(path)
    namespace: dict = {}
    exec(compile(emit_loader(path), "<loader>", "exec"), namespace)  # noqa: S102 - our own generated code
    tvm.ir.assert_structural_equal(namespace["mod"], loaded.mod)
    assert sorted(namespace["params"]) == sorted(loaded.params)
    for name, value in loaded.params.items():
        np.testing.assert_array_equal(namespace["params"][name], value)


def test_onnx_corrupt_file_names_file(tmp_path):
    from pipeline_model.importers.load_tvm import load_file

    path = tmp_path / "broken.onnx"
    path.write_bytes(b"\x08\x07garbage that is not protobuf\xff\xff\xff")
    with pytest.raises(ModelLoadError) as info:
        load_file(str(path))
    assert str(path) in str(info.value) and "ONNX" in str(info.value)


def test_onnx_missing_file(tmp_path):
    from pipeline_model.importers.load_tvm import load_file

    with pytest.raises(ModelLoadError, match="no such file"):
        load_file(str(tmp_path / "absent.onnx"))


def test_onnx_unsupported_op_is_named(tmp_path):
    from pipeline_model.importers.load_tvm import load_file

    nodes = [helper.make_node("Relu", ["x"], ["h"]), helper.make_node("FrobnicateTensor", ["h"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    path = tmp_path / "odd.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    with pytest.raises(ModelLoadError) as info:
        load_file(str(path))
    message = str(info.value)
    assert "FrobnicateTensor" in message and str(path) in message and "Relu" not in message


def test_load_model_delegates_onnx(onnx_mlp):
    """The engine's model loader hands .onnx paths to the importer and keeps the weights."""
    from pipeline_model.importers.load_tvm import load_model

    path, w, _ = onnx_mlp
    loaded = load_model(os.path.basename(path), os.path.dirname(path))
    np.testing.assert_array_equal(loaded.params["fc_weight"], w)


# -------------------------------------------------------------------------------------------- torch

TORCH_PY = '''\
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)
        self.norm = torch.nn.LayerNorm(4)

    def forward(self, x):
        return torch.relu(self.norm(self.fc(x)))


torch.manual_seed(0)
model = Net()
example_inputs = (torch.randn(2, 8),)
dynamic_shapes = {"x": {0: torch.export.Dim("batch")}}
'''


def _torch_net():
    import torch

    ns: dict = {}
    exec(compile(TORCH_PY, "<net>", "exec"), ns)  # noqa: S102 - test code
    return ns["model"].eval(), torch


@needs_torch
def test_pt2_import_keeps_weights_and_dynamic_dim(tmp_path):
    from pipeline_model.importers.load_tvm import load_file

    model, torch = _torch_net()
    batch = torch.export.Dim("batch")
    exported = torch.export.export(model, (torch.randn(3, 8),), dynamic_shapes={"x": {0: batch}})
    path = tmp_path / "net.pt2"
    torch.export.save(exported, str(path))
    loaded = load_file(str(path))
    main = loaded.mod["main"]
    first = main.params[0].ty.shape.values[0]
    assert not hasattr(first, "value"), "the batch dimension must stay symbolic"
    assert len(loaded.params) == 4 and all(isinstance(v, np.ndarray) for v in loaded.params.values())
    x = np.random.default_rng(1).standard_normal((6, 8)).astype("float32")
    expected = model(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(_run(loaded.mod, loaded.params, x), expected, rtol=1e-4, atol=1e-5)


@needs_torch
def test_torch_py_convention(tmp_path):
    from pipeline_model.importers.load_tvm import load_file

    path = tmp_path / "net.py"
    path.write_text(TORCH_PY)
    assert is_torch_python_file(str(path)) and importer_kind(str(path)) == "torch_py"
    loaded = load_file(str(path))
    model, torch = _torch_net()
    x = np.random.default_rng(2).standard_normal((3, 8)).astype("float32")
    expected = model(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(_run(loaded.mod, loaded.params, x), expected, rtol=1e-4, atol=1e-5)
    namespace: dict = {}
    exec(compile(emit_loader(str(path)), "<loader>", "exec"), namespace)  # noqa: S102
    assert sorted(namespace["params"]) == sorted(loaded.params)


@needs_torch
def test_pt2_corrupt_file(tmp_path):
    from pipeline_model.importers.load_tvm import load_file

    path = tmp_path / "broken.pt2"
    path.write_bytes(b"PK\x03\x04 definitely not a torch archive")
    with pytest.raises(ModelLoadError) as info:
        load_file(str(path))
    assert str(path) in str(info.value) and "torch.export archive" in str(info.value)


@needs_torch
def test_torch_py_errors_name_file_and_line(tmp_path):
    from pipeline_model.importers.load_tvm import load_file

    path = tmp_path / "bad.py"
    path.write_text("import torch\nmodel = torch.nn.Linear(2, 2)\nexample_inputs = (1 / 0,)\n")
    with pytest.raises(ModelLoadError) as info:
        load_file(str(path))
    assert f"{path}:3" in str(info.value) and "ZeroDivisionError" in str(info.value)

    path2 = tmp_path / "nomodel.py"
    path2.write_text("import torch\nexample_inputs = (torch.zeros(2),)\n")
    with pytest.raises(ModelLoadError, match="must define `model`"):
        load_file(str(path2))


def test_torch_missing_says_how_to_install(tmp_path, monkeypatch):
    from pipeline_model.importers.load_tvm import load_file

    path = tmp_path / "net.pt2"
    path.write_bytes(b"PK\x03\x04")
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` raise ImportError
    with pytest.raises(ModelLoadError) as info:
        load_file(str(path))
    assert "requirements-torch.txt" in str(info.value) and str(path) in str(info.value)


def test_importer_kind_ignores_tvm_python_files(tmp_path):
    tvm_file = tmp_path / "m.py"
    tvm_file.write_text("import torch\nfrom tvm.script import relax as R\nexample_inputs = ()\n")
    assert importer_kind(str(tvm_file)) is None
    assert importer_kind("a.onnx") == "onnx" and importer_kind("b.pt2") == "pt2"
    with pytest.raises(ModelLoadError):
        emit_loader(str(tvm_file))


def test_onnx_pow_exponent_is_a_constant_and_the_weights_stay_parameters(tmp_path):
    """A Pow's scalar exponent initializer (GPT-2's GELU x ** 3) is imported as a constant, so app.ExpandPower can
    write it as products; a float weight beside it stays a parameter with its value."""
    from pipeline_model.importers.load_tvm import load_model
    from pipeline_model.passkinds.expand_power.script import expand_power

    w = np.arange(4, dtype="float32").reshape(2, 2)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Pow", ["h", "three"], ["y"])]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])],
        initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(3.0, dtype="float32"), "three")])
    path = tmp_path / "pow.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    loaded = load_model(str(path), None)
    assert list(loaded.params) == ["w"]
    np.testing.assert_array_equal(loaded.params["w"], w)
    text = loaded.mod["main"].script()
    assert 'R.const(3.0, "float32"))' in text and "three" not in text, text  # the exponent is the constant
    assert "R.power" not in expand_power()(loaded.mod)["main"].script()
