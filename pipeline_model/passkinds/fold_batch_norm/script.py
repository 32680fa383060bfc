"""Code of the ``fold_batch_norm`` kind that exported scripts contain, called by the engine too.

:func:`fold_batch_norm` is the pass of an ``app.FoldBatchNorm`` step (TVM imported inside the functions); the
``_bn_*`` functions are its parts, which an exported script carries with it
(:func:`pipeline_model.emit.script_sources`).
"""


def fold_batch_norm():  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """A module pass folding inference batch norms (``training=False``, float) into per-channel factors: a
    batch norm of a ``conv2d`` (NCHW data, OIHW kernel, channels on axis 1, the output read only through the
    norm) becomes ``conv2d(x, w * scale) + shift``, any other one ``x * scale + shift``, where
    ``scale = gamma / sqrt(var + eps)`` and ``shift = beta - mean * scale`` are computed on the ``[C]``
    vectors (with ``w * scale``) by one PrimFunc per shape, called once (``LiftTransformParams`` lifts the
    call with the weights, ``FoldConstant`` folds bound ones), instead of a square root and a division per
    element of the feature map. Works on weights that are
    parameters or constants (TVM's ``FoldBatchnormToConv2D`` takes constants only)."""
    import tvm

    return tvm.transform.module_pass(_bn_fold_module, opt_level=0, name="FoldBatchNorm")


def _bn_fold_module(mod, _ctx):  # type: ignore[no-untyped-def]
    """The transform of :func:`fold_batch_norm`: ``mod`` with the batch norms of its Relax functions folded."""
    from tvm import relax
    from tvm.relax.dpl import TupleGetItemPattern, is_op, rewrite_call, wildcard

    norm = is_op("relax.nn.batch_norm")(*[wildcard() for _ in range(5)])  # data, gamma, beta, mean, var
    pattern = TupleGetItemPattern(norm, 0)
    # builder: the module's BlockBuilder (it names the PrimFuncs added); funcs: (dtype, eps, center, scale,
    # shapes, weight shape) -> GlobalVar of the PrimFunc of its factors; convs/reads: see _bn_conv_reads
    state = {"builder": relax.BlockBuilder(mod), "funcs": {}}
    rewrote = []  # the calls rewritten in the function at hand (``rewrite_call`` may rebuild an unchanged one)

    def rewrite(call, matches):  # type: ignore[no-untyped-def]
        new = _bn_rewrite(call, matches[norm], state)
        if new is not call:
            rewrote.append(call)
        return new

    updates = {}
    for gvar, func in mod.functions_items():
        if isinstance(func, relax.Function) and isinstance(func.body, relax.SeqExpr):
            state["convs"], state["reads"] = _bn_conv_reads(func)
            rewrote.clear()
            new = rewrite_call(pattern, rewrite, func)
            if rewrote:
                updates[gvar] = new
    if not updates:
        return mod
    for gvar, func in updates.items():
        state["builder"].update_func(gvar, func)
    return state["builder"].get()


def _bn_conv_reads(func):  # type: ignore[no-untyped-def]
    """``(convs, reads)`` of a Relax function: variable -> the ``conv2d`` call bound to it, and such a variable ->
    how many expressions read it (folded weights change the convolution for every reader: only one, the norm,
    allows folding)."""
    import tvm
    from tvm import relax

    convs, reads = {}, {}

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
    return convs, reads


def _bn_rewrite(call, bn, state):  # type: ignore[no-untyped-def]
    """What ``call`` (the first output of the batch norm call ``bn``) becomes: the folded convolution plus shift,
    ``x * scale + shift``, or ``call`` itself when the norm cannot be folded."""
    import tvm
    from tvm import relax

    attrs = bn.attrs
    dtype = str(getattr(call.ty, "dtype", ""))
    shape = getattr(call.ty, "shape", None)
    if attrs.training or not dtype.startswith("float") or shape is None:
        return call
    # The norm's own arguments (variables), not what the pattern saw through their bindings: a rewrite
    # must not copy the computation bound to a variable.
    x, *stats = bn.args
    if not all(getattr(s.ty, "shape", None) is not None and len(s.ty.shape) == 1
               and isinstance(s.ty.shape[0], tvm.tirx.IntImm) and str(s.ty.dtype) == dtype for s in stats):
        return call  # symbolic or unknown channel counts: left to DecomposeOpsForInference
    rank, axis = len(shape), int(attrs.axis)
    axis = axis + rank if axis < 0 else axis
    channels = int(stats[0].ty.shape[0])
    vector = relax.TensorType([channels], dtype)
    along = lambda v: relax.op.reshape(v, [channels if i == axis else 1 for i in range(rank)])  # noqa: E731
    conv = state["convs"].get(x) if isinstance(x, relax.Var) else None
    if conv is not None and state["reads"].get(x) == 1 and axis == 1 and str(conv.attrs.data_layout) == "NCHW" \
            and str(conv.attrs.kernel_layout) == "OIHW" and str(conv.attrs.out_layout) in ("", "NCHW") \
            and str(getattr(conv.args[1].ty, "dtype", "")) == dtype \
            and all(isinstance(d, tvm.tirx.IntImm) for d in conv.args[1].ty.shape):
        data, weight = conv.args
        weight_shape = [int(d) for d in weight.ty.shape]
        folded = relax.call_tir(_bn_factors(state, attrs, stats, dtype, weight_shape), [weight, *stats],
                                [relax.TensorType(weight_shape, dtype), vector, vector])
        out = relax.Call(conv.op, (data, relax.TupleGetItem(folded, 0)), conv.attrs)
        return relax.op.add(out, along(relax.TupleGetItem(folded, 1)))
    factors = relax.call_tir(_bn_factors(state, attrs, stats, dtype, None), list(stats), [vector, vector])
    return relax.op.add(relax.op.multiply(x, along(relax.TupleGetItem(factors, 0))),
                        along(relax.TupleGetItem(factors, 1)))


def _bn_factors(state, attrs, stats, dtype, weight_shape):  # type: ignore[no-untyped-def]
    """The global variable of a PrimFunc computing ``(w * scale, shift)`` (``weight_shape`` given: the
    weights scaled along their first axis) or ``(scale, shift)`` from ``(w,) gamma, beta, mean, var``;
    one PrimFunc per shape and attributes, shared by every norm that has them (a norm written with
    Relax operators left LegalizeOps a dozen small functions to build per norm)."""
    import tvm
    from tvm import te

    shapes = [[int(d) for d in s.ty.shape] for s in stats]
    key = (str(dtype), float(attrs.epsilon), bool(attrs.center), bool(attrs.scale), str(shapes),
           None if weight_shape is None else str(weight_shape))
    if key in state["funcs"]:
        return state["funcs"][key]
    gamma, beta, mean, var = [te.placeholder(shape, dtype, n)
                              for shape, n in zip(shapes, ("gamma", "beta", "mean", "var"))]
    eps = tvm.tirx.const(float(attrs.epsilon), dtype)
    one = tvm.tirx.const(1.0, dtype)
    scale = te.compute(shapes[0], lambda c: (gamma[c] if attrs.scale else one) / te.sqrt(var[c] + eps),
                       name="scale")
    shift = te.compute(shapes[0], lambda c: (beta[c] - mean[c] * scale[c]) if attrs.center else
                       -(mean[c] * scale[c]), name="shift")
    if weight_shape is None:
        prim = te.create_prim_func([gamma, beta, mean, var, scale, shift])
    else:
        w = te.placeholder(weight_shape, dtype, "w")
        scaled = te.compute(weight_shape, lambda o, *rest: w[(o, *rest)] * scale[o], name="scaled")
        # (scale an output too: an intermediate buffer of a te PrimFunc did not survive the build's passes)
        prim = te.create_prim_func([w, gamma, beta, mean, var, scaled, shift, scale])
    # te names every PrimFunc "main"; marked scheduled so that DLight leaves it be: it runs once, lifted
    # into transform_params (ResNet-18: the transform as fast, the DLight step 37 ms shorter).
    prim = prim.without_attr("global_symbol").with_attr("tirx.is_scheduled", True)
    gvar = state["builder"].add_func(prim, "fold_batch_norm" if weight_shape is not None else "batch_norm_factors")
    state["funcs"][key] = gvar
    return gvar
