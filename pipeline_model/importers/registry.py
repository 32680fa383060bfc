"""The model-format registry: which :class:`~pipeline_model.importers.base.ModelFormat` reads a file.

Built-in formats (:data:`BUILTIN_MODULES`) are imported on first use; each registers itself. Extra
formats come from modules named in ``RPS_MODEL_FORMAT_MODULES`` (comma-separated) or from
:func:`register_format` at run time. TVM-free.
"""

from __future__ import annotations

import importlib
import os
import re
from typing import Optional

from pipeline_model.importers.base import ModelFormat, ModelLoadError

BUILTIN_MODULES = (
    "pipeline_model.importers.builtin",
    "pipeline_model.importers.torch_py",
    "pipeline_model.importers.tvmscript",
    "pipeline_model.importers.nn_module",
    "pipeline_model.importers.onnx",
    "pipeline_model.importers.pt2",
)
ENV_MODULES = "RPS_MODEL_FORMAT_MODULES"

_FORMATS: list[ModelFormat] = []
_LOADED = False


def register_format(fmt: ModelFormat) -> ModelFormat:
    """Register ``fmt`` (replacing one with the same ``name``); returns it."""
    for i, known in enumerate(_FORMATS):
        if known.name == fmt.name:
            _FORMATS[i] = fmt
            return fmt
    _FORMATS.append(fmt)
    return fmt


def _load() -> None:
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    names = list(BUILTIN_MODULES) + [n.strip() for n in re.split(r"[,;]", os.environ.get(ENV_MODULES, "")) if n.strip()]
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - name the module that failed
            raise ModelLoadError(f"cannot import model-format module {name!r}: {type(exc).__name__}: {exc}") from exc


def all_formats() -> list[ModelFormat]:
    """All registered formats, in ascending priority."""
    _load()
    return sorted(_FORMATS, key=lambda f: f.priority)


def format_named(name: str) -> Optional[ModelFormat]:
    """The format called ``name``, or ``None``."""
    return next((f for f in all_formats() if f.name == name), None)


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
