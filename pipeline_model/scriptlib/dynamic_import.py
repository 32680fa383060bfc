"""Importing models with a dynamic axis (issue 34): the app's workarounds for TVM 0.27's frontend gaps.

Copied whole into exported scripts that load an ONNX or PyTorch model (:func:`pipeline_model.scriptlib.module_source`),
so a script imports the graph the app imports. TVM is imported inside the functions.

* :func:`onnx_import`: ``relax.frontend.onnx.from_onnx`` with one converter replaced. TVM's ``Range`` over a
  computed length (``Range(0, Shape(x)[1], 1)``, what dynamo exporters write for position ids) makes a fresh
  symbolic ``range_len_0`` instead of ``seq``, so ``x + positions`` loses its shape and a later ``Reshape`` fails
  ("Reshape expects the input tensor to have known shape"). With a constant start and step and a symbolic
  limit the app's converter emits ``R.arange(start, limit, step)``, whose length TVM knows.
* :func:`tighten_dynamic_shapes`: a ``torch.export`` module declares the bounds of its symbolic dims
  (``tir_var_lower_bound``/``tir_var_upper_bound``: ``Dim("seq", min=2, max=64)``), but TVM's frontend infers
  shapes without them: slicing a 64-row position buffer to ``seq`` rows gives ``min(seq, 64)`` rows, so the
  sum with the ``seq``-row embeddings has no known shape and LegalizeOps / FuseOps fail later. The pass marks
  a ``R.strided_slice`` that the bounds prove in bounds ``assume_inbound`` (its length is then ``end -
  begin``; a dim without a lower bound counts as at least 1) and simplifies the shape arguments of
  ``R.reshape`` / ``R.broadcast_to`` with the bounds, so TVM re-infers every later shape. (Stating the
  simpler shape with ``R.match_cast`` instead crashes ``relax.CanonicalizeBindings``: a TVM bug, reproducer
  in ``tests/data/tvm_bugs/canonicalize_match_cast_min``.) It also gives ``R.cumsum`` of a ``bool`` tensor the
  ``int64`` result PyTorch gives it (TVM's frontend keeps ``bool``, which neither computes the sum nor
  builds), and makes negative axes of ``R.strided_slice`` and ``R.cumsum`` positive: their legalization with a
  symbolic extent fails on ``-1`` ("Check failed: axis < src_tensor_dim (-1 vs. 2)", the ``Dim("seq")``
  GPT-2 of issue 34). Functions without symbolic dims are left as they are.
* :func:`torch_dim_names` / :func:`rename_symbolic_dims`: a torch model file's ``Dim("seq")`` named ``seq`` in
  the module instead of torch's ``s77`` (a ``.pt2`` archive does not keep the names).
"""

from __future__ import annotations

from typing import Any


def onnx_import(model: Any, **kwargs: Any) -> Any:
    """``from_onnx(model, **kwargs)`` with the symbolic-length ``Range`` converter (see the module docstring)."""
    import tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import onnx_frontend

    stock_map = onnx_frontend._get_convert_map
    stock_range = stock_map()["Range"]

    def scalar(value: Any) -> Any:
        if isinstance(value, tvm.ir.GenericConst) and value.value.numpy().size == 1:
            return value.value.numpy().item(), str(value.value.dtype)
        return None

    class SymbolicRange(stock_range):  # type: ignore[misc, valid-type]
        @classmethod
        def _impl_v12(cls, bb: Any, inputs: Any, attr: Any, params: Any) -> Any:
            start, limit, step = (onnx_frontend.get_constant(x, params) for x in inputs)
            start, step = scalar(start), scalar(step)
            if (start is not None and step is not None and "int" in start[1] and "int" in step[1]
                    and tvm.ir.is_prim_expr(limit) and str(limit.ty) == "int64"):
                return relax.op.arange(int(start[0]), limit, int(step[0]), start[1])
            return stock_range._impl_v12(bb, inputs, attr, params)

    def convert_map() -> Any:
        table = dict(stock_map())
        table["Range"] = SymbolicRange
        return table

    onnx_frontend._get_convert_map = convert_map
    try:
        return onnx_frontend.from_onnx(model, **kwargs)
    finally:
        onnx_frontend._get_convert_map = stock_map


def _bounds_analyzer(func: Any) -> Any:
    """An arithmetic analyzer that knows the bounds ``func`` declares for its symbolic dims (at least 1 each)."""
    from tvm import relax
    from tvm.sym.analyzer import Analyzer, ConstIntBound

    attrs = func.attrs or {}
    lower = dict(attrs["tir_var_lower_bound"]) if "tir_var_lower_bound" in attrs else {}
    upper = dict(attrs["tir_var_upper_bound"]) if "tir_var_upper_bound" in attrs else {}
    analyzer = Analyzer()
    for var in relax.analysis.defined_symbolic_vars(func):
        name = str(var.name)
        lo = max(int(lower.get(name, 1)), 1)  # an empty axis is no run: the match_cast says so if one comes
        hi = int(upper[name]) if name in upper else ConstIntBound.POS_INF
        analyzer.update(var, ConstIntBound(lo, hi), override=True)
    return analyzer


def tighten_dynamic_shapes(mod: Any) -> Any:
    """``mod`` with Relax shapes simplified by the declared dim bounds, bool cumsums in int64 (module docstring)."""
    import tvm
    import tvm_ffi
    from tvm import relax

    @relax.expr_functor.mutator
    class Tighten(relax.PyExprMutator):  # type: ignore[misc, name-defined]
        def __init__(self, module: Any, analyzer: Any) -> None:
            super().__init__(module)
            self.analyzer = analyzer
            self.changed = False

        def simple_shapes(self, call: Any) -> Any:
            """``call`` with the values of its shape arguments (``R.reshape``'s, ``R.broadcast_to``'s) simplified."""
            args = []
            for arg in call.args:
                if isinstance(arg, relax.ShapeExpr):
                    simple = [self.analyzer.simplify(v) for v in arg.values]
                    if not all(tvm_ffi.structural_equal(x, y) for x, y in zip(arg.values, simple)):
                        arg = relax.ShapeExpr(simple)
                args.append(arg)
            if all(x.same_as(y) for x, y in zip(args, call.args)):
                return call
            self.changed = True
            return self.builder_.normalize(relax.Call(call.op, args, call.attrs, call.ty_args))

        def cumsum(self, call: Any) -> Any:
            data, attrs = call.args[0], call.attrs
            ndim = data.ty.ndim
            axis = None if attrs.axis is None else int(attrs.axis)
            dtype = attrs.dtype
            if data.ty.dtype == "bool" and str(dtype or "bool") == "bool":
                data, dtype = self.builder_.emit(relax.op.astype(data, "int64")), "int64"
            if axis is not None and axis < 0 and ndim > 0:
                axis += ndim  # TVM 0.27's cumsum legalization fails on a negative axis
            if data.same_as(call.args[0]) and axis == attrs.axis:
                return call
            self.changed = True
            return self.builder_.normalize(relax.op.cumsum(data, axis, dtype, bool(attrs.exclusive)))

        def at_extent(self, value: Any, extent: Any) -> Any:
            """A slice bound of an axis of ``extent``: past the end -> the extent, negative constant -> counted
            from the end (when the bounds prove that in range), else as it is."""
            if isinstance(value, tvm.tirx.IntImm) and value.value < 0 and self.analyzer.can_prove(extent + value >= 0):
                return self.analyzer.simplify(extent + value)
            if self.analyzer.can_prove(value >= extent) and not self.analyzer.can_prove(value == extent):
                return extent
            return value

        def strided_slice(self, call: Any) -> Any:
            """Negative axes made positive (TVM 0.27's legalization with a symbolic extent fails on them) and
            ``assume_inbound`` where the bounds prove the slice in bounds (its length is then ``end - begin``,
            not ``min(end, extent) - begin``)."""
            data = call.args[0]
            ndim, shape = data.ty.ndim, getattr(data.ty.shape, "values", None)
            axes = [int(a.value) for a in call.args[1].fields]
            axes = [a + ndim if a < 0 and ndim > 0 else a for a in axes]
            begin, end = list(call.args[2].fields), list(call.args[3].fields)
            strides = list(call.args[4].fields) if len(call.args) > 4 else [1] * len(axes)
            if shape is not None:  # ``x[:, 1:]`` ends at INT64_MAX: at the extent; ``-1`` counts from the end
                begin, end = ([self.at_extent(v, shape[a]) for a, v in zip(axes, vals)] for vals in (begin, end))
            inbound = bool(call.attrs.assume_inbound) or shape is not None and all(
                isinstance(st, int) and st == 1 or getattr(st, "value", None) == 1 for st in strides) and all(
                self.analyzer.can_prove(0 <= b) and self.analyzer.can_prove(b <= e)
                and self.analyzer.can_prove(e <= shape[a]) for a, b, e in zip(axes, begin, end))
            if (axes == [int(a.value) for a in call.args[1].fields] and inbound == bool(call.attrs.assume_inbound)
                    and all(x.same_as(y) for x, y in zip(begin + end, [*call.args[2].fields, *call.args[3].fields]))):
                return call
            self.changed = True
            return self.builder_.normalize(relax.op.strided_slice(
                data, axes, begin, end, strides if len(call.args) > 4 else None, inbound))

        def visit_var_binding_(self, binding: Any) -> None:
            value = self.visit_expr(binding.value)
            if isinstance(value, relax.Call) and value.op == tvm.ir.Op.get("relax.cumsum"):
                value = self.cumsum(value)
            elif isinstance(value, relax.Call) and value.op == tvm.ir.Op.get("relax.strided_slice"):
                value = self.strided_slice(value)
            if isinstance(value, relax.Call):
                value = self.simple_shapes(value)
            kind = relax.DataflowVar if isinstance(binding.var, relax.DataflowVar) else relax.Var
            new_var = kind(binding.var.name, value.ty)
            self.builder_.emit_normalized(relax.VarBinding(new_var, value))
            self.set_var_remap(binding.var, new_var)

    out = mod
    for gvar, func in mod.functions_items():
        if not isinstance(func, relax.Function):
            continue
        if not relax.analysis.defined_symbolic_vars(func):
            continue  # static shapes: nothing to tighten, and TVM handles their slices and cumsums
        analyzer = _bounds_analyzer(func)
        tighten = Tighten(out, analyzer)
        new = tighten.visit_expr(func)
        if tighten.changed:
            new = relax.Function(new.params, new.body, new.body.body.ty, new.is_pure, new.attrs, new.span)
            out = out.clone() if out is mod else out
            out[gvar] = new
    return out


def torch_dim_names(exported: Any, dynamic_shapes: Any) -> dict[str, str]:
    """torch's symbol of each dynamic axis -> the name the user gave its ``Dim`` (``{"s77": "seq"}``), read from
    the ``dynamic_shapes`` of ``torch.export.export`` (a dict by argument name or a sequence by position, each
    entry ``{axis: Dim}`` or a sequence of ``Dim``/``None``). A ``.pt2`` archive does not keep the names."""
    placeholders = {n.name: n for n in exported.graph.nodes if n.op == "placeholder"}
    user = [placeholders[name] for name in exported.graph_signature.user_inputs if name in placeholders]
    if isinstance(dynamic_shapes, dict):
        specs = [(dict(zip(dynamic_shapes, user)).get(key) if key not in placeholders else placeholders[key], spec)
                 for key, spec in dynamic_shapes.items()]
    elif isinstance(dynamic_shapes, (list, tuple)):
        specs = list(zip(user, dynamic_shapes))
    else:
        return {}
    names: dict[str, str] = {}
    for node, spec in specs:
        shape = getattr(getattr(node, "meta", {}).get("val"), "shape", None) if node is not None else None
        axes = spec.items() if isinstance(spec, dict) else enumerate(spec) if isinstance(spec, (list, tuple)) else ()
        for axis, dim in axes:
            name, symbol = getattr(dim, "__name__", None), str(shape[axis]) if shape is not None else ""
            if name and str(name).isidentifier() and symbol.isidentifier() and symbol != name:
                names.setdefault(symbol, str(name))
    return names


def rename_symbolic_dims(mod: Any, names: dict[str, str]) -> Any:
    """``mod`` with the symbolic dims named in ``names`` (old -> new) renamed, their declared bounds included."""
    from tvm import relax, tirx

    out = mod
    for gvar, func in mod.functions_items():
        if not isinstance(func, relax.Function):
            continue
        have = {str(v.name) for v in relax.analysis.defined_symbolic_vars(func)}
        here = {old: new for old, new in names.items() if old in have and new not in have}
        if not here:
            continue
        bind = relax.transform.BindSymbolicVars({old: tirx.Var(new, "int64") for old, new in here.items()},
                                                gvar.name_hint)
        out = bind(out)
        new_func = out[gvar]
        for key in ("tir_var_lower_bound", "tir_var_upper_bound"):
            if new_func.attrs is not None and key in new_func.attrs:
                bounds = {here.get(str(k), str(k)): int(v) for k, v in dict(new_func.attrs[key]).items()}
                new_func = new_func.with_attr(key, bounds)
        out[gvar] = new_func
    return out
