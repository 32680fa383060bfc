"""The GUI's pass-kind-dependent decisions, one function each (the only pass-id checks in ``app/``).

They are kept here, unchanged in behaviour, so that they can be switched to the pass-kind registry
(``pipeline_model.passkinds``: ``user_code(step, base_dir)``, ``is_composite``, ``runs_tuning``,
``report_html``) in one place.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Optional

from pipeline_model.document import PipelineDocument

#: Pass ids whose steps tune with MetaSchedule (they emit ``tuning_progress``).
TUNING_PASS_IDS = ("relax.MetaScheduleTuneTIR", "relax.MetaScheduleTuneIRMod")


def is_composite(pass_id: str, catalogue: Any) -> bool:
    """True when the pass is a named pipeline / backend stage (its nested passes are listed)."""
    spec = catalogue.get(pass_id) if catalogue is not None else None
    if spec is not None:
        return bool(spec.composite)
    return pass_id.startswith(("pipeline.", "stage."))


def runs_tuning(pass_id: str) -> bool:
    """True when a step of ``pass_id`` tunes with MetaSchedule (the Tuning panel follows it)."""
    return pass_id in TUNING_PASS_IDS


def highlights_fusion(pass_id: str) -> bool:
    """True when the graph after a step of ``pass_id`` highlights the bindings fused by pattern."""
    return pass_id == "relax.FuseOpsByPattern"


def _resolve(doc: PipelineDocument, path: str) -> str:
    return path if os.path.isabs(path) else os.path.join(doc.model_path_base() or os.getcwd(), path)


def trust_listing(doc: PipelineDocument, catalogue: Any) -> list[tuple[int, str, str]]:
    """``(step number, what, code)`` for each enabled step that would run user Python code:
    ``custom.python`` sources and pattern files of FuseOpsByPattern (read from disk)."""
    out: list[tuple[int, str, str]] = []
    for index, step in enumerate(doc.steps):
        if not step.runnable:
            continue
        if step.pass_id == "custom.python":
            out.append((index + 1, "custom.python", str(step.params.get("source") or "")))
            continue
        spec = catalogue.get(step.pass_id) if catalogue is not None else None
        path = step.params.get("pattern_file")
        if step.params.get("pattern_source") == "file" and path:
            full = _resolve(doc, str(path))
            try:
                code = Path(full).read_text(encoding="utf-8")
            except OSError as exc:
                code = f"# cannot read {full}: {exc.strerror or exc}"
            out.append((index + 1, f"{step.pass_id} pattern file {full}", code))
        elif spec is not None and spec.needs_trust:
            out.append((index + 1, step.pass_id, json.dumps(step.params, indent=2, default=str)))
    return out


def user_code_files(doc: PipelineDocument, index: int) -> list[str]:
    """File names under which step ``index`` runs the user's own code: ``<custom step N>`` for a
    custom Python step, the pattern file (as written and resolved) for FuseOpsByPattern."""
    if not 0 <= index < len(doc.steps):
        return []
    step = doc.steps[index]
    if step.pass_id == "custom.python":
        return [f"<custom step {index + 1}>"]
    path: Optional[Any] = step.params.get("pattern_file")
    if step.params.get("pattern_source") == "file" and path:
        return [str(path), _resolve(doc, str(path))]
    return []
