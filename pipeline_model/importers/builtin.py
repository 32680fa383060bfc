"""Format ``builtin``: the bundled models ``builtin:<name>`` (``resources/models/<name>.py``, nn.Module files).

Not chosen by file suffix: ``models.resolve_model`` maps ``builtin:`` specs to it. Exported scripts
inline the model file's source so they stand alone. A built-in of :data:`pipeline_model.models.BUILTIN_SIZES`
(``decoder128``) is another built-in's file with its own layer count, loaded and exported as that text.
"""

from __future__ import annotations

import ast
import os
from typing import Any, Optional

from pipeline_model import emit
from pipeline_model.importers.base import KIND_BUILTIN, ModelFormat


class BuiltinFormat(ModelFormat):
    """A bundled nn.Module model."""

    name = "builtin"
    source_kind = KIND_BUILTIN
    priority = 0

    def identify(self, path: str) -> bool:
        return False  # chosen by the "builtin:" spec, not by a file

    def load_source(self, source: Any) -> tuple[Any, Optional[dict[str, Any]], dict[str, int]]:
        from pipeline_model.importers.nn_module_tvm import load_nn_module
        from pipeline_model.models import builtin_model_source

        return load_nn_module(source.path, builtin_model_source(source.name)), None, dict(source.dims)

    def loader_source(self, source: Any) -> str:
        from pipeline_model.models import BUILTIN_SIZES, builtin_model_source

        body = _without_docstring(builtin_model_source(source.name)).rstrip() + "\n"
        size = f", LAYERS = {BUILTIN_SIZES[source.name][1]}" if source.name in BUILTIN_SIZES else ""
        return (
            f"# ---- model {emit.comment_safe(source.spec)} (inlined from resources/models/"
            f"{emit.comment_safe(os.path.basename(source.path))}{size}) ----\n"
            + body
            + "mod, _param_spec = model.export_tvm(spec=spec)\n"
            + "params = None  # nn.Module parameters are function inputs without data\n"
            + "# ---- end of model ----\n"
        )


def _without_docstring(text: str) -> str:
    """``text`` (a bundled model file) without its module docstring: in an exported script the comment line above
    the model names the file, and its reader came for the model and the pipeline."""
    body = ast.parse(text).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return "".join(text.splitlines(keepends=True)[body[0].end_lineno or 0:]).lstrip("\n")
    return text


FORMAT = BuiltinFormat()
