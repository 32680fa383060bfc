"""Kind ``channels_last``: the step ``app.ChannelsLast`` runs a float CNN in NHWC from its first convolution to
its last.

Models arrive NCHW (PyTorch's layout). In NCHW a convolution's output channels, the axis its weights vectorize
over, are a plane apart: ``app.CPUConv2d`` transposed each convolution's input into channel blocks and wrote each
output vector back lane by lane to 16 planes, or put pixels in the lanes where whole vectors of them exist (not on
MobileNet's 7 x 7 and 14 x 14 maps). In NHWC the channels are contiguous in input, weights and output: each
convolution reads and writes whole vectors and the layout is carried from one convolution to the next, as
ONNX Runtime carries its channel-blocked layout (docs/PERFORMANCE.md "Channels last"). This step writes a float
``clip`` as ``maximum(minimum(x, hi), lo)`` (``relax.ConvertLayout`` has no layout rule for ``clip``: it put two
transposes around every Hardswish) and then runs ``relax.ConvertLayout`` with NHWC data / OHWI weights for
``relax.nn.conv2d``; transposes are left only where the network enters and leaves the layout. A binary op
``ConvertLayout`` leaves in NCHW between two transposes of a feature map (a squeeze-excitation gate a
``torch.export`` model computes through a reshape, which no layout passes) is written on the NHWC map with the
small operand transposed instead (EfficientNet-B0 ``.pt2``: 50 feature-map transposes a run before). Only a network
whose float convolutions are all of the kinds ``app.CPUConv2d``'s NHWC schedule is made for (float32, static
shapes, regular or depthwise) is converted: a grouped one runs the generic schedule either way and
converted only gained transposes (a small mixed network 1.2x slower). Transposed convolutions stay NCHW (TVM
legalizes them in NCHW only: converted, the build failed). Put it after
``app.FoldBatchNorm`` (which folds into NCHW weights) and before ``FastMathTransform`` (its ``exp`` is a TIR call
``ConvertLayout`` cannot pass: EfficientNet's SiLU ran between two transposes) and legalization.

Files: ``__init__.py`` (spec, recipe; TVM-free) and ``script.py`` (:func:`.script.channels_last`, the pass the
engine runs and exported scripts contain).
"""

from __future__ import annotations

from pipeline_model.passkinds.base import ScriptPassKind

PASS_ID = "app.ChannelsLast"
#: The code exported scripts contain (and the engine calls): :func:`.script.channels_last`.
SCRIPT_MODULE = "pipeline_model.passkinds.channels_last.script"


class ChannelsLastKind(ScriptPassKind):
    """Float convolutions in NHWC, the layout carried between them (see the module docstring)."""

    name = "channels_last"
    catalogue_order = 48

    pass_id = PASS_ID
    script_module = SCRIPT_MODULE
    script_function = "channels_last"
    title = "Convolutions channels-last, layout carried between them (the app's)"
    doc = ("Converts every float 2-D convolution to NHWC data and OHWI weights, when the app's NHWC schedule takes "
           "each of them (float32, regular or depthwise), and carries that layout through "
           "the operations between convolutions (relax.ConvertLayout, with clip first written as maximum and "
           "minimum so Hardswish and ReLU6 carry it too): the channels, the axis a CPU convolution vectorizes "
           "over, are contiguous, and transposes remain only where the network enters and leaves the layout. "
           "Put it after app.FoldBatchNorm and before FastMathTransform (whose exp is a TIR call the layout "
           "cannot pass) and LegalizeOps. The app's own step: exported scripts contain its code.")
    tvm_name = "tvm.relax.transform.ConvertLayout"
    category = "Layout & precision"  # ConvertLayout's


KIND = ChannelsLastKind()
