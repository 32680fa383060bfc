"""The model-format registry: which :class:`~pipeline_model.importers.base.ModelFormat` reads a file.

A :class:`pipeline_model.registry.Registry` of formats named by ``name`` and asked in ascending
``priority``: the built-in formats (:data:`BUILTIN_MODULES`) are imported on first use, each registering
itself; extra formats come from modules named in ``RPS_MODEL_FORMAT_MODULES`` (the registry's separator
rule: commas) or from :func:`register_format` at run time. TVM-free.
"""

from __future__ import annotations

from typing import Optional

from pipeline_model.importers.base import ModelFormat, ModelLoadError
from pipeline_model.registry import Registry

BUILTIN_MODULES = (
    "pipeline_model.importers.builtin",
    "pipeline_model.importers.torch_py",
    "pipeline_model.importers.tvmscript",
    "pipeline_model.importers.nn_module",
    "pipeline_model.importers.onnx",
    "pipeline_model.importers.pt2",
)
ENV_MODULES = "RPS_MODEL_FORMAT_MODULES"

#: The formats (loaded on first use; a plug-in module that cannot be imported raises ``ModelLoadError``).
FORMATS: Registry[ModelFormat] = Registry("model-format", BUILTIN_MODULES, ENV_MODULES, name_of=lambda f: f.name,
                                          order_of=lambda f: f.priority, load_error=ModelLoadError)


def register_format(fmt: ModelFormat) -> ModelFormat:
    """Register ``fmt`` (replacing one with the same ``name``); returns it."""
    return FORMATS.add(fmt)


def all_formats() -> list[ModelFormat]:
    """All registered formats, in ascending priority."""
    return FORMATS.members()


def format_named(name: str) -> Optional[ModelFormat]:
    """The format called ``name``, or ``None``."""
    return FORMATS.get(name)


def identify_format(path: str) -> Optional[ModelFormat]:
    """The first format (by priority) that identifies the file at ``path``, or ``None``."""
    for fmt in all_formats():
        if fmt.suffixes and path.lower().endswith(fmt.suffixes) and fmt.identify(path):
            return fmt
    return None


def all_suffixes() -> list[str]:
    """Every suffix some format reads (in registration order, no duplicates)."""
    out: list[str] = []
    for fmt in all_formats():
        out.extend(s for s in fmt.suffixes if s not in out)
    return out


def file_filters() -> list[str]:
    """Qt file-dialog filters: all models, one per format, all files."""
    patterns = " ".join(f"*{s}" for s in all_suffixes())
    out = [f"Models ({patterns})"]
    for fmt in all_formats():
        if fmt.suffixes and fmt.title:
            out.append(f"{fmt.title} ({' '.join('*' + s for s in fmt.suffixes)})")
    out.append("All files (*)")
    return out


def file_filter() -> str:
    """:func:`file_filters` joined with ``;;`` (what ``QFileDialog.getOpenFileName`` takes)."""
    return ";;".join(file_filters())
