"""Pass kinds: one module per kind of pipeline step, and the registry that maps a pass id to its kind.

See :mod:`pipeline_model.passkinds.base` for the hooks and :mod:`pipeline_model.passkinds.registry`
for registration (``RPS_PASSKIND_MODULES`` loads extra kinds). TVM-free.
"""

from pipeline_model.passkinds.base import ExportPiece, PassKind, UserCodeRef
from pipeline_model.passkinds.context import PassBuildContext, PassConfigError
from pipeline_model.passkinds.registry import all_kinds, kind_for, kind_name, register, step_report_html, unregister

__all__ = [
    "ExportPiece", "PassBuildContext", "PassConfigError", "PassKind", "UserCodeRef",
    "all_kinds", "kind_for", "kind_name", "register", "step_report_html", "unregister",
]
