# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32"), y: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            inner: R.Tuple(R.Tensor((4,), dtype="float32"), R.Tensor((4,), dtype="float32")) = x, y
            outer: R.Tuple(R.Tuple(R.Tensor((4,), dtype="float32"), R.Tensor((4,), dtype="float32")), R.Tensor((4,), dtype="float32")) = inner, x
            a: R.Tuple(R.Tensor((4,), dtype="float32"), R.Tensor((4,), dtype="float32")) = outer[0]
            b: R.Tensor((4,), dtype="float32") = a[1]
            R.output(b)
        return b
