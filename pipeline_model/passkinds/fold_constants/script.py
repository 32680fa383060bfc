"""Code of the ``fold_constants`` kind that exported scripts contain, called by the engine too.

:func:`fold_constants` is the pass of an ``app.FoldConstants`` step (TVM imported inside the function).
"""


def fold_constants():  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """A module pass giving the module ``relax.transform.FoldConstant()`` gives, with one build instead of one
    per folded ``R.call_tir``.

    ``v = R.call_tir(f, (a, ...), out_ty)`` is foldable when ``f`` is a PrimFunc of the module, every argument
    is a constant or a variable found foldable before, there are no TIR variables and the output is one tensor
    of a static shape. All foldable bindings are recomputed by one Relax function built and run once on the CPU;
    each folded variable is bound to its constant, and ``FoldConstant`` propagates the constants, folds what is
    left and removes unused bindings. When that build or run fails, the pass is ``FoldConstant`` alone."""
    import tvm
    from tvm import relax

    call_tir_op = tvm.ir.Op.get("relax.call_tir")

    def static_tensor_type(ty):  # type: ignore[no-untyped-def]
        """``ty`` when it is one tensor type of a static shape, else ``None``."""
        shape = getattr(ty, "shape", None)
        if not isinstance(ty, relax.TensorType) or not isinstance(shape, relax.ShapeExpr):
            return None
        return ty if all(isinstance(d, tvm.tirx.IntImm) for d in shape.values) else None

    def foldable_bindings(mod):  # type: ignore[no-untyped-def]
        """The foldable bindings of every Relax function, in order: a list of ``(var, call)``."""
        found, known = [], set()
        for _gvar, func in mod.functions_items():
            if not isinstance(func, relax.Function) or not isinstance(func.body, relax.SeqExpr):
                continue
            for block in func.body.blocks:
                for binding in block.bindings:
                    value = binding.value
                    if not isinstance(binding, relax.VarBinding) or not isinstance(value, relax.Call):
                        continue
                    if not value.op.same_as(call_tir_op) or len(value.args) != 2 or len(value.ty_args) != 1:
                        continue
                    callee, args = value.args
                    if not isinstance(callee, tvm.ir.GlobalVar) or not isinstance(args, relax.Tuple):
                        continue
                    if callee not in mod or not isinstance(mod[callee], tvm.tirx.PrimFunc):
                        continue
                    if static_tensor_type(value.ty_args[0]) is None:
                        continue
                    if all(isinstance(a, tvm.ir.Constant) or (isinstance(a, relax.Var) and a in known)
                           for a in args.fields):
                        found.append((binding.var, value))
                        known.add(binding.var)
        return found

    def evaluate(mod, found):  # type: ignore[no-untyped-def]
        """The values of the ``found`` bindings: one Relax function computing them all, built and run once."""
        # Plain "llvm" (the host's generic CPU), as FoldConstant builds: the same instructions give the same
        # constants, bit for bit (a target's -mcpu may let LLVM fuse multiply-adds), and code for another
        # machine could not run here. LLVM's opt-level 0: the code runs once on tiny tensors, and optimizing
        # it was most of the build time (IEEE arithmetic, no fast-math: the same values at any level).
        target = tvm.target.Target({"kind": "llvm", "opt-level": 0})
        builder = relax.BlockBuilder()
        callees, values = {}, {}
        for _var, call in found:
            callee = call.args[0]
            if callee not in callees:
                callees[callee] = builder.add_func(mod[callee], callee.name_hint)
        with builder.function("fold_constants", []):
            with builder.dataflow():
                for var, call in found:
                    args = [values.get(a, a) for a in call.args[1].fields]
                    values[var] = builder.emit(relax.Call(call_tir_op, [callees[call.args[0]], relax.Tuple(args)],
                                                          call.attrs, call.ty_args))
                out = builder.emit_output(relax.Tuple([values[var] for var, _call in found]))
            builder.emit_func_output(out)
        exe = tvm.compile(builder.get(), target=target)
        results = relax.VirtualMachine(exe, tvm.cpu())["fold_constants"]()
        return [results[i].copyto(tvm.cpu()) for i in range(len(found))]

    def rebind(func, consts):  # type: ignore[no-untyped-def]
        """``func`` with the folded variables bound to their constants (the variables kept)."""
        blocks = []
        for block in func.body.blocks:
            bindings = [relax.VarBinding(b.var, consts[b.var]) if b.var in consts else b for b in block.bindings]
            blocks.append(relax.DataflowBlock(bindings) if isinstance(block, relax.DataflowBlock)
                          else relax.BindingBlock(bindings))
        return relax.Function(func.params, relax.SeqExpr(blocks, func.body.body), func.ret_ty, func.is_pure,
                              func.attrs)

    def transform(mod, _ctx):  # type: ignore[no-untyped-def]
        found = foldable_bindings(mod)
        if found:
            try:
                values = evaluate(mod, found)
            except Exception:  # noqa: BLE001 - any failure: FoldConstant's own way, one build per call
                return relax.transform.FoldConstant()(mod)
            consts = {var: relax.const(value) for (var, _call), value in zip(found, values)}
            folded = mod.clone() if hasattr(mod, "clone") else mod
            for gvar, func in mod.functions_items():
                if isinstance(func, relax.Function) and isinstance(func.body, relax.SeqExpr):
                    if any(b.var in consts for block in func.body.blocks for b in block.bindings):
                        folded[gvar] = rebind(func, consts)
            mod = folded
        return relax.transform.FoldConstant()(mod)

    return tvm.transform.module_pass(transform, opt_level=0, name="FoldConstants")
