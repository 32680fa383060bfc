# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            # from tvm.script import relax as R
            
            @R.function
            def bar(y: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
                gv: R.Tensor((4,), dtype="float32") = R.add(y, y)
                return gv

            h: R.Tensor((4,), dtype="float32") = R.multiply(x, x)
            gv: R.Tensor((4,), dtype="float32") = bar(h)
            R.output(gv)
        return gv
