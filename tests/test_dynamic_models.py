"""Unpinned dynamic-axis models (issue 34): they import with their symbolic dims kept
(``pipeline_model/scriptlib/dynamic_import.py``), one built module runs and passes the check at several lengths
(``run --build --input-shape seq=5 --input-shape seq=11``), and compare/bisect/diverge take ``--shape``."""

from __future__ import annotations

import json
import os

import pytest

from tests.test_model_dims import _position_ids_onnx

tvm = pytest.importorskip("tvm")

#: A torch model with what a Hugging Face export of a dynamic sequence writes: a buffer sliced to ``seq``
#: (``min(seq, 16)`` rows without the Dim's bounds), a shifted difference (a slice on axis -1 with a symbolic
#: end) and a cumsum of a bool tensor (int64 in PyTorch).
TORCH_MODEL = '''
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("pos", torch.arange(16).reshape(1, 16))
        self.emb = torch.nn.Embedding(16, 8)

    def forward(self, ids):
        n = ids.shape[1]
        h = self.emb(ids) + self.emb(self.pos[:, :n])
        shifted = torch.cat([ids[:, :1] - 1, ids], dim=-1)
        starts = (shifted[:, 1:] - shifted[:, :-1] != 1).cumsum(-1)
        return h * starts.unsqueeze(-1).to(h.dtype)


torch.manual_seed(0)
model = Net()
example_inputs = (torch.randint(0, 16, (1, 6)),)
dynamic_shapes = {"ids": {1: torch.export.Dim("seq", min=2, max=16)}}
'''


def _pt2(tmp_path) -> str:
    torch = pytest.importorskip("torch")
    ns: dict = {}
    exec(compile(TORCH_MODEL, "net", "exec"), ns)
    path = str(tmp_path / "net.pt2")
    exported = torch.export.export(ns["model"].eval(), ns["example_inputs"], dynamic_shapes=ns["dynamic_shapes"])
    torch.export.save(exported, path)
    return path


def test_unpinned_onnx_range_keeps_the_symbolic_length(tmp_path):
    """TVM 0.27's Range converter makes a fresh range_len_0 for Range(0, Shape(x)[1], 1), so x + positions has no
    shape and the Reshape after it fails; the app's converter keeps seq. The exported loader imports alike."""
    from pipeline_model import models
    from pipeline_model.importers.load_tvm import load_model

    path = str(tmp_path / "pos.onnx")
    _position_ids_onnx(path)
    text = load_model(path).mod["main"].script()
    assert 'def main(x: R.Tensor((1, seq, 4), dtype="float32")) -> R.Tensor((1, seq, 4), dtype="float32")' in text
    assert "range_len" not in text and "ndim=" not in text
    ns: dict = {}
    exec(compile(models.emit_model_loader(path), "loader", "exec"), ns)
    assert "range_len" not in ns["mod"]["main"].script()


def test_pt2_with_dim_bounds_imports_with_known_shapes(tmp_path):
    """Without the Dim's bounds TVM's frontend gives pos[:, :seq] min(seq, 16) rows, the sum has no shape and
    LegalizeOps fails on the slice with axis -1 ('axis < src_tensor_dim (-1 vs. 2)'); the bool cumsum stays
    bool. After the app's import every shape is known, the cumsum is int64 and the module builds."""
    from tvm import relax

    from pipeline_model.importers.load_tvm import load_model

    mod = load_model(_pt2(tmp_path)).mod
    text = mod["main"].script()
    assert "ndim=" not in text and "T.min" not in text, text
    assert 'R.cumsum(' in text and 'dtype="int64"' in text.split("R.cumsum(", 1)[1].split("\n", 1)[0]
    relax.transform.LegalizeOps()(mod)  # raised before


def test_one_build_runs_and_checks_at_two_lengths(tmp_path, capsys):
    """run --build --input-shape S=5 --input-shape S=11: one build, two runs, each checked against TVM's default
    build and against PyTorch eager (S: torch's symbol for the Dim; a .pt2 does not keep the Dim's name)."""
    import main

    path = _pt2(tmp_path)
    symbol = _symbol(path)
    code = main.cli_main(["run", "builtin:cpu_build", "--model", path, "--build", "--input-shape", f"{symbol}=5",
                          "--input-shape", f"{symbol}=11", "--check-against", "both", "--json"])
    out = json.loads(capsys.readouterr().out)
    build = out["build"]
    assert code == 0, out
    assert build["dims"] == {symbol: 5} and [r["dims"] for r in build["runs"]] == [{symbol: 11}]
    assert build["outputs"][0]["shape"] == [1, 5, 8] and build["runs"][0]["outputs"][0]["shape"] == [1, 11, 8]
    for one in (build, build["runs"][0]):
        assert one["check"]["passed"] and one["framework_check"]["passed"], one


def _symbol(path: str) -> str:
    """torch's name of the archive's one symbolic dimension (``s27``)."""
    import torch

    (symbol,) = [str(s) for s in torch.export.load(path).range_constraints]
    return symbol


def test_input_shape_names_a_dim_of_the_entry_and_stays_in_its_bounds(tmp_path):
    from pipeline_model.cli.shape_arg import input_runs
    from pipeline_model.importers.load_tvm import load_model
    from pipeline_model.scriptlib.arguments import make_arguments
    from pipeline_model.scriptlib.functions import BuildError

    assert input_runs(["seq=32", "seq=128", "batch=2"]) == [{"seq": 32, "batch": 2}, {"seq": 128, "batch": 2}]
    assert input_runs([]) == [{}]
    onnx_path = str(tmp_path / "pos.onnx")
    _position_ids_onnx(onnx_path)
    mod = load_model(onnx_path).mod
    arrays, _described = make_arguments(mod, "main", None, {"dims": {"seq": 7}})
    assert arrays[0].shape == (1, 7, 4)
    with pytest.raises(BuildError, match="no symbolic dimension of that name; its symbolic dimensions: seq"):
        make_arguments(mod, "main", None, {"dims": {"sq": 7}})
    path = _pt2(tmp_path)
    pt2, name = load_model(path).mod, _symbol(path)
    with pytest.raises(BuildError, match=f"declares {name} at most 16"):
        make_arguments(pt2, "main", None, {"dims": {name: 17}})


@pytest.mark.parametrize("command", ["compare", "bisect", "diverge"])
def test_debug_commands_take_shape(tmp_path, capsys, command):
    """compare, bisect and diverge accept --shape like run/export: a bad item is a one-line error (exit 2), a
    name the model lacks lists the names it has."""
    import main

    path = str(tmp_path / "pos.onnx")
    _position_ids_onnx(path)
    pipeline = os.path.join(os.path.dirname(__file__), "..", "resources", "pipelines", "cpu_build.json")
    pipelines = [pipeline, pipeline] if command == "compare" else [pipeline]
    code = main.cli_main([command, *pipelines, "--model", path, "--shape", "seq"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0 and "expected NAME=DIM" in err, err


UNFILED = os.path.join(os.path.dirname(__file__), "data", "tvm_bugs_unfiled")


@pytest.mark.heavy
@pytest.mark.parametrize("name, expect", [
    ("onnx_range_symbolic_length", "expects the input tensor to have known shape"),
    ("legalize_strided_slice_negative_axis", "axis < src_tensor_dim (-1 vs. 2)"),
    ("canonicalize_match_cast_min", None),  # a segfault
    ("llvm_alias_lost_with_shape_func", "tagged tvm-alias because shape_func lacks tirx.noalias"),
])
def test_unfiled_tvm_bugs_still_fail(name, expect):
    """The reproducers the app works around (tests/data/tvm_bugs_unfiled/README.md) still fail on this TVM; when
    one stops failing, its workaround in scriptlib/dynamic_import.py (or scriptlib/building.py) can go."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, os.path.join(UNFILED, f"{name}.py")], capture_output=True, text=True,
                          cwd=UNFILED)
    assert "no failure: fixed" not in proc.stdout
    if expect is None:
        assert proc.returncode == -11, (proc.returncode, proc.stderr[-500:])
    else:
        assert proc.returncode == 1 and expect in proc.stderr, proc.stderr[-500:]


def test_torch_file_shows_the_dim_names(tmp_path):
    """A torch model file's Dim("seq") is seq in the module (not torch's s77), its bounds too, and pins by that
    name; the exported loader names it alike. (A .pt2 archive does not keep the names: torch's symbols stay.)"""
    pytest.importorskip("torch")
    from pipeline_model import models
    from pipeline_model.importers.load_tvm import load_model

    path = tmp_path / "net.py"
    path.write_text(TORCH_MODEL)
    func = load_model(str(path)).mod["main"]
    assert "def main(ids: R.Tensor((1, seq)" in func.script() and dict(func.attrs["tir_var_upper_bound"]) == {"seq": 16}
    ns: dict = {}
    exec(compile(models.emit_model_loader(str(path)), "loader", "exec"), ns)
    assert "def main(ids: R.Tensor((1, seq)" in ns["mod"]["main"].script()
