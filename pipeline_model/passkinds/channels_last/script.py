"""Code of the ``channels_last`` kind that exported scripts contain, called by the engine too.

:func:`channels_last` is the pass of an ``app.ChannelsLast`` step (TVM imported inside the function).
"""


def channels_last():  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """A module pass putting every float 2-D convolution in NHWC data / OHWI weights and carrying that layout
    through the operations between them: a float ``clip`` (which ``relax.ConvertLayout`` cannot carry: it
    wrapped every Hardswish in two transposes) is first written ``maximum(minimum(x, hi), lo)``, the form TVM
    legalizes it to, then ``relax.ConvertLayout`` converts the convolutions and what follows them (a transposed
    convolution stays NCHW: TVM legalizes it in NCHW only). A module comes back unchanged unless it has float
    convolutions and each is one ``app.CPUConv2d``'s NHWC schedule is made for (float32, static shapes, regular or
    depthwise; a squeeze-excitation's few channels on a 1 x 1 map count too): a grouped convolution left to the
    generic schedule, between transposes, made a small mixed network 1.2x slower channels last. Last, a binary
    elementwise op ``ConvertLayout`` left in NCHW between two transposes of a feature map
    (``permute(G * permute(X, NCHW), NHWC)``: a squeeze-excitation gate ``G`` of shape ``(1, C, 1, 1)`` that a
    ``torch.export`` model computes through a reshape, which the layout cannot pass) is written on the NHWC map
    with ``G`` transposed instead (:func:`nhwc_products`): EfficientNet-B0 ``.pt2`` transposed its feature maps 50
    times a run, the ``.onnx`` none."""
    import numpy as np
    import tvm
    from tvm import relax
    from tvm.relax.dpl import is_op, rewrite_call, wildcard

    x = wildcard()
    pattern = is_op("relax.clip")(x, wildcard(), wildcard())
    def bound(value, dtype):  # type: ignore[no-untyped-def]  # a clip bound as a scalar constant, or None
        if not isinstance(value, (tvm.tirx.IntImm, tvm.tirx.FloatImm)):
            return None  # a symbolic bound
        return relax.const(np.array(value.value, dtype=dtype))

    def rewrite(call, matches):  # type: ignore[no-untyped-def]
        dtype = str(getattr(call.ty, "dtype", ""))
        if not dtype.startswith("float") or len(call.args) != 3:
            return call
        lo, hi = bound(call.args[1], dtype), bound(call.args[2], dtype)
        if lo is None or hi is None:
            return call
        return relax.op.maximum(relax.op.minimum(matches[x], hi), lo)

    def scheduled(call):  # type: ignore[no-untyped-def]  # a float32 conv2d the app's NHWC schedule takes
        try:
            weight = call.args[1].ty.shape
            (out_c, in_c), groups = (int(weight[0]), int(weight[1])), int(call.attrs.groups)
            static = all(isinstance(d, tvm.tirx.IntImm) for d in [*call.args[0].ty.shape, *call.ty.shape])
        except (AttributeError, TypeError, ValueError):  # a symbolic channel count, a shape not known
            return False
        depthwise = in_c == 1 and groups == out_c
        return static and (groups == 1 or depthwise) and call.attrs.data_layout == "NCHW"

    def convs(mod):  # type: ignore[no-untyped-def]  # [schedulable?] of every float conv2d of the module
        found = []

        def visit(expr):  # type: ignore[no-untyped-def]
            if isinstance(expr, relax.Call) and getattr(expr.op, "name", "") == "relax.nn.conv2d" and str(
                    getattr(expr.ty, "dtype", "")).startswith("float"):
                found.append(str(expr.ty.dtype) == "float32" and scheduled(expr))

        for func in mod.functions.values():
            if isinstance(func, relax.Function):
                relax.analysis.post_order_visit(func, visit)
        return found

    def transform(mod, _ctx):  # type: ignore[no-untyped-def]
        found = convs(mod)
        if not found or not all(found):
            return mod
        updates = {gvar: rewrite_call(pattern, rewrite, func) for gvar, func in mod.functions_items()
                   if isinstance(func, relax.Function)}
        mod = mod.clone() if hasattr(mod, "clone") else mod
        for gvar, func in updates.items():
            mod[gvar] = func
        return nhwc_products(relax.transform.ConvertLayout({"relax.nn.conv2d": ["NHWC", "OHWI"],
                                                            "relax.nn.conv2d_transpose": ["NCHW", "IOHW"]})(mod))

    return tvm.transform.module_pass(transform, opt_level=0, name="ChannelsLast")


def nhwc_products(mod):  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """``mod`` (after ``relax.transform.ConvertLayout``) with each ``permute_dims(op(a, b), NHWC)`` whose ``a`` or
    ``b`` is ``permute_dims(X, NCHW)`` (``op``: multiply, add, subtract, divide) written ``op`` on ``X`` itself,
    the other operand (a static shape of rank <= 4, padded to 4 with leading ones) transposed instead: a
    squeeze-excitation gate of ``C`` values is transposed, not the feature map it scales, twice. The product
    ``ConvertLayout`` left in NCHW stays for any other use of it."""
    import tvm
    from tvm import relax
    from tvm.relax.dpl import is_op, rewrite_call, wildcard

    to_nchw, to_nhwc = [0, 3, 1, 2], [0, 2, 3, 1]
    lhs, rhs = wildcard(), wildcard()
    binary = (is_op("relax.multiply")(lhs, rhs) | is_op("relax.add")(lhs, rhs)
              | is_op("relax.subtract")(lhs, rhs) | is_op("relax.divide")(lhs, rhs))
    back = is_op("relax.permute_dims")(binary)

    bound_to = {}  # the function being rewritten: each variable's bound value

    def axes(call):  # type: ignore[no-untyped-def]  # a permute_dims' axes as ints, or None
        given = getattr(call.attrs, "axes", None)
        return None if given is None else [int(a) for a in given]

    def nhwc_binary(call, matches):  # type: ignore[no-untyped-def]
        # permute_dims(op(a, b), NHWC) where a or b is permute_dims(X, NCHW): op on X itself, the other operand
        # (a static shape of rank <= 4, padded to 4 with leading ones) transposed instead
        inner = matches[binary]
        if axes(call) != to_nhwc or len(getattr(inner.ty, "shape", None) or []) != 4:
            return call
        operands = []
        for arg in inner.args:
            value = bound_to.get(arg, arg)
            nhwc = (isinstance(value, relax.Call) and getattr(value.op, "name", "") == "relax.permute_dims"
                    and axes(value) == to_nchw)
            operands.append((value.args[0] if nhwc else arg, nhwc))
        if not any(nhwc for _arg, nhwc in operands):
            return call
        out = []
        for arg, nhwc in operands:
            if not nhwc:
                shape = getattr(arg.ty, "shape", None)
                if shape is None or len(shape) > 4 or not all(isinstance(d, tvm.tirx.IntImm) for d in shape):
                    return call
                if len(shape) < 4:
                    arg = relax.op.reshape(arg, [1] * (4 - len(shape)) + [int(d) for d in shape])
                arg = relax.op.permute_dims(arg, to_nhwc)
            out.append(arg)
        return relax.Call(inner.op, out, inner.attrs)

    for gvar, func in list(mod.functions_items()):
        if isinstance(func, relax.Function):
            bound_to.clear()
            bound_to.update(relax.analysis.get_var2val(func))
            mod[gvar] = rewrite_call(back, nhwc_binary, func)
    return mod
