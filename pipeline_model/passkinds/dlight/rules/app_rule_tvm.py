"""What the app's own DLight rules share: :class:`AppRule` (engine side; imports TVM).

Exported scripts that use an app rule copy this class before the rule (:func:`pipeline_model.emit.script_sources`
follows a rule's base class into this module); it references only ``tvm``.
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
    def vector_bits(target):  # type: ignore[no-untyped-def]
        """Bits of one vector register of ``target`` as LLVM reports them (512 with AVX-512); 256 where LLVM
        cannot say."""
        try:
            return int(tvm.target.codegen.llvm_get_vector_width(target)) or 256
        except Exception:  # noqa: BLE001 - an LLVM build without the query
            return 256

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
