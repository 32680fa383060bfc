"""Format ``torch_py``: a ``.py`` file following the torch convention (``model``, ``example_inputs``,
optional ``dynamic_shapes``; see ``docs/MODELS.md``), exported with ``torch.export.export``.

A file that imports torch, assigns ``example_inputs`` and does not import TVM is this format, before
any other ``.py`` format is asked; a file that only imports torch (no TVMScript / nn.Module markers) is
this format too, and its load then says what is missing.
"""

from __future__ import annotations

from typing import Any

from pipeline_model.importers._frontend_format import FrontendFormat
from pipeline_model.importers.base import KIND_IMPORTER, classify_python_file, read_text
from pipeline_model.importers.frontends import is_torch_python_file


class TorchPyFormat(FrontendFormat):
    """PyTorch model file."""

    name = "torch_py"
    title = "PyTorch model file"
    suffixes = (".py",)
    priority = 10

    def load_file(self, path: str) -> Any:
        from pipeline_model.importers import torch_tvm

        return torch_tvm.load_file(path)

    def identify(self, path: str) -> bool:
        if is_torch_python_file(path):
            return True
        text = read_text(path)
        return text is not None and classify_python_file(text) == KIND_IMPORTER


FORMAT = TorchPyFormat()
