"""Kind ``fold_batch_norm``: the step ``app.FoldBatchNorm`` folds inference batch norms into per-channel
factors computed once.

``DecomposeOpsForInference`` writes a batch norm as ``(x - mean) / sqrt(var + eps) * gamma + beta`` on the
whole feature map: fused into the convolution before it, the epilogue computes a square root and a division
per output element (on AVX-512 each costs about as much as a dozen multiply-adds). This step rewrites a batch
norm of a ``conv2d`` (NCHW/OIHW, channels on axis 1, the convolution read only by the norm) into
``conv2d(x, w * scale) + shift`` and any other inference batch norm into ``x * scale + shift``, with
``scale = gamma / sqrt(var + eps)`` and ``shift = beta - mean * scale`` computed on the ``[C]`` vectors:
weight-only work that ``LiftTransformParams`` runs once at load (and ``FoldConstant`` folds for bound
weights). It also leaves ``LegalizeOps`` a handful of small operators per norm instead of the decomposed
feature-map arithmetic. Same values up to float rounding (the bench checks every model against PyTorch and
``tvm.compile``'s default build); PyTorch and ONNX Runtime fold batch norms the same way.

Files: ``__init__.py`` (spec, recipe; TVM-free) and ``script.py`` (:func:`.script.fold_batch_norm`, the pass
the engine runs and exported scripts contain).
"""

from __future__ import annotations

from pipeline_model.passkinds.base import ScriptPassKind

PASS_ID = "app.FoldBatchNorm"
#: The code exported scripts contain (and the engine calls): :func:`.script.fold_batch_norm`.
SCRIPT_MODULE = "pipeline_model.passkinds.fold_batch_norm.script"


class FoldBatchNormKind(ScriptPassKind):
    """Inference batch norms folded into convolution weights or per-channel factors (see the module docstring)."""

    name = "fold_batch_norm"
    catalogue_order = 49

    pass_id = PASS_ID
    script_module = SCRIPT_MODULE
    script_function = "fold_batch_norm"
    title = "Fold batch norms into convolutions (the app's)"
    doc = ("Rewrites an inference batch norm of a conv2d (NCHW, OIHW) into conv2d(x, w * scale) + shift, "
           "and any other inference batch norm into x * scale + shift, with scale = gamma / sqrt(var + eps) "
           "and shift = beta - mean * scale computed on the channel vectors (weight-only work that "
           "LiftTransformParams runs once, FoldConstant folds for bound weights) instead of a square root "
           "and a division per element. Works on weights that are parameters (TVM's "
           "FoldBatchnormToConv2D needs constants). Put it before DecomposeOpsForInference. The app's own "
           "step: exported scripts contain its code.")
    tvm_name = "tvm.relax.dpl.rewrite_call"


KIND = FoldBatchNormKind()
