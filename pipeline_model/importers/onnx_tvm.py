"""Format ``onnx``, engine side: ``tvm.relax.frontend.onnx.from_onnx`` with the weights kept as parameters
(an unsupported ONNX op is named in the error)."""

from __future__ import annotations

import warnings
from typing import Any, Optional

from pipeline_model.importers.base import ModelLoadError
from pipeline_model.importers.dims import onnx_input_dim_names, pin_onnx_inputs, unknown_dims_error
from pipeline_model.importers.frontend_tvm import file_key, loaded_model, short_cause, split_params
from pipeline_model.importers.frontends import prepare_onnx_model
from pipeline_model.importers.onnx_fold import fold_shape_subgraphs
from pipeline_model.scriptlib.dynamic_import import onnx_import, tighten_dynamic_shapes


def load_file(path: str, dims: Optional[dict[str, int]] = None) -> Any:
    """Import the ONNX file at ``path`` as a :class:`~pipeline_model.importers.base.LoadedModel`
    (``dims``: pinned dimensions, see :mod:`pipeline_model.importers.dims`)."""
    _kind, key = file_key(path)
    return load_onnx(path, key, dims)


def load_onnx(path: str, key: str, dims: Optional[dict[str, int]] = None) -> Any:
    """Import the ONNX file at ``path`` (``key``: its cache key) with the graph inputs' symbolic dimensions
    named in ``dims`` pinned; a name no input has raises a one-line ``DimsError`` listing those it has."""
    try:
        import onnx
    except ImportError:  # pragma: no cover - onnx is a runtime requirement
        raise ModelLoadError(f"{path}: the onnx package is not installed (pip install onnx)") from None
    try:
        model = onnx.load(path)
    except Exception as exc:  # protobuf DecodeError, truncated file, ...
        raise ModelLoadError(f"{path}: not a readable ONNX file ({short_cause(exc)})") from None
    if not model.graph.node and not model.graph.output:
        raise ModelLoadError(f"{path}: not a readable ONNX file (the file holds no graph)")

    from tvm.relax.frontend.onnx import onnx_frontend

    supported = set(onnx_frontend._get_convert_map()) | {"If", "Constant"}
    unsupported = sorted({n.op_type for n in model.graph.node if n.op_type not in supported})
    if unsupported:
        raise ModelLoadError(
            f"{path}: unsupported ONNX operator{'s' if len(unsupported) > 1 else ''} "
            f"{', '.join(unsupported)} (TVM's Relax ONNX frontend has no converter for "
            f"{'them' if len(unsupported) > 1 else 'it'})"
        )
    try:
        onnx.checker.check_model(model)
    except Exception as exc:
        raise ModelLoadError(f"{path}: invalid ONNX model ({short_cause(exc)})") from None

    if dims:
        left = pin_onnx_inputs(model, dims)
        if left:
            raise unknown_dims_error(path, list(left), onnx_input_dim_names(model))
        fold_shape_subgraphs(model)  # the shape arithmetic the pins made constant (TVM's from_onnx cannot)
    prepare_onnx_model(model)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mod = tighten_dynamic_shapes(onnx_import(model, keep_params_in_input=True))
        mod, params = split_params(mod)
    except ModelLoadError:
        raise
    except Exception as exc:
        raise ModelLoadError(f"{path}: the ONNX import failed: {short_cause(exc)}") from None
    return loaded_model(mod, params, key, path)
