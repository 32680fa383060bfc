"""Kind ``expand_sigmoid``: the step ``app.ExpandSigmoid`` writes sigmoid and SiLU with ``exp``, and GELU with
``erf`` or ``tanh``, before ``FastMathTransform``.

TVM lowers ``R.sigmoid`` to ``T.sigmoid``, which LLVM compiles into one call of libm's ``expf`` per element:
a vectorized schedule computes the rest of a SiLU epilogue 16 lanes at a time and still calls ``expf`` 16
times. ``FastMathTransform`` replaces ``R.exp`` (and tanh, erf, softmax) by TVM's polynomial ``fast_exp``,
which vectorizes, but leaves ``R.sigmoid`` alone. This step rewrites ``sigmoid(x)`` into
``1 / (1 + exp(-x))`` and ``silu(x)`` into ``x / (1 + exp(-x))`` (float tensors only), so the
``FastMathTransform`` after it covers them: EfficientNet-B0 (SiLU after every convolution) ran 0.57x the time
in the app's default CPU pipeline (2026-11-26, an A/B script outside bench/; docs/PERFORMANCE.md "Default-pipeline
choices cited by the code", the figure in its git history). The values agree with ``T.sigmoid`` to the accuracy
of ``fast_exp`` (the bench checks every model against PyTorch and ``tvm.compile``'s default build).

GELU likewise: TVM legalizes ``R.nn.gelu`` (ONNX's and ``torch.export``'s exact GELU: BERT) into ``T.erf``, one
libm ``erff`` call per element, and ``FastMathTransform`` replaces ``R.erf`` but not ``R.nn.gelu``; written as
``x * (0.5 + erf(x / sqrt 2) * 0.5)`` (TVM's own legalization) it gets ``fast_erf``: an int8 BERT's FFN product
with its GELU went 61 -> 21 us a call, the model 334 -> 296 us (2026-12-06, ``main.py run --profile``,
docs/PERFORMANCE.md "Int8 models"). ``R.nn.gelu_tanh`` becomes the tanh form, float32 only for both (a
float16 GELU computes its erf in float32).

Files: ``__init__.py`` (spec, recipe; TVM-free) and ``script.py`` (:func:`.script.expand_sigmoid`, the pass the
engine runs and exported scripts contain).
"""

from __future__ import annotations

from pipeline_model.passkinds.base import ScriptPassKind

PASS_ID = "app.ExpandSigmoid"
#: The code exported scripts contain (and the engine calls): :func:`.script.expand_sigmoid`.
SCRIPT_MODULE = "pipeline_model.passkinds.expand_sigmoid.script"


class ExpandSigmoidKind(ScriptPassKind):
    """Sigmoid and SiLU written with ``exp`` so FastMathTransform vectorizes them (see the module docstring)."""

    name = "expand_sigmoid"
    catalogue_order = 48

    pass_id = PASS_ID
    script_module = SCRIPT_MODULE
    script_function = "expand_sigmoid"
    title = "Sigmoid, SiLU and GELU through exp, erf and tanh (the app's)"
    doc = ("Rewrites sigmoid(x) into 1 / (1 + exp(-x)), silu(x) into x / (1 + exp(-x)) and the two GELUs into "
           "their erf and tanh forms for float tensors, so a FastMathTransform after it replaces the exp, erf and "
           "tanh by TVM's vectorizable polynomials (TVM compiles sigmoid and GELU into one libm call per element). "
           "Put it before FastMathTransform. The app's own step: exported scripts contain its code.")
    tvm_name = "tvm.relax.dpl.rewrite_call"


KIND = ExpandSigmoidKind()
