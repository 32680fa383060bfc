"""Code of the ``expand_sigmoid`` kind that exported scripts contain, called by the engine too.

:func:`expand_sigmoid` is the pass of an ``app.ExpandSigmoid`` step (TVM imported inside the function).
"""


def expand_sigmoid():  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """A module pass writing ``sigmoid(x)`` as ``1 / (1 + exp(-x))``, ``silu(x)`` as ``x / (1 + exp(-x))``,
    ``gelu(x)`` as ``x * (0.5 + erf(x / sqrt 2) * 0.5)`` (TVM's own legalization of it) and ``gelu_tanh(x)`` as
    ``x * (0.5 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)) * 0.5)`` (float tensors), so a ``FastMathTransform``
    after it turns the ``exp``, ``erf`` and ``tanh`` into TVM's vectorizable polynomials (``T.sigmoid`` and the
    legalized GELUs lower to one libm call per element, which no vectorized schedule speeds up)."""
    import tvm
    from tvm import relax
    from tvm.relax.dpl import is_op, rewrite_call, wildcard

    x = wildcard()
    pattern = (is_op("relax.sigmoid")(x) | is_op("relax.nn.silu")(x) | is_op("relax.nn.gelu")(x)
               | is_op("relax.nn.gelu_tanh")(x))

    def rewrite(call, matches):  # type: ignore[no-untyped-def]
        arg = matches[x]
        dtype = str(getattr(call.ty, "dtype", ""))
        gelu = call.op.name in ("relax.nn.gelu", "relax.nn.gelu_tanh")
        if not dtype.startswith("float") or (gelu and dtype != "float32"):  # (a float16 GELU's erf is float32's)
            return call
        rewrote.append(call)
        const = lambda v: relax.const(v, dtype)  # noqa: E731
        if gelu:
            if call.op.name == "relax.nn.gelu":
                inner = relax.op.erf(relax.op.multiply(arg, const(0.7071067811865476)))
            else:  # (x + 0.044715 x^3) written as x * (1 + 0.044715 x * x): no power
                cubic = relax.op.add(const(1.0), relax.op.multiply(const(0.044715), relax.op.multiply(arg, arg)))
                inner = relax.op.tanh(relax.op.multiply(const(0.7978845608028654), relax.op.multiply(arg, cubic)))
            half = relax.op.add(const(0.5), relax.op.multiply(inner, const(0.5)))
            return relax.op.multiply(arg, half)
        one = const(1.0)
        denominator = relax.op.add(one, relax.op.exp(relax.op.negative(arg)))
        numerator = one if call.op.name == "relax.sigmoid" else arg
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
