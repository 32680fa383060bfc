"""Code of the ``winograd`` kind that exported scripts contain, called by the engine too.

:func:`winograd` is the pass of an ``app.Winograd`` step (TVM imported inside the function).
"""


def winograd_matrices():  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """``{m: (B^T, A^T, G)}`` of F(2 x 2, 3 x 3) and F(4 x 4, 3 x 3) (Lavin and Gray's points 0, +-1, +-2, infinity)."""
    return {
        2: ([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]],
            [[1, 1, 1, 0], [0, 1, -1, -1]],
            [[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]]),
        4: ([[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0], [0, -2, -1, 2, 1, 0],
             [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]],
            [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]],
            [[1 / 4, 0.0, 0.0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6], [1 / 24, 1 / 12, 1 / 6],
             [1 / 24, -1 / 12, 1 / 6], [0.0, 0.0, 1.0]]),
    }


def winograd_combine(coefs, terms):  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """The sum of ``coef * term`` over the nonzero ``coefs`` (a factor 1 or -1 written as a sign)."""
    from tvm import tirx

    out = None
    for coef, term in zip(coefs, terms):
        if coef:
            scaled = term if abs(coef) == 1 else term * tirx.const(float(abs(coef)), "float32")
            out = (scaled if coef > 0 else -scaled) if out is None else (out + scaled if coef > 0 else out - scaled)
    return out


def winograd_select(index, count, make):  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """``make(i)`` where ``index == i``, ``i`` in ``range(count)`` a constant for ``make``; chosen with
    ``if_then_else``, not ``Select``: a Select evaluates every branch, and with the padded reads in vector lanes
    (a schedule that inlines the padding) that read outside the input: SIGSEGV. Unrolled, both fold."""
    from tvm import tirx

    expr = make(count - 1)
    for i in range(count - 2, -1, -1):
        expr = tirx.if_then_else(index == i, make(i), expr)
    return expr


def winograd_i64(*values):  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """Shapes as Relax writes them (int64)."""
    from tvm import tirx

    return tuple(tirx.IntImm("int64", v) for v in values)


def winograd_conv_func(h, w, c, k, m):  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """The PrimFunc of F(m x m, 3 x 3) for an NHWC ``1 x h x w x c`` input and ``c -> k`` channels: padding, the
    input transform in two passes (``B^T d``, then ``(B^T d) B``), the (m+2)^2 products, the output transform in
    two passes; its blocks are named ``winograd_*`` (``app.CPUConv2d`` schedules it by them)."""
    from tvm import te, tirx

    combine, select, i64 = winograd_combine, winograd_select, winograd_i64
    b_t, a_t, _g = winograd_matrices()[m]
    alpha, zero = m + 2, tirx.const(0, "float32")
    data = te.placeholder(i64(1, h, w, c), "float32", name="data")
    u = te.placeholder(i64(alpha, alpha, c, k), "float32", name="winograd_weight")
    pad = te.compute(i64(1, h + 2, w + 2, c), lambda n, y, x, ch: tirx.if_then_else(
        tirx.all(y >= 1, y <= h, x >= 1, x <= w), data[n, y - 1, x - 1, ch], zero), name="winograd_pad")

    # Each transform in two passes, rows then columns (B^T d, then (B^T d) B): small expressions, each partial
    # sum computed once.
    rows_in = te.compute(i64(alpha, alpha, h // m, w // m, c), lambda e, b, ty, tx, ch: select(e, alpha, lambda ei: (
        combine(b_t[ei], [pad[0, m * ty + a, m * tx + b, ch] for a in range(alpha)]))), name="winograd_rows")
    v = te.compute(i64(alpha, alpha, h // m, w // m, c), lambda e, r, ty, tx, ch: select(r, alpha, lambda ri: (
        combine(b_t[ri], [rows_in[e, b, ty, tx, ch] for b in range(alpha)]))), name="winograd_input")
    rc = te.reduce_axis(i64(0, c), name="rc")
    prod = te.compute(i64(alpha, alpha, h // m, w // m, k), lambda e, r, ty, tx, f: te.sum(
        v[e, r, ty, tx, rc] * u[e, r, rc, f], axis=rc), name="winograd_product")
    rows_out = te.compute(i64(m, alpha, h // m, w // m, k), lambda i, r, ty, tx, f: select(i, m, lambda ii: (
        combine(a_t[ii], [prod[e, r, ty, tx, f] for e in range(alpha)]))), name="winograd_out_rows")
    out = te.compute(i64(1, h, w, k), lambda n, y, x, f: select(x % m, m, lambda j: combine(
        a_t[j], [rows_out[y % m, r, y // m, x // m, f] for r in range(alpha)])), name="winograd_output")
    func = te.create_prim_func([data, u, out]).without_attr("global_symbol")
    return func.with_attrs({"op_pattern": 4, "tirx.noalias": True})  # out-elementwise-fusable, as conv2d


def winograd_weight_func(c, k, m):  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """The PrimFunc transforming OHWI ``k x 3 x 3 x c`` weights into ``U[e, r, c, k] = (G g G^T)[e, r]``."""
    from tvm import te, tirx

    select, i64 = winograd_select, winograd_i64
    g, alpha = winograd_matrices()[m][2], m + 2
    weight = te.placeholder(i64(k, 3, 3, c), "float32", name="weight")
    ra, rb = te.reduce_axis(i64(0, 3), name="ra"), te.reduce_axis(i64(0, 3), name="rb")

    def coef(row, col):  # type: ignore[no-untyped-def]
        return select(row, alpha, lambda r: select(col, 3, lambda q: tirx.const(g[r][q], "float32")))

    u = te.compute(i64(alpha, alpha, c, k), lambda e, r, ch, f: te.sum(
        coef(e, ra) * weight[f, ra, rb, ch] * coef(r, rb), axis=[ra, rb]), name="winograd_weight_transform")
    func = te.create_prim_func([weight, u]).without_attr("global_symbol")
    return func.with_attrs({"op_pattern": 8, "tirx.noalias": True})  # opaque: never fused into the product


def winograd_dims(call):  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """``(h, w, c, k, tile)`` of a ``relax.nn.conv2d`` call :func:`winograd` converts, or None."""
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
    return h, w, c, k, 4 if h % 4 == 0 and w % 4 == 0 and (h // 4) * (w // 4) >= 32 else 2


def winograd():  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """A module pass computing each 3 x 3, stride-1 NHWC float32 convolution with Winograd's minimal filtering
    F(m x m, 3 x 3): the weights transformed once (``U = G g G^T``, (m+2) x (m+2) per input/output channel pair, a
    call of its own that ``LiftTransformParams`` lifts or constant folding folds), each (m+2) x (m+2) input tile
    transformed (``V = B^T d B``), (m+2)^2 matrix products over the input channels (``M = V U``) and each m x m
    output tile transformed back (``Y = A^T M A``), both transforms in two passes (rows, then columns). F(4 x 4,
    3 x 3) (36 multiply-adds per 4 x 4 outputs and channel pair instead of 144) where the map's sides are multiples
    of 4 with at least 32 tiles of 4 x 4, else F(2 x 2, 3 x 3) (16 per 2 x 2 instead of 36). The convolution becomes
    one ``call_tir`` marked out-elementwise-fusable, so its bias, residual add and activation still fuse into it;
    ``app.CPUConv2d`` schedules that fused function (its blocks are named ``winograd_*``).

    Converted: batch 1, OHWI weights, padding 1 on every side, dilation 1, one group, float32 in and out, static
    shapes with an even height and width, input and output channels multiples of 8 and at least 16 (whole vectors
    for ``app.CPUConv2d``), and at least 32 output tiles of 2 x 2 (smaller maps stream the larger transformed
    weights for too little work). Anything else is left as it is. The transforms' results differ from the direct
    convolution's by rounding (ResNet-18's output 5e-7 (F(2 x 2)) and 8e-7 (F(4 x 4) where it applies) of its
    largest value apart from TVM's direct build)."""
    import tvm
    from tvm import relax
    from tvm.relax.dpl import is_op, rewrite_call, wildcard

    def transform(mod, _ctx):  # type: ignore[no-untyped-def]
        builder = relax.BlockBuilder(mod)
        funcs = {}  # (h, w, c, k, tile) -> (conv GlobalVar, weight GlobalVar)
        pattern = is_op("relax.nn.conv2d")(wildcard(), wildcard())

        def rewrite(call, _matches):  # type: ignore[no-untyped-def]
            key = winograd_dims(call)
            if key is None:
                return call
            h, w, c, k, m = key
            if key not in funcs:
                name = f"winograd{m}_conv2d_{h}x{w}x{c}x{k}"
                funcs[key] = (builder.add_func(winograd_conv_func(h, w, c, k, m), name),
                              builder.add_func(winograd_weight_func(c, k, m), f"{name}_weight"))
            conv_gv, weight_gv = funcs[key]
            u = relax.call_tir(weight_gv, [call.args[1]], relax.TensorType((m + 2, m + 2, c, k), "float32"))
            return relax.call_tir(conv_gv, [call.args[0], u], relax.TensorType((1, h, w, k), "float32"))

        updates = {gvar: rewrite_call(pattern, rewrite, func) for gvar, func in mod.functions_items()
                   if isinstance(func, relax.Function)}
        if not funcs:
            return mod
        for gvar, func in updates.items():
            builder.update_func(gvar, func)
        return builder.get()

    return tvm.transform.module_pass(transform, opt_level=0, name="Winograd")
