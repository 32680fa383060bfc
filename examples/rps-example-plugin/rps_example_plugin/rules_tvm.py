"""DLight rule ``example.ElementwiseVector`` (imports TVM: the engine imports it, exported scripts copy the class)."""

from __future__ import annotations

import tvm
import tvm.s_tir.dlight


class ElementwiseVector(tvm.s_tir.dlight.ScheduleRule):  # type: ignore[misc]
    """A PrimFunc of one elementwise block (every loop spatial, static extents, a multiple of ``lanes`` elements)
    on an llvm target: its loops fused, the inner ``lanes`` vectorized, the outer part run on all cores. Anything
    else (a matmul, a reduction) is left to the rules after it."""

    lanes = 8

    def apply(self, func, target, _tunable):  # type: ignore[no-untyped-def]
        from tvm.s_tir.dlight.analysis import normalize_prim_func

        if not isinstance(func, tvm.tirx.PrimFunc) or target.kind.name != "llvm":
            return None
        sch = tvm.s_tir.Schedule(func)
        infos = normalize_prim_func(sch)
        if infos is None or len(infos) != 1 or any(kind != "S" for kind in infos[0].dom_kind()):
            return None
        loops = sch.get_loops(infos[0].block_rv)
        total = 1
        for loop in loops:
            extent = sch.get(loop).extent
            if not isinstance(extent, tvm.tirx.IntImm):
                return None
            total *= int(extent)
        if not loops or total % self.lanes:
            return None
        fused = sch.fuse(*loops) if len(loops) > 1 else loops[0]
        outer, inner = sch.split(fused, [None, self.lanes])
        sch.parallel(outer)
        sch.vectorize(inner)
        return sch
