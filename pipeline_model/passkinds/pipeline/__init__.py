"""Kind ``pipeline``: a named pipeline of ``tvm.relax.pipeline`` as one step (``pipeline.<name>``),
built with ``tvm.relax.get_pipeline(name, **flags)``.

``pipeline.static_shape_tuning`` also gets the target, and its ``work_dir`` "" means the session's
tuning folder.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pipeline_model import emit
from pipeline_model.passkinds.base import PassKind

PREFIX = "pipeline."
#: The named pipeline that needs the target and a tuning folder.
STATIC_SHAPE_TUNING = "static_shape_tuning"

_DOCS = {
    "zero": "LegalizeOps, AnnotateTIROpPattern, FoldConstant, FuseOps, FuseTIR (and MetaScheduleApplyDatabase "
    "when a tuning database is current).",
    "default": "Alias of default_build.",
}


def pipeline_specs() -> list[Any]:
    """One spec per named pipeline in ``tvm.relax.pipeline.PIPELINE_MAP``. Engine side."""
    import inspect

    from tvm.relax import pipeline as rp

    from pipeline_model.catalogue import ParamSpec, PassSpec
    from pipeline_model.passkinds.catalogue_tvm import docstring_params, first_paragraph

    specs = []
    for name, func in rp.PIPELINE_MAP.items():
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
            continue
        params: list[ParamSpec] = []
        doc_params = docstring_params(inspect.getdoc(func))
        if name == STATIC_SHAPE_TUNING:
            params = [
                ParamSpec("total_trials", "int", 64, "Total number of tuning trials (0: only apply the database)."),
                ParamSpec("work_dir", "str", "", "Tuning work directory (empty: the session's default)."),
                ParamSpec("cpu_weight_prepack", "bool", False, doc_params.get("cpu_weight_prepack", ("", ""))[1]),
                ParamSpec("max_trials_per_task", "int", None, "Trials per task at most (empty: total_trials).",
                          nullable=True),
            ]
        else:
            for p in inspect.signature(func).parameters.values():
                if isinstance(p.default, bool):
                    params.append(ParamSpec(p.name, "bool", p.default, doc_params.get(p.name, ("", ""))[1]))
        doc = _DOCS.get(name) or first_paragraph(inspect.getdoc(func)) or name
        specs.append(
            PassSpec(
                id=f"{PREFIX}{name}",
                title=f"Pipeline: {name}",
                category="Named pipelines",
                doc=f"tvm.relax.get_pipeline({name!r}): {doc}",
                params=params,
                composite=True,
                tvm_name="tvm.relax.get_pipeline",
            )
        )
    return specs


class NamedPipelineKind(PassKind):
    """``tvm.relax.get_pipeline(name, **flags)`` (see the module docstring)."""

    name = "pipeline"
    priority = 20
    catalogue_order = 30

    def matches(self, pass_id: str) -> bool:
        return pass_id.startswith(PREFIX)

    def is_composite(self, pass_id: str) -> bool:
        return True

    def add_specs(self, cat: Any) -> None:
        for spec in pipeline_specs():
            cat.add(spec)

    def recipe(self, pass_id: str, params: dict[str, Any], *, step_number: Optional[int] = None) -> emit.Expr:
        name = pass_id[len(PREFIX):]
        if not emit.is_identifier(name):
            raise emit.EmitError(f"bad pipeline name {name!r}")
        kwargs = list(emit.keyword_args(params, skip=("target",)))
        if name == STATIC_SHAPE_TUNING:
            kwargs.append(("target", emit.Ref("target")))
            kwargs = [(k, emit.Ref("work_dir") if k == "work_dir" and v == emit.Lit("") else v) for k, v in kwargs]
        return emit.Call("tvm.relax", "get_pipeline", (emit.Lit(name),), tuple(kwargs))


KIND = NamedPipelineKind()
