"""DLight rule ``app.CPUParallel``: every block's spatial loops on all cores.

After legalization a PrimFunc is a plain loop nest that LLVM compiles into one thread, and TVM's default build
adds no CPU schedule, so an untuned model used one core. DLight's own CPU rules (``cpu.GEMV``, ``cpu.Reduction``)
schedule few functions and slowed the bench CNN down 1.95x. Measured on the 2-core machine (bench models,
untuned, ``TVM_NUM_THREADS=2``): ResNet-18 139 -> 71 ms, MLP 206 -> 106 us, CNN 717 -> 629 us; blocks under
``min_work`` iterations stay serial (2026-11-23; docs/PERFORMANCE.md "Default-pipeline choices cited by the code",
the figures in its git history). Put it after ``FuseTIR``. After
``MetaScheduleApplyDatabase`` it leaves the tuned functions alone, but it measured slower on tuned transformers
(their small leftover kernels pay the thread start-up: 137 -> 197 us), so the tuned bundled pipelines do not use it.

Engine side (a rule class needs its TVM base class when it is defined). Exported scripts copy the class, and
:class:`AppRule` before it, with :func:`pipeline_model.emit.script_sources` (read with ``ast``, no TVM needed);
the class references only ``tvm``.
"""

from __future__ import annotations

import tvm
import tvm.s_tir.dlight

from pipeline_model.passkinds.dlight.rules.app_rule_tvm import AppRule


class CPUParallel(AppRule):  # type: ignore[misc]  # copied verbatim into exported scripts
    """Inline elementwise producers, then run each block's fused spatial loops in parallel (llvm targets).

    Blocks with fewer than ``min_work`` loop iterations (all loops; a symbolic extent, a dynamic sequence axis,
    counts as ``symbolic_extent``) stay serial: starting the worker threads costs microseconds, more than a
    small block takes on one core. With a symbolic extent only the loops down to the first symbolic one are
    fused into the parallel loop: the inner ones stay loops of their own, so no element pays a division by the
    symbolic extent to find its indices (a dynamic GPT-2's head transposes took 8x the static ones); a symbolic
    loop that is the innermost runs inside the parallel static loops in front of it. A sum or
    max over contiguous memory (an average pool, a softmax's maximum) runs in vector lanes (``rfactor``), and so
    does a whole tensor reduced to one value (a dynamic quantization's min and max: no spatial loop to share, one
    thread; an int8 BERT's 32 x 512 minimum 18.5 -> 1.3 us). A sum or max over one symbolic extent (a dynamic
    model's softmax over its key axis) runs in vector lanes too: the lanes' guard is marked ``likely``, so TVM's
    ``LoopPartition`` splits off the last partial vector and the whole vectors run unguarded (without it a
    dynamic Llama's softmax took 3.2x the static one's time, with it the same). A block under ``min_work``
    stays on the calling thread, its contiguous sum or max still in vector lanes (from ``min_vector_work``
    iterations: GPT-2's small softmax and layer norm). A pool's window runs on parallel channels with its padded
    input computed per channel (:meth:`_window_rows`)."""

    min_work = 1 << 16
    #: Fewest iterations of the static loops in front of an innermost symbolic loop for them alone to be the
    #: parallel loop (the symbolic loop then runs inside each).
    min_parallel_rows = 16
    #: What a symbolic extent counts as in the ``min_work`` test: a typical sequence length, as
    #: ``CPUMatmul.parallel_symbolic_extent`` (counted as 64, a dynamic model's 4-head softmax at length 128 ran
    #: on one thread what its static build ran on all).
    symbolic_extent = 128
    #: Fewest iterations of a block under ``min_work`` whose contiguous reduction still runs in vector lanes.
    min_vector_work = 1 << 10
    #: The largest window :meth:`_window_rows` takes (a pool's; larger reductions keep the fused loop).
    max_window = 64

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
            changed = symbolic_seen = False
            for info in infos:
                block = info.block_rv
                spatial, reduce, other = [], [], []
                work = 1
                for loop, kind in zip(sch.get_loops(block), info.dom_kind()):
                    {"S": spatial, "R": reduce, "O": other}[kind].append(loop)
                    extent = sch.get(loop).extent
                    work *= int(extent) if isinstance(extent, tvm.tirx.IntImm) else self.symbolic_extent
                    symbolic_seen = symbolic_seen or not isinstance(extent, tvm.tirx.IntImm)
                if reduce and not other and all(self._unit(sch, lp) for lp in spatial):  # a whole tensor to
                    # one value (a dynamic quantization's min and max): one thread, in vector lanes
                    vectorized = self._vector_reduce(sch, block, reduce, target)
                    changed = changed or vectorized is not sch
                    sch = vectorized
                    continue
                lanes_loop = None
                if spatial and not reduce and not other:  # elementwise: the innermost loop in vector lanes
                    spatial, lanes_loop = self._vector_lanes(sch, block, spatial, target)
                    changed = changed or lanes_loop is not None
                if not spatial or work < self.min_work:
                    if spatial and reduce and not other and work >= self.min_vector_work:  # one thread: a small
                        vectorized = self._vector_reduce(sch, block, reduce, target)  # softmax's max and sum in
                        if vectorized is sch:  # lanes (GPT-2's 4 x 32 x 32: scalar, the tuned build's lanes
                            vectorized = self._channel_lanes(  # took 21 instead of 32 us); an NHWC mean's
                                sch, block, spatial, reduce, target, parallel=False) or sch  # channels in lanes
                        changed = changed or vectorized is not sch
                        sch = vectorized
                    continue
                if reduce and not other and not self._contiguous_reduce(sch, block, reduce):
                    windowed = self._window_rows(sch, block, spatial, reduce, target)
                    if windowed is not None:  # a pool's window: parallel channels, plain rows
                        sch, changed = windowed, True
                        continue
                    laned = self._channel_lanes(sch, block, spatial, reduce, target, parallel=True)
                    if laned is not None:  # NHWC's mean over H x W: channels in lanes, H x W outside them
                        sch, changed = laned, True
                        continue
                sch.reorder(*spatial, *reduce, *other)
                symbolic = [i for i, lp in enumerate(spatial)
                            if not isinstance(sch.get(lp).extent, tvm.tirx.IntImm)]
                outer = spatial[:symbolic[0] + 1] if symbolic else spatial
                if not symbolic and not reduce and not other and lanes_loop is None and len(spatial) >= 3:
                    outer = self._rows(sch, spatial)  # no lanes: the inner loops stay plain loops
                if symbolic and symbolic[0] == len(spatial) - 1 and not reduce and self._static_work(
                        sch, spatial[:-1]) >= self.min_parallel_rows:  # the symbolic loop innermost: it stays
                    outer = spatial[:-1]  # a loop of its own (fused, every element divided by it: a dynamic
                    # GPT-2 h768's transposed key, 12 x 64 x seq, took 8x its static build's time)
                sch.parallel(sch.fuse(*outer) if len(outer) > 1 else outer[0])
                changed = True
                if reduce and not other:
                    sch = self._vector_reduce(sch, block, reduce, target)
            if not changed:
                return None
            return self.likely_guards(sch) if symbolic_seen else sch  # guarded lanes of a symbolic extent
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
        extents = [sch.get(lp).extent for lp in reduce]
        reduce_vars = [sch.get(lp).loop_var for lp in reduce]
        ivs = [next((iv for iv, value in bound if value.same_as(rv)), None) for rv in reduce_vars]

        for region in stmt.reads:
            trailing = region.region[-len(reduce):]
            shape = list(region.source.shape)[-len(reduce):]
            if len(trailing) == len(reduce) and all(
                    iv is not None and r.min.same_as(iv) and AppRule.same(e, ext)
                    for r, iv, e, ext in zip(trailing, ivs, shape, extents)):
                return True
        return False

    def _vector_reduce(self, sch, block, reduce, target):  # type: ignore[no-untyped-def]
        """A sum/max over contiguous memory in vector lanes (``rfactor``): a scalar float reduction is one long
        dependency chain LLVM may not reorder, a global average pool over 56x56 took 10x longer. Returns the
        schedule (its copy with the reduction vectorized, or ``sch`` unchanged where it does not apply)."""
        extents = [sch.get(lp).extent for lp in reduce]
        width = max(4, min(16, self.vector_bits(target) // 32))
        if all(isinstance(e, tvm.tirx.IntImm) for e in extents):
            total = 1
            for e in extents:
                total *= int(e)
            lanes = next((w for w in (width, width // 2, 4) if w >= 4 and total % w == 0 and total >= 4 * w), None)
        else:  # one symbolic extent: guarded lanes (see AppRule.likely_guards)
            lanes = width if len(reduce) == 1 else None
        if lanes is None or not self._contiguous_reduce(sch, block, reduce):
            return sch
        trial = sch.copy()
        try:
            fused = trial.fuse(*reduce) if len(reduce) > 1 else reduce[0]
            _ro, ri = trial.split(fused, [None, lanes])
            ndim = len(trial.get(block).writes[0].source.shape)
            partial = trial.rfactor(ri, factor_axis=ndim)
            if ndim:
                trial.reverse_compute_at(block, trial.get_loops(partial)[0])  # one parallel loop for both
            trial.vectorize(trial.get_loops(partial)[-1])
            trial.decompose_reduction(partial, trial.get_loops(partial)[-2])
            return trial
        except Exception:  # noqa: BLE001 - not a reduction rfactor takes: the scalar loop stays
            return sch

    def _window_rows(self, sch, block, spatial, reduce, target):  # type: ignore[no-untyped-def]
        """A reduction over a small window that does not walk contiguous memory (a pool's 3 x 3 window): only the
        output loops in front of its rows and columns are fused into the parallel loop (the rows too when those
        are fewer than ``min_parallel_rows``), the padded input it reads is computed there per channel, and the
        rows, columns and window stay plain loops in their order, which LLVM vectorizes (:meth:`_inline` leaves
        the padded copy a stage). Fused into one parallel loop with the window inside, every output element took
        a division, a remainder and 9 scalar guarded maxima: 6x slower than the function left unscheduled on one
        thread. 2 threads, 2026-12-06 (``/tmp`` scripts): 3 x 3 max pools stride 2 over 64 x 112 x 112
        (ResNet-18's) 773 -> 104 us, 96 x 28 x 28 76 -> 19 us, stride 1 over 64 x 56 x 56 544 -> 34 us. Returns the schedule's changed copy, or None where the
        shape does not fit (static loops, at least three output loops, a window of at most ``max_window``)."""
        extents = [sch.get(lp).extent for lp in [*spatial, *reduce]]
        if not all(isinstance(e, tvm.tirx.IntImm) for e in extents) or len(spatial) < 3:
            return None
        window = 1
        for e in extents[len(spatial):]:
            window *= int(e)
        if window > self.max_window:
            return None
        outer = spatial[:-2] if self._static_work(sch, spatial[:-2]) >= self.min_parallel_rows else spatial[:-1]
        trial = sch.copy()
        try:
            fused = trial.fuse(*outer) if len(outer) > 1 else outer[0]
            trial.parallel(fused)
        except Exception:  # noqa: BLE001 - not a loop nest parallel takes: the fused parallel loop stays
            return None
        for producer in trial.get_producers(block):  # the padded input, per channel
            attempt = trial.copy()
            try:
                attempt.compute_at(producer, fused)
            except Exception:  # noqa: BLE001, S112 - a producer that cannot move keeps its own loops
                continue
            trial = attempt
        laned = self._channel_lanes(trial, block, spatial[len(outer):], reduce, target, parallel=False)
        return trial if laned is None else laned

    def _channel_lanes(self, sch, block, spatial, reduce, target, parallel):  # type: ignore[no-untyped-def]
        """A reduction over outer axes whose innermost output axis is contiguous in the output and in the read
        (an NHWC pool's or mean's channels): that axis split into vector lanes, the reduction loops moved outside
        the lanes (each window element one vector maximum or sum), the rest of the spatial loops in front, fused
        into the parallel loop where ``parallel``. Channels last, the window inside the channels took a scalar
        strided walk per channel. Returns the schedule's changed copy, or None where it does not apply (a
        symbolic extent, channels no vector width divides, an axis not contiguous)."""
        channel = spatial[-1] if spatial else None
        extent = sch.get(channel).extent if channel is not None else None
        if not isinstance(extent, tvm.tirx.IntImm):
            return None
        width = max(4, min(16, self.vector_bits(target) // 32))
        lanes = next((w for w in (width, width // 2, 4) if w >= 4 and int(extent) % w == 0), None)
        stmt = sch.get(block)
        realize = sch.get(sch.get_loops(block)[-1]).body
        if lanes is None or not isinstance(realize, tvm.s_tir.SBlockRealize):
            return None
        var = next((iv.var for iv, value in zip(stmt.iter_vars, realize.iter_values)
                    if value.same_as(sch.get(channel).loop_var)), None)
        last = [stmt.writes[0], *stmt.reads]
        if var is None or not all(any(r.region[-1].min.same_as(var) for r in regions) for regions in (
                last[:1], last[1:])) or not AppRule.same(stmt.writes[0].source.shape[-1], extent):
            return None
        trial = sch.copy()
        try:
            outer, inner = trial.split(channel, [None, lanes])
            trial.reorder(*spatial[:-1], outer, *reduce, inner)
            if parallel:
                front = [*spatial[:-1], outer]
                trial.parallel(trial.fuse(*front) if len(front) > 1 else front[0])
            trial.vectorize(inner)
            init = trial.decompose_reduction(block, reduce[0])
            trial.vectorize(trial.get_loops(init)[-1])
            return trial
        except Exception:  # noqa: BLE001 - a loop nest these primitives do not take
            return None

    @staticmethod
    def _vector_lanes(sch, block, spatial, target):  # type: ignore[no-untyped-def]
        """The innermost of an elementwise block's ``spatial`` loops split into vector lanes (the target's vector
        width in the written dtype) and vectorized, where its extent is static and a multiple of them. Returns the
        loops left for the parallel loop (the split's outer part last) and the vectorized loop (None: left
        alone). Fused into one parallel loop, every element computed its indices with a division and a
        remainder and no lanes (a softmax's masked normalization over 12 x 128 x 128: 686 us)."""
        extent = sch.get(spatial[-1]).extent
        bits = max(int(tvm.DataType(str(w.source.dtype)).bits) for w in sch.get(block).writes)
        lanes = max(4, AppRule.vector_bits(target) // max(8, bits))
        if not isinstance(extent, tvm.tirx.IntImm) or int(extent) % lanes or int(extent) < lanes:
            return spatial, None
        outer, inner = sch.split(spatial[-1], [None, lanes])
        sch.vectorize(inner)
        return [*spatial[:-1], outer], inner

    def _rows(self, sch, spatial):  # type: ignore[no-untyped-def]
        """The loops of an elementwise block without vector lanes to fuse into its parallel loop: all but the two
        innermost where those are ``min_parallel_rows`` iterations or more, else all but the innermost, else
        all. Fused whole, every element computed its indices with divisions and remainders: an NCHW -> NHWC
        transpose of a 3 x 224 x 224 image (a CNN's input, channels last) took 25 us, with its rows in parallel
        and the columns and channels plain loops 8.5 (2 threads, 2026-12-06, ``/tmp`` script)."""
        for inner in (2, 1):
            if self._static_work(sch, spatial[:-inner]) >= self.min_parallel_rows:
                return spatial[:-inner]
        return spatial

    @staticmethod
    def _static_work(sch, loops):  # type: ignore[no-untyped-def]
        """Iterations of ``loops`` (all of static extent; 0 if any is not)."""
        work = 1
        for lp in loops:
            extent = sch.get(lp).extent
            if not isinstance(extent, tvm.tirx.IntImm):
                return 0
            work *= int(extent)
        return work

    @staticmethod
    def _unit(sch, loop):  # type: ignore[no-untyped-def]
        """Whether ``loop`` runs once."""
        extent = sch.get(loop).extent
        return isinstance(extent, tvm.tirx.IntImm) and int(extent) == 1

    def _work(self, sch, block):  # type: ignore[no-untyped-def]
        """Iterations of ``block`` (symbolic extents count as ``symbolic_extent``)."""
        work = 1
        for iv in sch.get(block).iter_vars:
            extent = iv.dom.extent
            work *= int(extent) if isinstance(extent, tvm.tirx.IntImm) else self.symbolic_extent
        return work

    def _inline(self, sch, infos):  # type: ignore[no-untyped-def]
        """DLight's ``try_inline``, except that a small block feeding a block 8x its size stays a stage of its
        own: inlined, it would be recomputed for every element of the big one (a squeeze-excitation's sigmoid
        over 144 channels became 451,584 sigmoids in the multiply by the 56x56 feature map); and a padded copy
        read by a reduction (a pool's) stays one too, computed per channel by :meth:`_window_rows`: inlined, every
        window element tested the padding (a 3 x 3 max pool over 64 x 28 x 28 41 -> 15 us)."""
        big = max(self._work(sch, i.block_rv) for i in infos)

        def feeds_big(block):  # type: ignore[no-untyped-def]
            if self._work(sch, block) * 8 > big:
                return False
            return any(self._work(sch, c) * 8 > big for c in sch.get_consumers(block))

        def pads_window(block):  # type: ignore[no-untyped-def]  # a padded copy read by a reduction
            value = getattr(sch.get(block).body, "value", None)
            if getattr(getattr(value, "op", None), "name", "") != "prim.if_then_else":
                return False
            return any(any(int(iv.iter_type) == 2 for iv in sch.get(c).iter_vars) for c in sch.get_consumers(block))

        def trial(primitive, skip_small):  # type: ignore[no-untyped-def]
            for i, info in enumerate(infos):
                if skip_small and (feeds_big(info.block_rv) or pads_window(info.block_rv)):
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
