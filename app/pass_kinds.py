"""The GUI's pass-kind-dependent decisions, answered by the pass-kind registry (``pipeline_model.passkinds``).

No pass id is compared here: each function asks the kind of the step's pass (TVM-free hooks
``is_composite``, ``runs_tuning``, ``user_code``, ``report_sections``) or the catalogue spec.
"""

from __future__ import annotations

from typing import Any, Optional

from pipeline_model.document import PipelineDocument
from pipeline_model.passkinds import kind_for
from pipeline_model.passkinds import step_report_html as _kind_report_html
from pipeline_model.passkinds.fuse_by_pattern import fusion_call_node_ids  # noqa: F401 - re-exported for the inspector
from widgets.theme import status_css


def is_composite(pass_id: str, catalogue: Any) -> bool:
    """True when the pass is a named pipeline / backend stage (its nested passes are listed)."""
    spec = catalogue.get(pass_id) if catalogue is not None else None
    if spec is not None:
        return bool(spec.composite)
    kind = kind_for(pass_id)
    return bool(kind is not None and kind.is_composite(pass_id))


def runs_tuning(pass_id: str) -> bool:
    """True when a step of ``pass_id`` tunes with MetaSchedule (the Tuning panel follows it)."""
    kind = kind_for(pass_id)
    return bool(kind is not None and kind.runs_tuning(pass_id))


def highlights_fusion(report: Optional[dict]) -> bool:
    """True when a step's report names bindings fused by pattern (the graph highlights them)."""
    return isinstance(report, dict) and isinstance(report.get("fusion"), dict)


def step_report_html(pass_id: str, report: dict, target: dict) -> str:
    """HTML for a step's report, rendered by its pass kind with the palette's error colour."""
    return _kind_report_html(pass_id, report or {}, target, error_css=status_css("error"))


def user_code_files(doc: PipelineDocument, index: int) -> list[str]:
    """File names under which step ``index`` runs the user's own code (where tracebacks point)."""
    if not 0 <= index < len(doc.steps):
        return []
    step = doc.steps[index]
    kind = kind_for(step.pass_id)
    if kind is None:
        return []
    return [name for ref in kind.user_code(step, doc.model_path_base(), index + 1) for name in ref.filenames]
