# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32"), w1: R.Tensor((3, 4), dtype="float32"), w2: R.Tensor((3, 5), dtype="float32"), b1: R.Tensor((1, 4), dtype="float32"), b2: R.Tensor((2, 5), dtype="float32")) -> R.Tuple(R.Tensor((2, 4), dtype="float32"), R.Tensor((2, 5), dtype="float32")):
        with R.dataflow():
            m1: R.Tensor((2, 4), dtype="float32") = R.matmul(x, w1, out_dtype=None)
            y1: R.Tensor((2, 4), dtype="float32") = R.add(m1, b1)
            m2: R.Tensor((2, 5), dtype="float32") = R.matmul(x, w2, out_dtype=None)
            y2: R.Tensor((2, 5), dtype="float32") = R.add(m2, b2)
            out: R.Tuple(R.Tensor((2, 4), dtype="float32"), R.Tensor((2, 5), dtype="float32")) = y1, y2
            R.output(out)
        return out
