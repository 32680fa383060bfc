"""Kind ``stage``: one stage of a backend's default build pipeline as one step
(``stage.<backend>.<function>``, e.g. ``stage.cpu_generic.legalize_passes``), built as
``tvm.ir.transform.Sequential(tvm.relax.backend.<backend>.pipeline.<function>(target), name=id)``.
"""

from __future__ import annotations

from typing import Any, Optional

from pipeline_model import emit
from pipeline_model.passkinds.base import PassKind

PREFIX = "stage."
STAGE_BACKENDS = ("cpu_generic", "cuda")
STAGE_FUNCTIONS = ("library_dispatch_passes", "legalize_passes", "dataflow_lower_passes", "finalize_passes")


def stage_specs() -> list[Any]:
    """One spec per backend and stage function (unavailable, with the reason, when the backend
    module does not import). Engine side."""
    import importlib

    from pipeline_model.catalogue import PassSpec

    specs = []
    for backend in STAGE_BACKENDS:
        module_name = f"tvm.relax.backend.{backend}.pipeline"
        try:
            module = importlib.import_module(module_name)
            reason = ""
        except Exception as exc:  # noqa: BLE001
            module, reason = None, f"importing {module_name} failed: {exc}"
        for fn in STAGE_FUNCTIONS:
            func = getattr(module, fn, None) if module else None
            label = fn.replace("_passes", "").replace("_", " ")
            why = reason or ("" if func else f"{module_name} has no {fn}")
            specs.append(
                PassSpec(
                    id=f"{PREFIX}{backend}.{fn}",
                    title=f"{'CUDA' if backend == 'cuda' else 'CPU'}: {label} passes",
                    category="Backend stages",
                    doc=f"The {label} stage of the {backend} default build pipeline "
                    f"({module_name}.{fn}(target)) as one step.",
                    composite=True,
                    available=not why,
                    unavailable_reason=why,
                    warning="needs a CUDA target (DLight scheduling uses the current target)"
                    if backend == "cuda" and fn == "legalize_passes" else "",
                    tvm_name=f"{module_name}.{fn}",
                )
            )
    return specs


class BackendStageKind(PassKind):
    """A backend build stage (see the module docstring)."""

    name = "stage"
    priority = 20
    catalogue_order = 40

    def matches(self, pass_id: str) -> bool:
        return pass_id.startswith(PREFIX)

    def is_composite(self, pass_id: str) -> bool:
        return True

    def add_specs(self, cat: Any) -> None:
        for spec in stage_specs():
            cat.add(spec)

    def recipe(self, pass_id: str, params: dict[str, Any], *, step_number: Optional[int] = None) -> emit.Expr:
        parts = pass_id.split(".")
        if len(parts) != 3 or parts[1] not in STAGE_BACKENDS or parts[2] not in STAGE_FUNCTIONS:
            raise emit.EmitError(f"unknown backend stage {pass_id!r}")
        inner = emit.Call(f"tvm.relax.backend.{parts[1]}.pipeline", parts[2], (emit.Ref("target"),))
        return emit.Call("tvm.ir.transform", "Sequential", (inner,), (("name", emit.Lit(pass_id)),))


KIND = BackendStageKind()
