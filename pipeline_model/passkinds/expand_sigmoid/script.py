"""Code of the ``expand_sigmoid`` kind that exported scripts contain, called by the engine too.

:func:`expand_sigmoid` is the pass of an ``app.ExpandSigmoid`` step (TVM imported inside the function).
"""


def expand_sigmoid():  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """A module pass writing ``sigmoid(x)`` as ``1 / (1 + exp(-x))`` and ``silu(x)`` as ``x / (1 + exp(-x))``
    (float tensors), so a ``FastMathTransform`` after it turns the ``exp`` into TVM's vectorizable ``fast_exp``
    (``T.sigmoid`` lowers to one libm ``expf`` call per element, which no vectorized schedule speeds up)."""
    import tvm
    from tvm import relax
    from tvm.relax.dpl import is_op, rewrite_call, wildcard

    x = wildcard()
    pattern = is_op("relax.sigmoid")(x) | is_op("relax.nn.silu")(x)

    def rewrite(call, matches):  # type: ignore[no-untyped-def]
        arg = matches[x]
        dtype = str(getattr(call.ty, "dtype", ""))
        if not dtype.startswith("float"):
            return call
        one = relax.const(1.0, dtype)
        denominator = relax.op.add(one, relax.op.exp(relax.op.negative(arg)))
        numerator = one if call.op.name == "relax.sigmoid" else arg
        rewrote.append(call)
        return relax.op.divide(numerator, denominator)

    rewrote = []  # the calls rewritten in this function (``rewrite_call`` may rebuild an unchanged one)

    def transform(mod, _ctx):  # type: ignore[no-untyped-def]
        updates = {}
        for gvar, func in mod.functions_items():
            if isinstance(func, relax.Function):
                rewrote.clear()
                new = rewrite_call(pattern, rewrite, func)
                if rewrote:
                    updates[gvar] = new
        if not updates:
            return mod
        mod = mod.clone() if hasattr(mod, "clone") else mod
        for gvar, func in updates.items():
            mod[gvar] = func
        return mod

    return tvm.transform.module_pass(transform, opt_level=0, name="ExpandSigmoid")
