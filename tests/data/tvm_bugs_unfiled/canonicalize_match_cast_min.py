"""TVM 0.27: relax.transform.CanonicalizeBindings crashes the process (SIGSEGV) on an R.match_cast that states a
simpler shape, (1, n), for a value of shape (1, T.min(n, 64)) (n <= 64 declared by tir_var_upper_bound): the way
one would state what the bounds of a torch.export Dim prove. The app marks such slices assume_inbound instead."""
import numpy as np
from tvm import relax, tirx

bb = relax.BlockBuilder()
n = tirx.Var("n", "int64")
x = relax.Var("x", relax.TensorType((1, n), "int64"))
with bb.function("main", [x], attrs={"tir_var_upper_bound": {"n": 64}}):
    with bb.dataflow():
        table = relax.const(np.arange(64).reshape(1, 64).astype("int64"), "int64")
        rows = bb.emit(relax.op.strided_slice(table, [1], [0], [n]))
        cast = bb.match_cast(rows, relax.TensorType((1, n), "int64"))
        out = bb.emit_output(relax.op.add(x, cast))
    bb.emit_func_output(out)
relax.transform.CanonicalizeBindings()(bb.get())
print("no failure: fixed")
