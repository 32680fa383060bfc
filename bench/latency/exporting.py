"""Writing a bench model as the files a user would open in the app: a ``torch.export`` archive (``.pt2``) and
a dynamo ONNX file (``torch.onnx.export(..., dynamo=True)``, needs ``onnxscript``), one file each, weights
inside. ONNX Runtime runs the same ``.onnx`` file the app imports."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import warnings
from typing import Any

#: The file formats the bench can import through the app (``--formats``).
FORMATS = ("pt2", "onnx")


def export_pt2(model: Any, inputs: tuple[Any, ...], path: str) -> str:
    """``torch.export.export`` + ``torch.export.save`` to ``path``."""
    import torch

    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pytree's LeafSpec deprecation, inside torch
        ep = torch.export.export(model, inputs)
        torch.export.save(ep, path)
    return path


def export_onnx(model: Any, inputs: tuple[Any, ...], path: str) -> str:
    """Dynamo ONNX export of ``model`` to ``path`` (one file, weights inside; the exporter's chatter is dropped)."""
    import torch

    # "torchvision is not installed. Skipping torchvision::nms" and the like: nothing the bench needs
    logging.getLogger("torch.onnx").setLevel(logging.ERROR)
    with torch.no_grad(), contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch.onnx.export(model, inputs, path, dynamo=True, external_data=False, verbose=False)
    return path


def export(model: Any, inputs: tuple[Any, ...], folder: str, name: str, fmt: str) -> str:
    """Write ``model`` as ``<folder>/<name>.<fmt>`` (``fmt`` in :data:`FORMATS`) and return the path."""
    path = os.path.join(folder, f"{name}.{fmt}")
    if fmt == "pt2":
        return export_pt2(model, inputs, path)
    if fmt == "onnx":
        return export_onnx(model, inputs, path)
    raise SystemExit(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
