"""The GUI's pass-kind-dependent decisions, answered by the pass-kind registry (``pipeline_model.passkinds``).

No pass id is compared here: each function asks the kind of the step's pass (TVM-free hooks
``is_composite``, ``runs_tuning``, ``user_code``, ``report_sections``) or the catalogue spec.
"""

from __future__ import annotations

import json
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


def trust_listing(doc: PipelineDocument, catalogue: Any) -> list[tuple[int, str, str]]:
    """``(step number, what, code)`` for the model ``.py`` file (step number 0) and each enabled step that
    would run user Python code (whatever its kind declares through ``user_code``; a spec marked
    ``needs_trust`` lists its params)."""
    from pipeline_model import consent, safe_files

    out: list[tuple[int, str, str]] = []
    base = doc.model_path_base()
    model = consent.model_item(doc.model, base)  # a model .py file runs when loaded (step number 0)
    if model is not None and model.path:
        try:
            code = safe_files.read_text(model.path, "model file", 4 * 1024 * 1024)
        except OSError as exc:
            code = f"# {exc}"
        out.append((0, model.label, code))
    for index, step in enumerate(doc.steps):
        if not step.runnable:
            continue
        kind = kind_for(step.pass_id)
        refs = kind.user_code(step, base, index + 1) if kind is not None else []
        if refs:
            out.extend((index + 1, ref.label, ref.read()) for ref in refs)
            continue
        spec = catalogue.get(step.pass_id) if catalogue is not None else None
        if spec is not None and spec.needs_trust:
            out.append((index + 1, step.pass_id, json.dumps(step.params, indent=2, default=str)))
    return out


def user_code_files(doc: PipelineDocument, index: int) -> list[str]:
    """File names under which step ``index`` runs the user's own code (where tracebacks point)."""
    if not 0 <= index < len(doc.steps):
        return []
    step = doc.steps[index]
    kind = kind_for(step.pass_id)
    if kind is None:
        return []
    return [name for ref in kind.user_code(step, doc.model_path_base(), index + 1) for name in ref.filenames]
