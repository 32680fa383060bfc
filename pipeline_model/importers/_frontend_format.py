"""Shared base of the ONNX / PyTorch formats: each loads through its own engine half (``load_file`` of
:mod:`.onnx_tvm`, :mod:`.pt2_tvm`, :mod:`.torch_tvm`), exported with
:func:`pipeline_model.importers.frontends.emit_loader`."""

from __future__ import annotations

from typing import Any, Optional

from pipeline_model.importers.base import KIND_IMPORTER, ModelFormat


class FrontendFormat(ModelFormat):
    """A model imported through a TVM frontend (weights kept as parameters of ``main``)."""

    source_kind = KIND_IMPORTER

    def load_file(self, path: str) -> Any:
        """The format's engine loader: a ``LoadedModel`` of the file at ``path`` (imports its ``*_tvm``)."""
        raise NotImplementedError

    def load(self, path: str) -> tuple[Any, Optional[dict[str, Any]]]:
        loaded = self.load_file(path)
        return loaded.mod, _numpy_params(loaded.params)

    def load_file_pinned(self, path: str, dims: dict[str, int]) -> tuple[Any, dict[str, int]]:
        """``(LoadedModel, pins left)``: :meth:`load_file` with the pins the frontend applies before importing
        (none by default: all are left to ``BindSymbolicVars`` after the import)."""
        return self.load_file(path), dict(dims)

    def load_pinned(self, path: str, dims: dict[str, int]) -> tuple[Any, Optional[dict[str, Any]], dict[str, int]]:
        loaded, left = self.load_file_pinned(path, dims)
        return loaded.mod, _numpy_params(loaded.params), left

    def loader_source(self, source: Any) -> str:
        from pipeline_model.importers.frontends import emit_loader

        return emit_loader(source.path)


def _numpy_params(params: Any) -> Optional[dict[str, Any]]:
    """A loader's params as name -> numpy array (``None`` stays ``None``)."""
    import numpy

    if params is None:
        return None
    return {str(k): (v if isinstance(v, numpy.ndarray) else v.numpy()) for k, v in dict(params).items()}
