"""ONNX and PyTorch formats, engine side: what their loaders share (imports TVM lazily, numpy).

Every importer keeps the model's weights as parameters of ``main`` (after the ``num_input`` real
inputs) and returns them as numpy arrays keyed by the parameter names, so the pipeline works on the
same graph whatever the weights are, and the build can run the model with its real weights.
Symbolic dimensions (ONNX ``dim_param``, ``torch.export.Dim``) stay symbolic in the module.
Every failure is turned into :class:`pipeline_model.importers.ModelLoadError` naming the file and
the cause. The loaders: :mod:`.onnx_tvm`, :mod:`.pt2_tvm`, :mod:`.torch_tvm`.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from typing import Any

import numpy as np

from pipeline_model.importers.base import LoadedModel, ModelLoadError
from pipeline_model.importers.frontends import TORCH_INSTALL_HINT, importer_kind


def file_hash(path: str) -> str:
    """The SHA-256 of the file at ``path`` (hex): of its pinned bytes while the engine holds them
    (:mod:`pipeline_model.importers.content`), else of the file."""
    from pipeline_model.importers import content

    data = content.pinned_bytes(path)
    if data is not None:
        return content.sha256(data)
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def short_cause(exc: BaseException) -> str:
    """The first meaningful line(s) of an exception message, without TVM's C++ backtrace."""
    text = str(exc).strip() or type(exc).__name__
    lines = [ln for ln in text.splitlines() if ln.strip()]
    # TVM errors carry a long backtrace; keep the final "XxxError: message" part when present.
    for ln in reversed(lines):
        if "Error:" in ln or "error:" in ln:
            return ln.strip()
    return " ".join(lines[:3])[:600]


def split_params(mod: Any) -> tuple[Any, dict[str, np.ndarray]]:
    """Detach the ``params`` attribute of ``main`` and key the arrays by parameter name."""
    from tvm.relax.frontend import detach_params

    mod, detached = detach_params(mod)
    main = mod["main"]
    values = detached.get("main", [])
    num_input = int(main.attrs["num_input"]) if main.attrs and "num_input" in main.attrs \
        else len(main.params) - len(values)
    weights = list(main.params)[num_input:]
    if len(weights) != len(values):
        raise RuntimeError(
            f"main has {len(weights)} weight parameters but the importer returned {len(values)} values"
        )
    params: dict[str, np.ndarray] = {}
    for var, value in zip(weights, values):
        name = str(var.name)
        if name in params:
            raise RuntimeError(f"two weight parameters are both named {name!r}")
        params[name] = value.numpy()
    return mod, params


def loaded_model(mod: Any, params: dict[str, np.ndarray] | None, key: str, source: str) -> Any:
    """A :class:`LoadedModel` (``params`` ``None`` when empty)."""
    return LoadedModel(mod=mod, params=params or None, key=key, source=source)


def file_key(path: str) -> tuple[str, str]:
    """``(kind, key)`` of the ONNX/PyTorch model file at ``path``: its importer kind (``onnx``, ``pt2``,
    ``torch_py``) and a cache key that includes the file's content hash. Raises :class:`ModelLoadError`
    naming the file for a missing file, a folder, a file no importer reads, or an unreadable file."""
    if not os.path.exists(path):
        raise ModelLoadError(f"{path}: no such file")
    if not os.path.isfile(path):
        raise ModelLoadError(f"{path}: not a file")
    kind = importer_kind(path)
    if kind is None:
        raise ModelLoadError(
            f"{path}: not a model file for the ONNX/PyTorch importers (expected .onnx, .pt2 or a .py "
            "file that imports torch and defines `model` and `example_inputs`)"
        )
    try:
        return kind, f"{kind}:{file_hash(path)}"
    except OSError as exc:
        raise ModelLoadError(f"{path}: cannot read the file ({exc.strerror or exc})") from None


def import_torch(path: str) -> Any:
    """The ``torch`` module; :class:`ModelLoadError` with the install hint when it is missing."""
    try:
        import torch  # noqa: F401  (optional, heavy: imported only for torch models)
    except ImportError:
        raise ModelLoadError(f"{path}: {TORCH_INSTALL_HINT}") from None
    return torch


def from_exported(path: str, exported: Any, key: str, dim_names: "dict[str, str] | None" = None) -> Any:
    """Import a ``torch.export`` ExportedProgram into Relax (weights kept as parameters of ``main``);
    ``dim_names``: torch's symbols of the dynamic axes -> the ``Dim`` names they get in the module."""
    try:
        from tvm.relax.frontend.torch import from_exported_program

        from pipeline_model.scriptlib.dynamic_import import rename_symbolic_dims, tighten_dynamic_shapes

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mod = tighten_dynamic_shapes(from_exported_program(exported, keep_params_as_input=True))
            mod = rename_symbolic_dims(mod, dim_names or {})
        mod, params = split_params(mod)
    except Exception as exc:
        raise ModelLoadError(
            f"{path}: the PyTorch import into Relax failed: {short_cause(exc)}"
        ) from None
    return loaded_model(mod, params, key, path)
