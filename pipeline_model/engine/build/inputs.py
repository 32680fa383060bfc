"""The inputs of a build request, prepared once for every command that builds (``build_run``, ``compare``):
the arguments of the module to build (:func:`pipeline_model.scriptlib.arguments.make_arguments`, the same code
exported scripts contain), with integer ids bounded by the tables of the model as loaded, and every value by
parameter name so that modules of other signatures (weights bound as constants) and the reference run on
the same values."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from pipeline_model.scriptlib.arguments import arguments_by_name, integer_input_bounds, make_arguments
from pipeline_model.scriptlib.functions import entry_function, relax_function_names


@dataclass
class PreparedInputs:
    """The arguments of the first module of a request and every value by parameter name."""

    arrays: list[np.ndarray]
    described: list[dict[str, Any]]
    values: dict[str, np.ndarray]

    def for_module(self, mod: Any, func_name: str) -> list[np.ndarray]:
        """The arguments of ``mod``'s ``func_name`` (by parameter name, else :attr:`arrays`)."""
        return arguments_by_name(mod, func_name, self.values, self.arrays)

    def for_reference(self, loaded: Any, func_name: str) -> list[np.ndarray]:
        """The arguments of the loaded model's function that ``func_name`` stands for."""
        return arguments_by_name(loaded.mod, reference_entry(loaded, func_name), self.values, self.arrays)


def prepare_inputs(mod: Any, func_name: str, loaded: Any, inputs: Optional[dict[str, Any]]) -> PreparedInputs:
    """The arguments of ``mod``'s ``func_name`` for a request's ``inputs`` (integer ids bounded by the loaded
    model's tables) and the reference's values (:func:`reference_values`)."""
    bounds = integer_input_bounds(loaded.mod, func_name) if func_name in relax_function_names(loaded.mod) else None
    arrays, described = make_arguments(mod, func_name, loaded.params, inputs, bounds)
    values = reference_values(mod, func_name, loaded, arrays, described, inputs, bounds)
    return PreparedInputs(arrays, described, values)


def reference_entry(loaded: Any, func_name: str) -> str:
    """The loaded model's function that ``func_name`` of a pipeline's module stands for (the reference)."""
    return entry_function(loaded.mod, func_name if func_name in relax_function_names(loaded.mod) else None)


def reference_values(mod: Any, func_name: str, loaded: Any, arrays: list[np.ndarray],
                     described: list[dict[str, Any]], inputs: Optional[dict[str, Any]],
                     bounds: Optional[dict[str, int]]) -> dict[str, np.ndarray]:
    """Every argument value by parameter name, read with :func:`arguments_by_name`: ``mod``'s own
    (``arrays``/``described``), plus the loaded model's values for the parameters its entry takes and
    ``mod``'s no longer does — weights bound as constants (``weights.BindAsConstants``): a bound module takes
    only its inputs, the reference (and an unbound module compared with it) still takes the weights. The
    inputs are the same seeded arrays either way."""
    values = {d["name"]: a for d, a in zip(described, arrays)}
    ref_func = reference_entry(loaded, func_name)
    if any(var.name not in values for var in loaded.mod[ref_func].params):
        ref_arrays, ref_described = make_arguments(loaded.mod, ref_func, loaded.params, inputs, bounds)
        for d, a in zip(ref_described, ref_arrays):
            values.setdefault(d["name"], a)
    return values
