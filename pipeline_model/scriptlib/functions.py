"""Which Relax function of a module runs: one rule for the engine, the CLI, the GUI and exported scripts.

:func:`entry_function`: the requested one, else ``main``, else ``forward`` (``nn.Module`` models), else
the only public Relax function, else the only one; otherwise the caller must name one. TVM is imported
inside the functions.
"""

from __future__ import annotations

import re
from typing import Any, Optional


class BuildError(RuntimeError):
    """A build or run failed; the message says what failed and, where known, how to fix it."""


def first_line(exc: BaseException) -> str:
    """The line of ``exc``'s message that names the error (``ValueError: ...``), else its first line."""
    text = str(exc).strip() or type(exc).__name__
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if re.match(r"^[A-Za-z_.]*(Error|Exception)\b", ln):
            return ln
    return lines[0] if lines else text


def relax_function_names(mod: Any) -> list[str]:
    """Names of the Relax functions in ``mod``, in the module's order."""
    import tvm

    return [gv.name_hint for gv, f in mod.functions_items() if isinstance(f, tvm.relax.Function)]


def entry_function(mod: Any, requested: Optional[str] = None) -> str:
    """The function to run: ``requested``, else ``main``, ``forward``, or the only public Relax function.

    Raises :class:`BuildError` when ``requested`` does not exist or no rule decides.
    """
    names = relax_function_names(mod)
    if requested:
        if requested not in names:
            raise BuildError(f"the module has no Relax function {requested!r} (it has: {', '.join(names) or 'none'})")
        return requested
    for name in ("main", "forward"):
        if name in names:
            return name
    public = [n for n in names if mod[n].attrs is None or "global_symbol" in (mod[n].attrs or {})]
    if len(public) == 1:
        return public[0]
    if len(names) == 1:
        return names[0]
    raise BuildError(f"cannot tell which function to run among {', '.join(names) or 'none'}: name one")
