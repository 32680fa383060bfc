"""DLight rule ``app.CPUMatmul``: register-blocked, vectorized, parallel matmuls.

Matmul, batch matmul and NT_matmul (with their fused elementwise epilogues) get a register-blocked, vectorized,
parallel schedule (docs/PERFORMANCE.md "CPU matmul schedule": whole models in 0.04-0.11x the time of the pipeline
before it). Put it before ``app.CPUParallel``, which takes what it declines.

Engine side (a rule class needs its TVM base class when it is defined). Exported scripts copy the class, and
:class:`AppRule` before it, with :func:`pipeline_model.emit.script_sources` (read with ``ast``, no TVM needed);
the class references only ``tvm``.
"""

from __future__ import annotations

import tvm
import tvm.s_tir.dlight

from pipeline_model.passkinds.dlight.rules.app_rule_tvm import AppRule


class CPUMatmul(AppRule):  # type: ignore[misc]  # copied verbatim into exported scripts
    """Register-blocked, vectorized matmul for llvm targets: matmul, batch matmul and NT_matmul (``W[n, k]``)
    with their fused elementwise epilogues (bias, GELU, residual add ...).

    ``C[..., i, j] += A[..., i, k] * B[..., k, j]`` (B's innermost index ``j``): tiles of ``rows`` output rows x
    ``vectors`` vectors of the target's width (16 floats with AVX-512, 8 with AVX/AVX2, 4 otherwise) are kept
    in registers while ``k`` runs outside the vectorized lanes (a broadcast of ``A[i, k]`` times a vector of
    ``B[k, j:j+16]``). With ``B[..., j, k]`` (NT_matmul: ``k`` innermost) ``k`` is split into vector lanes and
    rfactored: ``nt_rows x dots`` vector partial sums, added across lanes once per output. Tiles run in parallel
    over the cores; the epilogue runs per tile on the tile while it is in cache. A symbolic extent (a dynamic
    sequence axis) may be the rows, ``k`` or ``j`` of ``B[k, j]``, or ``j`` of ``B[j, k]``: symbolic rows and a
    symbolic ``j`` are padded to whole tiles (``pad_einsum``: the static build's tiles, the last one's valid part
    written out under a guard marked ``likely``, which ``LoopPartition`` splits off; the padded rows of ``A``
    read its last row in place, :meth:`_clamp_rows`), a symbolic ``k`` stays a loop of that length. A static ``j`` of ``B[k, j]`` that the full vector
    width does not divide (Llama's 344) is padded to whole tiles the same way (:meth:`_pad_columns`). A
    two-dimensional ``B[k, j]`` the function takes (a weight) is read from a copy packed in column panels
    (:meth:`_pack_weight`, lifted and run once by ``SplitLayoutRewritePreproc`` + ``LiftTransformParams``).
    Declines (returns ``None``, so a later rule such as ``app.CPUParallel`` takes the
    function) other symbolic extents, non-float32, other reductions, sizes the vector width does not divide (a narrow NN output under two vector widths, a
    classifier's 10 classes, is one vector of its own width instead), and matmuls under ``min_flops``. Matmuls
    of several rows under ``min_parallel_flops`` multiply-adds (known shapes only) run their tiles on the calling
    thread."""

    #: Tile of the ``B[k, j]`` kernel with 32 vector registers (AVX-512): 8 rows x 3 vectors = 24 accumulators
    #: (halved with 16 registers). Chosen by a sweep on the quiet 2-core AVX-512 machine (2026-11-25): 8 rows beat
    #: 4 by 20-40 % (a script outside bench/; its figures are in the git history of docs/PERFORMANCE.md).
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
    #: Fewest multiply-adds of a matmul whose tiles run in parallel; smaller ones run on the calling thread (a
    #: matmul under ~1 M takes under ~20 µs on one thread: a second one saves little once its launch and cold
    #: cache are paid). On TVM's own pool the floor was 4 M (a part cost a sleeping worker's wake-up and, on a
    #: busy machine, a time slice); on the app's own thread pool the caller takes the parts
    #: no worker has taken, and GPT-2's 32-row matmuls (1.6-2.1 M) in parallel made it 0.70-0.74x of its time at
    #: 4 M, Llama's 0.74x; with one core kept busy 1.15-1.3x, still well under ONNX Runtime (docs/PERFORMANCE.md
    #: "The app's thread pool"). One-row matmuls (memory-bound: every multiply-add reads its own weight) keep their
    #: parallel tiles.
    min_parallel_flops = 1 << 20
    #: What a symbolic extent counts as in the ``min_flops`` test.
    symbolic_extent = 64
    #: Fewest elements (a symbolic extent counted as ``parallel_symbolic_extent``) of the padded copy of ``B``'s
    #: symbolic columns (:meth:`_pad`; ``A``'s padded rows are read in place) copied in parallel: smaller ones
    #: stay on the calling thread (a wake-up each).
    min_parallel_pad = 1 << 18
    #: What a symbolic extent counts as in the ``min_parallel_flops`` test (a typical sequence length).
    parallel_symbolic_extent = 128

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

        if [kinds.count(2) for kinds in self.reductions(func)] != [1] or self.winograd(func):  # one reduction
            return None  # block, over one iterator (a cheap look first: a schedule, and inlining to find out, cost more)
        sch = self.schedule(func)
        infos = try_inline_contiguous_spatial(sch, normalize_prim_func(sch))
        if not infos or not infos[0].is_reduction() or any(not i.is_injective() for i in infos[1:]):
            return None
        form = self._matmul_form(sch, infos[0])
        if form is None:
            return None
        loops, extents, nt = form
        m, n, k = extents[-3], extents[-2], extents[-1]
        if any(not isinstance(e, int) for e in [*extents[:-3], k if nt else 0]):
            return None  # symbolic: only the rows, B[k, j]'s k or j, B[j, k]'s j
        flops = 1
        for e in extents:
            flops *= e if isinstance(e, int) else self.symbolic_extent
        lanes = full = self.lanes(target)
        # columns the full width misses (Llama's 344): padded to whole tiles of full vectors
        pad_cols = self._pad_columns(n, full, m) if not nt else None
        if not pad_cols and isinstance(k if nt else n, int):
            while lanes > 4 and (k if nt else n) % lanes:  # narrower vectors for sizes the full width misses
                lanes //= 2
            if not nt and n % lanes and n < 2 * full:  # a narrow output (a classifier's 10 classes): one vector
                lanes = n  # of n lanes (LLVM splits it into the widths it has), k still outside the lanes
        if flops < self.min_flops or (not pad_cols and isinstance(k if nt else n, int) and (k if nt else n) % lanes):
            return None
        block = infos[0].block_rv
        epilogue = [i.block_rv for i in infos[1:]]
        wide = lanes >= 16  # 32 vector registers (AVX-512); else 16
        most = (self.nt_rows if nt else self.rows) if wide else max(1, (self.nt_rows if nt else self.rows) // 2)
        rows = max(r for r in range(1, most + 1) if m % r == 0) if isinstance(m, int) else most
        if not isinstance(m, int) or not isinstance(n, int) or pad_cols:  # symbolic or padded columns: compute
            dots = self.dots if wide else max(1, self.dots // 2)  # whole tiles of a padded copy
            # a multiple of the column tile (a symbolic j: two vectors, as most static widths get)
            cols = pad_cols or (1 if isinstance(n, int) else dots if nt else lanes * min(2, self.vectors))
            loops, epilogue, clamped = self._pad(sch, block, epilogue, rows, cols)
            n = -(-n // cols) * cols if pad_cols else n if isinstance(n, int) else cols
        elif not nt and not epilogue:  # the matmul writes the output: accumulate in a local tile, write it back
            epilogue = [sch.cache_write(block, 0, "local")]
        elif epilogue:  # the intermediate between matmul and epilogue: one tile, per thread
            sch.set_scope(block, 0, "local")
        # (a symbolic extent, a sequence whose length the build does not know, counts as parallel_symbolic_extent
        # here: counted as symbolic_extent rows a Llama h128 MLP fell under the floor and ran serial what its static
        # build at length 128 ran in parallel, 1.32x; every symbolic matmul in parallel made short sequences pay a
        # worker's wake-up per matmul, BERT h128 at 32 1.21x)
        work = 1
        for e in extents:
            work *= e if isinstance(e, int) else self.parallel_symbolic_extent
        parallel = work >= self.min_parallel_flops or (isinstance(m, int) and m == 1)
        if nt:
            tile = self._nt(sch, block, loops, rows, n, lanes, parallel)
        else:
            tile = self._nn(sch, block, loops, rows, n, lanes, parallel)
        # The epilogue's vectors: with padded columns (Llama's 344) as wide as divide the real column count too,
        # so a vector is wholly in or out and the column guard, simplified, tests the vector, not each lane (a
        # lane-dependent guard made the whole epilogue scalar)
        cols_n = extents[-2]
        out_lanes = lanes
        if pad_cols and isinstance(cols_n, int):
            while out_lanes > 4 and cols_n % out_lanes:
                out_lanes //= 2
        for consumer in epilogue:
            sch.reverse_compute_at(consumer, tile, preserve_unit_loops=True)
            inner = sch.get_loops(consumer)[-1]
            if isinstance(sch.get(inner).extent, tvm.tirx.IntImm) and sch.get(inner).extent.value % out_lanes == 0:
                sch.vectorize(sch.split(inner, factors=[None, out_lanes])[1])
        if isinstance(m, int) and isinstance(cols_n, int):
            return sch
        return self.likely_guards(self._clamp_rows(sch, clamped))  # symbolic rows or columns: see both

    def _pad_columns(self, n, full, m):  # type: ignore[no-untyped-def]
        """The column tile ``B[k, j]``'s static ``n`` is padded to when the full vector width does not divide it
        (at least two vectors wide, more than one row), or None: ``v`` full vectors, ``v`` up to ``vectors``,
        the least padding (then the widest). Narrower vectors were the alternative: Llama's 344 columns (8 x 43)
        took tiles of one 8-float vector, 32 x 128 x 344 in 71 us against 18 us padded to 352."""
        if not isinstance(n, int) or n % full == 0 or n < 2 * full or m == 1 or full < 8:
            return None
        most = self.vectors if full >= 16 else min(2, self.vectors)
        _waste, width = min((-(-n // (v * full)) * v * full - n, -v * full) for v in range(1, most + 1))
        return -width

    @staticmethod
    def _pad(sch, block, epilogue, rows, cols):  # type: ignore[no-untyped-def]
        """A symbolic row count (or ``B[k, j]``'s column count) padded to whole tiles (``pad_einsum``): the
        matmul computes ``rows``-row (``cols``-column) tiles of its zero-padded inputs into a local tile, whose
        valid part the epilogue (or a copy) writes out, guarded. Without it a symbolic extent's tiles were
        guarded inside the ``k`` loop and their accumulators sized by the symbolic extent, off the registers.
        ``A``'s padding is inlined (read in place, :meth:`_clamp_rows`), ``B``'s padded columns are a copy.
        Returns the matmul's loops, the blocks to put under its tiles and the inputs read in place."""
        nbatch = len(sch.get_loops(block)) - 3
        sch.pad_einsum(block, [1] * nbatch + [rows, cols, 1])
        row = sch.get(block).iter_vars[-3].var
        clamped = []
        for pad in sch.get_producers(block):
            written = sch.get(pad).writes[0].source
            read = next(r for r in sch.get(block).reads if r.source.same_as(written))
            if len(read.region) >= 2 and read.region[-2].min.same_as(row):  # A[..., i, k] with padded rows: read
                clamped.append(sch.get(pad).reads[0].source)  # in place (the copy cost the dynamic build of
                sch.compute_inline(pad)  # Llama h128 a 1.5x slower MLP product), see _clamp_rows
                continue
            # a padded copy of B's symbolic columns: its rows in parallel when large
            shape = written.shape
            elements = 1
            for d in shape:
                elements *= int(d) if isinstance(d, tvm.tirx.IntImm) else CPUMatmul.parallel_symbolic_extent
            if not all(isinstance(d, tvm.tirx.IntImm) for d in shape) and elements >= CPUMatmul.min_parallel_pad:
                sch.parallel(sch.get_loops(pad)[0])
        copy, = sch.get_consumers(block)  # the padded result copied into the unpadded buffer
        if epilogue:
            sch.compute_inline(copy)
        else:
            epilogue = [copy]
        sch.set_scope(block, 0, "local")
        return sch.get_loops(block), epilogue, clamped

    @staticmethod
    def _clamp_rows(sch, inputs):  # type: ignore[no-untyped-def]
        """``sch`` with the matmul's padded reads of ``inputs`` (``if_then_else(i < n, A[.., i, k], 0)``, the
        padded copy inlined) read row ``min(i, n - 1)`` instead: always in bounds, and without a branch in the
        ``k`` loop. A padded row then repeats the last row, whose products only reach the padded rows of the
        result, which are not written out."""
        import tvm_ffi  # TVM's own FFI package: its generic IR mutator (tvm.tirx has no Python one)

        same = AppRule.same

        def clamp(call, mutator):  # type: ignore[no-untyped-def]
            call = mutator.default_mutate(call)
            if getattr(call.op, "name", "") != "prim.if_then_else":
                return call
            cond, load, _zero = call.args
            if not isinstance(cond, tvm.tirx.LT) or type(load).__name__ not in ("TensorLoad", "BufferLoad"):
                return call
            buf = getattr(load, "source", getattr(load, "buffer", None))
            if not any(buf.same_as(b) for b in inputs) or len(load.indices) < 2:
                return call
            index, extent = load.indices[-2], buf.shape[-2]
            if not (same(cond.a, index) and same(cond.b, extent)):
                return call
            rows = tvm.tirx.Min(index, extent - 1)
            return tvm.tirx.BufferLoad(buf, [*load.indices[:-2], rows, load.indices[-1]])

        func = sch.mod["main"]
        body = tvm_ffi.structural_mutate(func.body, [(tvm.ir.expr.Call, clamp)])
        return sch if body.same_as(func.body) else CPUMatmul.schedule(func.with_body(body))

    def _outer(self, sch, batch, io, jo, parallel):  # type: ignore[no-untyped-def]
        if not parallel and not all(isinstance(sch.get(lp).extent, tvm.tirx.IntImm) for lp in (*batch, jo, io)):
            # serial tiles of a symbolic extent: loops of their own, whose guards (i < n, j < n) are linear in
            # them, so LoopPartition splits off the last partial tile (fused, the guard divides by the symbolic
            # tile count: a dynamic attention's scores product stored lane by lane, 1.9x the static one's time)
            return io
        fused = sch.fuse(*batch, jo, io)
        if parallel and (not isinstance(sch.get(fused).extent, tvm.tirx.IntImm) or int(sch.get(fused).extent) > 1):  # one tile: starting the thread pool would cost more than it gives
            sch.parallel(fused)
        return fused

    def _nn(self, sch, block, loops, rows, n, lanes, parallel):  # type: ignore[no-untyped-def]
        """``B[k, j]``: rows x (vectors x lanes) accumulators, ``k`` outside the vector lanes."""
        *batch, i, j, k = loops
        most = self.vectors if lanes >= 16 else min(2, self.vectors)
        nvec = max(v for v in range(1, most + 1) if n % (v * lanes) == 0)
        if rows == 1:  # one row of accumulators: wider tiles read B's rows in longer contiguous runs
            wide = [v for v in range(nvec, self.gemv_vectors + 1)
                    if n % (v * lanes) == 0 and n // (v * lanes) >= self.gemv_min_tiles]
            nvec = max(wide, default=nvec)
        self._pack_weight(sch, block, nvec * lanes)
        io, ii = sch.split(i, factors=[None, rows])
        jo, jv, jl = sch.split(j, factors=[None, nvec, lanes])
        sch.reorder(*batch, jo, io, k, ii, jv, jl)
        outer = self._outer(sch, batch, io, jo, parallel)
        sch.unroll(ii)
        sch.unroll(jv)
        sch.vectorize(jl)
        init = sch.decompose_reduction(block, k)
        init_l = sch.get_loops(init)[-1]
        if sch.get(init_l).kind != tvm.tirx.ForKind.VECTORIZED:
            sch.vectorize(init_l)
        return outer

    @staticmethod
    def _pack_weight(sch, block, width):  # type: ignore[no-untyped-def]
        """A two-dimensional ``B[k, j]`` that the function takes (a weight, in a model), or its zero-padded copy
        (:meth:`_pad_columns`), read through a copy packed in column panels ``[j / width, k, width]``: a tile then
        reads its ``width`` columns of consecutive ``k`` contiguously, where ``B``'s rows lie ``j``'s extent apart (GPT-2 at 768 hidden: 9 kB, a new page every
        ``k``, which the hardware prefetcher does not follow). A one-row product reads each weight once, but a tile
        then streams one contiguous run instead of ``k`` short ones: a classifier's 1 x 1024 @ 1024 x 1000 with
        its weights out of cache took 194-214 us packed, 537-545 us as it is (2 threads, AMD Zen 4, issue 35).
        The copy is marked for
        ``SplitLayoutRewritePreproc``, so ``LiftTransformParams`` runs it once on the weights (without those
        steps it runs at every call, a copy of ``B`` against a product ``rows``-times its size)."""
        stmt = sch.get(block)
        j_var, k_var = stmt.iter_vars[-2].var, stmt.iter_vars[-1].var
        params = list(sch.mod["main"].params)
        for index, region in enumerate(stmt.reads):
            buf = region.source
            shape = list(buf.shape)
            if len(shape) != 2 or not all(isinstance(d, tvm.tirx.IntImm) for d in shape) or int(shape[1]) % width:
                continue
            mins = [r.min for r in region.region]
            if not (mins[0].same_as(k_var) and mins[1].same_as(j_var)):
                continue
            if any(buf.same_as(p) for p in params):
                packed = sch.cache_read(block, index, "global")
            else:  # the zero-padded copy of a weight (padded columns): packed as it is written
                producers = [b for b in sch.get_producers(block)
                             if any(w.source.same_as(buf) for w in sch.get(b).writes)]
                if len(producers) != 1 or [len(r.source.shape) for r in sch.get(producers[0]).reads] != [2] \
                        or not any(sch.get(producers[0]).reads[0].source.same_as(p) for p in params):
                    continue
                packed = producers[0]
            sch.transform_layout(packed, ("write", 0), lambda kk, jj: (jj // width, kk, jj % width))
            sch.annotate(packed, "meta_schedule.layout_rewrite_preproc", 1)  # 1: as a replayed trace has it
            return

    def _nt(self, sch, block, loops, rows, n, lanes, parallel):  # type: ignore[no-untyped-def]
        """``B[j, k]``: ``k`` split into vector lanes and rfactored: rows x dots vector partial sums."""
        *batch, i, j, k = loops
        most = self.dots if lanes >= 16 else max(1, self.dots // 2)  # AVX2 and narrower: 16 registers
        dots = max(d for d in range(1, most + 1) if n % d == 0) if isinstance(n, int) else most
        io, ii = sch.split(i, factors=[None, rows])
        jo, ji = sch.split(j, factors=[None, dots])
        ko, kl = sch.split(k, factors=[None, lanes])
        sch.reorder(*batch, jo, io, ko, ii, ji, kl)
        outer = self._outer(sch, batch, io, jo, parallel)
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
