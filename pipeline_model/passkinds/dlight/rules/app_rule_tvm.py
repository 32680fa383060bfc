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
    def same(a, b):  # type: ignore[no-untyped-def]
        """Whether the expressions ``a`` and ``b`` (extents, indices) are equal: equal numbers, or the same
        symbolic expression."""
        import tvm_ffi  # TVM's own FFI package (tvm.ir has only the asserting form)

        if isinstance(a, tvm.tirx.IntImm) and isinstance(b, tvm.tirx.IntImm):
            return int(a) == int(b)
        return bool(tvm_ffi.structural_equal(a, b))

    @classmethod
    def likely_guards(cls, sch):  # type: ignore[no-untyped-def]
        """``sch`` with its guards marked ``likely``: each condition of every block predicate (the lanes of a
        split symbolic extent, ``k < n``; a padded tile's ``i < m and j < n``) and the condition of every
        ``if_then_else`` (a padded copy's ``i < n``). TVM's ``LoopPartition`` reads ``likely`` as: split a loop
        of symbolic extent where the guard holds for all its inner iterations from the rest; the part that holds
        runs unguarded, so its vector lanes vectorize (in a guarded vector LLVM tested and stored lane by lane: a
        dynamic softmax 3.4x the static one's time, the same with the mark). A clause ``x - e < 0`` of a loop
        ``x`` of extent ``e``, or ``x % e - e < 0`` (``pad_einsum`` writes them), always holds and is dropped
        first: LoopPartition cannot split on it, and it kept the lanes guarded. The mark is a hint: what is
        computed is unchanged."""
        import tvm.sym
        import tvm_ffi  # TVM's own FFI package: its generic IR mutator (tvm.tirx has no Python one)

        extents = []  # (loop variable, extent) of the loops around the statement being rewritten

        def marked(cond):  # type: ignore[no-untyped-def]
            return isinstance(cond, tvm.tirx.IntImm) or getattr(getattr(cond, "op", None), "name", "") == "prim.likely"

        def in_range(cond):  # type: ignore[no-untyped-def]  # x - extent(x) < 0, or x % e - e < 0
            if not isinstance(cond, tvm.tirx.LT) or not isinstance(cond.a, tvm.tirx.Sub):
                return False
            if not (isinstance(cond.b, tvm.tirx.IntImm) and int(cond.b) == 0):
                return False
            x, e = cond.a.a, cond.a.b
            if isinstance(x, tvm.tirx.FloorMod) and cls.same(x.b, e):  # a fused loop's part: below its extent
                return True
            return any(x.same_as(v) and cls.same(e, n) for v, n in extents)

        def likely(cond):  # type: ignore[no-untyped-def]
            if isinstance(cond, tvm.tirx.And):
                return tvm.tirx.And(likely(cond.a), likely(cond.b))
            if isinstance(cond, tvm.tirx.Or) and (in_range(cond.a) or in_range(cond.b)):
                return tvm.tirx.const(True, "bool")
            return cond if marked(cond) else tvm.tirx.likely(cond)

        def loop(stmt, mutator):  # type: ignore[no-untyped-def]
            extents.append((stmt.loop_var, stmt.extent))
            try:
                return mutator.default_mutate(stmt)
            finally:
                extents.pop()

        def block(realize, mutator):  # type: ignore[no-untyped-def]
            realize = mutator.default_mutate(realize)
            if marked(realize.predicate):
                return realize
            guard = tvm.sym.Analyzer().simplify(likely(realize.predicate))  # true and c -> c
            return tvm.s_tir.SBlockRealize(realize.iter_values, guard, realize.block)

        def select(call, mutator):  # type: ignore[no-untyped-def]
            call = mutator.default_mutate(call)
            if getattr(call.op, "name", "") != "prim.if_then_else" or marked(call.args[0]):
                return call
            return tvm.tirx.if_then_else(likely(call.args[0]), call.args[1], call.args[2])

        func = sch.mod["main"]
        body = tvm_ffi.structural_mutate(func.body, [(tvm.tirx.For, loop), (tvm.s_tir.SBlockRealize, block),
                                                     (tvm.ir.expr.Call, select)])
        return sch if body.same_as(func.body) else cls.schedule(func.with_body(body))

    @staticmethod
    def root_blocks(func):  # type: ignore[no-untyped-def]
        """The root block's children (the blocks ``get_child_blocks`` of the root gives), in order, read from
        the statements without a schedule."""
        found = []
        todo = [func.body.block.body] if isinstance(func.body, tvm.s_tir.SBlockRealize) else [func.body]
        while todo:
            stmt = todo.pop()
            if isinstance(stmt, tvm.tirx.SeqStmt):
                todo.extend(stmt.seq)
            elif isinstance(stmt, tvm.s_tir.SBlockRealize):
                found.append(stmt.block)
            elif isinstance(stmt, tvm.tirx.IfThenElse):
                todo.extend(s for s in (stmt.then_case, stmt.else_case) if s is not None)
            elif isinstance(getattr(stmt, "body", None), tvm.tirx.Stmt):
                todo.append(stmt.body)
        return found[::-1]

    @classmethod
    def reductions(cls, func):  # type: ignore[no-untyped-def]
        """Iterator kinds (0 spatial, 2 reduction, ...) of each reduction block among the root block's children,
        read from the statements without a schedule."""
        kinds = [[int(iv.iter_type) for iv in block.iter_vars] for block in cls.root_blocks(func)]
        return [k for k in kinds if 2 in k]

    #: The blocks of ``app.Winograd``'s convolution, in order (the names its pass gives its TE stages).
    winograd_blocks = ("winograd_pad", "winograd_rows", "winograd_input", "winograd_product", "winograd_out_rows",
                       "winograd_output")

    @classmethod
    def winograd(cls, func):  # type: ignore[no-untyped-def]
        """Whether ``func`` is ``app.Winograd``'s convolution (its blocks named ``winograd_*``, with what fused
        into it): ``app.CPUConv2d`` schedules it, other rules leave it (``app.CPUMatmul`` took 0.12 s to find
        out that its product is not one of its matmuls: a ResNet-18 build 1.0 -> 1.9 s)."""
        names = {block.name_hint for block in cls.root_blocks(func)}
        return set(cls.winograd_blocks) <= names
