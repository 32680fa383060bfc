# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1,), dtype="float32")) -> R.Tensor((1,), dtype="float32"):
        gv: R.Tensor((), dtype="float32") = R.sum(x, axis=None, keepdims=False)
        cond: R.Tensor((), dtype="bool") = R.greater(gv, R.const(1000000000.0, "float32"))
        if cond:
            gv_1: R.Tensor((1,), dtype="float32") = R.add(x, x)
            gv1: R.Tensor((1,), dtype="float32") = R.add(x, x)
            y_then: R.Tensor((1,), dtype="float32") = R.multiply(gv_1, gv1)
            y: R.Tensor((1,), dtype="float32") = y_then
        else:
            gv3: R.Tensor((1,), dtype="float32") = R.multiply(x, x)
            gv4: R.Tensor((1,), dtype="float32") = R.multiply(x, x)
            y_else: R.Tensor((1,), dtype="float32") = R.add(gv3, gv4)
            y: R.Tensor((1,), dtype="float32") = y_else
        return y
