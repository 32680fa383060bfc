"""Format ``pt2``, engine side: a ``torch.export.save`` archive through ``from_exported_program`` (torch is
imported lazily)."""

from __future__ import annotations

import sys
import traceback
from typing import Any

from pipeline_model.importers.base import ModelLoadError
from pipeline_model.importers.frontend_tvm import file_key, from_exported, import_torch, short_cause


def load_file(path: str) -> Any:
    """Import the ``.pt2`` archive at ``path`` as a :class:`~pipeline_model.importers.base.LoadedModel`."""
    _kind, key = file_key(path)
    return load_pt2(path, key)


def load_pt2(path: str, key: str, allow_imports: bool = False) -> Any:
    """Load a ``torch.export`` archive. An output type that pytree does not know (``Deserializing
    transformers.modeling_outputs.X in pytree is not registered``: the package that registers it was not
    imported) is reported with its cause and fix; with ``allow_imports`` (the user consented to running
    the model's code) and the package installed, the package is imported and the archive loaded again."""
    import importlib
    import importlib.util
    import logging
    import re as _re

    import_torch(path)  # a clear message when torch is missing
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
            exported = load_exported_program(path)
            break
        except Exception as exc:
            text = "\n".join([str(e) for e in (exc, exc.__cause__, exc.__context__) if e is not None] + seen)
            found = _re.search(r"Deserializing ([\w.]+) in pytree is not registered", text)
            if found is None:
                raise ModelLoadError(f"{path}: not a readable torch.export archive ({short_cause(exc)})") from None
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
    return from_exported(path, exported, key)


def load_exported_program(path: str) -> Any:
    """``torch.export.load`` of the archive's bytes as :mod:`pipeline_model.importers.content` gives them (the
    bytes consent was checked on: an archive whose pickles could run code is code, see
    :mod:`pipeline_model.scriptlib.pickles`), never a second read of the path."""
    import io

    import torch

    from pipeline_model.importers import content

    return torch.export.load(io.BytesIO(content.read_bytes(path, "model archive")))
