"""Model formats: the :class:`ModelFormat` protocol, the error every loader raises, the loaded model.

A model format (built-in model, TVMScript ``.py``, Relax nn.Module ``.py``, ONNX, PyTorch ``.pt2``,
torch ``.py``, or one a plug-in adds) is a subclass of :class:`ModelFormat` registered with
:func:`pipeline_model.importers.registry.register_format`. It declares its file suffixes, a TVM-free
:meth:`ModelFormat.identify` (reads, never executes, the file), the engine loader
(:meth:`ModelFormat.load`, imports TVM lazily) and the loader source for exported scripts
(:meth:`ModelFormat.loader_source`). TVM-free.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

#: Model kinds a spec can resolve to (part of the model's cache key, see ``models.model_key``).
KIND_BUILTIN = "builtin"
KIND_TVMSCRIPT = "tvmscript"
KIND_NN_MODULE = "nn_module"
KIND_IMPORTER = "importer"  # .onnx, .pt2, torch .py

_TVMSCRIPT_MARKERS = re.compile(r"^\s*@(I\.ir_module|tvm\.script\.ir_module|ir_module)\b|^# from tvm\.script import", re.M)
_NN_MARKERS = re.compile(r"relax\.frontend\s+import\s+nn|relax\.frontend\.nn\b")
_TORCH_MARKERS = re.compile(r"^\s*(import\s+torch\b|from\s+torch\b)", re.M)


class ModelLoadError(ValueError):
    """A model file could not be loaded; the message names the file and the cause."""


@dataclass
class LoadedModel:
    """A loaded model.

    ``mod`` is the Relax IRModule, ``params`` the weights (name -> numpy array) when the model carries
    them, else ``None``; ``key`` the cache key (includes the file's content hash, see
    :func:`pipeline_model.models.model_key`); ``source`` the file the model came from.
    """

    mod: Any
    params: Optional[dict[str, Any]]
    key: str
    source: str
    #: SHA-256 of the bytes a code-bearing model file was loaded from ("" otherwise): later reads of the file
    #: (the framework check) must find the same content.
    content_sha256: str = ""


def classify_python_file(text: str) -> str:
    """Tell what a model ``.py`` file holds from its text: TVMScript, an nn.Module, or a torch model."""
    if _TVMSCRIPT_MARKERS.search(text):
        return KIND_TVMSCRIPT
    if _NN_MARKERS.search(text):
        return KIND_NN_MODULE
    if _TORCH_MARKERS.search(text):
        return KIND_IMPORTER
    return ""


def read_text(path: str) -> Optional[str]:
    """The text of ``path``, or ``None`` when it cannot be read as UTF-8 text (special files such as
    FIFOs and devices, and files over the size cap, are refused without being read; see
    :mod:`pipeline_model.safe_files`)."""
    from pipeline_model import safe_files

    try:
        return safe_files.read_text(path, "model file")
    except (OSError, UnicodeDecodeError):
        return None


class ModelFormat:
    """Base of all model formats.

    Class attributes: ``name`` (stored in ``ModelSource.format``), ``title`` (file-dialog label),
    ``suffixes`` (lower-case, with the dot), ``source_kind`` (one of the ``KIND_*`` constants, part of
    the cache key) and ``priority`` (formats sharing a suffix are asked in ascending priority).
    """

    name = "base"
    title = ""
    suffixes: tuple[str, ...] = ()
    source_kind = KIND_IMPORTER
    priority = 50
    #: Whether :meth:`loader_source` applies a source's pinned dimensions itself (else the exported script
    #: binds them after the loader with ``relax.transform.BindSymbolicVars``).
    pins_in_loader = False

    def identify(self, path: str) -> bool:
        """Whether the file at ``path`` is in this format (TVM-free; reads, never executes it)."""
        return path.lower().endswith(self.suffixes) if self.suffixes else False

    def load(self, path: str) -> tuple[Any, Optional[dict[str, Any]]]:
        """``(IRModule, params or None)`` of the model at ``path`` (engine side; imports TVM).
        Raises :class:`ModelLoadError` naming the file and the cause."""
        raise ModelLoadError(f"{path}: the {self.name} format has no loader")

    def load_pinned(self, path: str, dims: dict[str, int]) -> tuple[Any, Optional[dict[str, Any]], dict[str, int]]:
        """``(IRModule, params or None, pins left)``: the model at ``path`` with the pinned dimensions ``dims``
        (:mod:`pipeline_model.importers.dims`) its frontend applies before the import; the pins left are bound
        in the loaded module afterwards (``relax.transform.BindSymbolicVars``). By default none is applied early."""
        mod, params = self.load(path)
        return mod, params, dict(dims)

    def load_source(self, source: Any) -> tuple[Any, Optional[dict[str, Any]], dict[str, int]]:
        """``(IRModule, params or None, pins left)`` of ``source`` (a ``models.ModelSource``): :meth:`load_pinned`
        with its pinned dimensions, else :meth:`load` of its file. Formats whose sources are more than their file
        (``builtin``: a built-in with its own layer count) override it."""
        dims = dict(source.dims)
        if dims:
            return self.load_pinned(source.path, dims)
        mod, params = self.load(source.path)
        return mod, params, {}

    def loader_source(self, source: Any) -> str:
        """Plain TVM Python code defining ``mod`` and ``params`` for ``source`` (a ``models.ModelSource``);
        paths are embedded with ``repr()``, never formatted into code."""
        raise ModelLoadError(f"{source.path}: the {self.name} format cannot be exported")
