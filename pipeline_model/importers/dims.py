"""Pinned dimensions: a symbolic dimension of a model (``seq``, ``batch``) fixed to a value at load time.

A model with a dynamic axis (an ONNX input of shape ``["batch", "seq", 64]``, a ``torch.export`` archive
exported with ``Dim("seq")``, a TVMScript function over ``T.int64()`` variables) can be pinned, as ONNX
Runtime's free-dimension overrides and TVM's ``from_onnx(shape_dict=...)`` do: ``--shape seq=8`` on the
command line, the model dialog's *Pinned dimensions* field in the app, ``model_dims`` in a pipeline file.

Inside the app a model spec carries its pins as a suffix: ``gpt2.onnx|dims:seq=8,batch=1`` (``|`` cannot
appear in a Windows file name and is rare elsewhere; a spec naming an existing file is never split). So every
engine request, cache key and exported script that carries the spec carries the pins with it. The pipeline
file stores them apart (``"model": "gpt2.onnx", "model_dims": {"seq": 8}``, file format version 3).

The engine half (:mod:`.dims_tvm`) rewrites an ONNX graph's input dimensions before the import and binds
the remaining symbolic variables of any other model with ``relax.transform.BindSymbolicVars``. TVM-free.
"""

from __future__ import annotations

import os
import re
from typing import Mapping

from pipeline_model.importers.base import ModelLoadError

#: Separator between a model spec and its pinned dimensions.
DIMS_SEPARATOR = "|dims:"

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
#: The largest value a dimension may be pinned to (a typo such as 80000000000 is refused, not allocated).
MAX_DIM = 1 << 31


class DimsError(ModelLoadError):
    """A pinned dimension that cannot be used (bad syntax, unknown name); the message is one line."""


def parse_dim(text: str) -> tuple[str, int]:
    """``"seq=8"`` -> ``("seq", 8)``; :class:`DimsError` naming the text otherwise."""
    name, sep, value = str(text).partition("=")
    name, value = name.strip(), value.strip()
    if not sep or not _NAME.match(name):
        raise DimsError(f"--shape {text!r}: expected NAME=DIM, e.g. seq=8 (NAME: a symbolic dimension of the model)")
    if not value.isdigit() or not 0 < int(value) <= MAX_DIM:
        raise DimsError(f"--shape {text!r}: DIM must be a positive integer (at most {MAX_DIM})")
    return name, int(value)


def parse_dims(items: "list[str] | tuple[str, ...] | str") -> dict[str, int]:
    """Pins from ``NAME=DIM`` items (a list, or one string of items separated by commas or spaces);
    a name given twice keeps its last value. :class:`DimsError` for a bad item."""
    if isinstance(items, str):
        items = [p for p in re.split(r"[,\s]+", items) if p]
    out: dict[str, int] = {}
    for item in items:
        name, value = parse_dim(item)
        out[name] = value
    return out


def format_dims(dims: Mapping[str, int], sep: str = ",") -> str:
    """``{"seq": 8, "batch": 1}`` -> ``"seq=8,batch=1"`` (the order given)."""
    return sep.join(f"{k}={int(v)}" for k, v in dims.items())


def split_spec(spec: str) -> tuple[str, dict[str, int]]:
    """``(base spec, pins)`` of a model spec; a spec without pins (or naming an existing file) gives ``{}``."""
    spec = str(spec or "")
    base, sep, tail = spec.rpartition(DIMS_SEPARATOR)
    if not sep or os.path.exists(os.path.expanduser(spec)):
        return spec, {}
    try:
        return base, parse_dims(tail.split(","))
    except DimsError as exc:
        raise DimsError(f"model spec {spec!r}: {exc}") from None


def join_spec(spec: str, dims: Mapping[str, int]) -> str:
    """The model spec ``spec`` with ``dims`` pinned (replacing pins it had); no pins -> the base spec."""
    base, _old = split_spec(spec)
    return f"{base}{DIMS_SEPARATOR}{format_dims(dims)}" if dims else base


def spec_dims(spec: str) -> dict[str, int]:
    """The pins a model spec carries (``{}`` for none)."""
    return split_spec(spec)[1]


def unknown_dims_error(source: str, unknown: "list[str]", known: "list[str]") -> DimsError:
    """The one-line error for pins naming dimensions the model does not have."""
    names = ", ".join(sorted(unknown))
    have = ", ".join(sorted(known)) if known else "none (all its dimensions are static)"
    return DimsError(f"{source}: the model has no symbolic dimension {names}; its symbolic dimensions: {have}")


def pin_onnx_inputs(model, dims: "Mapping[str, int]") -> "dict[str, int]":  # noqa: ANN001 - an onnx.ModelProto
    """Set the graph inputs' symbolic dimensions (``dim_param``) named in ``dims`` to their values, in place.

    Returns the pins no input uses (the caller reports them). The exported script embeds this function's
    source, so the app and the script pin identically.
    """
    used: set[str] = set()
    for value in model.graph.input:
        tensor = value.type.tensor_type
        if not tensor.HasField("shape"):
            continue
        for d in tensor.shape.dim:
            if d.HasField("dim_param") and d.dim_param in dims:
                used.add(d.dim_param)
                d.dim_value = int(dims[d.dim_param])
    return {k: v for k, v in dims.items() if k not in used}


def onnx_input_dim_names(model) -> list[str]:  # noqa: ANN001 - an onnx.ModelProto
    """The symbolic dimension names (``dim_param``) of an ONNX graph's inputs, in order of appearance."""
    names: list[str] = []
    for value in model.graph.input:
        tensor = value.type.tensor_type
        if tensor.HasField("shape"):
            for d in tensor.shape.dim:
                if d.HasField("dim_param") and d.dim_param and d.dim_param not in names:
                    names.append(d.dim_param)
    return names
