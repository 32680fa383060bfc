"""The cuBLAS dispatch pass of TVM's "Customize Optimization" tutorial, as a custom step.

It offloads matmul-like patterns to cuBLAS: partition the module with the ``cublas`` pattern table
(``FuseOpsByPattern(..., annotate_codegen=True)``) and generate the external code (``RunCodegen``).
It first checks that this TVM build has the cuBLAS codegen (``relax.ext.cublas``) and raises
"CUBLAS is not enabled" when it does not — which is the case for the pip wheel.
"""

import tvm
from tvm import relax
from tvm.ir.module import IRModule


@tvm.transform.module_pass(opt_level=0, name="CublasDispatch")
class CublasDispatch:
    """Offload matmul patterns to cuBLAS (needs a TVM built with USE_CUBLAS=ON)."""

    def transform_module(self, mod: IRModule, _ctx: tvm.transform.PassContext) -> IRModule:
        if not tvm.get_global_func("relax.ext.cublas", True):
            raise Exception("CUBLAS is not enabled.")
        from tvm.relax.backend.cuda.cublas import partition_for_cublas

        mod = partition_for_cublas(mod)
        mod = relax.transform.RunCodegen()(mod)
        return mod
