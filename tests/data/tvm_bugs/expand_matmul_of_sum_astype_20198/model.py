# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 64), dtype="float16"), a: R.Tensor((64, 3), dtype="float16"), b: R.Tensor((64, 3), dtype="float16")) -> R.Tensor((2, 3), dtype="float32"):
        with R.dataflow():
            s: R.Tensor((64, 3), dtype="float16") = R.add(a, b)
            y: R.Tensor((2, 3), dtype="float32") = R.matmul(x, s, out_dtype="float32")
            z: R.Tensor((2, 3), dtype="float32") = R.astype(y, dtype="float32")
            R.output(z)
        return z
