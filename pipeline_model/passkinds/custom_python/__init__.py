"""Kind ``custom_python``: a pass written in Python by the user (``custom.python``, parameter ``source``).

The source runs only with trust; it is compiled under ``<custom step N>`` so errors name its lines
(:mod:`.compile_tvm`, the engine half), and an exported script holds it verbatim in a function
``custom_step_N()`` (:func:`render_custom_function`). Both pick the pass the source defines with
:func:`.script.pick_custom_pass`, whose source exported scripts contain.
"""

from __future__ import annotations

import textwrap
from typing import Any, Optional

from pipeline_model import emit
from pipeline_model.passkinds.base import ExportPiece, PassKind, UserCodeRef

PASS_ID = "custom.python"
#: The engine half (compiles the source; a recipe names it by this dotted name).
ENGINE_MODULE = "pipeline_model.passkinds.custom_python.compile_tvm"
#: The code exported scripts contain (and the engine calls).
SCRIPT_MODULE = "pipeline_model.passkinds.custom_python.script"

#: Source of a new custom step.
CUSTOM_TEMPLATE = '''import tvm
from tvm import relax


def transform(mod: tvm.IRModule) -> tvm.IRModule:
    """Return the transformed module (this template returns it unchanged)."""
    return mod
'''


def custom_label(step_number: Optional[int]) -> str:
    """The pseudo file name a custom step's source is compiled under, e.g. ``<custom step 3>``."""
    return f"<custom step {step_number}>" if step_number is not None else "<custom step>"


def check_custom_source(source: str, label: str) -> None:
    """Compile ``source`` under ``label``; raise :class:`SyntaxError` naming the line if it is invalid."""
    compile(source, label, "exec")


def render_custom_function(func_name: str, source: str, label: str) -> str:
    """A function ``func_name()`` whose body is the user's source verbatim (indented), returning its pass
    (picked by :func:`.script.pick_custom_pass`, copied into the script)."""
    if not emit.is_identifier(func_name):
        raise emit.EmitError(f"bad function name {func_name!r}")
    body = textwrap.indent(source.rstrip("\n") + "\n", "    ", lambda line: True) if source.strip() else "    pass\n"
    return (
        f"def {func_name}():\n"
        f"    # ---- user source of {label} begins (verbatim) ----\n"
        f"{body}"
        f"    # ---- user source of {label} ends ----\n"
        f"    return pick_custom_pass(dict(locals()), {func_name}.__code__.co_filename, {label!r})\n"
    )


def _source_and_label(expr: emit.Expr) -> Optional[tuple[str, str]]:
    """``(source, label)`` of a recipe built by :meth:`CustomPythonKind.recipe`, else None."""
    if isinstance(expr, emit.Call) and expr.module == ENGINE_MODULE and len(expr.args) == 2 and \
            all(isinstance(a, emit.Lit) and isinstance(a.value, str) for a in expr.args):
        return expr.args[0].value, expr.args[1].value
    return None


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
        """``compile_tvm.make_custom_pass(source, label, trusted=<trust>)`` (engine side; exported scripts
        get the source in a function instead, :meth:`export_step`)."""
        label = custom_label(step_number)
        return emit.Call(ENGINE_MODULE, "make_custom_pass", (emit.Lit(str(params.get("source") or "")), emit.Lit(label)),
                         (("trusted", emit.Ref("trusted")),))

    def user_code(self, step: Any, base_dir: Optional[str], number: Optional[int] = None) -> list[UserCodeRef]:
        """The step's source, held in the step; errors point at it as ``<custom step N>``. A step without
        a ``source`` runs the template (the parameter's default, as the engine fills it in), so that is
        the code consent is asked about."""
        params = getattr(step, "params", None) or {}
        source = str(params.get("source") or "") if "source" in params else CUSTOM_TEMPLATE
        return [UserCodeRef(label=PASS_ID, path=None, filenames=(custom_label(number),),
                            read=lambda: source)]

    def export_step(self, pass_id: str, params: dict[str, Any], expr: emit.Expr, *, index: int,
                    label: str) -> ExportPiece:
        """A function ``custom_step_N()`` holding the source verbatim; the step calls it."""
        found = _source_and_label(expr)
        if found is None:
            return super().export_step(pass_id, params, expr, index=index, label=label)
        source, code_label = found
        try:
            check_custom_source(source, code_label)
        except SyntaxError as exc:
            raise emit.EmitError(f"syntax error at line {exc.lineno}: {exc.msg}") from None
        func = f"custom_step_{index + 1}"
        return ExportPiece(helpers=[emit.script_source(SCRIPT_MODULE, "pick_custom_pass")],
                           functions=[render_custom_function(func, source, code_label)],
                           lines=[f"pass_ = {func}()"])


KIND = CustomPythonKind()
