"""Model-format registry: one module per format, identified without TVM; the GUI's file filters."""

from __future__ import annotations

import os
import subprocess
import sys

from pipeline_model.importers import file_filters, format_named, identify_format
from pipeline_model.models import resolve_model


def test_formats_identify_files(tmp_path):
    tvmscript = tmp_path / "m.py"
    tvmscript.write_text("from tvm.script import ir as I\n\n@I.ir_module\nclass Module:\n    pass\n")
    nn = tmp_path / "n.py"
    nn.write_text("from tvm.relax.frontend import nn\nmodel = None\nspec = {}\n")
    torch_file = tmp_path / "t.py"
    torch_file.write_text("import torch\nmodel = torch.nn.Linear(2, 2)\nexample_inputs = (torch.zeros(1, 2),)\n")
    onnx_file = tmp_path / "x.onnx"
    onnx_file.write_bytes(b"\0")
    assert identify_format(str(tvmscript)).name == "tvmscript"
    assert identify_format(str(nn)).name == "nn_module"
    assert identify_format(str(torch_file)).name == "torch_py"
    assert identify_format(str(onnx_file)).name == "onnx"
    assert identify_format(str(tmp_path / "x.bin")) is None
    assert resolve_model(str(torch_file)).format == "torch_py"
    assert resolve_model("builtin:mlp").format == "builtin" and format_named("builtin") is not None


def test_file_filters_cover_every_suffix():
    filters = file_filters()
    assert filters[0] == "Models (*.py *.onnx *.pt2)"
    assert filters[-1] == "All files (*)"
    assert "ONNX (*.onnx)" in filters and "torch.export (*.pt2)" in filters


def test_registry_is_tvm_free():
    code = ("import sys; from pipeline_model.importers import all_formats; "
            "print(len(all_formats())); print('tvm' in sys.modules or 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["6", "False"]
