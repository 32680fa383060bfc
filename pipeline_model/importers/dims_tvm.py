"""Pinned dimensions, engine side: bind a Relax module's symbolic variables to values (see :mod:`.dims`)."""

from __future__ import annotations

from typing import Any, Mapping

from pipeline_model.importers.dims import unknown_dims_error


def symbolic_dim_names(mod: Any) -> list[str]:
    """Names of the symbolic shape variables the Relax functions of ``mod`` define, in order of appearance."""
    from tvm import relax

    names: list[str] = []
    for _gv, func in mod.functions_items():
        if isinstance(func, relax.Function):
            for var in relax.analysis.defined_symbolic_vars(func):
                if var.name not in names:
                    names.append(var.name)
    return names


def bind_dims(mod: Any, dims: Mapping[str, int], source: str, known: "list[str] | None" = None) -> Any:
    """``mod`` with the symbolic variables named in ``dims`` bound to their values
    (``relax.transform.BindSymbolicVars``). A name the module does not define raises
    :class:`pipeline_model.importers.dims.DimsError` listing the names it has (``known``: names pinned earlier,
    listed too)."""
    if not dims:
        return mod
    from tvm import relax

    have = symbolic_dim_names(mod)
    unknown = [k for k in dims if k not in have]
    if unknown:
        raise unknown_dims_error(source, unknown, list(known or []) + have)
    return relax.transform.BindSymbolicVars({k: int(v) for k, v in dims.items()})(mod)
