"""The model-format registry: which :class:`~pipeline_model.importers.base.ModelFormat` reads a file.

A :class:`pipeline_model.registry.Registry` of formats named by ``name`` and asked in ascending
``priority``, the entry-point group ``relax_pipeline_studio.model_formats`` (:mod:`pipeline_model.plugins`):
the built-in formats (:data:`BUILTIN`, entries ``name = module:FORMAT``), the installed plug-ins' entry points
(a ``ModelFormat`` instance or subclass), then the development shortcut ``RPS_MODEL_FORMAT_MODULES`` (modules
that call :func:`register_format` when imported); :func:`register_format` adds one at run time. TVM-free.
"""

from __future__ import annotations

from typing import Optional

from pipeline_model import plugins
from pipeline_model.importers.base import ModelFormat
from pipeline_model.registry import Registry

#: The built-in formats, declared as entry points are (``name = module:attr``).
BUILTIN = tuple(f"{name} = pipeline_model.importers.{name}:FORMAT"
                for name in ("builtin", "torch_py", "tvmscript", "nn_module", "onnx", "pt2"))
#: Development shortcut: modules (comma-separated) imported as model-format plug-ins without installing them.
ENV_MODULES = plugins.DEV_VARIABLES[plugins.GROUP_MODEL_FORMATS]

#: The formats (loaded on first use; a plug-in that cannot be loaded is recorded and left out).
FORMATS: Registry[ModelFormat] = Registry("model format", plugins.GROUP_MODEL_FORMATS, BUILTIN,
                                          name_of=lambda f: f.name, order_of=lambda f: f.priority,
                                          member_type=ModelFormat)


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
