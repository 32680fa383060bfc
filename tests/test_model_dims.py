"""Pinned dimensions (issue 34): ``--shape NAME=DIM``, the ``|dims:`` spec suffix, ``model_dims`` in pipeline
files (format version 3) and the engine's pinning of an ONNX model with a symbolic axis."""

from __future__ import annotations

import json
import os

import pytest

from pipeline_model.document import PipelineDocument
from pipeline_model.fileformat import PipelineFileError, dumps_pipeline, load_pipeline, loads_pipeline
from pipeline_model.importers.dims import DimsError, join_spec, parse_dims, split_spec

DATA = os.path.join(os.path.dirname(__file__), "data", "pipelines")


def _dynamic_onnx(path: str) -> None:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", 3])
    w = numpy_helper.from_array(np.ones((4, 3), np.float32), "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y], [w]), opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def test_parse_and_spec_suffix():
    assert parse_dims(["seq=8", "batch=1", "seq=16"]) == {"seq": 16, "batch": 1}
    assert parse_dims("seq=8, batch=2") == {"seq": 8, "batch": 2}
    for bad in ("seq", "seq=0", "seq=-1", "seq=x", "=3", "1a=2"):
        with pytest.raises(DimsError) as err:
            parse_dims([bad])
        assert "\n" not in str(err.value)
    spec = join_spec("/m/gpt2.onnx", {"seq": 8})
    assert spec == "/m/gpt2.onnx|dims:seq=8" and split_spec(spec) == ("/m/gpt2.onnx", {"seq": 8})
    assert join_spec(spec, {}) == "/m/gpt2.onnx" and split_spec("builtin:mlp") == ("builtin:mlp", {})


def test_existing_file_named_like_a_suffix_is_not_split(tmp_path):
    odd = tmp_path / "m.onnx|dims:seq=8"
    odd.write_bytes(b"")
    assert split_spec(str(odd)) == (str(odd), {})


def test_file_format_v3_round_trip_and_v2_migration(tmp_path):
    doc = PipelineDocument(model="model.onnx|dims:seq=8,batch=1")
    data = json.loads(dumps_pipeline(doc))
    assert data["version"] == 3 and data["model"] == "model.onnx" and data["model_dims"] == {"seq": 8, "batch": 1}
    assert loads_pipeline(json.dumps(data)).model == "model.onnx|dims:seq=8,batch=1"
    assert "model_dims" not in json.loads(dumps_pipeline(PipelineDocument(model="builtin:mlp")))
    old = load_pipeline(os.path.join(DATA, "v2_pass_context.json"))  # a version-2 file kept as test data
    assert "|dims:" not in old.model and json.loads(dumps_pipeline(old))["version"] == 3
    data["version"] = 2
    with pytest.raises(PipelineFileError, match="model_dims needs file format version 3"):
        loads_pipeline(json.dumps(data))
    data["version"] = 3
    data["model_dims"] = {"seq": 0}
    with pytest.raises(PipelineFileError, match="model_dims"):
        loads_pipeline(json.dumps(data))


def test_cli_shape_option_pins_on_top_of_the_files_dims():
    import argparse

    from pipeline_model.cli import shape_arg

    parser = argparse.ArgumentParser()
    shape_arg.add_argument(parser)
    args = parser.parse_args(["--shape", "seq=8", "--shape", "batch=2"])
    assert shape_arg.apply("m.onnx|dims:seq=4", args.shape) == "m.onnx|dims:seq=8,batch=2"
    with pytest.raises(DimsError, match="expected NAME=DIM"):
        shape_arg.apply("m.onnx", ["seq"])


def test_run_command_refuses_a_bad_shape_in_one_line(tmp_path, capsys):
    import main

    path = tmp_path / "dyn.onnx"
    _dynamic_onnx(str(path))
    code = main.cli_main(["run", "builtin:cpu_build", "--model", str(path), "--shape", "seq"])
    err = capsys.readouterr().err.strip()
    assert code != 0 and err.count("\n") == 0 and "expected NAME=DIM" in err, err


def test_onnx_pinned_loads_static_and_unknown_name_lists_the_models(tmp_path):
    from pipeline_model import models
    from pipeline_model.importers.load_tvm import load_model

    path = str(tmp_path / "dyn.onnx")
    _dynamic_onnx(path)
    unpinned = load_model(path)
    pinned = load_model(path + "|dims:seq=8,batch=2")
    assert 'R.Tensor((2, 8, 4), dtype="float32")' in pinned.mod["main"].script()
    assert "(batch, seq, 4)" in unpinned.mod["main"].script()
    assert pinned.key != unpinned.key != load_model(path + "|dims:seq=4,batch=2").key
    with pytest.raises(DimsError) as err:
        load_model(path + "|dims:sq=8")
    assert str(err.value).count("\n") == 0 and "symbolic dimensions: batch, seq" in str(err.value)
    ns: dict = {}
    exec(compile(models.emit_model_loader(path + "|dims:seq=8,batch=2"), "loader", "exec"), ns)
    assert 'R.Tensor((2, 8, 4), dtype="float32")' in ns["mod"]["main"].script()  # the exported script pins alike


def test_bind_symbolic_vars_for_relax_models():
    from pipeline_model.importers.load_tvm import load_model

    with pytest.raises(DimsError, match="none .all its dimensions are static"):
        load_model("builtin:mlp|dims:seq=8")


def _position_ids_onnx(path: str) -> None:
    """x[1, seq, 4] + Range(0, Shape(x)[1]) as positions: the shape arithmetic dynamo exporters write."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "seq", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "seq", 4])
    inits = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in
             (("one", 1), ("zero", 0), ("axes", [0, 2]), ("newshape", [1, -1, 1]))]
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "one"], ["n"], axis=0),
        helper.make_node("Range", ["zero", "n", "one"], ["r"]),
        helper.make_node("Cast", ["r"], ["rf"], to=TensorProto.FLOAT),
        helper.make_node("Reshape", ["rf", "newshape"], ["pos"]),
        helper.make_node("Add", ["x", "pos"], ["h"]),
        helper.make_node("Reshape", ["h", "newshape"], ["h2"]),
        helper.make_node("Reshape", ["h2", "s"], ["y"]),
    ]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y], inits), opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def test_pinned_onnx_shape_arithmetic_is_folded(tmp_path):
    """Issue 34: with seq pinned, Shape -> Gather -> Range chains become constants (TVM's from_onnx would make a
    fresh range_len variable and lose the shapes after it); the exported loader folds alike."""
    import onnx

    from pipeline_model import models
    from pipeline_model.importers.dims import pin_onnx_inputs
    from pipeline_model.importers.load_tvm import load_model
    from pipeline_model.importers.onnx_fold import fold_shape_subgraphs

    path = str(tmp_path / "pos.onnx")
    _position_ids_onnx(path)
    model = onnx.load(path)
    pin_onnx_inputs(model, {"seq": 5})
    assert fold_shape_subgraphs(model) >= 4
    assert {n.op_type for n in model.graph.node} >= {"Constant", "Add"} and "Range" not in {n.op_type for n in model.graph.node}
    text = load_model(path + "|dims:seq=5").mod["main"].script()
    assert 'def main(x: R.Tensor((1, 5, 4), dtype="float32")) -> R.Tensor((1, 5, 4), dtype="float32")' in text, text
    assert "range_len" not in text
    ns: dict = {}
    exec(compile(models.emit_model_loader(path + "|dims:seq=5"), "loader", "exec"), ns)
    assert "range_len" not in ns["mod"]["main"].script()
