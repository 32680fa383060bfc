"""ONNX and PyTorch importers, TVM-free side: which files are imported how, and script-export code.

Supported model files handled by the importers (the engine sides are :mod:`.onnx_tvm`, :mod:`.pt2_tvm` and :mod:`.torch_tvm`):

* ``.onnx`` — an ONNX model, imported with ``tvm.relax.frontend.onnx.from_onnx`` with its weights
  kept as parameters of ``main`` (not folded into the graph), returned as ``params``.
* ``.pt2`` — a ``torch.export.save`` archive, imported with
  ``tvm.relax.frontend.torch.from_exported_program`` (weights kept as parameters).
* ``.py`` following the *torch file convention*: the file defines ``model`` (a ``torch.nn.Module``
  instance), ``example_inputs`` (a tuple of tensors) and optionally ``dynamic_shapes`` (passed on to
  ``torch.export.export``, e.g. ``{"x": {0: torch.export.Dim("batch")}}``). See ``docs/MODELS.md``.

PyTorch is optional (large): without it the torch importers say how to install it
(:data:`TORCH_INSTALL_HINT`). This module never imports TVM or torch.
"""

from __future__ import annotations

import inspect
import os
import re

from pipeline_model.importers.base import ModelLoadError

#: What to tell a user whose model needs PyTorch when it is not installed.
TORCH_INSTALL_HINT = (
    "PyTorch is not installed; install the optional importer with "
    "`.venv/bin/python -m pip install -r requirements-torch.txt`"
)


_TORCH_IMPORT = re.compile(r"^\s*(import\s+torch\b|from\s+torch\b)", re.MULTILINE)
_TVM_IMPORT = re.compile(r"^\s*(import\s+tvm\b|from\s+tvm\b)", re.MULTILINE)
_EXAMPLE_INPUTS = re.compile(r"^\s*example_inputs\s*(:[^=]*)?=", re.MULTILINE)


def is_torch_python_file(path: str) -> bool:
    """True when ``path`` is a ``.py`` file following the torch convention.

    The file must import torch, assign ``example_inputs`` at top level and not import TVM (TVMScript
    and ``tvm.relax.frontend.nn`` model files import TVM). The file is read, never executed.
    """
    if not path.endswith(".py") or not os.path.isfile(path):
        return False
    from pipeline_model import safe_files

    try:
        text = safe_files.read_text(path, "model file")
    except OSError:
        return False
    return bool(_TORCH_IMPORT.search(text) and _EXAMPLE_INPUTS.search(text)
                and not _TVM_IMPORT.search(text))


def importer_kind(path: str) -> str | None:
    """``"onnx"``, ``"pt2"``, ``"torch_py"`` or ``None`` (not a file for these importers)."""
    lower = path.lower()
    if lower.endswith(".onnx"):
        return "onnx"
    if lower.endswith(".pt2"):
        return "pt2"
    if lower.endswith(".py") and is_torch_python_file(path):
        return "torch_py"
    return None


def prepare_onnx_model(model) -> None:  # noqa: ANN001 - an onnx.ModelProto (onnx imported lazily)
    """Prepare an ONNX model for import with weights kept as parameters (in place).

    Integer initializers (shapes, axes, indices; int8/uint8 scalars and vectors: quantization zero points, which
    ``app.QuantizedToInteger`` must know) and a ``Pow`` node's scalar exponent (GPT-2's GELU ``x ** 3``, which
    ``app.ExpandPower`` writes as products only when it is a constant) become ``Constant`` nodes, so the ops they
    feed are converted statically; weight initializers are renamed to valid identifiers (``fc.weight`` ->
    ``fc_weight``) so the IR, its printed TVMScript and the ``params`` keys agree. The exported
    script embeds this function's source, so both paths import identically.
    """
    import onnx
    from onnx import helper

    graph = model.graph
    int_types = (onnx.TensorProto.INT64, onnx.TensorProto.INT32)
    zero_point_types = (onnx.TensorProto.INT8, onnx.TensorProto.UINT8)  # quantization zero points: scalars/vectors
    exponents = {n.input[1] for n in graph.node if n.op_type == "Pow" and len(n.input) > 1}
    int_inits = [t for t in graph.initializer if t.data_type in int_types
                 or (t.data_type in zero_point_types and len(t.dims) <= 1)
                 or (t.name in exponents and all(d == 1 for d in t.dims))]
    for tensor in int_inits:
        graph.initializer.remove(tensor)
        graph.node.insert(0, helper.make_node("Constant", [], [tensor.name], value=tensor))
    int_names = {t.name for t in int_inits}
    for value in [i for i in graph.input if i.name in int_names]:
        graph.input.remove(value)

    taken = {t.name for t in graph.initializer} | {i.name for i in graph.input}
    taken |= {o for n in graph.node for o in n.output}
    renames: dict[str, str] = {}
    for tensor in graph.initializer:
        name = tensor.name.removeprefix("onnx::")
        if name.isidentifier() and name == tensor.name:
            continue
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "w"
        if not (base[0].isalpha() or base[0] == "_"):
            base = "w_" + base
        new, i = base, 1
        while new in taken or new in renames.values():
            new, i = f"{base}_{i}", i + 1
        renames[tensor.name] = new
    for tensor in graph.initializer:
        tensor.name = renames.get(tensor.name, tensor.name)
    for value in list(graph.input) + list(graph.output):
        value.name = renames.get(value.name, value.name)
    for node in graph.node:
        for k, name in enumerate(node.input):
            if name in renames:
                node.input[k] = renames[name]


_ONNX_LOADER = '''\
import numpy as np
import onnx
from tvm.relax.frontend import detach_params

{dynamic}
{prepare}
_onnx_model = onnx.load({path})
{pin}prepare_onnx_model(_onnx_model)
mod = tighten_dynamic_shapes(onnx_import(_onnx_model, keep_params_in_input=True))
mod, _detached = detach_params(mod)
_main = mod["main"]
_num_input = int(_main.attrs["num_input"]) if "num_input" in _main.attrs else len(_main.params)
params = {{p.name: t.numpy() for p, t in zip(_main.params[_num_input:], _detached.get("main", []))}}
'''

_TORCH_COMMON = '''\
import numpy as np
import torch
from tvm.relax.frontend import detach_params
from tvm.relax.frontend.torch import from_exported_program

{dynamic}
'''

_TORCH_TAIL = '''\
mod = tighten_dynamic_shapes(from_exported_program(_exported, keep_params_as_input=True))
mod = rename_symbolic_dims(mod, globals().get("_dim_names") or {{}})
mod, _detached = detach_params(mod)
_main = mod["main"]
_num_input = int(_main.attrs["num_input"]) if "num_input" in _main.attrs else len(_main.params)
params = {{p.name: t.numpy() for p, t in zip(_main.params[_num_input:], _detached.get("main", []))}}
'''

_PT2_LOADER = _TORCH_COMMON + '''\
import io

{pickles}
_pt2_path = {path}
with open(_pt2_path, "rb") as _fh:
    _pt2_bytes = _fh.read()  # read once: the bytes checked are the bytes loaded
_unsafe = scan_archive(_pt2_path, data=_pt2_bytes)
if _unsafe and os.environ.get("RPS_TRUST_PICKLES") != "1":
    raise SystemExit(f"{{_pt2_path}}: holds a pickle that can run code when loaded ({{_unsafe[0].entry}}: "
                     f"{{_unsafe[0].reason}}); set RPS_TRUST_PICKLES=1 to load it anyway if you trust its author")
_exported = torch.export.load(io.BytesIO(_pt2_bytes))
''' + _TORCH_TAIL

_TORCH_PY_LOADER = _TORCH_COMMON + '''\
import runpy

_ns = runpy.run_path({path})
_exported = torch.export.export(_ns["model"].eval(), tuple(_ns["example_inputs"]),
                                dynamic_shapes=_ns.get("dynamic_shapes"))
_dim_names = torch_dim_names(_exported, _ns.get("dynamic_shapes"))
''' + _TORCH_TAIL


def emit_loader(path: str, dims: "dict[str, int] | None" = None) -> str:
    """Plain-TVM Python code that defines ``mod`` (IRModule) and ``params`` for the model at ``path``.

    ``params`` maps the names of ``main``'s weight parameters to numpy arrays, exactly as
    :func:`pipeline_model.importers.load_tvm.load_file` returns them. Used by the script export; the path
    is embedded with ``repr`` (never formatted into code). Raises :class:`ModelLoadError` for a file
    no importer handles.
    ``dims`` (ONNX only): pinned input dimensions (:mod:`pipeline_model.importers.dims`), set in the graph
    before the import, as the app does.
    """
    from pipeline_model.scriptlib import module_source

    kind = importer_kind(path)
    literal = repr(os.path.abspath(path))
    if kind == "onnx":
        pin = ""
        if dims:
            import pipeline_model.importers.onnx_fold as onnx_fold  # the submodule only (no package cycle)
            from pipeline_model.importers.dims import pin_onnx_inputs

            pin = (inspect.getsource(pin_onnx_inputs).replace("  # noqa: ANN001 - an onnx.ModelProto", "")
                   + f"\n\n_NEVER = {onnx_fold._NEVER!r}\nMAX_FOLD_ELEMENTS = {onnx_fold.MAX_FOLD_ELEMENTS!r}\n\n\n"
                   + inspect.getsource(onnx_fold.fold_shape_subgraphs)
                   + f"\n\npin_onnx_inputs(_onnx_model, {dict(dims)!r})\nfold_shape_subgraphs(_onnx_model)\n")
        return _ONNX_LOADER.format(path=literal, prepare=inspect.getsource(prepare_onnx_model), pin=pin,
                                   dynamic=module_source("dynamic_import"))
    if kind == "pt2":
        return _PT2_LOADER.format(path=literal, pickles=module_source("pickles"),
                                  dynamic=module_source("dynamic_import"))
    if kind == "torch_py":
        return _TORCH_PY_LOADER.format(path=literal, dynamic=module_source("dynamic_import"))
    raise ModelLoadError(
        f"{path}: not a model file for the ONNX/PyTorch importers (expected .onnx, .pt2 or a .py "
        "file defining a torch.nn.Module `model` and `example_inputs`)"
    )
