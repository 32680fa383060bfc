"""Kind ``expand_power``: the step ``app.ExpandPower`` writes a power by a small whole number as products and a
division by a constant as a multiplication by its reciprocal.

TVM lowers ``R.power(x, 3.0)`` to ``T.pow``, which LLVM compiles into one call of libm's ``powf`` per element
(without fast-math flags it keeps ``pow(x, 3)`` a library call: ``x * x * x`` rounds differently); no
vectorized schedule speeds such a call up, and TVM itself warns "Perhaps with ``x * x * x``". GPT-2's GELU
(``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * pow(x, 3))))``) fused into its matmul spent most of that
kernel's time in ``powf`` (docs/PERFORMANCE.md, "Default-pipeline choices cited by the code"). This step rewrites
``power(x, c)`` for a float tensor ``x`` and a scalar constant ``c`` in 2, 3 or 4 into ``x * x``, ``x * x * x``,
``(x * x) * (x * x)`` (at most two roundings more than ``powf``'s one: far inside the float32 check). It also
writes ``x / c`` for a float constant ``c`` (any shape) as ``x * (1 / c)``: LLVM keeps a division without fast-math
flags, and a vector division costs about ten multiplications (MobileNetV3's Hardswish divides each output of its
convolutions by 6: those kernels took 0.83-0.88x the time with the multiplication; the result may differ in the
last bit, as ONNX Runtime's Hardswish, which multiplies by 1/6, does).

Files: ``__init__.py`` (spec, recipe; TVM-free) and ``script.py`` (:func:`.script.expand_power`, the pass the
engine runs and exported scripts contain).
"""

from __future__ import annotations

from pipeline_model.passkinds.base import ScriptPassKind

PASS_ID = "app.ExpandPower"
#: The code exported scripts contain (and the engine calls): :func:`.script.expand_power`.
SCRIPT_MODULE = "pipeline_model.passkinds.expand_power.script"


class ExpandPowerKind(ScriptPassKind):
    """Powers by 2, 3 or 4 written as products so they vectorize (see the module docstring)."""

    name = "expand_power"
    catalogue_order = 48

    pass_id = PASS_ID
    script_module = SCRIPT_MODULE
    script_function = "expand_power"
    title = "Small powers as products, divisions by constants as multiplications (the app's)"
    doc = ("Rewrites power(x, 2), power(x, 3) and power(x, 4) of float tensors into products of x (TVM compiles "
           "a power into one libm powf call per element, which does not vectorize; GPT-2's GELU computes "
           "pow(x, 3)), and x / c for a float constant c into x * (1 / c) (a vector division takes about ten "
           "times a multiplication; MobileNetV3's Hardswish divides by 6): the product may differ from the "
           "quotient in the last bit. The app's own step: exported scripts contain its code.")
    tvm_name = "tvm.relax.dpl.rewrite_call"


KIND = ExpandPowerKind()
