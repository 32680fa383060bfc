"""Model formats: one module per format and a registry (:mod:`.registry`), plus the ONNX/PyTorch
helpers (:mod:`.frontends`). TVM-free.

Formats: ``builtin`` (bundled nn.Module models), ``tvmscript`` and ``nn_module`` (``.py``),
``onnx`` (``.onnx``), ``pt2`` (``.pt2``), ``torch_py`` (torch-convention ``.py``). The GUI's file
filters come from :func:`file_filters`. The names this package exported when it was one module
(``ModelLoadError``, ``emit_loader``, ``importer_kind`` ...) are kept.
"""

from pipeline_model.importers.base import KIND_BUILTIN, KIND_IMPORTER, KIND_NN_MODULE, KIND_TVMSCRIPT, LoadedModel, ModelFormat, ModelLoadError, classify_python_file
from pipeline_model.importers.frontends import (
    TORCH_INSTALL_HINT,
    emit_loader,
    importer_kind,
    is_torch_python_file,
    prepare_onnx_model,
)
from pipeline_model.importers.registry import all_formats, file_filter, file_filters, format_named, identify_format, register_format

__all__ = [
    "KIND_BUILTIN", "KIND_IMPORTER", "KIND_NN_MODULE", "KIND_TVMSCRIPT", "LoadedModel",
    "ModelFormat", "ModelLoadError", "TORCH_INSTALL_HINT", "all_formats", "classify_python_file", "emit_loader",
    "file_filter", "file_filters", "format_named", "identify_format", "importer_kind",
    "is_torch_python_file", "prepare_onnx_model", "register_format",
]
