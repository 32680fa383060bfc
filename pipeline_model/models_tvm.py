"""Loading models into Relax IRModules (engine side, imports TVM).

:func:`load_model` turns a model spec (see :mod:`pipeline_model.models`) into a :class:`LoadedModel`.
Built-ins and nn.Module files are executed and exported with ``export_tvm``; TVMScript files are parsed
(``tvm.script.from_source`` for ``mod.script()`` text, executed for files with real imports holding an
``@I.ir_module`` class); ONNX and PyTorch files go to :func:`pipeline_model.importers_tvm.load_file`.
Every failure raises :class:`pipeline_model.importers.ModelLoadError` naming the file and the cause
(and the line for TVMScript syntax errors).
"""

from __future__ import annotations

import re
import runpy
import traceback
from typing import Any, Optional


from pipeline_model import models
from pipeline_model.importers.base import LoadedModel, ModelLoadError
from pipeline_model.importers.registry import format_named


def _has_real_imports(text: str) -> bool:
    """True when the file has import statements at top level (it is Python, not bare script text)."""
    return any(line.startswith(("import ", "from ")) for line in text.splitlines())


def _user_frame_line(path: str, exc: BaseException) -> str:
    """`` (line N)`` of the deepest traceback frame inside ``path``, or empty."""
    line = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == path:
            line = f" (line {frame.lineno})"
    return line


def _describe(exc: BaseException) -> str:
    """One readable cause from an exception (TVM diagnostics keep their rendered text)."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _run_python_file(path: str, what: str) -> dict[str, Any]:
    """Execute a model ``.py`` file and return its globals; errors name the file and line."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        compile(text, path, "exec")
    except SyntaxError as exc:
        raise ModelLoadError(f"{path}:{exc.lineno}: syntax error in {what}: {exc.msg}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelLoadError(f"cannot read {what} {path}: {exc}") from None
    try:
        return runpy.run_path(path, run_name="__rps_model__")
    except SystemExit as exc:
        raise ModelLoadError(f"{path}: {what} called exit({exc.code})") from None
    except Exception as exc:  # noqa: BLE001 - user code: report any failure plainly
        cause = _describe(exc)
        match = re.search(re.escape(path) + r":(\d+):", cause)
        where = f"{path}:{match.group(1)}" if match else f"{path}{_user_frame_line(path, exc)}"
        raise ModelLoadError(f"{where}: {what} failed: {cause}") from None


def load_tvmscript(path: str) -> Any:
    """Parse a TVMScript file: ``mod.script()`` text or a Python file with an ``@I.ir_module`` class."""
    import tvm

    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelLoadError(f"cannot read TVMScript file {path}: {exc}") from None
    if _has_real_imports(text):
        namespace = _run_python_file(path, "TVMScript file")
        mods = [v for v in namespace.values() if isinstance(v, tvm.IRModule)]
        mod = namespace.get("mod")
        if isinstance(mod, tvm.IRModule):
            return mod
        if not mods:
            raise ModelLoadError(f"{path}: no IRModule found (expected an @I.ir_module class)")
        return mods[-1]
    try:
        mod = tvm.script.from_source(text)
    except SyntaxError as exc:
        raise ModelLoadError(f"{path}:{exc.lineno}: TVMScript syntax error: {exc.msg}") from None
    except Exception as exc:  # noqa: BLE001 - parser diagnostics come in several types
        message = str(exc).replace("<str>", path)
        match = re.search(re.escape(path) + r":(\d+):", message)
        where = f"{path}:{match.group(1)}" if match else path
        raise ModelLoadError(f"{where}: TVMScript error: {message.strip()}") from None
    if not isinstance(mod, tvm.IRModule):
        mod = tvm.IRModule({"main": mod})
    return mod


def load_nn_module(path: str) -> Any:
    """Execute an nn.Module file (defines ``model`` and ``spec``) and export it with ``export_tvm``."""
    from tvm.relax.frontend import nn

    namespace = _run_python_file(path, "model file")
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
        raise ModelLoadError(f"{path}{_user_frame_line(path, exc)}: export_tvm failed: {_describe(exc)}") from None
    return mod


def load_model(spec: str, base_dir: Optional[str] = None) -> LoadedModel:
    """Load the model named by ``spec`` (``builtin:<name>`` or a path relative to ``base_dir``).

    Raises :class:`ModelLoadError` (or its subclass :class:`pipeline_model.models.ModelSpecError`) with
    a message naming the file and the cause.
    """
    import tvm

    source = models.resolve_model(spec, base_dir)
    key = models.model_key(spec, base_dir)
    fmt = format_named(source.format)
    if fmt is None:  # pragma: no cover - resolve_model names a registered format
        raise ModelLoadError(f"{source.path}: unsupported model format {source.format!r}")
    mod, params = fmt.load(source.path)
    if not isinstance(mod, tvm.IRModule):
        raise ModelLoadError(f"{source.path}: the loader did not produce an IRModule ({type(mod).__name__})")
    return LoadedModel(mod=mod, params=params, key=key, source=source.path)


__all__ = ["LoadedModel", "ModelLoadError", "load_model", "load_nn_module", "load_tvmscript"]
