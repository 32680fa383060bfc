"""The titles and descriptions of the passes the app itself defines, translated for the GUI.

Pass titles made from TVM's names ("Fuse Ops", "Legalize Ops") and TVM's docstrings stay as TVM writes
them (engineers search for those names); the passes this app adds (a custom Python pass, binding a
model's weights) have prose titles and descriptions of our own, listed here for Qt's ``lupdate``
(context ``PassCatalogue``). :func:`translate_catalogue` puts the translations into a loaded catalogue.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from widgets.doc_text import mark_own

CONTEXT = "PassCatalogue"

#: Texts of the app's own pass specs (titles, descriptions, parameter docs), exactly as the specs have them.
OWN_TEXTS = (
    QT_TRANSLATE_NOOP("PassCatalogue", "Custom Python pass"),
    QT_TRANSLATE_NOOP("PassCatalogue", "A pass written in Python: the source defines a tvm.transform.Pass, a class "
                      "decorated with @tvm.transform.module_pass / @relax.transform.function_pass, or a function "
                      "taking an IRModule and returning one (the last one defined is used). Runs only when custom "
                      "code is trusted."),
    QT_TRANSLATE_NOOP("PassCatalogue", "Python source of the pass."),
    QT_TRANSLATE_NOOP("PassCatalogue", "Bind model weights as constants"),
    QT_TRANSLATE_NOOP("PassCatalogue", "Binds the weights the model carries (ONNX initializers, PyTorch parameters and buffers) as "
                      "constants into the functions that take them (relax.transform.BindParams with the model's "
                      "own values); they leave the signature, so the built module takes only the inputs. Put it "
                      "first and follow it with FoldBatchnormToConv2D and FoldConstant to fold batch norm and other "
                      "weight-only work into the weights at compile time. Models without weights of their own "
                      "(built-in, TVMScript) have nothing to bind."),
    QT_TRANSLATE_NOOP("PassCatalogue", "Sink reshapes below elementwise ops (the app's)"),
    QT_TRANSLATE_NOOP("PassCatalogue", "Sigmoid, SiLU and GELU through exp, erf and tanh (the app's)"),
    QT_TRANSLATE_NOOP("PassCatalogue", "Small powers as products, divisions by constants as multiplications (the app's)"),
    QT_TRANSLATE_NOOP("PassCatalogue", "Convolutions channels-last, layout carried between them (the app's)"),
    QT_TRANSLATE_NOOP("PassCatalogue", "Fold constants in one build (the app's)"),
    QT_TRANSLATE_NOOP("PassCatalogue", "Fold batch norms into convolutions (the app's)"),
    QT_TRANSLATE_NOOP("PassCatalogue", "Integer kernels for quantized ops (the app's)"),
    QT_TRANSLATE_NOOP("PassCatalogue", "Rewrites conv2d/matmul of dequantized uint8 activations and int8 weights (QDQ models) and "
                      "MatMulInteger (dynamically quantized models) into a uint8 x int8 -> int32 product (qdot) over "
                      "packed weights, with the zero-point correction and the rescaling as its fused epilogue; "
                      "app.CPUInt8 schedules it with VNNI (vpdpbusd); without AVX-512 VNNI in the target it changes nothing. "
                      "Other dtypes, symbolic shapes and weight zero points that are not a constant zero are left as they "
                      "are. Put it before LegalizeOps. The app's "
                      "own step: exported scripts contain its code."),
    QT_TRANSLATE_NOOP("PassCatalogue", 'Rewrites op(reshape(x)) into reshape(op(x)) for elementwise ops (bias and residual adds, GELU, '
                      'activations) when the reshape only adds dimensions, then folds the reshape pairs this leaves '
                      "(RemoveRedundantReshape). A matmul viewed back to [batch, seq, n] before its activation (GPT-2's "
                      "Conv1D) then fuses with its epilogue in FuseOps. Put it before LegalizeOps. The app's own step: "
                      'exported scripts contain its code.'),
    QT_TRANSLATE_NOOP("PassCatalogue", "Rewrites power(x, 2), power(x, 3) and power(x, 4) of float tensors into products of x (TVM "
                      "compiles a power into one libm powf call per element, which does not vectorize; GPT-2's GELU "
                      "computes pow(x, 3)), and x / c for a float constant c into x * (1 / c) (a vector division "
                      "takes about ten times a multiplication; MobileNetV3's Hardswish divides by 6): the product "
                      "may differ from the quotient in the last bit. The app's own step: exported scripts contain "
                      "its code."),
    QT_TRANSLATE_NOOP("PassCatalogue", "Converts every float 2-D convolution to NHWC data and OHWI weights, when the app's NHWC "
                      "schedule takes each of them (float32, regular or depthwise), and carries that layout "
                      "through the operations between convolutions (relax.ConvertLayout, with clip first written as "
                      "maximum and minimum so Hardswish and ReLU6 carry it too): the channels, the axis a CPU "
                      "convolution vectorizes over, are contiguous, and transposes remain only where the network "
                      "enters and leaves the layout. Put it after app.FoldBatchNorm and before FastMathTransform "
                      "(whose exp is a TIR call the layout cannot pass) and LegalizeOps. The app's own step: exported "
                      "scripts contain its code."),
    QT_TRANSLATE_NOOP("PassCatalogue", "3 x 3 convolutions by Winograd's minimal filtering (the app's)"),
    QT_TRANSLATE_NOOP("PassCatalogue", "Computes every 3 x 3, stride-1, padding-1 float32 NHWC convolution of batch 1 with even maps of "
                      "at least 32 output tiles of 2 x 2 with Winograd's minimal filtering: F(4 x 4, 3 x 3) where "
                      "the sides are multiples of 4 with at least 32 tiles of 4 x 4 (36 multiply-adds per 4 x 4 "
                      "outputs instead of 144), else F(2 x 2, 3 x 3) (16 per 2 x 2 instead of 36); the weights "
                      "transformed once, each input and output tile transformed with sums. ResNet-18's 3 x 3 layers "
                      "1.5-2.5x faster. Results differ from the direct convolution's by rounding (about 1e-6 "
                      "relative). The bias, residual add and activation still fuse into it; app.CPUConv2d schedules "
                      "it. Put it after app.ChannelsLast and before LegalizeOps. The app's own step: exported "
                      "scripts contain its code."),
    QT_TRANSLATE_NOOP("PassCatalogue", "Rewrites sigmoid(x) into 1 / (1 + exp(-x)), silu(x) into x / (1 + exp(-x)) and the two GELUs "
                      "into their erf and tanh forms for float tensors, so a FastMathTransform after it replaces the "
                      "exp, erf and tanh by TVM's vectorizable polynomials (TVM compiles sigmoid and GELU into one "
                      "libm call per element). Put it before FastMathTransform. The app's own step: exported scripts "
                      "contain its code."),
    QT_TRANSLATE_NOOP("PassCatalogue", 'The module relax.FoldConstant gives, faster: the R.call_tir calls on constants (shape computations '
                      'of imported models, rotary tables) are computed together by one function built and run once on the '
                      'CPU, instead of one build per call; then FoldConstant propagates the constants and folds what is '
                      "left. Falls back to plain FoldConstant when that build fails. The app's own step: exported scripts "
                      'contain its code.'),
    QT_TRANSLATE_NOOP("PassCatalogue", 'Rewrites an inference batch norm of a conv2d (NCHW, OIHW) into conv2d(x, w * scale) + shift, and any'
                      ' other inference batch norm into x * scale + shift, with scale = gamma / sqrt(var + eps) and shift ='
                      ' beta - mean * scale computed on the channel vectors (weight-only work that LiftTransformParams runs'
                      ' once, FoldConstant folds for bound weights) instead of a square root and a division per element. '
                      "Works on weights that are parameters (TVM's FoldBatchnormToConv2D needs constants). Put it before "
                      "DecomposeOpsForInference. The app's own step: exported scripts contain its code."),
)


def tr_pass_text(text: str) -> str:
    """``text`` in the interface's language when it is one of :data:`OWN_TEXTS` (else unchanged)."""
    return QCoreApplication.translate(CONTEXT, text) if text in OWN_TEXTS else text


def translate_catalogue(catalogue: Any) -> None:
    """Translate the app's own pass titles, descriptions and parameter docs in ``catalogue`` (in place)."""
    for pass_id in catalogue.ids():
        spec = catalogue.get(pass_id)
        spec.title = tr_pass_text(spec.title)
        spec.doc = _own(spec.doc)
        for param in spec.params:
            param.doc = _own(param.doc)


def _own(text: str) -> str:
    """``text`` translated when it is one of :data:`OWN_TEXTS`, then registered as prose (``widgets.doc_text``)."""
    if text in OWN_TEXTS:
        text = QCoreApplication.translate(CONTEXT, text)
        mark_own(text)
    return text

