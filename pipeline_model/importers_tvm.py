"""Model importers, engine side: ONNX (``.onnx``) and PyTorch (``.pt2``, torch-convention ``.py``).

Runs only in the engine process (imports TVM; torch is imported lazily and only for torch models).
Every importer keeps the model's weights as parameters of ``main`` (after the ``num_input`` real
inputs) and returns them as numpy arrays keyed by the parameter names, so the pipeline works on the
same graph whatever the weights are, and the build can run the model with its real weights.
Symbolic dimensions (ONNX ``dim_param``, ``torch.export.Dim``) stay symbolic in the module.

Every failure is turned into :class:`pipeline_model.importers.ModelLoadError` naming the file and
the cause (an unsupported ONNX op names the op).
"""

from __future__ import annotations

import hashlib
import os
import runpy
import sys
import traceback
import warnings
from typing import Any

import numpy as np

from pipeline_model.importers.base import LoadedModel, ModelLoadError
from pipeline_model.importers.frontends import TORCH_INSTALL_HINT, importer_kind, prepare_onnx_model


def _file_hash(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _short_cause(exc: BaseException) -> str:
    """The first meaningful line(s) of an exception message, without TVM's C++ backtrace."""
    text = str(exc).strip() or type(exc).__name__
    lines = [ln for ln in text.splitlines() if ln.strip()]
    # TVM errors carry a long backtrace; keep the final "XxxError: message" part when present.
    for ln in reversed(lines):
        if "Error:" in ln or "error:" in ln:
            return ln.strip()
    return " ".join(lines[:3])[:600]


def _split_params(mod: Any) -> tuple[Any, dict[str, np.ndarray]]:
    """Detach the ``params`` attribute of ``main`` and key the arrays by parameter name."""
    from tvm.relax.frontend import detach_params

    mod, detached = detach_params(mod)
    main = mod["main"]
    values = detached.get("main", [])
    num_input = int(main.attrs["num_input"]) if main.attrs and "num_input" in main.attrs \
        else len(main.params) - len(values)
    weights = list(main.params)[num_input:]
    if len(weights) != len(values):
        raise RuntimeError(
            f"main has {len(weights)} weight parameters but the importer returned {len(values)} values"
        )
    params: dict[str, np.ndarray] = {}
    for var, value in zip(weights, values):
        name = str(var.name)
        if name in params:
            raise RuntimeError(f"two weight parameters are both named {name!r}")
        params[name] = value.numpy()
    return mod, params


def _loaded_model(mod: Any, params: dict[str, np.ndarray] | None, key: str, source: str) -> Any:
    return LoadedModel(mod=mod, params=params or None, key=key, source=source)


# --------------------------------------------------------------------------------------------- ONNX
def _load_onnx(path: str, key: str) -> Any:
    try:
        import onnx
    except ImportError:  # pragma: no cover - onnx is a runtime requirement
        raise ModelLoadError(f"{path}: the onnx package is not installed (pip install onnx)") from None
    try:
        model = onnx.load(path)
    except Exception as exc:  # protobuf DecodeError, truncated file, ...
        raise ModelLoadError(f"{path}: not a readable ONNX file ({_short_cause(exc)})") from None
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
        raise ModelLoadError(f"{path}: invalid ONNX model ({_short_cause(exc)})") from None

    prepare_onnx_model(model)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mod = onnx_frontend.from_onnx(model, keep_params_in_input=True)
        mod, params = _split_params(mod)
    except ModelLoadError:
        raise
    except Exception as exc:
        raise ModelLoadError(f"{path}: the ONNX import failed: {_short_cause(exc)}") from None
    return _loaded_model(mod, params, key, path)


# -------------------------------------------------------------------------------------------- torch
def _import_torch(path: str) -> Any:
    try:
        import torch  # noqa: F401  (optional, heavy: imported only for torch models)
    except ImportError:
        raise ModelLoadError(f"{path}: {TORCH_INSTALL_HINT}") from None
    return torch


def _from_exported(path: str, exported: Any, key: str) -> Any:
    try:
        from tvm.relax.frontend.torch import from_exported_program

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mod = from_exported_program(exported, keep_params_as_input=True)
        mod, params = _split_params(mod)
    except Exception as exc:
        raise ModelLoadError(
            f"{path}: the PyTorch import into Relax failed: {_short_cause(exc)}"
        ) from None
    return _loaded_model(mod, params, key, path)


def _load_pt2(path: str, key: str, allow_imports: bool = False) -> Any:
    """Load a ``torch.export`` archive. An output type that pytree does not know (``Deserializing
    transformers.modeling_outputs.X in pytree is not registered``: the package that registers it was not
    imported) is reported with its cause and fix; with ``allow_imports`` (the user consented to running
    the model's code) and the package installed, the package is imported and the archive loaded again."""
    import importlib
    import importlib.util
    import logging
    import re as _re

    torch = _import_torch(path)
    seen: list[str] = []  # torch logs the real cause as a warning ("Please check the warnings above")

    class _Capture(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage() + "\n" + "".join(traceback.format_exception(*record.exc_info))
                        if record.exc_info else record.getMessage())

    logger, capture = logging.getLogger("torch.export"), _Capture(logging.WARNING)
    for attempt in range(2):
        seen.clear()
        logger.addHandler(capture)
        try:
            exported = torch.export.load(path)
            break
        except Exception as exc:
            text = "\n".join([str(e) for e in (exc, exc.__cause__, exc.__context__) if e is not None] + seen)
            found = _re.search(r"Deserializing ([\w.]+) in pytree is not registered", text)
            if found is None:
                raise ModelLoadError(f"{path}: not a readable torch.export archive ({_short_cause(exc)})") from None
            type_name = found.group(1)
            package = type_name.split(".")[0]
            installed = importlib.util.find_spec(package) is not None
            if attempt == 0 and installed and allow_imports and package not in sys.modules:
                importlib.import_module(package)  # registers its output types with pytree
                continue
            cause = (f"{path}: the archive's output type {type_name} is not registered in torch's pytree "
                     f"(it is registered by the package {package!r} when imported)")
            if not installed:
                fix = f"install {package} (pip install {package}), or re-export the model with tuple outputs"
            elif not allow_imports:
                fix = (f"allow the model's code to run (the app then imports {package} before loading), or "
                       "re-export the model with tuple outputs (wrap it so forward returns a tuple)")
            else:
                fix = "re-export the model with tuple outputs (wrap it so forward returns a tuple)"
            raise ModelLoadError(f"{cause}. Fix: {fix}") from None
        finally:
            logger.removeHandler(capture)
    return _from_exported(path, exported, key)


def _load_torch_py(path: str, key: str) -> Any:
    torch = _import_torch(path)
    try:
        namespace = runpy.run_path(path, run_name="__rps_model__")
    except Exception as exc:
        frames = traceback.extract_tb(exc.__traceback__)
        line = next((f.lineno for f in reversed(frames) if os.path.abspath(f.filename)
                     == os.path.abspath(path)), None)
        where = f"{path}:{line}" if line else path
        raise ModelLoadError(f"{where}: running the model file failed: "
                             f"{type(exc).__name__}: {exc}") from None
    model = namespace.get("model")
    if not isinstance(model, torch.nn.Module):
        raise ModelLoadError(
            f"{path}: the file must define `model`, a torch.nn.Module instance "
            f"(found {type(model).__name__ if model is not None else 'nothing'})"
        )
    example = namespace.get("example_inputs")
    if isinstance(example, torch.Tensor):
        example = (example,)
    if not isinstance(example, (tuple, list)) or not all(isinstance(t, torch.Tensor) for t in example):
        raise ModelLoadError(f"{path}: the file must define `example_inputs`, a tuple of torch tensors")
    try:
        exported = torch.export.export(model.eval(), tuple(example),
                                       dynamic_shapes=namespace.get("dynamic_shapes"))
    except Exception as exc:
        raise ModelLoadError(f"{path}: torch.export.export failed: {_short_cause(exc)}") from None
    return _from_exported(path, exported, key)


def load_file(path: str) -> Any:
    """Import the model file at ``path`` (``.onnx``, ``.pt2``, torch-convention ``.py``).

    Returns a :class:`pipeline_model.models_tvm.LoadedModel` whose ``mod`` has weights as
    parameters of ``main`` (after ``num_input`` inputs) and whose ``params`` maps those parameter
    names to numpy arrays. ``key`` includes the file's content hash. Raises
    :class:`ModelLoadError` naming the file and the cause for anything that cannot be imported.
    """
    if not os.path.exists(path):
        raise ModelLoadError(f"{path}: no such file")
    if not os.path.isfile(path):
        raise ModelLoadError(f"{path}: not a file")
    kind = importer_kind(path)
    if kind is None:
        raise ModelLoadError(
            f"{path}: not a model file for the ONNX/PyTorch importers (expected .onnx, .pt2 or a .py "
            "file that imports torch and defines `model` and `example_inputs`)"
        )
    try:
        key = f"{kind}:{_file_hash(path)}"
    except OSError as exc:
        raise ModelLoadError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    if kind == "onnx":
        return _load_onnx(path, key)
    if kind == "pt2":
        return _load_pt2(path, key)
    return _load_torch_py(path, key)
