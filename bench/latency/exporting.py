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


def export_pt2(model: Any, inputs: tuple[Any, ...], path: str, dynamic_shapes: Any = None) -> str:
    """``torch.export.export`` (with ``dynamic_shapes``, e.g. ``{"input_ids": {1: Dim("seq")}}``, when given) +
    ``torch.export.save`` to ``path``."""
    import torch

    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pytree's LeafSpec deprecation, inside torch
        ep = torch.export.export(model, inputs, dynamic_shapes=dynamic_shapes)
        torch.export.save(ep, path)
    return path


def export_onnx(model: Any, inputs: tuple[Any, ...], path: str, dynamic_shapes: Any = None) -> str:
    """Dynamo ONNX export of ``model`` to ``path`` (one file, weights inside; the exporter's chatter is dropped;
    ``dynamic_shapes`` as :func:`export_pt2`'s)."""
    import torch

    # "torchvision is not installed. Skipping torchvision::nms" and the like: nothing the bench needs
    logging.getLogger("torch.onnx").setLevel(logging.ERROR)
    with torch.no_grad(), contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch.onnx.export(model, inputs, path, dynamo=True, external_data=False, verbose=False,
                          dynamic_shapes=dynamic_shapes)
    return path


def export(model: Any, inputs: tuple[Any, ...], folder: str, name: str, fmt: str, dynamic_shapes: Any = None
           ) -> str:
    """Write ``model`` as ``<folder>/<name>.<fmt>`` (``fmt`` in :data:`FORMATS`; ``dynamic_shapes`` as
    :func:`export_pt2`'s) and return the path."""
    path = os.path.join(folder, f"{name}.{fmt}")
    if fmt == "pt2":
        return export_pt2(model, inputs, path, dynamic_shapes)
    if fmt == "onnx":
        return export_onnx(model, inputs, path, dynamic_shapes)
    raise SystemExit(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
