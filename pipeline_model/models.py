"""Model specs: ``builtin:<name>`` or a path to a model file (TVM-free).

A model spec says where the Relax IRModule of a pipeline comes from:

* ``builtin:mlp`` / ``builtin:transformer`` — files in ``resources/models/`` following the nn.Module
  file convention below;
* a TVMScript ``.py`` file: a file holding an ``@I.ir_module`` class, or the plain text of
  ``mod.script()``;
* an nn.Module ``.py`` file: it defines ``model`` (a ``tvm.relax.frontend.nn.Module`` instance) and
  ``spec`` (the ``export_tvm`` spec, e.g. ``{"forward": {"x": nn.spec.Tensor((1, 784), "float32")}}``);
* ``.onnx``, ``.pt2`` and PyTorch ``.py`` files.

Which file is which format, how it is loaded and exported is decided by the model-format registry
(:mod:`pipeline_model.importers`, one module per format).

This module parses specs, computes cache keys (which include the file's content hash) and emits plain
TVM code that loads a model (for script export). Loading itself happens in the engine process
(:mod:`pipeline_model.importers.load_tvm`).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from typing import Optional

from pipeline_model.importers.base import (  # noqa: F401 - KIND_* and classify_python_file are re-exported
    KIND_BUILTIN,
    KIND_IMPORTER,
    KIND_NN_MODULE,
    KIND_TVMSCRIPT,
    ModelLoadError,
    classify_python_file,
)
from pipeline_model.importers.registry import format_named, identify_format
from pipeline_model.resources import resource_path
from pipeline_model.i18n import QT_TRANSLATE_NOOP

#: Folder of the built-in model files.
MODELS_DIR = str(resource_path("models"))

#: Built-in models: name -> description (the file is ``resources/models/<name>.py``).
BUILTIN_MODELS: dict[str, str] = {  # shown translated (context "models", pipeline_model.i18n.translate)
    "mlp": QT_TRANSLATE_NOOP("models", "The MLP of TVM's \"Customize Optimization\" tutorial: Linear(784, 256), ReLU, "
                             "Linear(256, 10, bias=False); input (1, 784) float32."),
    "transformer": QT_TRANSLATE_NOOP("models", "A small pre-norm transformer encoder block: layer norm, 4-head "
                                     "self-attention (matmul, softmax), GELU MLP; input (1, 32, 128) float32."),
    "decoder": QT_TRANSLATE_NOOP("models", "A Llama-style decoder: 32 layers, hidden 512, RMSNorm, rotary "
                                 "self-attention, SwiGLU MLP; symbolic sequence length, inputs x (1, seq_len, 512), "
                                 "cos/sin (seq_len, 64), mask (1, 1, seq_len, seq_len)."),
    "decoder128": QT_TRANSLATE_NOOP("models", "The Llama-style decoder of builtin:decoder with 128 layers (for "
                                    "benchmarks)."),
}

#: Built-ins that are another built-in's file with another layer count: name -> (model file, layers). The file
#: sets its layer count on one top-level line ``LAYERS = <n>`` (:func:`builtin_model_source`).
BUILTIN_SIZES: dict[str, tuple[str, int]] = {"decoder128": ("decoder", 128)}

_LAYERS_LINE = re.compile(r"^LAYERS = \d+$", re.MULTILINE)


class ModelSpecError(ModelLoadError):
    """A model spec that cannot be resolved (unknown built-in, missing or unsupported file)."""


@dataclass(frozen=True)
class ModelSource:
    """A resolved model spec: its kind, the file holding it and a display label."""

    spec: str
    kind: str
    path: str
    label: str
    name: Optional[str] = None  # built-in name
    format: str = ""  # name of the model format (pipeline_model.importers) that reads it
    #: Pinned dimensions ``((name, value), ...)`` the spec carries (see :mod:`pipeline_model.importers.dims`).
    dims: tuple[tuple[str, int], ...] = ()


def builtin_model_path(name: str) -> str:
    """Path of the file of built-in model ``name``; ``ModelSpecError`` if there is no such built-in."""
    if name not in BUILTIN_MODELS:
        raise ModelSpecError(
            f"unknown built-in model 'builtin:{name}': choose one of "
            + ", ".join(f"builtin:{n}" for n in sorted(BUILTIN_MODELS))
        )
    return os.path.join(MODELS_DIR, f"{BUILTIN_SIZES.get(name, (name, 0))[0]}.py")


def builtin_model_source(name: str, layers: Optional[int] = None) -> str:
    """The Python text of built-in model ``name``: its file, with ``layers`` layers when given (else the built-in's
    own count: ``builtin:decoder128`` is ``decoder.py`` with 128). ``ModelSpecError`` for an unknown built-in, or a
    layer count asked of a file without a top-level ``LAYERS = <n>`` line."""
    path = builtin_model_path(name)
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    layers = layers if layers is not None else BUILTIN_SIZES.get(name, ("", None))[1]
    if layers is None:
        return text
    text, found = _LAYERS_LINE.subn(f"LAYERS = {int(layers)}", text, count=1)
    if not found:
        raise ModelSpecError(f"{path}: no top-level 'LAYERS = <n>' line, so builtin:{name} has no layer count to set")
    return text


def resolve_model(spec: str, base_dir: Optional[str] = None) -> ModelSource:
    """Resolve a model spec to a :class:`ModelSource`.

    Relative paths are resolved against ``base_dir`` (the pipeline file's folder) or the current
    directory. Raises :class:`ModelSpecError` with a message naming the spec or file.
    """
    from dataclasses import replace

    from pipeline_model.importers.dims import split_spec

    base, dims = split_spec(str(spec or "").strip())
    source = _resolve_base(base.strip(), base_dir)
    return replace(source, spec=str(spec or "").strip(), dims=tuple(dims.items())) if dims else source


def _resolve_base(spec: str, base_dir: Optional[str]) -> ModelSource:
    """:func:`resolve_model` of a spec without pinned dimensions."""
    if not spec:
        raise ModelSpecError("no model given: use builtin:mlp, builtin:transformer or a model file path")
    if spec.startswith("builtin:"):
        name = spec[len("builtin:"):]
        return ModelSource(spec, KIND_BUILTIN, builtin_model_path(name), spec, name, format="builtin")
    path = os.path.expanduser(spec)
    if not os.path.isabs(path):
        path = os.path.join(base_dir or os.getcwd(), path)
    path = os.path.normpath(path)
    if not os.path.exists(path):
        raise ModelSpecError(f"model file {path} does not exist")
    if not os.path.isfile(path):
        raise ModelSpecError(f"model path {path} is not a file")
    label = os.path.basename(path)
    fmt = identify_format(path)
    if fmt is not None:
        return ModelSource(spec, fmt.source_kind, path, label, format=fmt.name)
    if path.lower().endswith(".py"):
        from pipeline_model import safe_files

        try:
            safe_files.read_text(path, "model file")
        except (OSError, UnicodeDecodeError) as exc:
            raise ModelSpecError(f"cannot read model file {path}: {exc}") from None
        raise ModelSpecError(
            f"model file {path}: cannot tell what it holds — expected TVMScript (an @I.ir_module class "
            "or the text of mod.script()), an nn.Module file defining `model` and `spec`, or a PyTorch "
            "model file"
        )
    raise ModelSpecError(
        f"model file {path}: unsupported file type {os.path.splitext(path)[1] or '(none)'!r} "
        "(supported: .py TVMScript / nn.Module / PyTorch, .onnx, .pt2)"
    )


def file_sha256(path: str) -> str:
    """Hex SHA-256 of a file's content: of the bytes the engine pinned for it
    (:mod:`pipeline_model.importers.content`: consent and load see one content), else streamed from the file
    (special files and files over the cap refused with an ``OSError`` naming the file, see
    :mod:`pipeline_model.safe_files`)."""
    from pipeline_model import safe_files
    from pipeline_model.importers import content

    data = content.pinned_bytes(path)
    if data is not None:
        return content.sha256(data)
    return safe_files.sha256_file(path, "model file")


def model_key(spec: str, base_dir: Optional[str] = None) -> str:
    """Cache key of a model: its kind, resolved path and the file's content hash.

    Editing the model file changes the key, so cached pass results are never reused for a changed model.
    """
    source = resolve_model(spec, base_dir)
    try:
        content = file_sha256(source.path)
    except OSError as exc:
        raise ModelSpecError(str(exc)) from None
    pins = "".join(f"\0{k}={v}" for k, v in source.dims)
    if source.kind == KIND_BUILTIN and source.name in BUILTIN_SIZES:
        pins += f"\0layers={BUILTIN_SIZES[source.name][1]}"  # another built-in's file, another size
    return hashlib.sha256(f"{source.kind}\0{source.path}\0{content}{pins}".encode()).hexdigest()


def model_label(spec: str) -> str:
    """A short label for a model spec (``builtin:mlp`` or the file name)."""
    from pipeline_model.importers.dims import format_dims, split_spec

    try:
        base, dims = split_spec(str(spec or ""))
    except ModelLoadError:
        base, dims = str(spec or ""), {}
    label = base if base.startswith("builtin:") else (os.path.basename(base) or base)
    return f"{label} [{format_dims(dims, ', ')}]" if dims else label


def emit_model_loader(spec: str, base_dir: Optional[str] = None) -> str:
    """Plain TVM 0.27 Python code that defines ``mod`` (a Relax IRModule) and ``params``.

    Built-in models inline the model file's source (the exported script stands alone); other files are
    loaded from their absolute path. ``params`` is a dict name -> numpy array when the model carries
    weights, else ``None``. Paths are emitted with ``repr()``, never formatted into code.
    """
    source = resolve_model(spec, base_dir)
    fmt = format_named(source.format)
    if fmt is None:  # pragma: no cover - resolve_model names a registered format
        raise ModelSpecError(f"{source.path}: no model format {source.format!r}")
    code = fmt.loader_source(source)
    if source.dims and not fmt.pins_in_loader:
        code += ("\n# pinned dimensions (--shape)\nimport tvm.relax as _relax_dims\n"
                 f"mod = _relax_dims.transform.BindSymbolicVars({dict(source.dims)!r})(mod)\n")
    return code
