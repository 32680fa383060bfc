"""Format ``onnx``: an ``.onnx`` model (``tvm.relax.frontend.onnx.from_onnx``, weights kept as parameters)."""

from __future__ import annotations

from typing import Any

from pipeline_model.importers._frontend_format import FrontendFormat


class ONNXFormat(FrontendFormat):
    """ONNX."""

    name = "onnx"
    title = "ONNX"
    suffixes = (".onnx",)
    priority = 40
    pins_in_loader = True

    def load_file(self, path: str) -> Any:
        from pipeline_model.importers import onnx_tvm

        return onnx_tvm.load_file(path)

    def loader_source(self, source: Any) -> str:
        """The exported loader, with the pinned input dimensions set in the ONNX graph before the import."""
        from pipeline_model.importers.frontends import emit_loader

        return emit_loader(source.path, dict(source.dims))

    def load_file_pinned(self, path: str, dims: dict[str, int]) -> tuple[Any, dict[str, int]]:
        """The ONNX graph's input dimensions are pinned before the import (``from_onnx`` then sees static
        shapes: its converters do not all handle symbolic ones); a name no input uses is an error."""
        from pipeline_model.importers import onnx_tvm

        return onnx_tvm.load_file(path, dims), {}


FORMAT = ONNXFormat()

