"""Kind ``fold_constants``: the step ``app.FoldConstants`` folds constants like ``relax.FoldConstant``, with one
build instead of one per folded call.

TVM's ``relax.transform.FoldConstant`` builds every ``R.call_tir`` whose arguments are constants on its own
(``tir.build`` + LLVM for each PrimFunc, some 30-50 ms each) and runs it. Models imported from ONNX or
``torch.export`` (Hugging Face BERT, GPT-2, Llama) carry 10-15 such tiny shape computations (``shape_to_tensor``,
``take``, ``where``, ``gather`` on constants, rotary tables); after ``LiftTransformParams`` folding them took
0.5-0.6 s, more than the rest of the default CPU pipeline. This step finds the same calls (a PrimFunc of the
module, constant arguments or arguments folded before, one output tensor of a static shape, no TIR variables),
recomputes all of them in one Relax function built and run once on the CPU, binds each result as a constant
and then runs ``FoldConstant``, which propagates the constants, folds what is left (Relax-level ops) and
removes the unused bindings: the same module ``FoldConstant`` gives (tests/test_fold_constants.py compares
them). When the one build fails (a PrimFunc scheduled for a GPU, anything), the step is plain
``FoldConstant``.

Files: ``__init__.py`` (spec, recipe; TVM-free) and ``script.py`` (:func:`.script.fold_constants`, the pass the
engine runs and exported scripts contain).
"""

from __future__ import annotations

from pipeline_model.passkinds.base import ScriptPassKind

PASS_ID = "app.FoldConstants"
#: The code exported scripts contain (and the engine calls): :func:`.script.fold_constants`.
SCRIPT_MODULE = "pipeline_model.passkinds.fold_constants.script"


class FoldConstantsKind(ScriptPassKind):
    """``FoldConstant``'s result with one build of all the constant calls (see the module docstring)."""

    name = "fold_constants"
    catalogue_order = 47

    pass_id = PASS_ID
    script_module = SCRIPT_MODULE
    script_function = "fold_constants"
    title = "Fold constants in one build (the app's)"
    doc = ("The module relax.FoldConstant gives, faster: the R.call_tir calls on constants (shape "
           "computations of imported models, rotary tables) are computed together by one function built "
           "and run once on the CPU, instead of one build per call; then FoldConstant propagates the "
           "constants and folds what is left. Falls back to plain FoldConstant when that build fails. "
           "The app's own step: exported scripts contain its code.")
    tvm_name = "tvm.relax.transform.FoldConstant"


KIND = FoldConstantsKind()
