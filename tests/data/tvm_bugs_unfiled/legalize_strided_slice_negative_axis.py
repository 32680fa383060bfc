"""TVM 0.27: relax.LegalizeOps fails on R.strided_slice with a negative axis and a symbolic end
("Check failed: axis < src_tensor_dim (-1 vs. 2)" in topi::dynamic_strided_slice_with_axes)."""
import tvm
from tvm import relax
from tvm.script import ir as I, relax as R, tirx as T


@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, "n"), dtype="int64")) -> R.Tensor(dtype="int64", ndim=2):
        n = T.int64()
        with R.dataflow():
            y = R.strided_slice(x, axes=[-1], begin=[0], end=[n - 1])
            R.output(y)
        return y


relax.transform.LegalizeOps()(Module)
print("no failure: fixed")
