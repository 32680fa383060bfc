"""Kind ``bind_weights``: the step ``weights.BindAsConstants`` binds the model's own weights into the module.

Models imported from ONNX or PyTorch keep their weights as parameters of ``main`` (after its
``num_input`` inputs), so passes see them as unknown tensors: ``FoldConstant`` cannot fold anything that
depends on them and ``FoldBatchnormToConv2D`` leaves work on the weights in every call. This step binds
each weight the model carries (``LoadedModel.params``, name -> array) as a constant into every Relax
function with a parameter of that name (``relax.transform.BindParams``); the bound parameters leave the
signature, so a built module then takes only the inputs. Followed by ``FoldBatchnormToConv2D`` and
``FoldConstant``, batch norm disappears into the convolution weights (see
``resources/pipelines/cpu_build_bound.json``).

A model without weights of its own (built-in and TVMScript models get seeded random weights at run time)
has nothing to bind: the step says so instead of running. The engine calls
:func:`.script.bind_model_weights` with the loaded weights; exported scripts copy it and call it with the
script's ``params``.
"""

from __future__ import annotations

from pipeline_model import emit
from pipeline_model.passkinds.base import ScriptPassKind

PASS_ID = "weights.BindAsConstants"


#: The code exported scripts contain (and the engine calls): :func:`.script.bind_model_weights`.
SCRIPT_MODULE = "pipeline_model.passkinds.bind_weights.script"


class BindWeightsKind(ScriptPassKind):
    """Binds the loaded model's weights as constants (see the module docstring)."""

    name = "bind_weights"
    catalogue_order = 45

    pass_id = PASS_ID
    script_module = SCRIPT_MODULE
    script_function = "bind_model_weights"
    title = "Bind model weights as constants"
    doc = ("Binds the weights the model carries (ONNX initializers, PyTorch parameters and buffers) as "
           "constants into the functions that take them (relax.transform.BindParams with the model's "
           "own values); they leave the signature, so the built module takes only the inputs. Put it "
           "first and follow it with FoldBatchnormToConv2D and FoldConstant to fold batch norm and other "
           "weight-only work into the weights at compile time. Models without weights of their own "
           "(built-in, TVMScript) have nothing to bind.")
    tvm_name = "tvm.relax.transform.BindParams"

    def script_args(self) -> tuple[emit.Expr, ...]:
        # Ref("weights") is the loaded model's weights (``params`` in exported scripts); evaluating it refuses
        # a model without any. The exported script holds the function's source and calls it the same way.
        return (emit.Ref("weights"),)


KIND = BindWeightsKind()
