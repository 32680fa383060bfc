"""Format ``onnx``: an ``.onnx`` model (``tvm.relax.frontend.onnx.from_onnx``, weights kept as parameters)."""

from __future__ import annotations

from typing import Any

from pipeline_model.importers._frontend_format import FrontendFormat
from pipeline_model.importers.registry import register_format


class ONNXFormat(FrontendFormat):
    """ONNX."""

    name = "onnx"
    title = "ONNX"
    suffixes = (".onnx",)
    priority = 40

    def load_file(self, path: str) -> Any:
        from pipeline_model.importers import onnx_tvm

        return onnx_tvm.load_file(path)


FORMAT = register_format(ONNXFormat())
