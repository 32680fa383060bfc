"""Code of the ``bind_weights`` kind that exported scripts contain, called by the engine too.

:func:`bind_model_weights` is the pass of a ``weights.BindAsConstants`` step: the engine calls it with the
loaded model's weights, an exported script holds its source (copied verbatim) and calls it
with its ``params``. TVM and numpy are imported inside the function.
"""


def bind_model_weights(params):  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """A module pass binding ``params`` (name -> numpy array) as constants into every Relax function that
    has parameters with those names (``relax.transform.BindParams``); bound parameters leave the signature."""
    import numpy as np
    import tvm
    from tvm import relax

    if not params:
        raise ValueError("weights.BindAsConstants: the model carries no weights of its own; nothing to bind")

    def transform(mod, _ctx):  # type: ignore[no-untyped-def]
        bound_any = False
        for gvar, func in list(mod.functions.items()):
            if not isinstance(func, relax.Function):
                continue
            names = {var.name for var in func.params}
            chosen = {}
            for name, value in params.items():
                if name in names:
                    arr = np.asarray(value)  # a 0-d weight keeps its shape () (np.ascontiguousarray would not)
                    arr = arr if arr.flags.c_contiguous else np.array(arr, order="C", copy=True)
                    chosen[name] = tvm.runtime.tensor(arr)
            if chosen:
                mod = relax.transform.BindParams(gvar.name_hint, chosen)(mod)
                bound_any = True
        if not bound_any:
            raise ValueError("weights.BindAsConstants: no parameter of the module's Relax functions is named like "
                             "one of the model's weights (was it bound already?)")
        return mod

    return tvm.transform.module_pass(transform, opt_level=0, name="BindModelWeights")
