"""Code of the ``sink_reshape`` kind that exported scripts contain, called by the engine too.

:func:`sink_reshapes` is the pass of a ``app.SinkReshape`` step (TVM imported inside the function).
"""


def sink_reshapes():  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """A module pass moving ``R.reshape`` below elementwise ops so a matmul's epilogue (bias, GELU, residual
    add) follows the matmul directly and ``FuseOps`` fuses it into the matmul.

    ``op(reshape(x, s))`` -> ``reshape(op(x), s)`` for unary elementwise ops; for binary ones
    ``op(reshape(x, s), c)`` -> ``reshape(op(x, c), s)`` with a scalar ``c`` and ``op(reshape(x, s), y)`` ->
    ``reshape(op(x, reshape(y, shape(x))), s)`` where ``y`` and the result already have shape ``s`` (no
    broadcasting on either side). Known
    shapes only (symbolic dims such as a dynamic ``seq`` included), and only reshapes that add dimensions (``x`` has fewer than ``s``), so rewriting ends. Then ``RemoveRedundantReshape`` folds the reshape pairs this leaves (``reshape(reshape(x))``,
    reshapes to the same shape) and dead bindings go."""
    import tvm
    from tvm import relax
    from tvm.relax.dpl import is_op, rewrite_call, wildcard

    unary = ("relax.tanh", "relax.exp", "relax.sigmoid", "relax.sqrt", "relax.rsqrt", "relax.erf",
             "relax.negative", "relax.abs", "relax.log", "relax.nn.relu", "relax.nn.gelu", "relax.nn.gelu_tanh",
             "relax.nn.silu", "relax.square")
    binary = ("relax.add", "relax.subtract", "relax.multiply", "relax.divide", "relax.power", "relax.maximum",
              "relax.minimum")

    def static_shape(expr):  # type: ignore[no-untyped-def]
        """The shape of ``expr`` (ints, symbolic dims as they are), None when unknown."""
        shape = getattr(getattr(expr.ty, "shape", None), "values", None)
        if shape is None:
            return None
        return [int(d) if isinstance(d, tvm.tirx.IntImm) else d for d in shape]

    def same(a, b):  # type: ignore[no-untyped-def]
        """Two shapes of :func:`static_shape` are the same (symbolic dims by name)."""
        return a is not None and b is not None and [str(d) for d in a] == [str(d) for d in b]

    src, shp, other = wildcard(), wildcard(), wildcard()
    reshaped = is_op("relax.reshape")(src, shp)
    pattern = None
    for name in unary:
        pattern = is_op(name)(reshaped) if pattern is None else pattern | is_op(name)(reshaped)
    for name in binary:
        pattern = pattern | is_op(name)(reshaped, other) | is_op(name)(other, reshaped)

    def rewrite(call, matches):  # type: ignore[no-untyped-def]
        x, target = matches[src], static_shape(call)
        if static_shape(x) is None or target is None or str(x.ty.dtype) != str(call.ty.dtype):
            return call
        if len(static_shape(x)) >= len(target):  # only reshapes that add dimensions (a matmul's 2-D output
            return call  # viewed as [batch, seq, n]) sink: one direction, so rewriting ends
        if len(call.args) == 1:
            rewrote.append(call)
            return relax.op.reshape(relax.Call(call.op, [x], call.attrs, call.ty_args), target)
        # The operands are variables; the pattern saw through their bindings, so find which one is bound to
        # the matched reshape (``bound``: this round's bindings; a variable made in this round is not there yet,
        # and the call is left for the next round).
        is_reshape = [a.same_as(matches[reshaped]) or bound.get(a, a).same_as(matches[reshaped]) for a in call.args]
        if not any(is_reshape):
            return call
        first = is_reshape[0]
        if not same(static_shape(call.args[0] if first else call.args[1]), target):  # the reshaped side broadcasts
            return call  # (a bias [C] viewed as [1, C, 1, 1] added to a feature map): leave it
        y = call.args[1] if first else call.args[0]
        y_shape = static_shape(y)
        if y_shape == []:
            y_new = y
        elif same(y_shape, target) and str(y.ty.dtype) == str(x.ty.dtype):
            y_new = relax.op.reshape(y, static_shape(x))
        else:
            return call
        args = [x, y_new] if first else [y_new, x]
        rewrote.append(call)
        return relax.op.reshape(relax.Call(call.op, args, call.attrs, call.ty_args), target)

    bound = {}  # variable -> the value it is bound to, in the function being rewritten
    rewrote = []  # the calls this round rewrote (``rewrite_call`` may rebuild an unchanged function)

    def sink(func):  # type: ignore[no-untyped-def]
        for _round in range(64):  # each round sinks what the bindings known at its start allow
            bound.clear()
            bound.update(dict(relax.analysis.get_var2val(func).items()))
            rewrote.clear()
            new = rewrite_call(pattern, rewrite, func)
            if not rewrote:  # nothing sank: the function as it came (not the rebuilt copy)
                break
            func = new
        return func

    def transform(mod, _ctx):  # type: ignore[no-untyped-def]
        updates = {}
        for gvar, func in mod.functions_items():
            if isinstance(func, relax.Function):
                new = sink(func)
                if not new.same_as(func):
                    updates[gvar] = new
        if not updates:
            return mod
        mod = mod.clone() if hasattr(mod, "clone") else mod
        for gvar, func in updates.items():
            mod[gvar] = func
        return tvm.transform.Sequential([relax.transform.RemoveRedundantReshape(),
                                         relax.transform.DeadCodeElimination()])(mod)

    return tvm.transform.module_pass(transform, opt_level=0, name="SinkReshape")
