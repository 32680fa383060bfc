"""Kind ``quantized_int``: the step ``app.QuantizedToInteger`` computes quantized convolutions and matmuls in integers.

A QDQ model (ONNX Runtime's ``quantize_static``) imports as ``dequantize -> conv2d/matmul -> quantize`` in float32:
the int8 weights and uint8 activations are widened to float and multiplied in float, 4x slower than ONNX Runtime on
ResNet-18; ``quantize_dynamic``'s ``MatMulInteger`` imports as an int32 matmul of widened operands. This step
rewrites both into ``qdot``, a uint8 x int8 -> int32 product over weights packed ``[n/16, k/4, 16, 4]`` (by a call
of its own that ``LiftTransformParams`` lifts), with the zero-point correction and the rescaling as elementwise ops
that ``FuseOps`` fuses into it together with the requantization; the ``app.CPUInt8`` DLight rule schedules ``qdot``
with VNNI's ``vpdpbusd`` (16 int32 lanes, 64 multiply-adds per instruction). Exact in integers; the float epilogue
rounds like the original's (within one quantization step: the check's int8 tolerance).

Files: ``__init__.py`` (spec, recipe, export; TVM-free) and ``script.py`` (:func:`.script.quantized_to_integer`,
the pass the engine runs and exported scripts contain, and its parts).
"""

from __future__ import annotations

from typing import Any

from pipeline_model import emit
from pipeline_model.passkinds.base import ExportPiece, ScriptPassKind

PASS_ID = "app.QuantizedToInteger"
#: The code exported scripts contain (and the engine calls): :func:`.script.quantized_to_integer`.
SCRIPT_MODULE = "pipeline_model.passkinds.quantized_int.script"
#: The functions of :data:`SCRIPT_MODULE` the pass calls (exported scripts hold them too).
PARTS = ("quant_patterns", "quant_kernels", "quant_rewrites")


class QuantizedToIntegerKind(ScriptPassKind):
    """Quantized convolutions and matmuls computed in integers (see the module docstring)."""

    name = "quantized_int"
    catalogue_order = 48

    pass_id = PASS_ID
    script_module = SCRIPT_MODULE
    script_function = "quantized_to_integer"
    title = "Integer kernels for quantized ops (the app's)"
    doc = ("Rewrites conv2d/matmul of dequantized uint8 activations and int8 weights (QDQ models) and "
           "MatMulInteger (dynamically quantized models) into a uint8 x int8 -> int32 product (qdot) over "
           "packed weights, with the zero-point correction and the rescaling as its fused epilogue; "
           "app.CPUInt8 schedules it with VNNI (vpdpbusd); without AVX-512 VNNI in the target it changes nothing. "
           "Other dtypes, symbolic shapes and weight zero points that are not a constant zero are left as they "
           "are. Put it before LegalizeOps. The app's "
           "own step: exported scripts contain its code.")
    tvm_name = "tvm.relax.PyExprMutator"

    def export_step(self, pass_id: str, params: dict[str, Any], expr: emit.Expr, *, index: int,
                    label: str) -> ExportPiece:
        """The default piece with the pass's parts (:data:`PARTS`) copied before it."""
        piece = super().export_step(pass_id, params, expr, index=index, label=label)
        piece.helpers[:0] = [emit.script_source(SCRIPT_MODULE, name) for name in PARTS]
        return piece


KIND = QuantizedToIntegerKind()
