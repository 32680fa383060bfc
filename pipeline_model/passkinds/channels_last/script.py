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
    generic schedule, between transposes, made a small mixed network 1.2x slower channels last."""
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
        return relax.transform.ConvertLayout({"relax.nn.conv2d": ["NHWC", "OHWI"],
                                              "relax.nn.conv2d_transpose": ["NCHW", "IOHW"]})(mod)

    return tvm.transform.module_pass(transform, opt_level=0, name="ChannelsLast")
