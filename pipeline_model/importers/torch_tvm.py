"""Format ``torch_py``, engine side: run a torch-convention ``.py`` file (``model``, ``example_inputs``,
optional ``dynamic_shapes``), ``torch.export.export`` it and import the program (torch imported lazily)."""

from __future__ import annotations

import os
import traceback
from typing import Any

from pipeline_model.importers.base import ModelLoadError
from pipeline_model.importers.frontend_tvm import file_key, from_exported, import_torch, short_cause


def load_file(path: str) -> Any:
    """Import the torch model file at ``path`` as a :class:`~pipeline_model.importers.base.LoadedModel`
    (a ``.py`` file that does not follow the convention is refused, saying what is missing)."""
    _kind, key = file_key(path)
    return load_torch_py(path, key)


def load_torch_py(path: str, key: str) -> Any:
    """Run the torch model file at ``path``, export its ``model`` and import it (``key``: its cache key)."""
    torch = import_torch(path)
    from pipeline_model.importers import content

    try:
        namespace = content.exec_python(path, content.read_text(path))  # the consented bytes, read once
    except Exception as exc:
        frames = traceback.extract_tb(exc.__traceback__)
        line = next((f.lineno for f in reversed(frames) if os.path.abspath(f.filename)
                     == os.path.abspath(path)), None)
        where = f"{path}:{line}" if line else path
        raise ModelLoadError(f"{where}: running the model file failed: "
                             f"{type(exc).__name__}: {exc}") from None
    model = namespace.get("model")
    if not isinstance(model, torch.nn.Module):
        raise ModelLoadError(
            f"{path}: the file must define `model`, a torch.nn.Module instance "
            f"(found {type(model).__name__ if model is not None else 'nothing'})"
        )
    example = namespace.get("example_inputs")
    if isinstance(example, torch.Tensor):
        example = (example,)
    if not isinstance(example, (tuple, list)) or not all(isinstance(t, torch.Tensor) for t in example):
        raise ModelLoadError(f"{path}: the file must define `example_inputs`, a tuple of torch tensors")
    try:
        exported = torch.export.export(model.eval(), tuple(example),
                                       dynamic_shapes=namespace.get("dynamic_shapes"))
    except Exception as exc:
        raise ModelLoadError(f"{path}: torch.export.export failed: {short_cause(exc)}") from None
    from pipeline_model.scriptlib.dynamic_import import torch_dim_names

    return from_exported(path, exported, key, torch_dim_names(exported, namespace.get("dynamic_shapes")))
