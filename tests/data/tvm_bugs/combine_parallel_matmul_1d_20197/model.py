# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((8, 16), dtype="float32"), a: R.Tensor((16,), dtype="float32"), b: R.Tensor((16,), dtype="float32")) -> R.Tensor((8,), dtype="float32"):
        with R.dataflow():
            y1: R.Tensor((8,), dtype="float32") = R.matmul(x, a, out_dtype=None)
            y2: R.Tensor((8,), dtype="float32") = R.matmul(x, b, out_dtype=None)
            y: R.Tensor((8,), dtype="float32") = R.add(y1, y2)
            z: R.Tensor((8,), dtype="float32") = R.nn.relu(y)
            R.output(z)
        return z
