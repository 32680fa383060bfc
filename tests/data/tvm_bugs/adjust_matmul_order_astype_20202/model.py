# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor((10, 2), dtype="float16"), b: R.Tensor((2, 20), dtype="float16"), c: R.Tensor((20, 2), dtype="float16")) -> R.Tensor((10, 2), dtype="float32"):
        with R.dataflow():
            ab: R.Tensor((10, 20), dtype="float32") = R.matmul(a, b, out_dtype="float32")
            cf: R.Tensor((20, 2), dtype="float32") = R.astype(c, dtype="float32")
            y: R.Tensor((10, 2), dtype="float32") = R.matmul(ab, cf, out_dtype="float32")
            R.output(y)
        return y
