"""TVM 0.27: relax.frontend.onnx.from_onnx converts Range(0, Shape(x)[1], 1) over a symbolic x[1] ("seq") into a
fresh symbolic length range_len_0, so x + positions has no known shape and the Reshape after it fails ("Reshape
expects the input tensor to have known shape ... the given input has no shape"). What dynamo exporters write for
position ids; the app's converter emits R.arange(0, seq, 1) instead (pipeline_model/scriptlib/dynamic_import.py)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from tvm.relax.frontend.onnx import from_onnx

x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "seq", 4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "seq", 4])
inits = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in
         (("one", 1), ("zero", 0), ("newshape", [1, -1, 1]))]
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
from_onnx(model)
print("no failure: fixed")
