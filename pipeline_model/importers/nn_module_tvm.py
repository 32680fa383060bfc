"""Formats ``nn_module`` and ``builtin``, engine side: run an nn.Module file and export it with
``export_tvm`` (imports TVM)."""

from __future__ import annotations

from typing import Any, Optional

from pipeline_model.importers.base import ModelLoadError
from pipeline_model.importers.pyfile import describe, run_python_file, user_frame_line


def load_nn_module(path: str, text: Optional[str] = None) -> Any:
    """Execute an nn.Module file (defines ``model`` and ``spec``; its ``text`` when given, else the file's) and
    export it with ``export_tvm``."""
    from tvm.relax.frontend import nn

    namespace = run_python_file(path, "model file", text)
    model = namespace.get("model")
    spec = namespace.get("spec")
    if not isinstance(model, nn.Module):
        raise ModelLoadError(
            f"{path}: the file must define `model`, an instance of tvm.relax.frontend.nn.Module "
            f"(found {type(model).__name__ if model is not None else 'nothing'})"
        )
    if not isinstance(spec, dict):
        raise ModelLoadError(
            f"{path}: the file must define `spec`, the export_tvm spec, e.g. "
            '{"forward": {"x": nn.spec.Tensor((1, 784), "float32")}}'
        )
    try:
        mod, _param_spec = model.export_tvm(spec=spec)
    except Exception as exc:  # noqa: BLE001
        raise ModelLoadError(f"{path}{user_frame_line(path, exc)}: export_tvm failed: {describe(exc)}") from None
    return mod
