"""Kind ``custom_python``: a pass written in Python by the user (``custom.python``, parameter ``source``).

The source runs only with trust; it is compiled under ``<custom step N>`` so errors name its lines
(:mod:`pipeline_model.custom_pass_tvm`), and an exported script holds it verbatim in a function
``custom_step_N()`` (:func:`pipeline_model.emit.render_custom_function`).
"""

from __future__ import annotations

from typing import Any, Optional

from pipeline_model import emit
from pipeline_model.passkinds.base import ExportPiece, PassKind, UserCodeRef
from pipeline_model.passkinds.registry import register

PASS_ID = "custom.python"

#: Source of a new custom step.
CUSTOM_TEMPLATE = '''import tvm
from tvm import relax


def transform(mod: tvm.IRModule) -> tvm.IRModule:
    """Return the transformed module (this template returns it unchanged)."""
    return mod
'''


def custom_spec() -> Any:
    """The ``custom.python`` spec (no TVM needed)."""
    from pipeline_model.catalogue import ParamSpec, PassSpec

    return PassSpec(
        id=PASS_ID,
        title="Custom Python pass",
        category="Custom",
        doc="A pass written in Python: the source defines a tvm.transform.Pass, a class decorated with "
        "@tvm.transform.module_pass / @relax.transform.function_pass, or a function taking an IRModule and "
        "returning one (the last one defined is used). Runs only when custom code is trusted.",
        params=[ParamSpec("source", "code", CUSTOM_TEMPLATE, "Python source of the pass.")],
        needs_trust=True,
        tvm_name="tvm.transform.module_pass",
    )


class CustomPythonKind(PassKind):
    """The user's own Python pass (see the module docstring)."""

    name = "custom_python"
    priority = 10
    catalogue_order = 60

    def matches(self, pass_id: str) -> bool:
        return pass_id == PASS_ID

    def add_specs(self, cat: Any) -> None:
        cat.add(custom_spec())

    def recipe(self, pass_id: str, params: dict[str, Any], *, step_number: Optional[int] = None) -> emit.Expr:
        return emit.CustomCode(source=str(params.get("source") or ""), label=emit.custom_label(step_number))

    def user_code(self, step: Any, base_dir: Optional[str], number: Optional[int] = None) -> list[UserCodeRef]:
        """The step's source, held in the step; errors point at it as ``<custom step N>``."""
        source = str((getattr(step, "params", None) or {}).get("source") or "")
        return [UserCodeRef(label=PASS_ID, path=None, filenames=(emit.custom_label(number),),
                            read=lambda: source)]

    def export_step(self, pass_id: str, params: dict[str, Any], expr: emit.Expr, *, index: int,
                    label: str) -> ExportPiece:
        """A function ``custom_step_N()`` holding the source verbatim; the step calls it."""
        if not isinstance(expr, emit.CustomCode):
            return super().export_step(pass_id, params, expr, index=index, label=label)
        try:
            emit.check_custom_source(expr.source, expr.label)
        except SyntaxError as exc:
            raise emit.EmitError(f"syntax error at line {exc.lineno}: {exc.msg}") from None
        func = f"custom_step_{index + 1}"
        return ExportPiece(helpers=[emit.helper_source(emit.pick_custom_pass)],
                           functions=[emit.render_custom_function(func, expr.source, expr.label)],
                           lines=[f"pass_ = {func}()"])


KIND = register(CustomPythonKind())
