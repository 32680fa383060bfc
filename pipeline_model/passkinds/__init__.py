"""Pass kinds: one folder per kind of pipeline step, and the registry that maps a pass id to its kind.

Each built-in kind is a package ``pipeline_model.passkinds.<kind>`` (its spec and hooks in ``__init__.py``,
its engine half in ``*_tvm.py``, the code exported scripts contain in ``script.py``); the files directly in
this folder are the framework every kind uses: :mod:`.base` (the hooks), :mod:`.registry` (registration,
``RPS_PASSKIND_MODULES`` loads extra kinds), :mod:`.context`, :mod:`.evaluate`, :mod:`.report_html` and the
engine's catalogue builder :mod:`.catalogue_tvm`. TVM-free.
"""

from pipeline_model.passkinds.base import ExportPiece, PassKind, UserCodeRef
from pipeline_model.passkinds.context import PassBuildContext, PassConfigError
from pipeline_model.passkinds.registry import (
    all_kinds,
    kind_for,
    kind_name,
    recipe_for,
    register,
    step_report_html,
    step_result_line,
    unregister,
)

__all__ = [
    "ExportPiece", "PassBuildContext", "PassConfigError", "PassKind", "UserCodeRef",
    "all_kinds", "kind_for", "kind_name", "recipe_for", "register", "step_report_html", "step_result_line",
    "unregister",
]
