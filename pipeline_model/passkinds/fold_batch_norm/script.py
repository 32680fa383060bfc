"""Code of the ``fold_batch_norm`` kind that exported scripts contain, called by the engine too.

:func:`fold_batch_norm` is the pass of an ``app.FoldBatchNorm`` step (TVM imported inside the function).
"""


def fold_batch_norm():  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """A module pass folding inference batch norms (``training=False``, float) into per-channel factors: a
    batch norm of a ``conv2d`` (NCHW data, OIHW kernel, channels on axis 1, the output read only through the
    norm) becomes ``conv2d(x, w * scale) + shift``, any other one ``x * scale + shift``, where
    ``scale = gamma / sqrt(var + eps)`` and ``shift = beta - mean * scale`` are computed on the ``[C]``
    vectors, once (``LiftTransformParams`` lifts them with the weights, ``FoldConstant`` folds bound ones)
    instead of a square root and a division per element of the feature map. Works on weights that are
    parameters or constants (TVM's ``FoldBatchnormToConv2D`` takes constants only)."""
    import tvm
    from tvm import relax
    from tvm.relax.dpl import TupleGetItemPattern, is_op, rewrite_call, wildcard

    norm = is_op("relax.nn.batch_norm")(*[wildcard() for _ in range(5)])  # data, gamma, beta, mean, var
    pattern = TupleGetItemPattern(norm, 0)

    def factors(attrs, gamma, beta, mean, var, dtype):  # type: ignore[no-untyped-def]
        """``(scale, shift)`` on the channel vectors (``center``/``scale`` off: no beta/gamma)."""
        root = relax.op.sqrt(relax.op.add(var, relax.const(float(attrs.epsilon), dtype)))
        scale = relax.op.divide(gamma if attrs.scale else relax.const(1.0, dtype), root)
        moved = relax.op.multiply(mean, scale)
        return scale, (relax.op.subtract(beta, moved) if attrs.center else relax.op.negative(moved))

    def rewrite(call, matches):  # type: ignore[no-untyped-def]
        bn = matches[norm]
        attrs = bn.attrs
        dtype = str(getattr(call.ty, "dtype", ""))
        shape = getattr(call.ty, "shape", None)
        if attrs.training or not dtype.startswith("float") or shape is None:
            return call
        # The norm's own arguments (variables), not what the pattern saw through their bindings: a rewrite
        # must not copy the computation bound to a variable.
        x, *stats = bn.args
        rank, axis = len(shape), int(attrs.axis)
        axis = axis + rank if axis < 0 else axis
        channels = shape[axis]
        scale, shift = factors(attrs, *stats, dtype)
        along = lambda v: relax.op.reshape(v, [channels if i == axis else 1 for i in range(rank)])  # noqa: E731
        conv = convs.get(x) if isinstance(x, relax.Var) else None
        if conv is not None and reads.get(x) == 1 and axis == 1 and str(conv.attrs.data_layout) == "NCHW" \
                and str(conv.attrs.kernel_layout) == "OIHW" and str(conv.attrs.out_layout) in ("", "NCHW") \
                and str(getattr(conv.args[1].ty, "dtype", "")) == dtype:
            data, weight = conv.args
            folded = relax.op.multiply(weight, relax.op.reshape(scale, [channels, 1, 1, 1]))
            rewrote.append(call)
            return relax.op.add(relax.Call(conv.op, (data, folded), conv.attrs), along(shift))
        rewrote.append(call)
        return relax.op.add(relax.op.multiply(x, along(scale)), along(shift))

    rewrote = []  # the calls rewritten in this function (``rewrite_call`` may rebuild an unchanged one)
    convs = {}  # variable -> the conv2d call bound to it
    reads = {}  # such a variable -> how many expressions read it (folded weights change the convolution for
    # every reader: only one, the norm, allows folding)

    def find_convs(func):  # type: ignore[no-untyped-def]
        convs.clear()
        reads.clear()

        def visit(expr):  # type: ignore[no-untyped-def]
            if isinstance(expr, relax.Var) and expr in convs:
                reads[expr] = reads.get(expr, 0) + 1

        for block in func.body.blocks:
            for binding in block.bindings:
                value = getattr(binding, "value", None)
                if isinstance(value, tvm.ir.Call) and getattr(value.op, "name", "") == "relax.nn.conv2d":
                    convs[binding.var] = value
                if value is not None:
                    relax.analysis.post_order_visit(value, visit)
        relax.analysis.post_order_visit(func.body.body, visit)

    def transform(mod, _ctx):  # type: ignore[no-untyped-def]
        updates = {}
        for gvar, func in mod.functions_items():
            if isinstance(func, relax.Function) and isinstance(func.body, relax.SeqExpr):
                rewrote.clear()
                find_convs(func)
                new = rewrite_call(pattern, rewrite, func)
                if rewrote:
                    updates[gvar] = new
        if not updates:
            return mod
        mod = mod.clone() if hasattr(mod, "clone") else mod
        for gvar, func in updates.items():
            mod[gvar] = func
        return mod

    return tvm.transform.module_pass(transform, opt_level=0, name="FoldBatchNorm")
