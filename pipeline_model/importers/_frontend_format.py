"""Shared base of the ONNX / PyTorch formats: loaded by :func:`pipeline_model.importers_tvm.load_file`,
exported with :func:`pipeline_model.importers.frontends.emit_loader`."""

from __future__ import annotations

from typing import Any, Optional

from pipeline_model.importers.base import KIND_IMPORTER, ModelFormat


class FrontendFormat(ModelFormat):
    """A model imported through a TVM frontend (weights kept as parameters of ``main``)."""

    source_kind = KIND_IMPORTER

    def load(self, path: str) -> tuple[Any, Optional[dict[str, Any]]]:
        import numpy

        from pipeline_model import importers_tvm

        loaded = importers_tvm.load_file(path)
        params = loaded.params
        if params is not None:
            params = {str(k): (v if isinstance(v, numpy.ndarray) else v.numpy()) for k, v in dict(params).items()}
        return loaded.mod, params

    def loader_source(self, source: Any) -> str:
        from pipeline_model.importers.frontends import emit_loader

        return emit_loader(source.path)
