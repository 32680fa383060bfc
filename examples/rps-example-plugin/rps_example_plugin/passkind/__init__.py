"""Pass kind ``example``: ``example.CanonicalizeAndDCE``, CanonicalizeBindings then DeadCodeElimination as one step.

The step runs :func:`.script.canonicalize_and_dce`: the engine calls it, an exported script holds its source.
TVM-free at import (the spec is made in the engine, where ``add_specs`` runs).
"""

from __future__ import annotations

from typing import Any, Optional

from pipeline_model import emit
from pipeline_model.passkinds import PassKind

PASS_ID = "example.CanonicalizeAndDCE"
SCRIPT_MODULE = "rps_example_plugin.passkind.script"


class ExampleKind(PassKind):
    """The example plug-in's pass."""

    name = "example"
    priority = 20
    catalogue_order = 90

    def matches(self, pass_id: str) -> bool:
        return pass_id == PASS_ID

    def add_specs(self, cat: Any) -> None:
        from pipeline_model.catalogue import PassSpec

        cat.add(PassSpec(id=PASS_ID, title="Example: Canonicalize and DCE", category="Plug-in examples",
                         doc="CanonicalizeBindings, then DeadCodeElimination (from the rps-example-plugin package).",
                         params=[], tvm_name=f"{SCRIPT_MODULE}.canonicalize_and_dce"))

    def recipe(self, pass_id: str, params: dict[str, Any], *, step_number: Optional[int] = None) -> emit.Expr:
        return emit.ScriptCall(SCRIPT_MODULE, "canonicalize_and_dce", ())


KIND = ExampleKind()
