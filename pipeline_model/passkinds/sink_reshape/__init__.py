"""Kind ``sink_reshape``: the step ``app.SinkReshape`` moves reshapes below elementwise ops before ``FuseOps``.

Hugging Face GPT-2's ``Conv1D`` (and many other exports) compute ``view(-1, k) @ W + b`` and view the result
back to ``[batch, seq, n]`` before the activation, so the Relax module reads ``matmul -> add -> reshape ->
GELU ... -> reshape -> matmul``. ``FuseOps`` fuses elementwise ops into a matmul but stops at the reshape (an
injective op): GELU and residual adds became kernels of their own, each reading and writing the whole
activation. This step rewrites ``op(reshape(x))`` into ``reshape(op(x))`` for elementwise ops (unary, or
binary with a scalar or a same-shaped operand; known shapes, symbolic dims included; only reshapes that add dimensions), then folds
the reshape pairs this leaves (``RemoveRedundantReshape``) and removes dead bindings, so the epilogue follows
its matmul and fuses (``app.CPUMatmul`` then schedules it per tile). Numerics are unchanged (the same
elementwise ops on the same values).

Files: ``__init__.py`` (spec, recipe; TVM-free) and ``script.py`` (:func:`.script.sink_reshapes`, the pass the
engine runs and exported scripts contain).
"""

from __future__ import annotations

from pipeline_model.passkinds.base import ScriptPassKind

PASS_ID = "app.SinkReshape"
#: The code exported scripts contain (and the engine calls): :func:`.script.sink_reshapes`.
SCRIPT_MODULE = "pipeline_model.passkinds.sink_reshape.script"


class SinkReshapeKind(ScriptPassKind):
    """Reshapes moved below elementwise ops so epilogues fuse into their matmuls (see the module docstring)."""

    name = "sink_reshape"
    catalogue_order = 46

    pass_id = PASS_ID
    script_module = SCRIPT_MODULE
    script_function = "sink_reshapes"
    title = "Sink reshapes below elementwise ops (the app's)"
    doc = ("Rewrites op(reshape(x)) into reshape(op(x)) for elementwise ops (bias and residual adds, GELU, "
           "activations) when the reshape only adds dimensions, then folds the reshape pairs this leaves "
           "(RemoveRedundantReshape). A matmul viewed back to [batch, seq, n] before its activation (GPT-2's "
           "Conv1D) then fuses with its epilogue in FuseOps. Put it before LegalizeOps. The app's own step: "
           "exported scripts contain its code.")
    tvm_name = "tvm.relax.dpl.rewrite_call"


KIND = SinkReshapeKind()
