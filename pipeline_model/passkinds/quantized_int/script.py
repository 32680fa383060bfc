"""Code of the ``quantized_int`` kind that exported scripts contain, called by the engine too.

:func:`quantized_to_integer` is the pass of an ``app.QuantizedToInteger`` step; :func:`quant_patterns` (what a
quantized graph looks like), :func:`quant_kernels` (the ``qpad``, ``qpack_weight`` and ``qdot`` PrimFuncs) and
:func:`quant_rewrites` (the rewrites) are its parts, copied before it (TVM imported inside the functions).
"""


def quant_patterns():  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """What a quantized graph looks like: constants, ops, dtypes and ``dequantize`` calls seen through bindings, and
    the rewrites that stay in bytes (a max pool, a requantization); a namespace of functions."""
    import types

    import numpy as np
    import tvm
    from tvm import relax

    def const_of(expr, var2val):  # type: ignore[no-untyped-def]
        """The numpy value of ``expr`` seen through variable bindings, ``astype`` and ``expand_dims``; or None."""
        for _ in range(8):
            if isinstance(expr, relax.Var) and expr in var2val:
                expr = var2val[expr]
            elif isinstance(expr, (tvm.ir.Constant, tvm.ir.GenericConst)):
                return expr.value.numpy() if hasattr(expr, "value") else expr.data.numpy()
            elif isinstance(expr, relax.Call) and getattr(expr.op, "name", "") in ("relax.astype",
                                                                                    "relax.expand_dims"):
                expr = expr.args[0]
            else:
                return None
        return None

    def value(expr, var2val):  # type: ignore[no-untyped-def]
        return var2val.get(expr, expr) if isinstance(expr, relax.Var) else expr

    def op_of(expr, var2val):  # type: ignore[no-untyped-def]
        expr = value(expr, var2val)
        return (expr, expr.op.name) if isinstance(expr, relax.Call) and isinstance(expr.op, tvm.ir.Op) else (expr, "")

    def static(shape):  # type: ignore[no-untyped-def]
        return shape is not None and all(isinstance(d, tvm.tirx.IntImm) for d in shape)

    def dtype(expr):  # type: ignore[no-untyped-def]
        return str(getattr(expr.ty, "dtype", ""))

    def dequantized(expr, var2val, want, bb=None):  # type: ignore[no-untyped-def]
        """``(q, scale, zero point, axis)`` of ``dequantize(q, ...)`` with ``q`` of dtype ``want``; or None. With
        ``bb``, also of a reshape (a Flatten before a Gemm) of one with a scalar scale: ``q`` reshaped."""
        call, name = op_of(expr, var2val)
        if bb is not None and name in ("relax.reshape", "relax.flatten", "relax.nn.max_pool2d") \
                and static(getattr(call.ty, "shape", None)):
            inner = dequantized(call.args[0], var2val, want)
            if inner is None or not scalar(inner[1]):
                return None
            if name == "relax.nn.max_pool2d":  # (see pool_integer)
                return (bb.emit(relax.Call(call.op, (inner[0],), call.attrs)), *inner[1:])
            return (bb.emit(relax.op.reshape(inner[0], [int(d) for d in call.ty.shape])), *inner[1:])
        if name != "relax.dequantize" or dtype(call.args[0]) != want or dtype(call) != "float32":
            return None
        return call.args[0], call.args[1], call.args[2], int(call.attrs.axis)

    def zero(expr, var2val):  # type: ignore[no-untyped-def]
        got = const_of(expr, var2val)
        return got is not None and not np.any(got)

    def scalar(expr):  # type: ignore[no-untyped-def]
        shape = getattr(expr.ty, "shape", None)
        return shape is not None and (len(shape) == 0 or (len(shape) == 1 and int(shape[0]) == 1))

    def pool_integer(call, var2val):  # type: ignore[no-untyped-def]
        """``max_pool2d(dequantize(q))`` as ``dequantize(max_pool2d(q))`` (a scalar scale, positive as quantization
        scales are: the maximum commutes with it; the padding's dtype minimum is below every value) on a quarter of
        the bytes; or None."""
        for want in ("uint8", "int8"):
            x = dequantized(call.args[0], var2val, want)
            if x is not None:
                break
        if x is None or not scalar(x[1]) or not scalar(x[2]):
            return None
        q, scale, zp, _axis = x
        pooled = relax.Call(call.op, (q,), call.attrs)
        return relax.op.dequantize(pooled, scale, zp, axis=0, out_dtype="float32")

    def requantized(call, var2val, bb):  # type: ignore[no-untyped-def]
        """``q`` for ``quantize(dequantize(q, s, z), s, z)`` (the same scale variable, equal constant zero points,
        the same dtype: ``round((q - z) * s / s) + z`` is ``q``); or None."""
        want = str(call.attrs.out_dtype)
        x = dequantized(call.args[0], var2val, want, bb)
        if x is None or not x[1].same_as(call.args[1]) or not scalar(x[1]):
            return None
        z_in, z_out = const_of(x[2], var2val), const_of(call.args[2], var2val)
        if z_in is None or z_out is None or z_in.shape != z_out.shape or np.any(z_in != z_out):
            return None
        return x[0]

    return types.SimpleNamespace(const_of=const_of, op_of=op_of, static=static, dtype=dtype, dequantized=dequantized,
                                 zero=zero, scalar=scalar, pool_integer=pool_integer, requantized=requantized)


def quant_kernels(state, p):  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """The integer kernels as TE PrimFuncs added to ``state["builder"]`` (one per shape, ``state["funcs"]``): ``gemm``
    and ``conv`` emit their calls (a namespace of functions; ``p``: :func:`quant_patterns`)."""
    import types

    import numpy as np
    import tvm
    from tvm import relax, te

    dtype = p.dtype

    def i64(*dims):  # type: ignore[no-untyped-def]
        """int64 extents, as LegalizeOps writes them (FuseTIR refuses buffers whose shapes differ in type)."""
        return [tvm.tirx.IntImm("int64", int(d)) for d in dims]

    def ceil(n, m):  # type: ignore[no-untyped-def]
        return (n + m - 1) // m * m

    def prim(name, tensors):  # type: ignore[no-untyped-def]
        key = (name, tuple((tuple(int(d) for d in t.shape), str(t.dtype)) for t in tensors))
        if key not in state["funcs"]:
            func = te.create_prim_func(list(tensors)).without_attr("global_symbol")
            state["funcs"][key] = state["builder"].add_func(func, name)
        return state["funcs"][key]

    def gemm(mutator, xq, wq, transposed):  # type: ignore[no-untyped-def]
        """int32 ``xq[M, K] @ wq`` (wq ``[K, N]``, or ``[N, K]`` when ``transposed``) through ``qdot``."""
        xs, ws = [int(d) for d in xq.ty.shape], [int(d) for d in wq.ty.shape]
        k, n = xs[-1], (ws[0] if transposed else ws[1])
        m = int(np.prod(xs[:-1]))
        if k % 4:
            return None
        n16 = ceil(n, 16)
        w_t = te.placeholder(i64(*ws), "int8", "w")
        packed = te.compute(i64(n16 // 16, k // 4, 16, 4), lambda no, ko, ni, ki: tvm.tirx.if_then_else(
            no * 16 + ni < n, w_t[no * 16 + ni, ko * 4 + ki] if transposed else w_t[ko * 4 + ki, no * 16 + ni],
            tvm.tirx.const(0, "int8")), name="qpack")
        pack_gv = prim("qpack_weight", [w_t, packed])
        a_t = te.placeholder(i64(m, k), "uint8", "a")
        p_t = te.placeholder(i64(n16 // 16, k // 4, 16, 4), "int8", "wp")
        r = te.reduce_axis(i64(0, k), "k")
        out = te.compute(i64(m, n16), lambda i, j: te.sum(
            a_t[i, r].astype("int32") * p_t[j // 16, r // 4, j % 16, r % 4].astype("int32"), axis=r), name="qdot")
        # the product in the shape the model wants (rows unflattened, padding channels dropped), in the same
        # function: a reshape or slice of its own would keep FuseOps from fusing the epilogue into the product
        rows, strides = xs[:-1], [int(np.prod(xs[i + 1:-1])) for i in range(len(xs) - 1)]
        shaped = te.compute(i64(*rows, n), lambda *idx: out[sum(v * s for v, s in zip(idx[:-1], strides)), idx[-1]],
                            name="qdot_view")
        dot_gv = prim("qdot", [a_t, p_t, shaped])
        bb = mutator.builder_
        wp = bb.emit(relax.call_tir(pack_gv, [wq], relax.TensorType([n16 // 16, k // 4, 16, 4], "int8")))
        a2 = bb.emit(relax.op.reshape(xq, [m, k])) if len(xs) != 2 else xq
        acc = bb.emit(relax.call_tir(dot_gv, [a2, wp], relax.TensorType([*rows, n], "int32")))
        wsum = bb.emit(relax.op.sum(relax.op.astype(wq, "int32"), axis=[1 if transposed else 0]))
        return acc, wsum

    def conv(mutator, call, xq, wq, zx):  # type: ignore[no-untyped-def]
        """int32 ``conv2d(xq - zx, wq)`` (NCHW) through ``qpad`` + ``qdot``; or None."""
        attrs = call.attrs
        if str(attrs.data_layout) != "NCHW" or str(attrs.kernel_layout) != "OIHW" \
                or str(attrs.out_layout) not in ("", "NCHW") or int(attrs.groups) != 1 \
                or any(int(d) != 1 for d in attrs.dilation):
            return None
        nb, c, h, w = [int(d) for d in xq.ty.shape]
        o, _, kh, kw = [int(d) for d in wq.ty.shape]
        sh, sw = [int(s) for s in attrs.strides]
        pt, pl, pb, pr = [int(p) for p in attrs.padding]
        hp, wp_, c4, o16 = h + pt + pb, w + pl + pr, ceil(c, 4), ceil(o, 16)
        oh, ow = (hp - kh) // sh + 1, (wp_ - kw) // sw + 1
        x_t = te.placeholder(i64(nb, c, h, w), "uint8", "x")
        z_t = te.placeholder((), "uint8", "zx")
        # NCHW4c: 4 channels interleaved (vpdpbusd's 4 bytes), read as 4 contiguous rows of the NCHW input
        padded = te.compute(i64(nb, c4 // 4, hp, wp_, 4), lambda b, co, y, xx, ci: tvm.tirx.if_then_else(
            tvm.tirx.all(y >= pt, y < pt + h, xx >= pl, xx < pl + w, co * 4 + ci < c),
            x_t[b, co * 4 + ci, y - pt, xx - pl], z_t[()]), name="qpad")
        pad_gv = prim("qpad", [x_t, z_t, padded])
        w_t = te.placeholder(i64(o, c, kh, kw), "int8", "w")
        packed = te.compute(i64(o16 // 16, kh, kw, c4 // 4, 16, 4), lambda oo, y, xx, co, oi, ci: tvm.tirx.if_then_else(
            tvm.tirx.all(oo * 16 + oi < o, co * 4 + ci < c), w_t[oo * 16 + oi, co * 4 + ci, y, xx],
            tvm.tirx.const(0, "int8")), name="qpack")
        pack_gv = prim("qpack_weight", [w_t, packed])
        xp_t = te.placeholder(i64(nb, c4 // 4, hp, wp_, 4), "uint8", "xp")
        p_t = te.placeholder(i64(o16 // 16, kh, kw, c4 // 4, 16, 4), "int8", "wp")
        ry, rx, rc = te.reduce_axis(i64(0, kh), "ry"), te.reduce_axis(i64(0, kw), "rx"), te.reduce_axis(i64(0, c4), "rc")
        out = te.compute(i64(nb, oh, ow, o16), lambda b, y, xx, oc: te.sum(
            xp_t[b, rc // 4, y * sh + ry, xx * sw + rx, rc % 4].astype("int32")
            * p_t[oc // 16, ry, rx, rc // 4, oc % 16, rc % 4].astype("int32"), axis=[ry, rx, rc]), name="qdot")
        # the product's NCHW view, in the same function: FuseOps then fuses the epilogue into it (a transpose of
        # its own would stop the fusion), and the rule writes it per tile
        nchw = te.compute(i64(nb, o, oh, ow), lambda b, oc, y, xx: out[b, y, xx, oc], name="qdot_nchw")
        dot_gv = prim("qdot", [xp_t, p_t, nchw])
        bb = mutator.builder_
        zx8 = bb.emit(relax.op.astype(zx, "uint8")) if dtype(zx) != "uint8" else zx
        xp = bb.emit(relax.call_tir(pad_gv, [xq, zx8], relax.TensorType([nb, c4 // 4, hp, wp_, 4], "uint8")))
        wp = bb.emit(relax.call_tir(pack_gv, [wq], relax.TensorType([o16 // 16, kh, kw, c4 // 4, 16, 4], "int8")))
        acc = bb.emit(relax.call_tir(dot_gv, [xp, wp], relax.TensorType([nb, o, oh, ow], "int32")))
        wsum = bb.emit(relax.op.reshape(relax.op.sum(relax.op.astype(wq, "int32"), axis=[1, 2, 3]), [1, o, 1, 1]))
        return acc, wsum

    return types.SimpleNamespace(gemm=gemm, conv=conv)


def quant_rewrites(p, k):  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """The rewrites of :func:`quantized_to_integer` (a namespace of functions; ``p``: :func:`quant_patterns`, ``k``:
    :func:`quant_kernels`): each returns the new expression or None."""
    import types

    from tvm import relax

    op_of, static, dtype, dequantized = p.op_of, p.static, p.dtype, p.dequantized
    zero, scalar, gemm, conv = p.zero, p.scalar, k.gemm, k.conv

    def rescale(bb, acc, wsum, xq_zp, sx, sw, channels_shape):  # type: ignore[no-untyped-def]
        """``astype(acc - zx * wsum, float32) * (sx * sw)`` (``sw`` per channel reshaped to ``channels_shape``)."""
        corr = relax.op.multiply(relax.op.astype(xq_zp, "int32"), wsum)
        real = relax.op.astype(relax.op.subtract(acc, corr), "float32")
        if not scalar(sw):
            sw = relax.op.reshape(sw, channels_shape)
        return relax.op.multiply(real, relax.op.multiply(sx, sw))

    def fold_dq(mutator, call, var2val):  # type: ignore[no-untyped-def]
        """The QDQ forms (float result) or None."""
        name = call.op.name
        x = dequantized(call.args[0], var2val, "uint8", mutator.builder_)
        w_expr, transposed = call.args[1], False
        if name == "relax.matmul":
            inner, inner_name = op_of(w_expr, var2val)
            if inner_name == "relax.permute_dims" and len(inner.args[0].ty.shape) == 2:
                w_expr, transposed = inner.args[0], True
        w = dequantized(w_expr, var2val, "int8")
        if x is None or w is None or not scalar(x[1]) or not scalar(x[2]) or not zero(w[2], var2val):
            return None
        (xq, sx, zx, _), (wq, sw, _zw, axis) = x, w
        if not static(xq.ty.shape) or not static(wq.ty.shape):
            return None
        bb = mutator.builder_
        if name == "relax.nn.conv2d":
            if not scalar(sw) and axis != 0:
                return None
            got = conv(mutator, call, xq, wq, zx)
            shape = [1, int(wq.ty.shape[0]), 1, 1]
        else:
            if len(wq.ty.shape) != 2 or (not scalar(sw) and axis != (0 if transposed else 1)):
                return None
            got = gemm(mutator, xq, wq, transposed)
            shape = [int(wq.ty.shape[0 if transposed else 1])]
        if got is None:
            return None
        acc, wsum = got
        return rescale(bb, acc, wsum, zx, sx, sw, shape)

    def fold_integer(mutator, call, var2val):  # type: ignore[no-untyped-def]
        """``MatMulInteger``'s form (int32 result) or None."""
        if dtype(call) != "int32":
            return None

        def side(expr, want):  # type: ignore[no-untyped-def]
            sub, name = op_of(expr, var2val)
            zp = None
            if name == "relax.subtract":
                expr, zp = sub.args
                sub, name = op_of(expr, var2val)
            if name != "relax.astype" or dtype(sub.args[0]) != want:
                return None
            return sub.args[0], zp

        a, b = side(call.args[0], "uint8"), side(call.args[1], "int8")
        if a is None or b is None or (b[1] is not None and not zero(b[1], var2val)):
            return None
        (xq, zx), (wq, _zw) = a, b
        if not static(xq.ty.shape) or not static(wq.ty.shape) or len(wq.ty.shape) != 2:
            return None
        if zx is not None and not scalar(zx):
            return None
        got = gemm(mutator, xq, wq, False)
        if got is None:
            return None
        acc, wsum = got
        if zx is None:
            return acc
        return relax.op.subtract(acc, relax.op.multiply(relax.op.astype(zx, "int32"), wsum))

    return types.SimpleNamespace(fold_dq=fold_dq, fold_integer=fold_integer)


def quantized_to_integer():  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """A module pass that computes quantized convolutions and matmuls in integers.

    Rewrites ``conv2d(dequantize(xq), dequantize(wq))`` (NCHW/OIHW, one group, no dilation), ``matmul(dequantize(xq),
    [permute_dims](dequantize(wq)))`` (QDQ files: ONNX Runtime's ``quantize_static``) and ``MatMulInteger``'s
    ``matmul(astype(xq) - zx, astype(wq) - zw, out_dtype="int32")`` (``quantize_dynamic``) where ``xq`` is uint8,
    ``wq`` an int8 weight, ``zw`` a constant zero and the scales scalars (or per output channel) into
    ``qdot``: a uint8 x int8 -> int32 product over weights packed ``[n/16, k/4, 16, 4]`` (by a call of its own,
    weight-only work that ``LiftTransformParams`` runs once), followed by ``- zx * sum_k(wq)`` and, for the QDQ
    forms, ``astype(float32) * (sx * sw)``: elementwise ops that fuse into the product as its epilogue, with the
    requantization (``quantize``) after them. A convolution's input is padded with its zero point and laid out
    NCHW4c (``qpad``: 4 channels interleaved, vpdpbusd's 4 bytes); its product is computed channels-last and written
    NCHW by the same function. The same values as the float graph up to float rounding of the scale product.
    ``max_pool2d(dequantize(q))`` becomes ``dequantize(max_pool2d(q))``, ``quantize(dequantize(q))`` with the same
    scale and zero point ``q``. Everything else (other dtypes, symbolic shapes, per-channel activations, a weight
    zero point that is not a constant zero) is left as it is. The ``app.CPUInt8`` DLight rule schedules ``qdot``
    with VNNI's ``vpdpbusd``; under a target without AVX-512 VNNI (or not a CPU) the module is left as it is (the
    float kernels are faster there).
    """
    import tvm
    from tvm import relax

    state = {"funcs": {}, "builder": None}  # (name, argument shapes) -> GlobalVar of a PrimFunc; the BlockBuilder
    patterns = quant_patterns()
    rewrites = quant_rewrites(patterns, quant_kernels(state, patterns))
    pool_integer, requantized = patterns.pool_integer, patterns.requantized
    fold_dq, fold_integer = rewrites.fold_dq, rewrites.fold_integer

    @relax.expr_functor.mutator
    class Folder(relax.PyExprMutator):  # type: ignore[misc]
        def __init__(self, mod):  # type: ignore[no-untyped-def]
            super().__init__(mod)
            self.var2val = {}

        def visit_call_(self, call):  # type: ignore[no-untyped-def]
            call = super().visit_call_(call)
            name = call.op.name if isinstance(call.op, tvm.ir.Op) else ""
            if name == "relax.nn.max_pool2d":
                folded = pool_integer(call, self.var2val)
            elif name == "relax.quantize":
                folded = requantized(call, self.var2val, self.builder_)
            elif name not in ("relax.nn.conv2d", "relax.matmul"):
                return call
            else:
                folded = fold_dq(self, call, self.var2val)
            if folded is None and name == "relax.matmul":
                folded = fold_integer(self, call, self.var2val)
            if folded is None:
                return call
            done.append(name)
            return folded

    done = []

    def has_vnni(target):  # type: ignore[no-untyped-def]
        """Whether the integer products run fast on ``target`` (None: outside a target, asked for explicitly)."""
        if target is None:
            return True
        if target.kind.name != "llvm":
            return False
        from tvm.target import codegen

        try:
            return bool(codegen.llvm_cpu_has_features("avx512vnni", target))
        except Exception:  # noqa: BLE001 - not an x86 target
            return False

    def transform(mod, _ctx):  # type: ignore[no-untyped-def]
        if not has_vnni(tvm.target.Target.current(allow_none=True)):
            return mod  # (app.CPUInt8 would not schedule the products: the float kernels are faster there)
        done.clear()
        folder = Folder(mod)
        state.update(funcs={}, builder=folder.builder_)
        updates = {}
        for gvar, func in mod.functions_items():
            if isinstance(func, relax.Function):
                folder.var2val = relax.analysis.get_var2val(func)
                before = len(done)
                new = folder.visit_expr(func)
                if len(done) > before:
                    updates[gvar] = new
        if not updates:
            return mod
        for gvar, new in updates.items():
            folder.builder_.update_func(gvar, new)
        return relax.transform.DeadCodeElimination()(folder.builder_.get())

    return tvm.transform.module_pass(transform, opt_level=0, name="QuantizedToInteger")
