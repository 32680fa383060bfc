# from tvm.script import relax as R  -- a Relax module built with the BlockBuilder (R.tensor_to_shape does not
# print back to parseable TVMScript on 0.27, so this file is Python; loading it runs it: --trust).
# apache/tvm#20193: reshape(x, tensor_to_shape(shape_to_tensor(shape_of(x)))) + itself: the reshape target is a
# runtime Shape. On 0.27 the default pipeline leaves R.add unlegalized and VM codegen fails.
from tvm import relax

bb = relax.BlockBuilder()
x = relax.Var("x", relax.TensorType((2, 6), "float32"))
with bb.function("main", [x]):
    with bb.dataflow():
        shape = bb.emit(relax.op.shape_of(x))
        as_tensor = bb.emit(relax.op.shape_to_tensor(shape))
        runtime_shape = bb.emit(relax.op.tensor_to_shape(as_tensor))
        y = bb.emit(relax.op.reshape(x, runtime_shape))
        z = bb.emit_output(relax.op.add(y, y))
    bb.emit_func_output(z)
mod = bb.finalize()
