# apache/tvm#20191 (open): StaticPlanBlockMemory plans one storage for the reshape chains of both branches of
# an ``if`` but allocates it only in the then-branch; the else-branch (taken here: sum(x) < 1e9) uses it
# unallocated and the VM segfaults (0.27.0). The function is the identity on x.
from tvm.script import ir as I
from tvm.script import relax as R


@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), "float32")) -> R.Tensor((4, 8), "float32"):
        cond: R.Tensor((), "bool") = R.greater(R.sum(x), R.const(1.0e9, "float32"))
        if cond:
            flat = R.reshape(x, R.shape([32]))
            y1 = R.reshape(flat, R.shape([4, 8]))
            y = y1
        else:
            flat2 = R.reshape(x, R.shape([32]))
            y2 = R.reshape(flat2, R.shape([4, 8]))
            y = y2
        return y
