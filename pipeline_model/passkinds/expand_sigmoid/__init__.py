"""Kind ``expand_sigmoid``: the step ``app.ExpandSigmoid`` writes sigmoid and SiLU with ``exp`` before
``FastMathTransform``.

TVM lowers ``R.sigmoid`` to ``T.sigmoid``, which LLVM compiles into one call of libm's ``expf`` per element:
a vectorized schedule computes the rest of a SiLU epilogue 16 lanes at a time and still calls ``expf`` 16
times. ``FastMathTransform`` replaces ``R.exp`` (and tanh, erf, softmax) by TVM's polynomial ``fast_exp``,
which vectorizes, but leaves ``R.sigmoid`` alone. This step rewrites ``sigmoid(x)`` into
``1 / (1 + exp(-x))`` and ``silu(x)`` into ``x / (1 + exp(-x))`` (float tensors only), so the
``FastMathTransform`` after it covers them: EfficientNet-B0 (SiLU after every convolution) ran 0.57x the time
in the app's default CPU pipeline (2026-11-26, an A/B script outside bench/; docs/PERFORMANCE.md "Default-pipeline
choices cited by the code", the figure in its git history). The values agree with ``T.sigmoid`` to the accuracy
of ``fast_exp`` (the bench checks every model against PyTorch and ``tvm.compile``'s default build).

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
    title = "Sigmoid and SiLU through exp (the app's)"
    doc = ("Rewrites sigmoid(x) into 1 / (1 + exp(-x)) and silu(x) into x / (1 + exp(-x)) for float "
           "tensors, so a FastMathTransform after it replaces the exp by TVM's vectorizable fast_exp (TVM "
           "compiles sigmoid into one libm expf call per element). Put it before FastMathTransform. The "
           "app's own step: exported scripts contain its code.")
    tvm_name = "tvm.relax.dpl.rewrite_call"


KIND = ExpandSigmoidKind()
