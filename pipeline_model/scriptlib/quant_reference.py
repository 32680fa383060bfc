"""The reference of a quantized (int8) model's check: the model as loaded, each op computed in float64 and rounded
once to its float32 result.

``tvm.compile`` of a QDQ model as loaded computes ``quantize(conv(dequantize(x), dequantize(w)) + bias)`` in
float32 arithmetic: a convolution's thousands of products and sums round on the way, and whenever the value before a
``quantize`` lies within that error of a half step the element flips by one step; the flip propagates and others
follow through the requantizations (ResNet-18, 32 of them: the float32 build flips 14 of 3.6 million elements on its
own, ends 1 step from the exact values and 2 steps from the app's integer result; docs/PERFORMANCE.md).
:func:`float64_reference` evaluates the same graph with every op computed in float64 and its float32 result rounded
once (as a correctly rounded float32 op would give it: a product of two float32 values is exact in float64 and a
sum of thousands of them 2^29 times closer than float32's rounding), ``quantize`` / ``dequantize`` written out as
ONNX defines them (``saturate(round(x / scale) + zero_point)`` rounding half to even; ``(q - zero_point) * scale``).
Its own rounding no longer flips elements: the flips left are the build's own (the last bit of a float32 epilogue;
integer kernels skip the float32 rounding of ``dequantize``). Measured on ResNet-18, MobileNetV3, GPT-2 and BERT:
ONNX Runtime and the app within 1 step, the check's int8 tolerance; an off-by-one zero point 7-19 steps. TVM
imported inside the functions (engine and exported scripts).
"""

from __future__ import annotations

from typing import Any, Optional

from pipeline_model.scriptlib.outputs import module_is_quantized

#: What the check of a quantized model compares with (engine.build.reference names it in the result).
QUANT_REFERENCE = "model as loaded, each op in float64 rounded to float32, tvm.compile default pipeline, llvm"


def float64_reference(mod: Any) -> Any:
    """``mod`` (a model as loaded) computed in float64, each float32 op's result rounded to float32 once (see the
    module docstring): float32 parameters (weights, inputs) cast on entry, float32 constants widened,
    ``astype(float32)`` and ops whose attributes ask for float32 made float64, ``quantize`` / ``dequantize``
    written as float64 arithmetic (half to even, saturated); layer, group and RMS norms (float32 or float16 only in
    TVM) stay float32. Its float outputs are float64 holding float32 values. Functions other than Relax ones are
    left as they are. Raises when an op does not take float64."""
    import numpy as np
    import tvm
    from tvm import relax

    f32, f64 = "float32", "float64"
    float32_only = ("relax.nn.layer_norm", "relax.nn.group_norm", "relax.nn.rms_norm")

    def is_f32(expr):  # type: ignore[no-untyped-def]
        ty = getattr(expr, "ty", None)
        return isinstance(ty, relax.TensorType) and str(ty.dtype) == f32

    def widened(expr):  # type: ignore[no-untyped-def]
        """``expr`` as float64 (itself when it is)."""
        ty = getattr(expr, "ty", None)
        return expr if isinstance(ty, relax.TensorType) and str(ty.dtype) == f64 else relax.op.astype(expr, f64)

    def per_axis(value, axis, ndim):  # type: ignore[no-untyped-def]
        """A scale or zero point of ``quantize``/``dequantize`` shaped to broadcast along ``axis``."""
        shape = value.ty.shape
        if shape is None or len(shape) == 0 or ndim == 0:
            return value
        if len(shape) == 1 and isinstance(shape[0], tvm.tirx.IntImm) and int(shape[0]) == 1:
            return relax.op.reshape(value, [])
        dims = [1] * ndim
        dims[axis % ndim] = -1
        return relax.op.reshape(value, dims)

    @relax.expr_functor.mutator
    class Widen(relax.PyExprMutator):  # type: ignore[misc]
        def __init__(self, mod, params):  # type: ignore[no-untyped-def]
            super().__init__(mod)
            self.params = params

        def visit_var_(self, var):  # type: ignore[no-untyped-def]
            if var in self.params:
                return self.builder_.emit(relax.op.astype(var, f64))
            return super().visit_var_(var)

        def visit_generic_const_(self, const):  # type: ignore[no-untyped-def]
            if is_f32(const):
                return relax.const(const.value.numpy().astype(np.float64), f64)
            return const

        def visit_call_(self, call):  # type: ignore[no-untyped-def]
            name = call.op.name if isinstance(call.op, tvm.ir.Op) else ""
            if name in ("relax.quantize", "relax.dequantize"):
                new = self.qdq(name, call)
            elif name == "relax.astype" and str(call.attrs.dtype) == f32:
                new = relax.op.astype(self.visit_expr(call.args[0]), f64)
            elif name in float32_only:  # (TVM's layer norm takes float32 or float16 only)
                args = [self.visit_expr(a) for a in call.args]
                args = [relax.op.astype(n, f32) if is_f32(a) else n for a, n in zip(call.args, args)]
                new = relax.op.astype(relax.Call(call.op, args, call.attrs), f64)
            else:
                new = super().visit_call_(call)
                if is_f32(self.builder_.normalize(new)):
                    new = relax.op.astype(new, f64)
            if is_f32(call):  # the op's float32 result: its exact value rounded once
                new = relax.op.astype(relax.op.astype(new, f32), f64)
            return new

        def qdq(self, name, call):  # type: ignore[no-untyped-def]
            data, scale, zero = (self.visit_expr(a) for a in call.args)
            data = self.builder_.normalize(data)
            ndim = len(data.ty.shape) if data.ty.shape is not None else 0
            axis = int(call.attrs.axis)
            scale, zero = (per_axis(self.builder_.normalize(widened(v)), axis, ndim) for v in (scale, zero))
            if name == "relax.dequantize":
                return relax.op.multiply(relax.op.subtract(widened(data), zero), scale)
            out = str(call.attrs.out_dtype)
            info = np.iinfo(out)
            rounded = relax.op.add(relax.op.round(relax.op.divide(data, scale)), zero)
            return relax.op.astype(relax.op.clip(rounded, relax.prim_value(float(info.min)),
                                                 relax.prim_value(float(info.max))), out)

    functions = dict(mod.functions_items())
    for gvar, func in mod.functions_items():
        if isinstance(func, relax.Function):
            functions[gvar] = Widen(mod, {p for p in func.params if is_f32(p)}).visit_expr(func)
    return relax.transform.Normalize()(tvm.IRModule(functions, attrs=mod.attrs))


def check_reference(mod: Any) -> tuple[Any, Optional[str]]:
    """``(module, label)`` the check compares with: a quantized model (:func:`module_is_quantized`) as
    :func:`float64_reference` with :data:`QUANT_REFERENCE`; any other model, or one with an op that does not take
    float64, ``mod`` itself with None (the float32 reference of float models)."""
    if module_is_quantized(mod):
        from tvm import relax

        try:  # (legalized here: an op whose legalization refuses float64 keeps the float32 reference)
            return relax.transform.LegalizeOps()(float64_reference(mod)), QUANT_REFERENCE
        except Exception:  # noqa: BLE001 - TVM raises its own errors for an op without float64: keep float32
            pass
    return mod, None
