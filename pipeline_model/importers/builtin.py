"""Format ``builtin``: the bundled models ``builtin:<name>`` (``resources/models/<name>.py``, nn.Module files).

Not chosen by file suffix: ``models.resolve_model`` maps ``builtin:`` specs to it. Exported scripts
inline the model file's source so they stand alone.
"""

from __future__ import annotations

import ast
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

    def load(self, path: str) -> tuple[Any, Optional[dict[str, Any]]]:
        from pipeline_model.importers.nn_module_tvm import load_nn_module

        return load_nn_module(path), None

    def loader_source(self, source: Any) -> str:
        with open(source.path, encoding="utf-8") as fh:
            body = _without_docstring(fh.read()).rstrip() + "\n"
        return (
            f"# ---- model {emit.comment_safe(source.spec)} (inlined from resources/models/"
            f"{emit.comment_safe(source.name)}.py) ----\n"
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
