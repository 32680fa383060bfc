# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 64), dtype="float16"), w: R.Tensor((64, 8), dtype="float16"), idx: R.Tensor((3,), dtype="int64")) -> R.Tensor((2, 3), dtype="float32"):
        with R.dataflow():
            t: R.Tensor((64, 3), dtype="float16") = R.take(w, idx, axis=1, mode="fast")
            y: R.Tensor((2, 3), dtype="float32") = R.matmul(x, t, out_dtype="float32")
            R.output(y)
        return y
