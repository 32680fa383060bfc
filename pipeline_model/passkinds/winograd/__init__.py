"""Kind ``winograd``: the step ``app.Winograd`` computes 3 x 3 stride-1 NHWC convolutions with Winograd's
minimal filtering, F(4 x 4, 3 x 3) or F(2 x 2, 3 x 3).

A direct 3 x 3 convolution spends 9 multiply-adds per output pixel and channel pair; Winograd's minimal filtering
spends 36 per 4 x 4 outputs (2.25 per pixel) or 16 per 2 x 2 (4 per pixel), after a transform of each input tile
and of each output tile (sums with small constant factors) and a transform of the weights done once. On the CPU the app's direct NHWC kernel was already at the
level of ONNX Runtime's (ResNet-18's 3 x 3 layers 0.93-1.1x its time, docs/PERFORMANCE.md "Winograd"); the
products do the rest. ``app.CPUConv2d`` schedules the converted function: per block of output tiles the input
tiles are transformed into a buffer the cores' caches hold, the 36 (16) products run as register-tiled matrix
products, and the output transform writes the tile with the fused bias, residual add and activation.

Converted: see :func:`.script.winograd` (batch 1, NHWC/OHWI as ``app.ChannelsLast`` leaves them, padding 1,
even maps of at least 32 output tiles, at least 16 channels; F(4 x 4) where the sides are multiples of 4 with at
least 32 tiles of 4 x 4). Put it after ``app.ChannelsLast`` and before
``LegalizeOps``.

Files: ``__init__.py`` (spec, recipe; TVM-free) and ``script.py`` (:func:`.script.winograd`, the pass the
engine runs and exported scripts contain).
"""

from __future__ import annotations

from pipeline_model.passkinds.base import ScriptPassKind

PASS_ID = "app.Winograd"
#: The code exported scripts contain (and the engine calls): :func:`.script.winograd`.
SCRIPT_MODULE = "pipeline_model.passkinds.winograd.script"


class WinogradKind(ScriptPassKind):
    """3 x 3 stride-1 NHWC convolutions as Winograd F(2 x 2, 3 x 3) (see the module docstring)."""

    name = "winograd"
    catalogue_order = 49

    pass_id = PASS_ID
    script_module = SCRIPT_MODULE
    script_function = "winograd"
    title = "3 x 3 convolutions by Winograd's minimal filtering (the app's)"
    doc = ("Computes every 3 x 3, stride-1, padding-1 float32 NHWC convolution of batch 1 with even maps of at "
           "least 32 output tiles of 2 x 2 with Winograd's minimal filtering: F(4 x 4, 3 x 3) where the sides are "
           "multiples of 4 with at least 32 tiles of 4 x 4 (36 multiply-adds per 4 x 4 outputs instead of 144), "
           "else F(2 x 2, 3 x 3) (16 per 2 x 2 instead of 36); the weights transformed once, each input and output "
           "tile transformed with sums. ResNet-18's 3 x 3 layers 1.5-2.5x faster. Results differ from the direct "
           "convolution's by rounding (about 1e-6 relative). The bias, residual add and activation still fuse "
           "into it; app.CPUConv2d schedules it. Put it after app.ChannelsLast and before LegalizeOps. The app's "
           "own step: exported scripts contain its code.")
    tvm_name = "tvm.relax.call_tir"


KIND = WinogradKind()
