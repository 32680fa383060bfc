# from tvm.script import relax as R  -- a Relax module built with the BlockBuilder (R.tensor_to_shape does not
# print back to parseable TVMScript on 0.27, so this file is Python; loading it runs it: --trust).
# apache/tvm#20192: reshape(x, tensor_to_shape(const [3, 4])) + itself. The default pipeline legalizes before the
# shape is known and R.add reaches VM codegen ("CodeGenVM cannot emit this Relax operator directly").
import numpy as np
from tvm import relax

bb = relax.BlockBuilder()
x = relax.Var("x", relax.TensorType((2, 6), "float32"))
with bb.function("main", [x]):
    with bb.dataflow():
        shape = bb.emit(relax.op.tensor_to_shape(relax.const(np.array([3, 4], "int64"))))
        y = bb.emit(relax.op.reshape(x, shape))
        z = bb.emit_output(relax.op.add(y, y))
    bb.emit_func_output(z)
mod = bb.finalize()
