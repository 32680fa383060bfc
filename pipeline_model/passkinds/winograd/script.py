"""Code of the ``winograd`` kind that exported scripts contain, called by the engine too.

:func:`winograd` is the pass of an ``app.Winograd`` step (TVM imported inside the function).
"""


def winograd():  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """A module pass computing each 3 x 3, stride-1 NHWC float32 convolution with Winograd's F(2 x 2, 3 x 3):
    the weights transformed once (``U = G g G^T``, 4 x 4 per input/output channel pair, a call of its own that
    ``LiftTransformParams`` lifts or constant folding folds), each 4 x 4 input tile transformed (``V = B^T d B``),
    16 matrix products over the input channels (``M = V U``) and each 2 x 2 output tile transformed back
    (``Y = A^T M A``): 16 multiply-adds per 2 x 2 outputs and channel pair instead of 36. The convolution
    becomes one ``call_tir`` marked out-elementwise-fusable, so its bias, residual add and activation still fuse
    into it; ``app.CPUConv2d`` schedules that fused function (its blocks are named ``winograd_*``).

    Converted: batch 1, OHWI weights, padding 1 on every side, dilation 1, one group, float32 in and out, static
    shapes with an even height and width, input and output channels multiples of 8 and at least 16 (whole vectors
    for ``app.CPUConv2d``), and at least 32 output tiles (smaller maps stream the 16/9 larger weights for too little work).
    Anything else is left as it is. F(2 x 2, 3 x 3) adds and subtracts in its input and output transforms and
    halves in its weight transform only: its results differ from the direct convolution's by rounding
    (about 1e-6 relative on ResNet-18)."""
    import tvm
    from tvm import relax, te, tirx
    from tvm.relax.dpl import is_op, rewrite_call, wildcard

    b_t = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]  # input transform B^T
    a_t = [[1, 1, 1, 0], [0, 1, -1, -1]]  # output transform A^T
    g = [[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]]  # weight transform G

    def combine(coefs, terms):  # type: ignore[no-untyped-def]  # sum of +-1 multiples, zeros left out
        out = None
        for coef, term in zip(coefs, terms):
            if coef:
                out = (term if coef > 0 else -term) if out is None else (out + term if coef > 0 else out - term)
        return out

    def select(index, count, make):  # type: ignore[no-untyped-def]  # make(i) where index == i (i constant)
        # if_then_else, not Select: a Select evaluates every branch, and with the padded reads in vector lanes
        # (a schedule that inlines the padding) that read outside the input: SIGSEGV. Unrolled, both fold.
        expr = make(count - 1)
        for i in range(count - 2, -1, -1):
            expr = tirx.if_then_else(index == i, make(i), expr)
        return expr

    def i64(*values):  # type: ignore[no-untyped-def]  # shapes as Relax writes them (int64)
        return tuple(tirx.IntImm("int64", v) for v in values)

    def conv_func(h, w, c, k):  # type: ignore[no-untyped-def]
        zero = tirx.const(0, "float32")
        data = te.placeholder(i64(1, h, w, c), "float32", name="data")
        u = te.placeholder(i64(4, 4, c, k), "float32", name="winograd_weight")
        pad = te.compute(i64(1, h + 2, w + 2, c), lambda n, y, x, ch: tirx.if_then_else(
            tirx.all(y >= 1, y <= h, x >= 1, x <= w), data[n, y - 1, x - 1, ch], zero), name="winograd_pad")

        def tile_in(e, m, ty, tx, ch):  # type: ignore[no-untyped-def]  # (B^T d B)[e][m] for constant e, m
            rows = [combine(b_t[m], [pad[0, 2 * ty + a, 2 * tx + b, ch] for b in range(4)]) for a in range(4)]
            return combine(b_t[e], rows)

        v = te.compute(i64(4, 4, h // 2, w // 2, c), lambda e, m, ty, tx, ch: select(
            e, 4, lambda ei: select(m, 4, lambda mi: tile_in(ei, mi, ty, tx, ch))), name="winograd_input")
        rc = te.reduce_axis(i64(0, c), name="rc")
        prod = te.compute(i64(4, 4, h // 2, w // 2, k), lambda e, m, ty, tx, f: te.sum(
            v[e, m, ty, tx, rc] * u[e, m, rc, f], axis=rc), name="winograd_product")

        def tile_out(i, j, ty, tx, f):  # type: ignore[no-untyped-def]  # (A^T M A)[i][j] for constant i, j
            rows = [combine(a_t[j], [prod[e, m, ty, tx, f] for m in range(4)]) for e in range(4)]
            return combine(a_t[i], rows)

        out = te.compute(i64(1, h, w, k), lambda n, y, x, f: select(y % 2, 2, lambda i: select(
            x % 2, 2, lambda j: tile_out(i, j, y // 2, x // 2, f))), name="winograd_output")
        func = te.create_prim_func([data, u, out]).without_attr("global_symbol")
        return func.with_attrs({"op_pattern": 4, "tirx.noalias": True})  # out-elementwise-fusable, as conv2d

    def weight_func(c, k):  # type: ignore[no-untyped-def]  # OHWI weights -> U[e, m, c, k] = (G g G^T)[e, m]
        weight = te.placeholder(i64(k, 3, 3, c), "float32", name="weight")
        ra, rb = te.reduce_axis(i64(0, 3), name="ra"), te.reduce_axis(i64(0, 3), name="rb")

        def coef(row, col):  # type: ignore[no-untyped-def]
            return select(row, 4, lambda r: select(col, 3, lambda q: tirx.const(g[r][q], "float32")))

        u = te.compute(i64(4, 4, c, k), lambda e, m, ch, f: te.sum(
            coef(e, ra) * weight[f, ra, rb, ch] * coef(m, rb), axis=[ra, rb]), name="winograd_weight_transform")
        func = te.create_prim_func([weight, u]).without_attr("global_symbol")
        return func.with_attrs({"op_pattern": 8, "tirx.noalias": True})  # opaque: never fused into the product

    def dims(call):  # type: ignore[no-untyped-def]  # (h, w, c, k) of a convolution it converts, or None
        attrs = call.attrs
        try:
            shape = [int(d) for d in call.args[0].ty.shape]
            wshape = [int(d) for d in call.args[1].ty.shape]
            dtypes = {str(call.args[0].ty.dtype), str(call.args[1].ty.dtype), str(call.ty.dtype)}
            plain = ([int(s) for s in attrs.strides] == [1, 1] and [int(d) for d in attrs.dilation] == [1, 1]
                     and [int(p) for p in attrs.padding] == [1, 1, 1, 1] and int(attrs.groups) == 1)
        except (AttributeError, TypeError, ValueError):  # symbolic shapes, unknown types
            return None
        if not (plain and dtypes == {"float32"} and attrs.data_layout == "NHWC" and attrs.kernel_layout == "OHWI"
                and attrs.out_layout in ("NHWC", "") and shape[0] == 1 and wshape[1:3] == [3, 3]):
            return None
        h, w, c, k = shape[1], shape[2], shape[3], wshape[0]
        if h % 2 or w % 2 or c < 16 or k < 16 or c % 8 or k % 8 or (h // 2) * (w // 2) < 32 or wshape[3] != c:
            return None
        return h, w, c, k

    def transform(mod, _ctx):  # type: ignore[no-untyped-def]
        builder = relax.BlockBuilder(mod)
        funcs = {}  # (h, w, c, k) -> (conv GlobalVar, weight GlobalVar)
        pattern = is_op("relax.nn.conv2d")(wildcard(), wildcard())

        def rewrite(call, _matches):  # type: ignore[no-untyped-def]
            key = dims(call)
            if key is None:
                return call
            h, w, c, k = key
            if key not in funcs:
                name = f"winograd_conv2d_{h}x{w}x{c}x{k}"
                funcs[key] = (builder.add_func(conv_func(h, w, c, k), name),
                              builder.add_func(weight_func(c, k), f"{name}_weight"))
            conv_gv, weight_gv = funcs[key]
            u = relax.call_tir(weight_gv, [call.args[1]], relax.TensorType((4, 4, c, k), "float32"))
            return relax.call_tir(conv_gv, [call.args[0], u], relax.TensorType((1, h, w, k), "float32"))

        updates = {gvar: rewrite_call(pattern, rewrite, func) for gvar, func in mod.functions_items()
                   if isinstance(func, relax.Function)}
        if not funcs:
            return mod
        for gvar, func in updates.items():
            builder.update_func(gvar, func)
        return builder.get()

    return tvm.transform.module_pass(transform, opt_level=0, name="Winograd")
