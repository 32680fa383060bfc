"""Kind ``relax``: a plain constructor of ``tvm.relax.transform`` (``relax.<Name>``), built from keyword
arguments. The catch-all for ``relax.*`` ids that no more specific kind claims.

Engine side: the specs come from introspecting ``tvm.relax.transform``
(:func:`pipeline_model.passkinds.catalogue_tvm.relax_spec`); ``relax.RunCodegen`` gets a preflight that names
codegens this TVM build lacks.
"""

from __future__ import annotations

from typing import Any, Optional

from pipeline_model import emit
from pipeline_model.passkinds.base import PassKind

PREFIX = "relax."
RUN_CODEGEN = "relax.RunCodegen"


def relax_name(pass_id: str) -> str:
    """``"FuseOps"`` for ``"relax.FuseOps"`` (raises :class:`~pipeline_model.emit.EmitError` for a bad name)."""
    name = pass_id[len(PREFIX):]
    if not emit.is_identifier(name):
        raise emit.EmitError(f"bad pass name {name!r}")
    return name


class RelaxPassKind(PassKind):
    """A ``tvm.relax.transform.<Name>(**params)`` pass."""

    name = "relax"
    priority = 100  # catch-all for relax.*: asked after the specific relax kinds
    catalogue_order = 0

    def matches(self, pass_id: str) -> bool:
        return pass_id.startswith(PREFIX)

    def add_specs(self, cat: Any) -> None:
        """Every ``tvm.relax.transform`` constructor buildable from plain values (the rest goes to
        ``cat.meta["not_buildable"]`` with the reason; :data:`~pipeline_model.passkinds.catalogue_tvm.EXCLUDED` is skipped)."""
        from tvm import relax

        from pipeline_model.passkinds import catalogue_tvm

        for name in catalogue_tvm.relax_constructor_names():
            if name in catalogue_tvm.EXCLUDED:
                continue
            spec, reason = catalogue_tvm.relax_spec(name, getattr(relax.transform, name))
            if spec is None:
                cat.meta.setdefault("not_buildable", {})[name] = reason
                continue
            cat.add(spec)

    def recipe(self, pass_id: str, params: dict[str, Any], *, step_number: Optional[int] = None) -> emit.Expr:
        return emit.Call("tvm.relax.transform", relax_name(pass_id), (), emit.keyword_args(params))

    def step_preflight(self, pass_id: str, params: dict[str, Any], mod: Any) -> Optional[str]:
        """``relax.RunCodegen`` needs the codegen ``relax.ext.<name>`` of every function marked
        ``Codegen`` (by ``FuseOpsByPattern`` with ``annotate_codegen``); TVM would fail with an internal
        check instead, so say which codegen is missing."""
        if pass_id != RUN_CODEGEN or mod is None:
            return None
        import tvm

        missing: dict[str, list[str]] = {}
        for gv, func in mod.functions_items():
            attrs = getattr(func, "attrs", None)
            if attrs is None or "Codegen" not in attrs:
                continue
            name = str(attrs["Codegen"])
            if tvm.get_global_func(f"relax.ext.{name}", True) is None:
                missing.setdefault(name, []).append(gv.name_hint)
        if not missing:
            return None
        parts = []
        for name, funcs in sorted(missing.items()):
            shown = ", ".join(funcs[:3]) + (f" and {len(funcs) - 3} more" if len(funcs) > 3 else "")
            parts.append(f"this TVM build has no relax.ext.{name} codegen, so the {len(funcs)} function(s) "
                         f"marked for '{name}' ({shown}) cannot be offloaded")
        return ("; ".join(parts) + ". TVM must be built with that backend (e.g. USE_"
                + sorted(missing)[0].upper() + "=ON); otherwise fuse with annotate_codegen = false.")


KIND = RelaxPassKind()
