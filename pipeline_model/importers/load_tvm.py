"""Loading models into Relax IRModules (engine side, imports TVM).

:func:`load_model` turns a model spec (see :mod:`pipeline_model.models`) into a :class:`LoadedModel`
through its format's ``load`` (each format's engine half sits beside its spec: ``builtin``/``nn_module``
→ :mod:`.nn_module_tvm`, ``tvmscript`` → :mod:`.tvmscript_tvm`, ``onnx`` → :mod:`.onnx_tvm`, ``pt2`` →
:mod:`.pt2_tvm`, ``torch_py`` → :mod:`.torch_tvm`). :func:`load_file` imports an ONNX / PyTorch file
chosen by its importer kind. Every failure raises :class:`pipeline_model.importers.ModelLoadError`
naming the file and the cause (and the line for TVMScript syntax errors).
"""

from __future__ import annotations

from typing import Any, Optional

from pipeline_model import models
from pipeline_model.importers import onnx_tvm, pt2_tvm, torch_tvm
from pipeline_model.importers.base import LoadedModel, ModelLoadError
from pipeline_model.importers.dims_tvm import bind_dims
from pipeline_model.importers.frontend_tvm import file_key
from pipeline_model.importers.nn_module_tvm import load_nn_module
from pipeline_model.importers.registry import format_named
from pipeline_model.importers.tvmscript_tvm import load_tvmscript


def load_file(path: str) -> Any:
    """Import the model file at ``path`` (``.onnx``, ``.pt2``, torch-convention ``.py``).

    Returns a :class:`LoadedModel` whose ``mod`` has weights as parameters of ``main`` (after
    ``num_input`` inputs) and whose ``params`` maps those parameter names to numpy arrays. ``key``
    includes the file's content hash. Raises :class:`ModelLoadError` naming the file and the cause for
    anything that cannot be imported.
    """
    kind, key = file_key(path)
    if kind == "onnx":
        return onnx_tvm.load_onnx(path, key)
    if kind == "pt2":
        return pt2_tvm.load_pt2(path, key)
    return torch_tvm.load_torch_py(path, key)


def load_model(spec: str, base_dir: Optional[str] = None) -> LoadedModel:
    """Load the model named by ``spec`` (``builtin:<name>`` or a path relative to ``base_dir``).

    Raises :class:`ModelLoadError` (or its subclass :class:`pipeline_model.models.ModelSpecError`) with
    a message naming the file and the cause.
    """
    import tvm

    source = models.resolve_model(spec, base_dir)
    key = models.model_key(spec, base_dir)
    fmt = format_named(source.format)
    if fmt is None:  # pragma: no cover - resolve_model names a registered format
        raise ModelLoadError(f"{source.path}: unsupported model format {source.format!r}")
    dims = dict(source.dims)
    mod, params, left = fmt.load_source(source)
    if not isinstance(mod, tvm.IRModule):
        raise ModelLoadError(f"{source.path}: the loader did not produce an IRModule ({type(mod).__name__})")
    mod = bind_dims(mod, left, source.path, [k for k in dims if k not in left])
    return LoadedModel(mod=mod, params=params, key=key, source=source.path)


__all__ = ["LoadedModel", "ModelLoadError", "load_file", "load_model", "load_nn_module", "load_tvmscript"]
