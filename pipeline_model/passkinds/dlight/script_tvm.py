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

This is the code exported scripts contain (the kind's "script" module, engine side because a rule class
needs its TVM base class when it is defined): the engine's recipe names the class by its dotted name, and
exported scripts copy its source (read with ``ast``, no TVM needed:
:func:`pipeline_model.emit.script_source`). It references only ``tvm``.
"""

from __future__ import annotations

import tvm
import tvm.s_tir.dlight


class CPUParallel(tvm.s_tir.dlight.ScheduleRule):  # type: ignore[misc]  # copied verbatim into exported scripts
    """Inline elementwise producers, then run each block's fused spatial loops in parallel (llvm targets).

    Blocks with fewer than ``min_work`` loop iterations (all loops, symbolic extents count as large) stay
    serial: starting the worker threads costs microseconds, more than a small block takes on one core."""

    min_work = 1 << 16

    def apply(self, func, target, _tunable):  # type: ignore[no-untyped-def]
        from tvm.s_tir.dlight.analysis import normalize_prim_func
        from tvm.s_tir.dlight.base import try_inline

        if not isinstance(func, tvm.tirx.PrimFunc) or target.kind.name != "llvm":
            return None
        try:
            sch = tvm.s_tir.Schedule(func)
            infos = normalize_prim_func(sch)
            if infos is None:
                return None
            infos = try_inline(sch, infos)
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
            return sch if changed else None
        except Exception:  # noqa: BLE001 - a loop nest the rule cannot reshape: leave the function as it is
            return None
