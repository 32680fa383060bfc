"""A deliberately wrong pass, for trying the debugging features: the first ``R.add`` of the module becomes
``R.subtract``. Every step after it still "changes" the module and every diff looks plausible, but the
final check fails. Put it in the middle of a pipeline, then Run > Find Breaking Step (or ``main.py bisect``)
names it, and Run > Where Values Diverge (``main.py diverge``) marks the rewritten node (docs/DEBUGGING.md).
"""

import tvm
from tvm import relax


@relax.expr_functor.mutator
class _Swap(relax.PyExprMutator):
    def __init__(self, mod):
        super().__init__(mod)
        self.done = False

    def visit_call_(self, call):
        call = super().visit_call_(call)
        if not self.done and isinstance(call.op, tvm.ir.Op) and call.op.name == "relax.add":
            self.done = True
            return relax.op.subtract(call.args[0], call.args[1])
        return call


def transform(mod):
    out = tvm.IRModule(dict(mod.functions_items()), attrs=mod.attrs)
    for gv, func in mod.functions_items():
        if isinstance(func, relax.Function):
            swap = _Swap(mod)
            out[gv] = swap.visit_expr(func)
            if swap.done:
                break
    return out
