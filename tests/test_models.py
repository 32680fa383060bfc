"""Model specs and loaders: built-ins, TVMScript files, nn.Module files, errors, emitted loader code."""

from __future__ import annotations

import pytest

from pipeline_model import models
from pipeline_model.importers import ModelLoadError

SCRIPT_TEXT = '''# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        with R.dataflow():
            y: R.Tensor((2, 3), dtype="float32") = R.add(x, x)
            R.output(y)
        return y
'''

SCRIPT_CLASS = SCRIPT_TEXT.replace("# from", "from").replace("R.add", "R.multiply")

NN_FILE = '''from tvm.relax.frontend import nn


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return nn.op.softmax(self.fc(x), axis=-1)


model = Tiny()
spec = {"forward": {"x": nn.spec.Tensor((2, 8), "float32")}}
'''


def test_resolve_specs(tmp_path):
    src = models.resolve_model("builtin:mlp")
    assert src.kind == models.KIND_BUILTIN and src.path.endswith("resources/models/mlp.py")
    assert set(models.BUILTIN_MODELS) >= {"mlp", "transformer"}
    with pytest.raises(models.ModelSpecError, match="builtin:nope"):
        models.resolve_model("builtin:nope")
    with pytest.raises(ModelLoadError, match="does not exist"):
        models.resolve_model("missing.py", str(tmp_path))
    (tmp_path / "a.txt").write_text("x")
    with pytest.raises(ModelLoadError, match="unsupported file type"):
        models.resolve_model("a.txt", str(tmp_path))
    (tmp_path / "plain.py").write_text("x = 1\n")
    with pytest.raises(ModelLoadError, match="cannot tell"):
        models.resolve_model("plain.py", str(tmp_path))
    (tmp_path / "s.py").write_text(SCRIPT_TEXT)
    (tmp_path / "n.py").write_text(NN_FILE)
    assert models.resolve_model("s.py", str(tmp_path)).kind == models.KIND_TVMSCRIPT
    assert models.resolve_model(str(tmp_path / "n.py")).kind == models.KIND_NN_MODULE


def test_model_key_follows_file_content(tmp_path):
    path = tmp_path / "s.py"
    path.write_text(SCRIPT_TEXT)
    first = models.model_key(str(path))
    assert models.model_key(str(path)) == first
    path.write_text(SCRIPT_TEXT.replace("R.add", "R.subtract"))
    assert models.model_key(str(path)) != first
    assert models.model_key("builtin:mlp") != models.model_key("builtin:transformer")


def test_load_builtins():
    from pipeline_model.importers.load_tvm import load_model

    mlp = load_model("builtin:mlp")
    text = mlp.mod.script()
    assert 'x: R.Tensor((1, 784), dtype="float32")' in text and "R.matmul" in text and "R.nn.relu" in text
    assert "fc2_bias" not in text and mlp.params is None and mlp.key == models.model_key("builtin:mlp")
    block = load_model("builtin:transformer").mod.script()
    for op in ("R.nn.layer_norm", "R.nn.softmax", "R.matmul", "R.nn.gelu", "R.permute_dims"):
        assert op in block, op


def test_load_tvmscript_and_nn_files(tmp_path):
    import tvm_ffi

    from pipeline_model.importers.load_tvm import load_model

    (tmp_path / "text.py").write_text(SCRIPT_TEXT)
    (tmp_path / "cls.py").write_text(SCRIPT_CLASS)
    (tmp_path / "nnmod.py").write_text(NN_FILE)
    text_mod = load_model("text.py", str(tmp_path)).mod
    assert "R.add" in text_mod.script()
    assert "R.multiply" in load_model("cls.py", str(tmp_path)).mod.script()
    assert "R.nn.softmax" in load_model("nnmod.py", str(tmp_path)).mod.script()
    # Emitted loader code gives the same module.
    for name in ("text.py", "cls.py", "nnmod.py"):
        ns: dict = {}
        exec(models.emit_model_loader(name, str(tmp_path)), ns)  # noqa: S102 - our own generated code
        assert tvm_ffi.structural_equal(ns["mod"], load_model(name, str(tmp_path)).mod), name
    ns = {}
    exec(models.emit_model_loader("builtin:transformer"), ns)  # noqa: S102
    assert "resources/models/transformer.py" in models.emit_model_loader("builtin:transformer")
    assert tvm_ffi.structural_equal(ns["mod"], load_model("builtin:transformer").mod)


def test_load_errors_name_file_and_line(tmp_path):
    from pipeline_model.importers.load_tvm import load_model

    (tmp_path / "undef.py").write_text(SCRIPT_TEXT.replace("R.add(x, x)", "R.add(x, zz)"))
    with pytest.raises(ModelLoadError, match=r"undef\.py:9: .*Undefined variable: zz"):
        load_model("undef.py", str(tmp_path))
    (tmp_path / "syntax.py").write_text(SCRIPT_TEXT.replace("R.add(x, x)", "R.add(x, x"))
    with pytest.raises(ModelLoadError, match=r"syntax\.py:9: TVMScript syntax error"):
        load_model("syntax.py", str(tmp_path))
    (tmp_path / "cls_bad.py").write_text(SCRIPT_CLASS.replace("R.multiply(x, x)", "R.multiply(x, qq)"))
    with pytest.raises(ModelLoadError, match=r"cls_bad\.py:9: .*qq"):
        load_model("cls_bad.py", str(tmp_path))
    (tmp_path / "nospec.py").write_text(NN_FILE.replace("spec = ", "other = "))
    with pytest.raises(ModelLoadError, match=r"nospec\.py: the file must define `spec`"):
        load_model("nospec.py", str(tmp_path))
    (tmp_path / "raises.py").write_text(NN_FILE + "\nraise ValueError('broken model file')\n")
    with pytest.raises(ModelLoadError, match=r"raises\.py \(line 16\).*broken model file"):
        load_model("raises.py", str(tmp_path))
