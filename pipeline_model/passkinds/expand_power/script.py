"""Code of the ``expand_power`` kind that exported scripts contain, called by the engine too.

:func:`expand_power` is the pass of an ``app.ExpandPower`` step (TVM imported inside the function).
"""


def expand_power():  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """A module pass writing ``power(x, c)`` of a float tensor ``x`` and a scalar constant ``c`` in 2, 3 or 4 as
    products of ``x`` (``T.pow`` compiles into one libm ``powf`` call per element, which does not vectorize), and
    ``x / c`` for a float constant ``c`` as ``x * (1 / c)``: without fast-math flags LLVM keeps the division, a
    vector division takes about 10 cycles where a multiplication takes one (MobileNetV3's Hardswish,
    ``x * clip(x + 3, 0, 6) / 6``, fused into its convolutions: those kernels 0.83-0.88x the time). The product
    may differ from the quotient in the last bit (half a unit in the last place more), as ONNX Runtime's
    Hardswish does."""
    import numpy as np
    import tvm
    from tvm import relax
    from tvm.relax.dpl import is_const, is_op, rewrite_call, wildcard

    x, c = wildcard(), is_const()
    pattern = is_op("relax.power")(x, c) | is_op("relax.divide")(x, c)

    def rewrite(call, matches):  # type: ignore[no-untyped-def]
        base, exponent = matches[x], matches[c]
        dtype = str(getattr(call.ty, "dtype", ""))
        value = np.asarray((exponent.value if hasattr(exponent, "value") else exponent.data).numpy())
        if not dtype.startswith("float"):
            return call
        if call.op.name == "relax.divide":  # x / c -> x * (1 / c), the reciprocal rounded once, to the dtype
            if str(value.dtype) != dtype:
                return call
            with np.errstate(divide="ignore"):  # 1 / 0 = inf: x * inf is x / 0's inf (0 * inf its nan)
                reciprocal = (np.ones((), dtype=value.dtype) / value).astype(value.dtype)
            rewrote.append(call)
            return relax.op.multiply(base, relax.const(reciprocal, dtype))
        if value.size != 1:
            return call
        n = float(value.reshape(()))
        if n not in (2.0, 3.0, 4.0):
            return call
        square = relax.op.multiply(base, base)
        rewrote.append(call)
        if n == 2.0:
            return square
        return relax.op.multiply(square, base) if n == 3.0 else relax.op.multiply(square, square)

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

    return tvm.transform.module_pass(transform, opt_level=0, name="ExpandPower")
