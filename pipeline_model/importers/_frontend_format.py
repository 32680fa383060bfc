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
        import numpy

        loaded = self.load_file(path)
        params = loaded.params
        if params is not None:
            params = {str(k): (v if isinstance(v, numpy.ndarray) else v.numpy()) for k, v in dict(params).items()}
        return loaded.mod, params

    def loader_source(self, source: Any) -> str:
        from pipeline_model.importers.frontends import emit_loader

        return emit_loader(source.path)
