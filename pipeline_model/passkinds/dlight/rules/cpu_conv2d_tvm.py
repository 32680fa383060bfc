"""DLight rule ``app.CPUConv2d``: register-tiled NCHW and NHWC float32 convolutions.

Regular, depthwise and 1x1 convolutions get register tiles with output channels in the vector lanes (pixels
for a 1x1 stride-1 one), padding as its own stage and weights repacked by a block marked for
``SplitLayoutRewritePreproc`` (docs/PERFORMANCE.md "CPU convolution schedule"). Put it before
``app.CPUParallel``, which takes what it declines.

Engine side (a rule class needs its TVM base class when it is defined). Exported scripts copy the class, and
:class:`AppRule` before it, with :func:`pipeline_model.emit.script_sources` (read with ``ast``, no TVM needed);
the class references only ``tvm``.
"""

from __future__ import annotations

import tvm
import tvm.s_tir.dlight

from pipeline_model.passkinds.dlight.rules.app_rule_tvm import AppRule


class CPUConv2d(AppRule):  # type: ignore[misc]  # copied verbatim into exported scripts
    """Register-blocked, vectorized NCHW 2-D convolution for llvm targets (regular and depthwise, any
    stride/padding/dilation, 1x1 included, with its fused elementwise epilogue).

    The output channels are split into blocks of the target's vector width (16 floats with AVX-512, else
    what the target says, default 8); each thread computes a tile of ``channels x rows x cols`` outputs in
    a local accumulator whose lanes are output channels, with the ``Cin x kh x kw`` reduction outside the
    lanes: per reduction step one weight vector and one broadcast input value per output pixel (depthwise:
    one input vector). The weights are repacked ``OIHW -> O/v I H W v`` by a block marked
    ``meta_schedule.layout_rewrite_preproc``: ``relax.SplitLayoutRewritePreproc`` moves it out of the
    function (then ``relax.LiftTransformParams`` runs it once, or ``relax.FoldConstant`` folds it for bound
    weights); without those steps it runs at the start of every call. Padding is its own stage computed
    before the convolution (no bounds check in the hot loop); the fused epilogue (bias, batch norm, ReLU,
    residual add) is computed per tile from the accumulator. The tiles run in parallel. A pointwise
    convolution (1x1, stride 1) whose pixel count the vector width divides is scheduled as the matrix product
    it is instead, with pixels in the lanes (:meth:`_schedule_pixels`); so is a depthwise convolution of stride 1
    or 2 whose output rows are whole vectors, along its rows (:meth:`_schedule_depthwise_rows`). Anything else
    (grouped convolutions, symbolic shapes, channel counts no vector width divides, dtypes other than
    float32) is declined and left to the next rule. An NHWC convolution with OHWI weights (``app.ChannelsLast``'s)
    gets the channel-lane tile with contiguous loads and stores and no transposes (:meth:`_schedule_nhwc`); a
    Winograd one (``app.Winograd``'s) tiles of output pixels transformed in cache (:meth:`_schedule_winograd`)."""

    #: Most output pixels per register tile (the accumulators take pixels x channel blocks registers).
    max_pixels = 14
    #: Most accumulator vectors of a pointwise convolution's tile (channels x pixel vectors).
    max_accumulators = 16
    #: Most vectors in an output row for a depthwise convolution to be computed along its rows.
    max_row_vectors = 8
    #: Fewest elements for which the padding copy runs on all cores (as ``app.CPUParallel.min_work``): below
    #: it, starting the thread pool costs more than the copy.
    min_parallel = 1 << 16
    #: Fewest multiply-adds for which a convolution's tiles run on all cores (a depthwise one's count
    #: ``depthwise_cost`` times: it runs that much fewer per second): a squeeze-excitation's 1 x 1 convolutions
    #: on a 1 x 1 map (15-55 K multiply-adds) take microseconds, less than waking a worker.
    min_parallel_macs = 1 << 20
    #: How many times a depthwise convolution's multiply-adds count against ``min_parallel_macs``.
    depthwise_cost = 8
    #: Largest weights (bytes) an NHWC convolution streams once per pixel tile, its channel blocks the inner part
    #: of the parallel loop; larger ones keep a channel block while the pixel tiles change. ResNet-18's NHWC
    #: convolutions, 2 threads (``/tmp`` kernel A/B, docs/PERFORMANCE.md "Channels last"): 32-295 KB 1-10 %
    #: faster with the channel blocks inner, 0.5-4.7 MB 7-55 % slower.
    max_streamed_weights = 384 << 10
    #: Most taps of an NHWC depthwise convolution whose rows are unrolled too (its columns always are): a 5 x 5
    #: one's 25 taps x 14 pixels unrolled added a quarter to EfficientNet-B0's build (1.8 -> 2.4 s) for 2-12 %
    #: of those kernels.
    max_unrolled_taps = 9

    def apply(self, func, target, _tunable):  # type: ignore[no-untyped-def]
        if not isinstance(func, tvm.tirx.PrimFunc) or target.kind.name != "llvm":
            return None
        try:
            if self.winograd(func):
                sch = self.schedule(func)
                return sch if self._schedule_winograd(sch, target) else None
            if self.reductions(func) != [[0, 0, 0, 0, 2, 2, 2]]:  # a cheap look before building a schedule
                return None
            sch = self.schedule(func)
            found = self._find_conv(sch, func)
            if found is None:
                found = self._find_conv_nhwc(sch, func)
                if found is None:
                    return None
                conv, info = found
                info["lanes"] = self._lanes(target, info["oc"])
                if info["lanes"] is None:
                    return None
                self._schedule_nhwc(sch, conv, info)
                return sch
            conv, info = found
            width = self._vector_width(target)
            row_tile = self._depthwise_tile(info, width)
            if row_tile is not None:
                self._schedule_depthwise_rows(sch, conv, info, *row_tile)
                return sch
            pixels = self._pixel_tile(info, width)
            if pixels is not None:
                self._schedule_pixels(sch, conv, info, *pixels)
                return sch
            info["lanes"] = self._lanes(target, info["oc"])
            if info["lanes"] is None:
                return None
            self._schedule(sch, conv, info)
            return sch
        except Exception:  # noqa: BLE001 - a loop nest the rule cannot reshape: leave it to the next rule
            return None

    #: Most bytes of transformed weights a Winograd task streams per output tile (2 x 2 or 4 x 4 pixels) it
    #: computes: a task takes whole rows of tiles, as few as keep under this. ResNet-18's, F(2 x 2), 2 threads
    #: (``/tmp`` kernel A/B in the model, docs/PERFORMANCE.md "Winograd"): 14 x 14 x 256 with one row of 7 tiles
    #: a task (292 KB a tile) took 2.1x the time of all 49 (42 KB); 28 x 28 x 128 one row of 14 (73 KB) 0.90x
    #: the time of two.
    max_winograd_weight_per_tile = 96 << 10
    #: Most output channels of a Winograd task (a block of the transformed weights, (m+2)^2 x Cin x this,
    #: streamed once per task; the input tiles are transformed again for each channel block).
    max_winograd_channels = 128

    def _schedule_winograd(self, sch, target):  # type: ignore[no-untyped-def]
        """``app.Winograd``'s convolution (F(4 x 4, 3 x 3) or F(2 x 2, 3 x 3)) with its fused epilogue, one
        parallel task per block of whole rows of output tiles and of output channels (as few rows as keep the
        transformed weights a task streams under ``max_winograd_weight_per_tile`` per tile, up to
        ``max_winograd_channels`` channels, two tasks at least): the task transforms its input tiles (per tile
        and vector of channels, rows then columns, the positions unrolled), runs the 36 (16) products as register
        tiles of output-channel vectors x tiles (the transformed input broadcast, the transformed weights loaded
        as vectors) and transforms the products back as it writes the output, the bias, residual add and
        activation computed there. The padding stays a stage of its own. ResNet-18's 3 x 3 layers in the model
        (2 threads, kernel A/B): 56 x 56 x 64 about 530 -> 210-235 us (F(4 x 4)), 28 x 28 x 128 575 -> 270-305,
        14 x 14 x 256 580 -> 355 (F(2 x 2)); docs/PERFORMANCE.md "Winograd"."""
        pad, rows_in, inp, prod, rows_out, out = (sch.get_sblock(n) for n in self.winograd_blocks)
        epilogue = self._inline_around(sch, prod, [pad, rows_in, inp, rows_out, out])
        for block in epilogue:
            sch.reverse_compute_inline(block)  # elementwise on the output (else the schedule is declined)
        n, y, x, f = sch.get_loops(out)
        alpha = int(sch.get(inp).iter_vars[0].dom.extent)  # input tile: output tile + 2
        size = alpha - 2
        th, tw = int(sch.get(y).extent) // size, int(sch.get(x).extent) // size
        channels, in_channels = int(sch.get(f).extent), int(sch.get(inp).iter_vars[-1].dom.extent)
        import math

        lanes = self._lanes(target, math.gcd(channels, in_channels))  # both in whole vectors
        if lanes is None:
            return False
        vectors = 2 if channels % (2 * lanes) == 0 else 1
        bx = max(d for d in range(1, min(tw, 14) + 1) if tw % d == 0)  # a row of tiles, at most 14 of them
        for block_k in sorted((d for d in range(vectors * lanes, min(channels, self.max_winograd_channels) + 1,
                                                vectors * lanes) if channels % d == 0), reverse=True):
            weights = alpha * alpha * in_channels * block_k * 4
            by = min(d for d in range(1, th + 1) if th % d == 0 and (
                d == th or weights <= self.max_winograd_weight_per_tile * d * bx))
            if channels // block_k * (th // by) * (tw // bx) >= 2:  # work for two threads at least
                break
        tiles = max(d for d in range(1, 9) if (by * bx) % d == 0)
        ty, i = sch.split(y, [None, size])
        tx, j = sch.split(x, [None, size])
        tyo, tyi = sch.split(ty, [None, by])
        txo, txi = sch.split(tx, [None, bx])
        kb, ko, ki = sch.split(f, [None, block_k // lanes, lanes])
        sch.reorder(n, kb, tyo, txo, tyi, txi, ko, i, j, ki)
        sch.unroll(i)
        sch.unroll(j)
        sch.vectorize(ki)
        task = sch.fuse(n, kb, tyo, txo)
        sch.parallel(task)
        # The output transform's first pass (A^T M) per tile and vector of channels, its rows unrolled.
        sch.compute_at(rows_out, ko)
        self._unroll_positions(sch, rows_out, ko, lanes)
        # The products: register tiles of `vectors` channel vectors x `tiles` tiles, reduced over Cin.
        sch.compute_at(prod, task)
        loops = sch.get_loops(prod)[1:]
        e, m, pk, rc = loops[0], loops[1], loops[-2], loops[-1]
        pt = sch.fuse(*loops[2:-2]) if len(loops) > 5 else loops[2]
        pto, pti = sch.split(pt, [None, tiles])
        pko, pkv, pki = sch.split(pk, [None, vectors, lanes])
        sch.reorder(e, m, pko, pto, rc, pti, pkv, pki)
        local = sch.cache_write(prod, 0, "local")
        sch.reverse_compute_at(local, pto)
        sch.unroll(pti)
        sch.unroll(pkv)
        sch.vectorize(pki)
        self._vector_init_and_write_back(sch, prod, local, rc, lanes)
        # The input tiles: a vector of channels at a time, the tile positions unrolled (their selects fold).
        sch.compute_at(inp, task)
        loops = sch.get_loops(inp)[1:]
        ve, vm, vc = loops[0], loops[1], loops[-1]
        vco, vci = sch.split(vc, [None, lanes])
        sch.reorder(*loops[2:-1], vco, ve, vm, vci)
        sch.unroll(ve)
        sch.unroll(vm)
        sch.vectorize(vci)
        sch.compute_at(rows_in, vco)  # its first pass (B^T d) for that tile and vector of channels
        self._unroll_positions(sch, rows_in, vco, lanes)
        loops = sch.get_loops(pad)
        sch.parallel(sch.fuse(loops[0], loops[1]))
        return True

    @staticmethod
    def _unroll_positions(sch, block, at, lanes):  # type: ignore[no-untyped-def]
        """A transform pass computed at the loop ``at`` (one tile and vector of channels): the loops
        ``compute_at`` made under ``at``, its position loops, unrolled (their selects fold), the channels in
        vector lanes."""
        loops = sch.get_loops(block)
        target = sch.get(at)
        inner = loops[next(i for i, lp in enumerate(loops) if sch.get(lp).same_as(target)) + 1:]
        for loop in inner[:-1]:
            if int(sch.get(loop).extent) > 1:
                sch.unroll(loop)
        if int(sch.get(inner[-1]).extent) == lanes:
            sch.vectorize(inner[-1])

    @staticmethod
    def _vector_width(target):  # type: ignore[no-untyped-def]
        """float32 lanes of the target's vector registers (4 to 16; 8 where LLVM cannot say)."""
        return max(4, min(16, AppRule.vector_bits(target) // 32))

    @staticmethod
    def _lanes(target, channels):  # type: ignore[no-untyped-def]
        """float32 lanes of the target's vector registers that divide ``channels`` (None: none does)."""
        width = CPUConv2d._vector_width(target)
        while width >= 4:
            if channels % width == 0:
                return width
            width //= 2
        return None

    @staticmethod
    def _conv_block(sch):  # type: ignore[no-untyped-def]
        """The only reduction block of the function, when its iterators are ``SSSSRRR``."""
        from tvm.s_tir.dlight.analysis import get_root_block

        found = None
        for block_rv in sch.get_child_blocks(get_root_block(sch)):
            kinds = [int(iv.iter_type) for iv in sch.get(block_rv).iter_vars]
            if 2 not in kinds:
                continue
            if found is not None or kinds != [0, 0, 0, 0, 2, 2, 2]:
                return None
            found = block_rv
        return found

    @staticmethod
    def _match_conv(sch, func, nhwc):  # type: ignore[no-untyped-def]
        """The convolution block in one layout (NCHW: ``out[n,f,y,x] += data[n,c,..] * w[f,rc,ry,rx]``; NHWC with
        OHWI weights: ``out[n,y,x,f] += data[n,..,..,c] * w[f,ry,rx,rc]``; c = rc, or depthwise c = f), or None:
        ``(block, its variables by name, their extents by name, the data load, the weight load, depthwise)``."""
        block_rv = CPUConv2d._conv_block(sch)
        if block_rv is None:
            return None
        block = sch.get(block_rv)
        store = block.body
        if not isinstance(store, tvm.tirx.BufferStore) or str(store.buffer.dtype) != "float32":
            return None
        names = ("n", "y", "x", "f", "ry", "rx", "rc") if nhwc else ("n", "f", "y", "x", "rc", "ry", "rx")
        v = {name: iv.var for name, iv in zip(names, block.iter_vars)}
        out = [v[a] for a in (("n", "y", "x", "f") if nhwc else ("n", "f", "y", "x"))]
        taps = [v[a] for a in (("f", "ry", "rx", "rc") if nhwc else ("f", "rc", "ry", "rx"))]
        value = store.value
        if not (isinstance(value, tvm.tirx.Add) and isinstance(value.b, tvm.tirx.Mul)):
            return None
        loads = [value.a, value.b.a, value.b.b]
        if not all(isinstance(ld, tvm.ir.TensorLoad) and str(ld.source.dtype) == "float32" for ld in loads):
            return None
        if not loads[0].source.same_as(store.buffer) or not all(
                i.same_as(var) for i, var in zip(list(store.indices) + list(loads[0].indices), out * 2)):
            return None
        weight = next((ld for ld in loads[1:] if len(ld.indices) == 4 and all(
            i.same_as(var) for i, var in zip(ld.indices, taps))), None)
        data = loads[2] if weight is loads[1] else loads[1]
        if weight is None or len(data.indices) != 4 or not all(
                isinstance(iv.dom.extent, tvm.tirx.IntImm) for iv in block.iter_vars):
            return None
        extent = {name: int(iv.dom.extent) for name, iv in zip(names, block.iter_vars)}
        ana = tvm.sym.Analyzer()
        channel = data.indices[3 if nhwc else 1]
        if ana.can_prove_equal(channel, v["rc"]):
            depthwise = False
        elif extent["rc"] == 1 and ana.can_prove_equal(channel, v["f"] + v["rc"]):
            depthwise = True
        else:
            return None
        loops = sch.get_loops(block_rv)
        realize = sch.get(loops[-1]).body if len(loops) == 7 else None
        if not isinstance(realize, tvm.s_tir.SBlockRealize) or not all(
                var.same_as(sch.get(lp).loop_var) for var, lp in zip(realize.iter_values, loops)):
            return None
        return block_rv, v, extent, data, weight, depthwise

    @staticmethod
    def _find_conv(sch, func):  # type: ignore[no-untyped-def]
        """The NCHW convolution block (:meth:`_match_conv`) and its facts, or None."""
        found = CPUConv2d._match_conv(sch, func, nhwc=False)
        if found is None:
            return None
        block_rv, v, extent, data, weight, depthwise = found
        ana = tvm.sym.Analyzer()
        params = list(func.params)
        stride = next((st for st in (1, 2) if ana.can_prove_equal(data.indices[3], v["x"] * st + v["rx"])
                       and ana.can_prove_equal(data.indices[2], v["y"] * st + v["ry"])), None)
        pointwise = not depthwise and extent["ry"] == 1 and extent["rx"] == 1
        if pointwise:  # 1x1, stride 1: the pixel read is the pixel written
            ana.bind(v["ry"], tvm.ir.Range(0, 1))
            ana.bind(v["rx"], tvm.ir.Range(0, 1))
            pointwise = ana.can_prove_equal(data.indices[2], v["y"]) and ana.can_prove_equal(data.indices[3], v["x"])
        return block_rv, {"oc": extent["f"], "oh": extent["y"], "ow": extent["x"], "depthwise": depthwise,
                          "pointwise": pointwise, "stride": stride,
                          "weight": weight.source, "data": data.source,
                          "weight_is_param": any(weight.source.same_as(p) for p in params),
                          "data_is_param": any(data.source.same_as(p) for p in params)}

    @staticmethod
    def _find_conv_nhwc(sch, func):  # type: ignore[no-untyped-def]
        """The NHWC convolution block with OHWI weights (:meth:`_match_conv`) and its facts, or None."""
        found = CPUConv2d._match_conv(sch, func, nhwc=True)
        if found is None:
            return None
        block_rv, _v, extent, data, weight, depthwise = found
        return block_rv, {"oc": extent["f"], "oh": extent["y"], "ow": extent["x"], "depthwise": depthwise,
                          "weight": weight.source, "data": data.source,
                          "weight_bytes": 4 * extent["f"] * extent["ry"] * extent["rx"] * extent["rc"],
                          "taps": extent["ry"] * extent["rx"],
                          "weight_is_param": any(weight.source.same_as(p) for p in func.params)}

    def _schedule_nhwc(self, sch, conv, info):  # type: ignore[no-untyped-def]
        """An NHWC convolution (regular, pointwise or depthwise): output channels in the vector lanes, where
        input, weights and output are all contiguous, a register tile of channel vectors x pixels (as
        :meth:`_tile` chooses it), the weights packed ``OHWI -> O/b H W I b``, the padding a stage of its own,
        the fused epilogue computed a vector of channels at a time as the tile is written back (whole vectors:
        no transposes, the layout carried from one convolution to the next). A depthwise convolution reads its
        input in place, the padding tested per tap (one scalar test per input vector): its padded copy cost more
        than the convolution (MobileNetV3's, 2 threads, ``/tmp`` kernel A/B: 0.18-0.87x the time with the copy,
        docs/PERFORMANCE.md "Channels last"); a regular one keeps the copy, tested per tap it took 1.3-2.1x the
        time (ResNet-18's 3 x 3). The depthwise taps are unrolled (a 5 x 5 one's columns only,
        ``max_unrolled_taps``): with the tests written per tap, MobileNetV3's depthwise convolutions ran
        0.58-0.94x the time they took with the taps a loop."""
        lanes = info["lanes"]
        vectors, rows, cols = self._tile(info)
        block_oc = vectors * lanes
        producers = sch.get_producers(conv)
        epilogue = self._inline_around(sch, conv, producers)
        reads = [r.source for r in sch.get(conv).reads]
        packed = sch.cache_read(conv, next(i for i, r in enumerate(reads) if r.same_as(info["weight"])), "global")
        sch.transform_layout(packed, ("write", 0), lambda o, h, w, i: (o // block_oc, h, w, i, o % block_oc))
        if info["weight_is_param"]:
            sch.annotate(packed, "meta_schedule.layout_rewrite_preproc", 1)  # 1: as a replayed trace has it
        sch.parallel(sch.get_loops(packed)[0])
        for block in producers:
            if isinstance(getattr(sch.get(block).body, "value", None), tvm.ir.TensorLoad) or info["depthwise"]:
                sch.compute_inline(block)  # no padding; or a depthwise one's, read in place (see the docstring)
            elif self._work_of(sch, block) >= self.min_parallel:
                sch.parallel(sch.fuse(*sch.get_loops(block)[:2]))
        local = sch.cache_write(conv, 0, "local")
        self._write_back(sch, epilogue)
        n, y, x, f, ry, rx, rc = sch.get_loops(conv)
        fo, fv, fi = sch.split(f, [None, vectors, lanes])
        yo, yi = sch.split(y, [None, rows])
        xo, xi = sch.split(x, [None, cols])
        if info["weight_bytes"] > self.max_streamed_weights:  # the weights' block stays while the pixels change
            sch.reorder(n, fo, yo, xo, ry, rx, rc, yi, xi, fv, fi)
            sch.reverse_compute_at(local, xo)
            self._parallel_if_worth(sch, conv, info, sch.fuse(n, fo, yo, xo))
        else:  # the pixel tile's input stays while the channel blocks change
            sch.reorder(n, yo, xo, fo, ry, rx, rc, yi, xi, fv, fi)
            sch.reverse_compute_at(local, fo)
            self._parallel_if_worth(sch, conv, info, sch.fuse(n, yo, xo, fo))
        sch.vectorize(fi)
        for loop in (yi, xi, fv):
            sch.unroll(loop)
        if info["depthwise"]:  # the taps unrolled: each padding test a constant offset LLVM folds and hoists
            sch.unroll(rx)
            if info["taps"] <= self.max_unrolled_taps:
                sch.unroll(ry)
        self._vector_init_and_write_back(sch, conv, local, ry, lanes)

    def _tile(self, info):  # type: ignore[no-untyped-def]
        """Register tile ``(channel vectors, rows, cols)``. Where the channels take two vectors, two of them
        and the most pixels (``rows x cols`` dividing the output) for ``max_accumulators`` accumulators, rows
        before a narrower column block: per reduction step the tile loads ``vectors + pixels`` values for
        ``vectors x pixels`` FMAs, and one vector x 14 pixels was bound by those loads (ResNet-18's 3x3
        convolutions 10-17 % slower than 2 x 8, its 7x7 stem 33 %; with more accumulators LLVM spills).
        Else one vector and up to ``max_pixels`` pixels: the widest column block, then rows."""
        ow, oh = info["ow"], info["oh"]
        if info["oc"] % (2 * info["lanes"]) == 0:
            budget = self.max_accumulators // 2
            *_, rows, cols = max((r * c, min(c, 4), min(r, 2), r, c)
                                 for c in range(1, min(ow, budget) + 1) if ow % c == 0
                                 for r in range(1, budget // c + 1) if oh % r == 0)
            return 2, rows, cols
        limit = self.max_pixels
        cols = max(d for d in range(1, min(ow, limit) + 1) if ow % d == 0)
        rows = max(d for d in range(1, min(oh, limit // cols) + 1) if oh % d == 0)
        return 1, rows, cols

    @staticmethod
    def _inline_around(sch, conv, keep):  # type: ignore[no-untyped-def]
        """Inline every other spatial block into its consumers (bias/batch-norm constants ...) except the
        convolution's producers ``keep``; returns the blocks left (the epilogue writing the output)."""
        from tvm.s_tir.dlight.analysis import get_root_block

        names = {sch.get(b).name_hint for b in keep} | {sch.get(conv).name_hint}
        left = [b for b in sch.get_child_blocks(get_root_block(sch)) if sch.get(b).name_hint not in names]
        outputs = list(sch.mod["main"].params)  # the buffers (inputs can be written by no block)
        changed = True
        while changed:
            changed = False
            for block in list(left):
                if any(w.source.same_as(o) for w in sch.get(block).writes for o in outputs):
                    continue  # writes an output: never inlinable (a failed try costs an error report)
                try:
                    sch.compute_inline(block)
                except Exception:  # noqa: BLE001, S112 - it writes an output or is not inlinable
                    continue
                left.remove(block)
                changed = True
        return left

    def _schedule(self, sch, conv, info):  # type: ignore[no-untyped-def]
        """Pack weights, pad first, tile, vectorize and parallelize the convolution, fuse the epilogue."""
        lanes = info["lanes"]
        vectors, rows, cols = self._tile(info)
        block_oc = vectors * lanes
        producers = sch.get_producers(conv)
        epilogue = self._inline_around(sch, conv, producers)
        reads = [r.source for r in sch.get(conv).reads]
        weight_index = next(i for i, r in enumerate(reads) if r.same_as(info["weight"]))
        data_buf = info["data"]
        packed = sch.cache_read(conv, weight_index, "global")
        # (Loops in the packed order would write contiguously but made LLVM take 3x longer on this block,
        # which runs once when lifted.)
        sch.transform_layout(packed, ("write", 0), lambda o, i, h, w: (o // block_oc, i, h, w, o % block_oc))
        if info["weight_is_param"]:
            sch.annotate(packed, "meta_schedule.layout_rewrite_preproc", 1)  # 1: as a replayed trace has it
        sch.parallel(sch.get_loops(packed)[0])
        for block in producers:
            if any(w.source.same_as(data_buf) for w in sch.get(block).writes):
                if info["depthwise"]:  # channel-blocked like the output: one vector load per tap
                    nchwc = lambda n, c, h, w: (n, c // lanes, h, w, c % lanes)  # noqa: E731
                    sch.transform_layout(block, ("write", 0), nchwc)
                    sch.transform_block_layout(block, nchwc)
                if self._work_of(sch, block) >= self.min_parallel:  # small: the pool's start-up costs more
                    sch.parallel(sch.fuse(*sch.get_loops(block)[:2]))
        local = sch.cache_write(conv, 0, "local")
        sch.transform_layout(conv, ("write", 0), lambda n, f, y, x: (n, f // lanes, y, x, f % lanes))
        self._write_back(sch, epilogue)
        n, f, y, x, rc, ry, rx = sch.get_loops(conv)
        fo, fv, fi = sch.split(f, [None, vectors, lanes])
        yo, yi = sch.split(y, [None, rows])
        xo, xi = sch.split(x, [None, cols])
        sch.reorder(n, fo, yo, xo, rc, ry, rx, fv, yi, xi, fi)
        sch.reverse_compute_at(local, xo)
        self._parallel_if_worth(sch, conv, info, sch.fuse(n, fo, yo, xo))
        self._vectorize_write_back(sch, local, block_oc, lanes)
        sch.vectorize(fi)
        for loop in (fv, yi, xi):
            sch.unroll(loop)
        init = sch.decompose_reduction(conv, rc)
        init_loops = sch.get_loops(init)[-4:]
        if sch.get(init_loops[-1]).kind != sch.get(fi).kind:
            sch.vectorize(init_loops[-1])

    def _depthwise_tile(self, info, width):  # type: ignore[no-untyped-def]
        """``(lanes, rows)`` of a depthwise convolution computed along its output rows (pixels in the lanes),
        or None: stride 1 or 2 (2: with a padding stage of even width), no dilation, a row of at most
        ``max_row_vectors`` vectors of the target's width or 8 lanes, or at stride 1 a row of 3/4 of a vector
        up to one (14 of 16: one vector of 14 lanes); ``rows`` whole rows per tile, at most
        ``max_pixels`` vectors of accumulators."""
        if not info["depthwise"] or info["stride"] is None:
            return None
        if info["stride"] == 2 and (info["data_is_param"] or int(info["data"].shape[3]) % 2):
            return None  # no padding stage to store the input de-interleaved (or an odd padded width)
        lanes = next((v for v in (width, 8) if v >= 8 and info["ow"] % v == 0
                      and info["ow"] // v <= self.max_row_vectors), None)
        if lanes is None and info["stride"] == 1 and 3 * width // 4 <= info["ow"] < width:  # a short row
            lanes = info["ow"]  # (MobileNet's 14): one vector of its length (LLVM splits it into the widths it
            # has): MobileNetV3's 5 x 5 over 240 x 14 x 14 1.4x faster than in channel lanes; not so a row of 7
            # (1.13x slower) nor 28 at stride 2 (4x slower)
        if lanes is None:
            return None
        vectors = info["ow"] // lanes
        rows = max(r for r in range(1, info["oh"] + 1) if info["oh"] % r == 0 and r * vectors <= self.max_pixels)
        return lanes, rows

    def _schedule_depthwise_rows(self, sch, conv, info, lanes, rows):  # type: ignore[no-untyped-def]
        """A depthwise convolution in its NCHW layout, output pixels in the vector lanes: each tile is ``rows``
        whole output rows of one channel, every tap a broadcast weight times a contiguous input vector (a
        stride-2 input is stored de-interleaved by the padding stage, even columns then odd ones, so its taps
        are contiguous too), the fused epilogue computed on whole vectors as the rows are written. The
        channel-lane tile (:meth:`_schedule`) wrote each output vector to 16 planes, one lane each, and read
        its input through a copy transposed to channel blocks."""
        producers = sch.get_producers(conv)
        epilogue = self._inline_around(sch, conv, producers)
        for block in producers:
            if not any(w.source.same_as(info["data"]) for w in sch.get(block).writes):
                continue
            if info["stride"] == 2:  # written in the new order: contiguous stores, stride-2 loads
                split = lambda n, c, h, w: (n, c, h, w % 2, w // 2)  # noqa: E731
                sch.transform_layout(block, ("write", 0), split)
                sch.transform_block_layout(block, split)
            if self._work_of(sch, block) >= self.min_parallel:
                sch.parallel(sch.fuse(*sch.get_loops(block)[:2]))
        local = sch.cache_write(conv, 0, "local")
        self._write_back(sch, epilogue)
        n, f, y, x, rc, ry, rx = sch.get_loops(conv)
        yo, yi = sch.split(y, [None, rows])
        xv, xl = sch.split(x, [None, lanes])
        sch.reorder(n, f, yo, rc, ry, rx, yi, xv, xl)
        sch.reverse_compute_at(local, yo)
        self._parallel_if_worth(sch, conv, info, sch.fuse(n, f, yo))
        sch.vectorize(xl)
        sch.unroll(yi)
        sch.unroll(xv)
        self._vector_init_and_write_back(sch, conv, local, rc, lanes)

    def _pixel_tile(self, info, lanes):  # type: ignore[no-untyped-def]
        """``(lanes, channels, pixel vectors)`` of the register tile of a pointwise convolution (1x1, stride 1,
        no padding) whose pixel count ``lanes`` divides, else None: the most accumulators up to
        ``max_accumulators``, then two pixel vectors (each weight broadcast feeds both)."""
        pixels = info["oh"] * info["ow"]
        if not info["pointwise"] or pixels % lanes:
            return None
        tiles = [(ob * pv, pv, ob) for pv in (2, 1) if (pixels // lanes) % pv == 0
                 for ob in range(1, self.max_accumulators + 1) if info["oc"] % ob == 0 and ob * pv <= self.max_accumulators]
        _, pv, ob = max(tiles)
        return lanes, ob, pv

    def _schedule_pixels(self, sch, conv, info, lanes, ob, pv):  # type: ignore[no-untyped-def]
        """A pointwise convolution as the matrix product it is (``out[f, p] += w[f, c] * in[c, p]`` over the
        pixels ``p`` of the NCHW planes): pixels in the vector lanes, where input and output are contiguous, and
        ``ob`` output channels x ``pv`` pixel vectors of accumulators per tile, one broadcast weight per channel
        and reduction step. The weights are packed ``O/ob I 1 1 ob`` (as :meth:`_schedule` packs them); a
        padding-free pad copy is inlined; the epilogue is computed as the tile is written back, a vector of
        pixels at a time. With many pixels and few channels (EfficientNet's 56x56 projections) the
        channel-lane tile wrote each vector to 16 planes; this writes whole vectors: 3-4x faster there."""
        width = info["ow"]
        producers = sch.get_producers(conv)
        epilogue = self._inline_around(sch, conv, producers)
        for block in producers:
            if isinstance(getattr(sch.get(block).body, "value", None), tvm.ir.TensorLoad):  # a pad without padding
                sch.compute_inline(block)
            elif self._work_of(sch, block) >= self.min_parallel:
                sch.parallel(sch.get_loops(block)[0])
        reads = [r.source for r in sch.get(conv).reads]
        packed = sch.cache_read(conv, next(i for i, r in enumerate(reads) if r.same_as(info["weight"])), "global")
        sch.transform_layout(packed, ("write", 0), lambda o, i, h, w: (o // ob, i, h, w, o % ob))
        if info["weight_is_param"]:
            sch.annotate(packed, "meta_schedule.layout_rewrite_preproc", 1)  # 1: as a replayed trace has it
        sch.parallel(sch.get_loops(packed)[0])
        local = sch.cache_write(conv, 0, "local")
        self._write_back(sch, epilogue)
        # One pixel axis (rows x cols), so that a tile's pixels are one range for the write-back too.
        sch.transform_layout(conv, ("write", 0), lambda n, f, y, x: (n, f, y * width + x))
        sch.transform_block_layout(conv, lambda n, f, y, x, rc, ry, rx: (n, f, y * width + x, rc, ry, rx))
        sch.transform_block_layout(local, lambda n, f, y, x: (n, f, y * width + x))
        n, f, p, rc, ry, rx = sch.get_loops(conv)
        fo, fi = sch.split(f, [None, ob])
        po, pvl, pl = sch.split(p, [None, pv, lanes])
        sch.reorder(n, fo, po, rc, ry, rx, fi, pvl, pl)
        sch.reverse_compute_at(local, po)
        self._parallel_if_worth(sch, conv, info, sch.fuse(n, fo, po))
        sch.vectorize(pl)
        sch.unroll(fi)
        sch.unroll(pvl)
        self._vector_init_and_write_back(sch, conv, local, rc, lanes)

    def _write_back(self, sch, epilogue):  # type: ignore[no-untyped-def]
        """The epilogue blocks computed as the tile is written back where they are elementwise on the
        convolution's output; any other one stays a stage of its own (:meth:`_parallel_rest`)."""
        for block in epilogue:
            try:
                sch.reverse_compute_inline(block)
            except Exception:  # noqa: BLE001 - not elementwise on the output: it stays a stage of its own
                self._parallel_rest(sch, block)

    @staticmethod
    def _vector_init_and_write_back(sch, conv, local, reduce_loop, lanes):  # type: ignore[no-untyped-def]
        """The accumulator's zeroing split off at ``reduce_loop`` and the tile's write-back (its last loop),
        both a vector of ``lanes`` at a time."""
        init = sch.decompose_reduction(conv, reduce_loop)
        sch.vectorize(sch.get_loops(init)[-1])
        _outer, inner = sch.split(sch.get_loops(local)[-1], [None, lanes])
        sch.vectorize(inner)

    @staticmethod
    def _work_of(sch, block):  # type: ignore[no-untyped-def]
        """Iterations of ``block`` (its loops' extents multiplied)."""
        work = 1
        for loop in sch.get_loops(block):
            work *= int(sch.get(loop).extent)
        return work

    @staticmethod
    def _vectorize_write_back(sch, local, block_oc, lanes):  # type: ignore[no-untyped-def]
        """The tile's write-back (with the fused epilogue: bias, batch norm, SiLU ...) computes a vector of
        output channels at a time, as the accumulator holds them (the NCHW stores are scattered; the epilogue's
        arithmetic, an ``exp`` per element for SiLU, is what costs)."""
        loops = sch.get_loops(local)[1:]
        if not loops or int(sch.get(loops[0]).extent) != block_oc:
            return
        outer, inner = sch.split(loops[0], [None, lanes])
        sch.reorder(outer, *loops[1:], inner)
        sch.vectorize(inner)

    def _parallel_if_worth(self, sch, conv, info, loop):  # type: ignore[no-untyped-def]
        """``loop`` (the tiles) in parallel unless the convolution ``conv`` has under ``min_parallel_macs``
        multiply-adds (its loops' extents multiplied, ``depthwise_cost`` times for a depthwise one): then its
        tiles run on the calling thread."""
        macs = self._work_of(sch, conv) * (self.depthwise_cost if info["depthwise"] else 1)
        if macs >= self.min_parallel_macs:
            sch.parallel(loop)

    def _parallel_rest(self, sch, block):  # type: ignore[no-untyped-def]
        """A stage the tile cannot take (a reduction after the convolution, a squeeze-excitation gate times the
        feature map): its leading spatial loops fused into one parallel loop (the batch loop alone has extent 1),
        else its outer loop in parallel; under ``min_parallel`` elements it stays on the calling thread."""
        if self._work_of(sch, block) < self.min_parallel:
            return
        loops = sch.get_loops(block)
        kinds = [int(iv.iter_type) for iv in sch.get(block).iter_vars]
        spatial = 0
        while len(loops) == len(kinds) and spatial < len(kinds) and kinds[spatial] == 0:
            spatial += 1  # (loops one per iterator, in order: the block as FuseTIR left it)
        try:
            sch.parallel(sch.fuse(*loops[:spatial - 1]) if spatial > 2 else loops[0])
        except Exception:  # noqa: BLE001 - left serial
            pass
