"""The app's own DLight rules (engine side; imports TVM): rule group ``app`` of ``dlight.ApplyDefaultSchedule``.

``app.CPUParallel`` runs every block's spatial loops on all cores: after legalization a PrimFunc is a
plain loop nest that LLVM compiles into one thread, and TVM's default build adds no CPU schedule, so an
untuned model used one core. DLight's own CPU rules (``cpu.GEMV``, ``cpu.Reduction``) schedule few
functions and slowed the bench CNN down 1.95x. Measured on the 2-core machine (bench models, untuned,
``TVM_NUM_THREADS=2``): ResNet-18 139 -> 71 ms, MLP 206 -> 106 us, CNN 717 -> 629 us; blocks under
``min_work`` iterations stay serial (docs/PERFORMANCE.md). Put it after ``FuseTIR``. After
``MetaScheduleApplyDatabase`` it leaves the tuned functions alone, but it measured slower on tuned
transformers (their small leftover kernels pay the thread start-up: 137 -> 197 us), so the tuned bundled
pipelines do not use it.

``app.CPUMatmul`` gives matmul, batch matmul and NT_matmul (with their fused elementwise epilogues) a
register-blocked, vectorized, parallel schedule (docs/PERFORMANCE.md "CPU matmul schedule": 30-60x faster
kernels than ``app.CPUParallel``); ``app.CPUConv2d`` gives NCHW float32 convolutions (regular, depthwise, 1x1)
register tiles with output channels in the vector lanes (pixels for a 1x1 stride-1 one), padding as its own stage and weights repacked by a
block marked for ``SplitLayoutRewritePreproc`` (docs/PERFORMANCE.md "CPU convolution schedule"). Put both
before ``app.CPUParallel``, which takes what they decline.

This is the code exported scripts contain (the kind's "script" module, engine side because a rule class
needs its TVM base class when it is defined): the engine's recipe names the class by its dotted name, and
exported scripts copy its source (read with ``ast``, no TVM needed:
:func:`pipeline_model.emit.script_source`). It references only ``tvm``.
"""

from __future__ import annotations

import tvm
import tvm.s_tir.dlight


class AppRule(tvm.s_tir.dlight.ScheduleRule):  # type: ignore[misc]  # copied verbatim into exported scripts
    """What the app's rules share; both parts only make the DLight step faster, the schedules are the same.

    ``tvm.s_tir.Schedule``'s primitives check their arguments' Python types on every call
    (``tvm.s_tir.schedule._type_checker``: about a quarter of the DLight step on EfficientNet-B0). The rules pass
    the schedule's own objects and TVM's C++ side still checks every argument, so :meth:`schedule` gives a
    ``Schedule`` whose methods are the unchecked originals (``__wrapped__``). A schedule copies and analyses the
    function (about a millisecond each), so a rule that wants one reduction block of a given form looks at
    :meth:`reductions` first, which reads the statements."""

    _unchecked = None

    @staticmethod
    def schedule(func):  # type: ignore[no-untyped-def]
        """``tvm.s_tir.Schedule(func)`` without the Python-side argument checks of its primitives."""
        cls = AppRule._unchecked
        if cls is None:
            base = tvm.s_tir.Schedule
            methods = {name: attr.__wrapped__ for name, attr in vars(base).items()
                       if callable(attr) and hasattr(attr, "__wrapped__")}
            cls = AppRule._unchecked = type("UncheckedSchedule", (base,), {"__module__": __name__, **methods})
        return cls(func)

    @staticmethod
    def reductions(func):  # type: ignore[no-untyped-def]
        """Iterator kinds (0 spatial, 2 reduction, ...) of each reduction block among the root block's children
        (the blocks ``get_child_blocks`` of the root gives), read from the statements without a schedule."""
        found = []
        todo = [func.body.block.body] if isinstance(func.body, tvm.s_tir.SBlockRealize) else [func.body]
        while todo:
            stmt = todo.pop()
            if isinstance(stmt, tvm.tirx.SeqStmt):
                todo.extend(stmt.seq)
            elif isinstance(stmt, tvm.s_tir.SBlockRealize):
                kinds = [int(iv.iter_type) for iv in stmt.block.iter_vars]
                if 2 in kinds:
                    found.append(kinds)
            elif isinstance(stmt, tvm.tirx.IfThenElse):
                todo.extend(s for s in (stmt.then_case, stmt.else_case) if s is not None)
            elif isinstance(getattr(stmt, "body", None), tvm.tirx.Stmt):
                todo.append(stmt.body)
        return found[::-1]


class CPUParallel(AppRule):  # type: ignore[misc]  # copied verbatim into exported scripts
    """Inline elementwise producers, then run each block's fused spatial loops in parallel (llvm targets).

    Blocks with fewer than ``min_work`` loop iterations (all loops, symbolic extents count as large) stay
    serial: starting the worker threads costs microseconds, more than a small block takes on one core. A sum or
    max over contiguous memory (an average pool, a softmax's maximum) runs in vector lanes (``rfactor``)."""

    min_work = 1 << 16

    def apply(self, func, target, _tunable):  # type: ignore[no-untyped-def]
        from tvm.s_tir.dlight.analysis import normalize_prim_func

        if not isinstance(func, tvm.tirx.PrimFunc) or target.kind.name != "llvm":
            return None
        try:
            sch = self.schedule(func)
            infos = normalize_prim_func(sch)
            if infos is None:
                return None
            infos = self._inline(sch, infos)
            changed = False
            for info in infos:
                block = info.block_rv
                spatial, reduce, other = [], [], []
                work = 1
                for loop, kind in zip(sch.get_loops(block), info.dom_kind()):
                    {"S": spatial, "R": reduce, "O": other}[kind].append(loop)
                    extent = sch.get(loop).extent
                    work *= int(extent) if isinstance(extent, tvm.tirx.IntImm) else self.min_work
                if not spatial or work < self.min_work:
                    continue
                sch.reorder(*spatial, *reduce, *other)
                sch.parallel(sch.fuse(*spatial) if len(spatial) > 1 else spatial[0])
                changed = True
                if reduce and not other:
                    sch = self._vector_reduce(sch, block, reduce, target)
            return sch if changed else None
        except Exception:  # noqa: BLE001 - a loop nest the rule cannot reshape: leave the function as it is
            return None

    @staticmethod
    def _contiguous_reduce(sch, block, reduce):  # type: ignore[no-untyped-def]
        """Whether a read of ``block`` walks the ``reduce`` loops contiguously: its trailing indices are the
        reduction variables, in order, over whole dimensions (a mean over H x W, a sum over the last axis)."""
        stmt = sch.get(block)
        realize = sch.get(sch.get_loops(block)[-1]).body
        if not isinstance(realize, tvm.s_tir.SBlockRealize):
            return False
        bound = list(zip([iv.var for iv in stmt.iter_vars], realize.iter_values))  # block variable, its loop
        extents = [int(sch.get(lp).extent) for lp in reduce]
        reduce_vars = [sch.get(lp).loop_var for lp in reduce]
        ivs = [next((iv for iv, value in bound if value.same_as(rv)), None) for rv in reduce_vars]
        for region in stmt.reads:
            trailing = region.region[-len(reduce):]
            shape = list(region.source.shape)[-len(reduce):]
            if len(trailing) == len(reduce) and all(
                    iv is not None and r.min.same_as(iv) and int(e) == ext
                    for r, iv, e, ext in zip(trailing, ivs, shape, extents)):
                return True
        return False

    def _vector_reduce(self, sch, block, reduce, target):  # type: ignore[no-untyped-def]
        """A sum/max over contiguous memory in vector lanes (``rfactor``): a scalar float reduction is one long
        dependency chain LLVM may not reorder, a global average pool over 56x56 took 10x longer. Returns the
        schedule (its copy with the reduction vectorized, or ``sch`` unchanged where it does not apply)."""
        try:
            extents = [int(sch.get(lp).extent) for lp in reduce]
        except TypeError:
            return sch  # a symbolic extent
        total = 1
        for e in extents:
            total *= e
        try:
            width = max(4, min(16, int(tvm.target.codegen.llvm_get_vector_width(target)) // 32))
        except Exception:  # noqa: BLE001 - an LLVM build without the query
            width = 8
        lanes = next((w for w in (width, width // 2, 4) if w >= 4 and total % w == 0 and total >= 4 * w), None)
        if lanes is None or not self._contiguous_reduce(sch, block, reduce):
            return sch
        trial = sch.copy()
        try:
            fused = trial.fuse(*reduce) if len(reduce) > 1 else reduce[0]
            _ro, ri = trial.split(fused, [None, lanes])
            ndim = len(trial.get(block).writes[0].source.shape)
            partial = trial.rfactor(ri, factor_axis=ndim)
            trial.reverse_compute_at(block, trial.get_loops(partial)[0])  # one parallel loop for both
            trial.vectorize(trial.get_loops(partial)[-1])
            trial.decompose_reduction(partial, trial.get_loops(partial)[-2])
            return trial
        except Exception:  # noqa: BLE001 - not a reduction rfactor takes: the scalar loop stays
            return sch

    def _work(self, sch, block):  # type: ignore[no-untyped-def]
        """Iterations of ``block`` (symbolic extents count as ``min_work``)."""
        work = 1
        for iv in sch.get(block).iter_vars:
            extent = iv.dom.extent
            work *= int(extent) if isinstance(extent, tvm.tirx.IntImm) else self.min_work
        return work

    def _inline(self, sch, infos):  # type: ignore[no-untyped-def]
        """DLight's ``try_inline``, except that a small block feeding a block 8x its size stays a stage of its
        own: inlined, it would be recomputed for every element of the big one (a squeeze-excitation's sigmoid
        over 144 channels became 451,584 sigmoids in the multiply by the 56x56 feature map)."""
        big = max(self._work(sch, i.block_rv) for i in infos)

        def feeds_big(block):  # type: ignore[no-untyped-def]
            if self._work(sch, block) * 8 > big:
                return False
            return any(self._work(sch, c) * 8 > big for c in sch.get_consumers(block))

        def trial(primitive, skip_small):  # type: ignore[no-untyped-def]
            for i, info in enumerate(infos):
                if skip_small and feeds_big(info.block_rv):
                    continue
                try:
                    primitive(info.block_rv)
                except Exception:  # noqa: BLE001, S112 - not inlinable: try the next block
                    continue
                return i
            return None

        while True:
            i = trial(sch.compute_inline, True)
            if i is None:
                i = trial(sch.reverse_compute_inline, False)
            if i is None:
                return infos
            infos.pop(i)


class CPUMatmul(AppRule):  # type: ignore[misc]  # copied verbatim into exported scripts
    """Register-blocked, vectorized matmul for llvm targets: matmul, batch matmul and NT_matmul (``W[n, k]``)
    with their fused elementwise epilogues (bias, GELU, residual add ...).

    ``C[..., i, j] += A[..., i, k] * B[..., k, j]`` (B's innermost index ``j``): tiles of ``rows`` output rows x
    ``vectors`` vectors of the target's width (16 floats with AVX-512, 8 with AVX/AVX2, 4 otherwise) are kept
    in registers while ``k`` runs outside the vectorized lanes (a broadcast of ``A[i, k]`` times a vector of
    ``B[k, j:j+16]``). With ``B[..., j, k]`` (NT_matmul: ``k`` innermost) ``k`` is split into vector lanes and
    rfactored: ``nt_rows x dots`` vector partial sums, added across lanes once per output. Tiles run in parallel
    over the cores; the epilogue runs per tile on the tile while it is in cache. A symbolic extent (a dynamic
    sequence axis) may be the rows, or ``k`` of ``B[k, j]``, or ``j`` of ``B[j, k]``: its tiles keep their size,
    the last one guarded. Declines (returns ``None``, so a later rule such as ``app.CPUParallel`` takes the
    function) other symbolic extents, non-float32, other reductions, sizes the vector width does not divide (a narrow NN output under two vector widths, a
    classifier's 10 classes, is one vector of its own width instead), and matmuls under ``min_flops``."""

    #: Tile of the ``B[k, j]`` kernel with 32 vector registers (AVX-512): 8 rows x 3 vectors = 24 accumulators
    #: (halved with 16 registers). Chosen by a sweep on the quiet 2-core AVX-512 machine: 8 rows beat 4 by
    #: 20-40 % (docs/PERFORMANCE.md).
    rows = 8
    vectors = 3
    #: Tile of the ``B[j, k]`` kernel: ``nt_rows`` x ``dots`` vector partial sums (halved with 16 registers).
    nt_rows = 4
    dots = 4
    #: Most vectors of a one-row ``B[k, j]`` tile (a matrix-vector product, a classifier's batch-1 row): it is
    #: memory-bound, and each ``k`` then reads that many contiguous vectors of ``B``'s row instead of one (with
    #: the weights out of cache, 1x1280 @ 1280x1000 took 549 us in 8-float columns, 376 us in 40-float ones).
    gemv_vectors = 8
    #: Fewest tiles a one-row tile's width may leave (so that every core still gets some).
    gemv_min_tiles = 4
    min_flops = 1 << 14
    #: What a symbolic extent counts as in the ``min_flops`` test.
    symbolic_extent = 64

    def apply(self, func, target, _tunable):  # type: ignore[no-untyped-def]
        if not isinstance(func, tvm.tirx.PrimFunc) or target.kind.name != "llvm":
            return None
        try:
            return self._schedule(func, target)
        except Exception:  # noqa: BLE001 - a loop nest the rule cannot reshape: leave it to the next rule
            return None

    @staticmethod
    def lanes(target, dtype_bits=32):  # type: ignore[no-untyped-def]
        """float lanes of one vector register of ``target`` (mcpu / mattr): 512, 256 or 128 bits."""
        from tvm.target import codegen

        for feature, bits in (("avx512f", 512), ("avx", 256)):
            try:
                if codegen.llvm_cpu_has_features(feature, target):
                    return bits // dtype_bits
            except Exception:  # noqa: BLE001 - not an x86 target: 128-bit vectors (NEON, SSE)
                break
        return 128 // dtype_bits

    def _matmul_form(self, sch, info):  # type: ignore[no-untyped-def]
        """(loops, A indices, B indices, nt) of a ``C[S...] += A * B`` block with static extents, or None."""
        block = sch.get(info.block_rv)
        kinds = info.dom_kind()
        if kinds.count("R") != 1 or not kinds.endswith("R") or "O" in kinds or len(kinds) < 2:
            return None
        store = block.body
        if not isinstance(store, tvm.tirx.BufferStore) or str(store.buffer.dtype) != "float32":
            return None
        value = store.value
        if not isinstance(value, tvm.tirx.Add) or not isinstance(value.b, tvm.tirx.Mul):
            return None
        loads = (value.a, value.b.a, value.b.b)
        if not all(type(x).__name__ in ("TensorLoad", "BufferLoad") and str(x.ty) == "float32" for x in loads):
            return None
        if not getattr(loads[0], "source", getattr(loads[0], "buffer", None)).same_as(store.buffer):
            return None
        ivars = [iv.var for iv in block.iter_vars]
        spatial, k = ivars[:-1], ivars[-1]
        if [x for x in store.indices if not isinstance(x, tvm.tirx.IntImm)] != spatial:  # unit dims: constants
            return None
        j = spatial[-1]
        a_load, b_load = loads[1], loads[2]
        if any(x.same_as(j) for x in a_load.indices):
            a_load, b_load = b_load, a_load
        for load in (a_load, b_load):
            if not all(isinstance(x, (tvm.tirx.Var, tvm.tirx.IntImm)) for x in load.indices) or len(load.indices) < 2:
                return None
        if any(x.same_as(j) for x in a_load.indices) or not a_load.indices[-1].same_as(k):
            return None
        if b_load.indices[-1].same_as(j) and b_load.indices[-2].same_as(k):
            nt = False
        elif b_load.indices[-1].same_as(k) and b_load.indices[-2].same_as(j):
            nt = True
        else:
            return None
        extents = [int(it.dom) if isinstance(it.dom, (int, tvm.tirx.IntImm)) else it.dom for it in info.iters]
        loops = [it.loop_rv for it in info.iters]
        if len(loops) == 2:  # one output row (its unit loop was dropped): a unit loop stands for it
            loops, extents = [sch.add_unit_loop(loops[0]), *loops], [1, *extents]
        return loops, extents, nt

    def _schedule(self, func, target):  # type: ignore[no-untyped-def]
        from tvm.s_tir.dlight.analysis import normalize_prim_func
        from tvm.s_tir.dlight.base import try_inline_contiguous_spatial

        if [kinds.count(2) for kinds in self.reductions(func)] != [1]:  # one reduction block, over one iterator
            return None  # (a cheap look first: a schedule, and inlining to find out, cost more)
        sch = self.schedule(func)
        infos = try_inline_contiguous_spatial(sch, normalize_prim_func(sch))
        if not infos or not infos[0].is_reduction() or any(not i.is_injective() for i in infos[1:]):
            return None
        form = self._matmul_form(sch, infos[0])
        if form is None:
            return None
        loops, extents, nt = form
        m, n, k = extents[-3], extents[-2], extents[-1]
        if any(not isinstance(e, int) for e in [*extents[:-3], k if nt else n]):
            return None  # symbolic: only the rows, B[k, j]'s k or B[j, k]'s j
        flops = 1
        for e in extents:
            flops *= e if isinstance(e, int) else self.symbolic_extent
        lanes = full = self.lanes(target)
        while lanes > 4 and (k if nt else n) % lanes:  # narrower vectors for sizes the full width misses
            lanes //= 2
        if not nt and n % lanes and n < 2 * full:  # a narrow output (a classifier's 10 classes): one vector of
            lanes = n  # n lanes (LLVM splits it into the widths it has), k still outside the lanes
        if flops < self.min_flops or (k if nt else n) % lanes:
            return None
        block = infos[0].block_rv
        epilogue = [i.block_rv for i in infos[1:]]
        if not nt and not epilogue:  # the matmul writes the output: accumulate in a local tile, write it back
            epilogue = [sch.cache_write(block, 0, "local")]
        elif epilogue:  # the intermediate between matmul and epilogue: one tile, per thread
            sch.set_scope(block, 0, "local")
        wide = lanes >= 16  # 32 vector registers (AVX-512); else 16
        most = (self.nt_rows if nt else self.rows) if wide else max(1, (self.nt_rows if nt else self.rows) // 2)
        rows = max(r for r in range(1, most + 1) if m % r == 0) if isinstance(m, int) else 1
        if nt:
            tile = self._nt(sch, block, loops, rows, n, lanes)
        else:
            tile = self._nn(sch, block, loops, rows, n, lanes)
        for consumer in epilogue:
            sch.reverse_compute_at(consumer, tile, preserve_unit_loops=True)
            inner = sch.get_loops(consumer)[-1]
            if isinstance(sch.get(inner).extent, tvm.tirx.IntImm) and sch.get(inner).extent.value % lanes == 0:
                sch.vectorize(sch.split(inner, factors=[None, lanes])[1])
        return sch

    def _outer(self, sch, batch, io, jo):  # type: ignore[no-untyped-def]
        fused = sch.fuse(*batch, jo, io)
        if not isinstance(sch.get(fused).extent, tvm.tirx.IntImm) or int(sch.get(fused).extent) > 1:  # one tile: starting the thread pool would cost more than it gives
            sch.parallel(fused)
        return fused

    def _nn(self, sch, block, loops, rows, n, lanes):  # type: ignore[no-untyped-def]
        """``B[k, j]``: rows x (vectors x lanes) accumulators, ``k`` outside the vector lanes."""
        *batch, i, j, k = loops
        most = self.vectors if lanes >= 16 else min(2, self.vectors)
        nvec = max(v for v in range(1, most + 1) if n % (v * lanes) == 0)
        if rows == 1:  # one row of accumulators: wider tiles read B's rows in longer contiguous runs
            wide = [v for v in range(nvec, self.gemv_vectors + 1)
                    if n % (v * lanes) == 0 and n // (v * lanes) >= self.gemv_min_tiles]
            nvec = max(wide, default=nvec)
        io, ii = sch.split(i, factors=[None, rows])
        jo, jv, jl = sch.split(j, factors=[None, nvec, lanes])
        sch.reorder(*batch, jo, io, k, ii, jv, jl)
        outer = self._outer(sch, batch, io, jo)
        sch.unroll(ii)
        sch.unroll(jv)
        sch.vectorize(jl)
        init = sch.decompose_reduction(block, k)
        init_l = sch.get_loops(init)[-1]
        if sch.get(init_l).kind != tvm.tirx.ForKind.VECTORIZED:
            sch.vectorize(init_l)
        return outer

    def _nt(self, sch, block, loops, rows, n, lanes):  # type: ignore[no-untyped-def]
        """``B[j, k]``: ``k`` split into vector lanes and rfactored: rows x dots vector partial sums."""
        *batch, i, j, k = loops
        most = self.dots if lanes >= 16 else max(1, self.dots // 2)  # AVX2 and narrower: 16 registers
        dots = max(d for d in range(1, most + 1) if n % d == 0) if isinstance(n, int) else most
        io, ii = sch.split(i, factors=[None, rows])
        jo, ji = sch.split(j, factors=[None, dots])
        ko, kl = sch.split(k, factors=[None, lanes])
        sch.reorder(*batch, jo, io, ko, ii, ji, kl)
        outer = self._outer(sch, batch, io, jo)
        rf = sch.rfactor(kl, len(batch) + 2)  # the lanes innermost in the partial sums: contiguous vectors
        outer, rko, rii, rji, rkl = sch.get_loops(rf)
        sch.reverse_compute_at(block, outer, preserve_unit_loops=True)
        sch.unroll(rii)
        sch.unroll(rji)
        sch.vectorize(rkl)
        init = sch.decompose_reduction(rf, rko)
        init_l = sch.get_loops(init)[-1]
        if sch.get(init_l).kind != tvm.tirx.ForKind.VECTORIZED:
            sch.vectorize(init_l)
        sch.set_scope(rf, 0, "local")
        return outer


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
    float32) is declined and left to the next rule."""

    #: Most output pixels per register tile (the accumulators take pixels x channel blocks registers).
    max_pixels = 14
    #: Most accumulator vectors of a pointwise convolution's tile (channels x pixel vectors).
    max_accumulators = 16
    #: Most vectors in an output row for a depthwise convolution to be computed along its rows.
    max_row_vectors = 8
    #: Fewest elements for which the padding copy runs on all cores (as ``app.CPUParallel.min_work``): below
    #: it, starting the thread pool costs more than the copy.
    min_parallel = 1 << 16

    def apply(self, func, target, _tunable):  # type: ignore[no-untyped-def]
        if not isinstance(func, tvm.tirx.PrimFunc) or target.kind.name != "llvm":
            return None
        try:
            if self.reductions(func) != [[0, 0, 0, 0, 2, 2, 2]]:  # a cheap look before building a schedule
                return None
            sch = self.schedule(func)
            found = self._find_conv(sch, func)
            if found is None:
                return None
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

    @staticmethod
    def _vector_width(target):  # type: ignore[no-untyped-def]
        """float32 lanes of the target's vector registers (4 to 16; 8 where LLVM cannot say)."""
        try:
            width = int(tvm.target.codegen.llvm_get_vector_width(target)) // 32
        except Exception:  # noqa: BLE001 - an LLVM build without the query
            width = 8
        return max(4, min(16, width or 8))

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
    def _find_conv(sch, func):  # type: ignore[no-untyped-def]
        """The NCHW convolution block (``out[n,f,y,x] += data[n,c,..] * w[f,rc,ry,rx]``, c = rc or
        depthwise c = f) and its facts, or None."""
        block_rv = CPUConv2d._conv_block(sch)
        if block_rv is None:
            return None
        block = sch.get(block_rv)
        store = block.body
        if not isinstance(store, tvm.tirx.BufferStore) or str(store.buffer.dtype) != "float32":
            return None
        n, f, y, x, rc, ry, rx = [iv.var for iv in block.iter_vars]
        value = store.value
        if not (isinstance(value, tvm.tirx.Add) and isinstance(value.b, tvm.tirx.Mul)):
            return None
        loads = [value.a, value.b.a, value.b.b]
        if not all(isinstance(ld, tvm.ir.TensorLoad) and str(ld.source.dtype) == "float32" for ld in loads):
            return None
        if not loads[0].source.same_as(store.buffer) or not all(
                i.same_as(v) for i, v in zip(list(store.indices) + list(loads[0].indices), (n, f, y, x) * 2)):
            return None
        weight = next((ld for ld in loads[1:] if len(ld.indices) == 4 and all(
            i.same_as(v) for i, v in zip(ld.indices, (f, rc, ry, rx)))), None)
        data = loads[2] if weight is loads[1] else loads[1]
        extents = [iv.dom.extent for iv in block.iter_vars]
        if weight is None or len(data.indices) != 4 or not all(isinstance(e, tvm.tirx.IntImm) for e in extents):
            return None
        extents = [int(e) for e in extents]
        ana = tvm.sym.Analyzer()
        if ana.can_prove_equal(data.indices[1], rc):
            depthwise = False
        elif extents[4] == 1 and ana.can_prove_equal(data.indices[1], f + rc):
            depthwise = True
        else:
            return None
        loops = sch.get_loops(block_rv)
        realize = sch.get(loops[-1]).body if len(loops) == 7 else None
        if not isinstance(realize, tvm.s_tir.SBlockRealize) or not all(
                v.same_as(sch.get(lp).loop_var) for v, lp in zip(realize.iter_values, loops)):
            return None
        params = list(func.params)
        stride = next((st for st in (1, 2) if ana.can_prove_equal(data.indices[3], x * st + rx)
                       and ana.can_prove_equal(data.indices[2], y * st + ry)), None)
        pointwise = not depthwise and extents[5] == 1 and extents[6] == 1
        if pointwise:  # 1x1, stride 1: the pixel read is the pixel written
            ana.bind(ry, tvm.ir.Range(0, 1))
            ana.bind(rx, tvm.ir.Range(0, 1))
            pointwise = ana.can_prove_equal(data.indices[2], y) and ana.can_prove_equal(data.indices[3], x)
        return block_rv, {"oc": extents[1], "oh": extents[2], "ow": extents[3], "depthwise": depthwise,
                          "pointwise": pointwise, "stride": stride,
                          "weight": weight.source, "data": data.source,
                          "weight_is_param": any(weight.source.same_as(p) for p in params),
                          "data_is_param": any(data.source.same_as(p) for p in params)}

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
            sch.annotate(packed, "meta_schedule.layout_rewrite_preproc", True)
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
        sch.parallel(sch.fuse(n, fo, yo, xo))
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
        ``max_row_vectors`` vectors of the target's width or 8 lanes; ``rows`` whole rows per tile, at most
        ``max_pixels`` vectors of accumulators."""
        if not info["depthwise"] or info["stride"] is None:
            return None
        if info["stride"] == 2 and (info["data_is_param"] or int(info["data"].shape[3]) % 2):
            return None  # no padding stage to store the input de-interleaved (or an odd padded width)
        lanes = next((v for v in (width, 8) if v >= 8 and info["ow"] % v == 0
                      and info["ow"] // v <= self.max_row_vectors), None)
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
        sch.parallel(sch.fuse(n, f, yo))
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
            sch.annotate(packed, "meta_schedule.layout_rewrite_preproc", True)
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
        sch.parallel(sch.fuse(n, fo, po))
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

    @staticmethod
    def _parallel_rest(sch, block):  # type: ignore[no-untyped-def]
        """A stage the tile cannot take (a reduction after the convolution, a squeeze-excitation gate times the
        feature map): its leading spatial loops fused into one parallel loop (the batch loop alone has extent 1),
        else its outer loop in parallel."""
        loops = sch.get_loops(block)
        kinds = [int(iv.iter_type) for iv in sch.get(block).iter_vars]
        spatial = 0
        while len(loops) == len(kinds) and spatial < len(kinds) and kinds[spatial] == 0:
            spatial += 1  # (loops one per iterator, in order: the block as FuseTIR left it)
        try:
            sch.parallel(sch.fuse(*loops[:spatial - 1]) if spatial > 2 else loops[0])
        except Exception:  # noqa: BLE001 - left serial
            pass
