"""The app's int8 DLight rule (engine side; imports TVM): ``app.CPUInt8`` of rule group ``app``.

It schedules the ``qdot`` blocks that ``app.QuantizedToInteger`` writes (uint8 x int8 -> int32 over weights packed
``[n/16, ..., k/4, 16, 4]``) with VNNI's ``vpdpbusd``: 16 int32 accumulators x 4 products per instruction, the
activation's 4 bytes broadcast, the weights' 64 bytes one load. Its own tensor intrinsic (TVM's are in
``tvm.s_tir.tensor_intrin.x86``, whose package import also loads every GPU intrinsic, ~37 s here). Exported scripts
copy this class (it references only ``tvm``).
"""

from __future__ import annotations

import tvm
import tvm.s_tir.dlight


class CPUInt8(tvm.s_tir.dlight.ScheduleRule):  # type: ignore[misc]  # copied verbatim into exported scripts
    """``qdot`` (``app.QuantizedToInteger``'s integer product, matmul ``[i, j, k]`` or NHWC convolution ``[b, y, x,
    o, ry, rx, rc]``) with its fused epilogue, on llvm targets with AVX-512 VNNI: ``rows`` output rows (pixels) x
    ``vectors`` groups of 16 output channels kept in registers, ``k`` (channels) in steps of 4 through
    ``vpdpbusd``, tiles in parallel over the cores, the epilogue (zero-point correction, rescale, requantize)
    per tile; the ``qpad`` copies and uint8 max pools row-parallel (:meth:`_rows`). Declines other functions and
    targets without VNNI (``app.CPUParallel`` then takes them)."""

    INTRINSIC = "app_dot_16x4_u8i8i32_vnni"
    #: Register tile: at most ``rows`` output rows (pixels) x ``vectors`` vectors of 16 channels, at most
    #: ``accumulators`` of them (32 zmm registers: the accumulators, the broadcast activation, a weight vector).
    rows = 8
    vectors = 4
    accumulators = 24

    @staticmethod
    def intrinsic():  # type: ignore[no-untyped-def]
        """Register (once) and return the name of the VNNI tensor intrinsic: ``C[16] += A[4] . B[16, 4]``."""
        from tvm.s_tir import TensorIntrin
        from tvm.script import tirx as T

        name = CPUInt8.INTRINSIC
        if TensorIntrin.get(name, allow_missing=True) is not None:
            return name

        @T.prim_func(s_tir=True)
        def desc(a: T.Buffer((4,), "uint8", offset_factor=1), b: T.Buffer((16, 4), "int8", offset_factor=1),
                 c: T.Buffer((16,), "int32", offset_factor=1)) -> None:
            with T.sblock("root"):
                T.reads(c[0:16], a[0:4], b[0:16, 0:4])
                T.writes(c[0:16])
                for i in T.serial(0, 16):
                    for k in T.serial(0, 4):
                        with T.sblock("update"):
                            vi, vk = T.axis.remap("SR", [i, k])
                            c[vi] = c[vi] + T.cast(a[vk], "int32") * T.cast(b[vi, vk], "int32")

        @T.prim_func(s_tir=True)
        def impl(a: T.Buffer((4,), "uint8", offset_factor=1), b: T.Buffer((16, 4), "int8", offset_factor=1),
                 c: T.Buffer((16,), "int32", offset_factor=1)) -> None:
            with T.sblock("root"):
                T.reads(c[0:16], a[0:4], b[0:16, 0:4])
                T.writes(c[0:16])
                a_i32 = T.reinterpret(a.vload([0], "uint8x4"), dtype="int32")
                # LLVM 22's signature: (<16 x i32>, <64 x i8>, <64 x i8>) (older LLVMs took three <16 x i32>)
                a_i8 = T.reinterpret(T.broadcast(a_i32, 16), dtype="int8x64")
                c[T.ramp(T.int32(0), 1, 16)] = T.call_llvm_pure_intrin(
                    T.llvm_lookup_intrinsic_id("llvm.x86.avx512.vpdpbusd.512"),
                    c.vload([0], dtype="int32x16"), a_i8, b.vload([0, 0], dtype="int8x64"), dtype="int32x16")

        TensorIntrin.register(name, desc, impl, override=True)
        return name

    def apply(self, func, target, _tunable):  # type: ignore[no-untyped-def]
        if not isinstance(func, tvm.tirx.PrimFunc) or target.kind.name != "llvm":
            return None
        from tvm.target import codegen

        try:
            if not codegen.llvm_cpu_has_features("avx512vnni", target):
                return None
        except Exception:  # noqa: BLE001 - not an x86 target
            return None
        names = self.block_names(func.body)  # (a look at the statements first: a schedule costs a copy)
        bytes_in = any(str(getattr(p, "dtype", "")) in ("uint8", "int8") for p in func.params)
        try:
            if any(n.startswith("qdot") for n in names):
                return self._schedule(func)
            if any(n.startswith("qpad") for n in names) or (bytes_in and any(n.startswith("pool_max") for n in names)):
                return self._rows(func)
        except Exception:  # noqa: BLE001 - a loop nest the rule cannot reshape: leave it to the next rule
            return None
        return None

    @staticmethod
    def block_names(stmt):  # type: ignore[no-untyped-def]
        """The names of the blocks in the statement ``stmt``."""
        todo, names = [stmt], []
        while todo:
            stmt = todo.pop()
            if isinstance(stmt, tvm.tirx.SeqStmt):
                todo.extend(stmt.seq)
            elif isinstance(stmt, tvm.s_tir.SBlockRealize):
                names.append(str(stmt.block.name_hint))
                todo.append(stmt.block.body)
            elif isinstance(getattr(stmt, "body", None), tvm.tirx.Stmt):
                todo.append(stmt.body)
        return names

    @staticmethod
    def has_product(stmt):  # type: ignore[no-untyped-def]
        """Whether the statement ``stmt`` holds a ``qdot`` block."""
        return any(n.startswith("qdot") for n in CPUInt8.block_names(stmt))

    @staticmethod
    def _rows(func):  # type: ignore[no-untyped-def]
        """``qpad`` (the NCHW4c padding copy) and a uint8 max pool with its requantization: rows in parallel, the
        innermost spatial loops serial per row (app.CPUParallel fused every loop into one parallel loop: an int64
        division and remainder per byte, 25 ns per element)."""
        sch = tvm.s_tir.Schedule(func)
        root = sch.get_sblock("root")
        for block in sch.get_child_blocks(root):
            spatial = [loop for loop, iv in zip(sch.get_loops(block), sch.get(block).iter_vars)
                       if int(iv.iter_type) == 0]
            keep = 2 if sch.get(block).name_hint.startswith("qpad") else 1  # (x, 4 channels) or x
            if len(spatial) > keep:
                sch.parallel(sch.fuse(*spatial[:-keep]))
            if keep == 2 and len(spatial) >= 2:  # the 4 channels unrolled: 4 stores per x, the border test
                sch.unroll(spatial[-1])  # shared (a loop of 4 bytes: qpad of 64 x 56 x 56 1.7x faster)
            window = sum(1 for iv in sch.get(block).iter_vars if int(iv.iter_type) == 2)
            for loop in sch.get_loops(block)[len(sch.get_loops(block)) - window:]:  # a pool's window unrolled
                if int(sch.get(loop).extent) <= 4:  # (ResNet-18's 3 x 3 max pool 1.3x faster)
                    sch.unroll(loop)
        return sch

    def _schedule(self, func):  # type: ignore[no-untyped-def]
        sch = tvm.s_tir.Schedule(func)
        root = sch.get_sblock("root")
        dots = [b for b in sch.get_child_blocks(root) if sch.get(b).name_hint.startswith("qdot")
                and any(int(iv.iter_type) == 2 for iv in sch.get(b).iter_vars)]  # (not its NCHW view)
        if len(dots) != 1:
            return None
        dot = dots[0]
        name = sch.get(dot).name_hint
        from tvm.s_tir.dlight.analysis import normalize_prim_func
        from tvm.s_tir.dlight.base import try_inline_contiguous_spatial

        # (DLight's inlining, as app.CPUMatmul's: inlining every block copied a GELU's polynomial dozens of times)
        infos = try_inline_contiguous_spatial(sch, normalize_prim_func(sch)) or []
        names = [sch.get(i.block_rv).name_hint for i in infos]
        if name not in names:
            return None
        at = names.index(name)
        dot = infos[at].block_rv
        for info in infos[:at]:  # what the product does not read (a zero point's cast): inlined into its readers
            sch.compute_inline(info.block_rv)
        epilogue = [i.block_rv for i in infos[at + 1:]]
        if any(not i.is_injective() for i in infos[at + 1:]):
            return None
        if not epilogue:  # (the accumulators' buffer stays "global": the intrinsic's is; compacted to the tile)
            epilogue = [sch.cache_write(dot, 0, "global")]
        loops = sch.get_loops(dot)  # spatial, then reduced (as qdot is written); unit loops dropped
        reduced = sum(1 for iv in sch.get(dot).iter_vars if int(iv.iter_type) == 2)
        if len(loops) == reduced + 1:  # one output row (pixel): a unit loop stands for it
            loops = [sch.add_unit_loop(loops[0]), *loops]
        spatial, reduce_ = loops[:-reduced], loops[-reduced:]
        *outer, pix, ch = spatial
        extent = lambda loop: int(sch.get(loop).extent)  # noqa: E731
        tiles = [(r * v, v, r) for r in range(1, self.rows + 1) for v in range(1, self.vectors + 1)
                 if extent(pix) % r == 0 and extent(ch) % (16 * v) == 0 and r * v <= self.accumulators]
        _, rows, vecs = max((a, r, v) for a, v, r in tiles)  # the most accumulators, then the most rows (the
        # epilogue writes NCHW: runs of `rows` pixels)
        po, pi = sch.split(pix, factors=[None, rows])
        co, cv, ci = sch.split(ch, factors=[None, vecs, 16])
        *rk, last = reduce_
        ko, ki = sch.split(last, factors=[None, 4])
        sch.reorder(*outer, po, co, *rk, ko, pi, cv, ci, ki)
        tile = sch.fuse(*outer, po, co)
        sch.parallel(tile)
        for block in epilogue:
            sch.reverse_compute_at(block, tile, preserve_unit_loops=True)
            inner = sch.get_loops(block)[-1]
            if extent(inner) % 16 == 0:
                sch.vectorize(sch.split(inner, factors=[None, 16])[1])
        sch.decompose_reduction(dot, rk[0] if rk else ko)
        sch.tensorize(ci, self.intrinsic())
        sch.unroll(pi)
        sch.unroll(cv)
        return sch
