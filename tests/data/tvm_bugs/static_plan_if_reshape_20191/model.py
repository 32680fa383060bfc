# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 8), dtype="float32")) -> R.Tensor((4, 8), dtype="float32"):
        gv: R.Tensor((), dtype="float32") = R.sum(x, axis=None, keepdims=False)
        cond: R.Tensor((), dtype="bool") = R.greater(gv, R.const(1000000000.0, "float32"))
        if cond:
            flat: R.Tensor((32,), dtype="float32") = R.reshape(x, R.shape([32]))
            y1: R.Tensor((4, 8), dtype="float32") = R.reshape(flat, R.shape([4, 8]))
            y: R.Tensor((4, 8), dtype="float32") = y1
        else:
            flat2: R.Tensor((32,), dtype="float32") = R.reshape(x, R.shape([32]))
            y2: R.Tensor((4, 8), dtype="float32") = R.reshape(flat2, R.shape([4, 8]))
            y: R.Tensor((4, 8), dtype="float32") = y2
        return y
