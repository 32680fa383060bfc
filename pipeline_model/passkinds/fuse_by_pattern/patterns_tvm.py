"""Engine half of the ``fuse_by_pattern`` kind: pattern tables' availability, user pattern files, a fusion report.

Engine side (imports TVM); never imports the kind's ``__init__``.

* :func:`pattern_tables` — every known pattern-table prefix (cublas, cudnn, cutlass, hipblas, coreml,
  tensorrt, nnapi, openclml) with the number of patterns registered after importing its backend module and
  whether the codegen ``relax.ext.<prefix>`` that ``RunCodegen`` needs exists in this TVM build, plus a
  plain ``message``;
* :func:`preflight` — the message to show *before* a run for a ``FuseOpsByPattern`` step's parameters
  (``None`` when all is well), instead of a stack trace from ``RunCodegen`` later;
* :func:`load_user_patterns` — the patterns of a user file (convention: the file defines ``patterns``
  built with ``tvm.relax.dpl``; see ``docs/TUNING.md``);
* :func:`fusion_report` — which bindings of the original functions ended up in which composite or
  offloaded function, with node names that are the graph's var names so the GUI can highlight them.
"""

from __future__ import annotations

import importlib
from typing import Any, Optional

import tvm
from tvm import relax

from pipeline_model.passkinds.fuse_by_pattern.script import load_pattern_file
from pipeline_model.passkinds.fuse_by_pattern.tables import PATTERN_TABLE_MODULES

#: Pattern prefix -> the backend module whose import registers its pattern table (the table the
#: shared construction recipe uses, :data:`.tables.PATTERN_TABLE_MODULES`).
PATTERN_MODULES: dict[str, str] = dict(PATTERN_TABLE_MODULES)


def codegen_available(prefix: str) -> bool:
    """True when this TVM build has the external codegen ``relax.ext.<prefix>`` (``RunCodegen`` needs it)."""
    return tvm.get_global_func(f"relax.ext.{prefix}", True) is not None


def pattern_tables() -> dict[str, dict[str, Any]]:
    """Prefix -> ``{"patterns": n, "codegen": bool, "module": str, "message": str}``."""
    from tvm.relax.backend import pattern_registry

    out: dict[str, dict[str, Any]] = {}
    for prefix, module in PATTERN_MODULES.items():
        entry: dict[str, Any] = {"module": module, "patterns": 0, "codegen": False, "message": ""}
        try:
            importlib.import_module(module)
            entry["patterns"] = len(pattern_registry.get_patterns_with_prefix(prefix))
        except Exception as exc:  # noqa: BLE001 - an import failure is reported as unavailability
            entry["message"] = f"{prefix}: importing {module} failed ({type(exc).__name__}: {exc})"
            out[prefix] = entry
            continue
        entry["codegen"] = codegen_available(prefix)
        if entry["patterns"] == 0:
            entry["message"] = f"{prefix}: no '{prefix}' patterns are registered in this TVM build"
        elif entry["codegen"]:
            entry["message"] = f"{prefix}: {entry['patterns']} patterns; codegen relax.ext.{prefix} available"
        else:
            entry["message"] = (
                f"{prefix}: {entry['patterns']} patterns, but this TVM build has no relax.ext.{prefix} codegen: "
                f"fusing works, offloading with RunCodegen (annotate_codegen = true) will fail. TVM must be "
                f"built with {prefix} support (e.g. USE_{prefix.upper()}=ON) for that."
            )
        out[prefix] = entry
    return out


def preflight(params: dict[str, Any]) -> Optional[str]:
    """A plain message for a ``relax.FuseOpsByPattern`` step that cannot work as configured, else ``None``.

    Understands the catalogue's parameters (``pattern_source`` "table"/"file", ``table_prefix``,
    ``pattern_file``, ``annotate_codegen``).
    """
    source = params.get("pattern_source", "table")
    if source == "file":
        if not params.get("pattern_file"):
            return "FuseOpsByPattern: pattern_source is 'file' but no pattern_file is given"
        return None
    prefix = str(params.get("table_prefix") or "")
    tables = pattern_tables()
    if prefix not in tables:
        return f"FuseOpsByPattern: unknown pattern table {prefix!r}; known: {', '.join(sorted(tables))}"
    entry = tables[prefix]
    if entry["patterns"] == 0:
        return entry["message"]
    if params.get("annotate_codegen") and not entry["codegen"]:
        return entry["message"]
    return None


def load_user_patterns(path: str, base_dir: Optional[str] = None) -> list[Any]:
    """Run a user pattern file and return its ``patterns`` as ``FusionPattern`` objects.

    Raises ``ValueError``/``FileNotFoundError`` with a message naming the file (and the item).
    """
    # One loader for the engine, the exported scripts and this module.
    return load_pattern_file(path, base_dir)


def _bindings(func: relax.Function) -> list[tuple[str, Any]]:
    out = []
    body = func.body
    for block in getattr(body, "blocks", []):
        for binding in block.bindings:
            out.append((binding.var.name, binding.value))
    return out


def _attr(func: Any, key: str) -> Optional[str]:
    attrs = getattr(func, "attrs", None)
    if attrs is None or key not in attrs:
        return None
    return str(attrs[key])


def fusion_report(before: tvm.IRModule, after: tvm.IRModule) -> dict[str, Any]:
    """Which bindings were fused into which composite/offloaded function.

    Returns ``{"groups": [{"function": gv name, "composite": "user.matmul_add_relu", "codegen": str|None,
    "caller": "main", "call": var name of the call in the caller, "nodes": [original var names]}],
    "fused_nodes": {var name: gv name}}``. Node names are the var names of the functions of ``before``
    (the graph view's node names); they are found by matching the ops inside each new function, in
    order, against the bindings of the caller in ``before``.
    """
    groups = []
    fused_nodes: dict[str, str] = {}
    before_names = {gv.name_hint for gv in before.get_global_vars()}
    new_funcs = {
        gv.name_hint: func for gv, func in after.functions_items()
        if isinstance(func, relax.Function) and gv.name_hint not in before_names
        and (_attr(func, "Composite") or _attr(func, "Codegen") or _attr(func, "Primitive"))
    }
    for caller_gv, caller in after.functions_items():
        if not isinstance(caller, relax.Function) or caller_gv.name_hint not in before_names:
            continue
        old = before[caller_gv.name_hint]
        if not isinstance(old, relax.Function):
            continue
        old_bindings = _bindings(old)
        used: set[str] = set()
        for var_name, value in _bindings(caller):
            callee = getattr(value, "op", None)
            callee_name = getattr(callee, "name_hint", None)
            if not isinstance(callee_name, str) or callee_name not in new_funcs:
                continue
            func = new_funcs[callee_name]
            ops = _op_sequence(func, after)
            nodes = _match_ops(old_bindings, ops, used)
            used.update(nodes)
            for node in nodes:
                fused_nodes[node] = callee_name
            groups.append({
                "function": callee_name,
                "composite": _attr(func, "Composite") or _inner_composite(func),
                "codegen": _attr(func, "Codegen"),
                "caller": caller_gv.name_hint,
                "call": var_name,
                "nodes": nodes,
            })
    return {"groups": groups, "fused_nodes": fused_nodes}


def _inner_composite(func: relax.Function) -> Optional[str]:
    for _name, value in _bindings(func):
        inner = getattr(value, "op", None)
        if isinstance(inner, relax.Function):
            return _attr(inner, "Composite")
    return None


def _op_sequence(func: relax.Function, mod: tvm.IRModule) -> list[str]:
    """Names of the Relax ops called in ``func`` (descending into local/global composite functions)."""
    ops: list[str] = []
    for _name, value in _bindings(func):
        op = getattr(value, "op", None)
        if isinstance(op, tvm.ir.Op):
            ops.append(op.name)
        elif isinstance(op, relax.Function):
            ops.extend(_op_sequence(op, mod))
        elif isinstance(op, relax.Var):  # a local composite bound in the function
            pass
        elif op is not None and hasattr(op, "name_hint") and op.name_hint in [g.name_hint for g in mod.get_global_vars()]:
            inner = mod[op.name_hint]
            if isinstance(inner, relax.Function):
                ops.extend(_op_sequence(inner, mod))
    # local functions bound as values (annotate_codegen wraps the composite in a local function)
    for _name, value in _bindings(func):
        if isinstance(value, relax.Function):
            ops.extend(_op_sequence(value, mod))
    return ops


def _match_ops(old_bindings: list[tuple[str, Any]], ops: list[str], used: set[str]) -> list[str]:
    """The first run of consecutive-in-order bindings of ``old_bindings`` whose ops are ``ops``."""
    if not ops:
        return []
    calls = [(name, getattr(getattr(v, "op", None), "name", None)) for name, v in old_bindings]
    for start in range(len(calls)):
        if calls[start][0] in used or calls[start][1] != ops[0]:
            continue
        picked = [calls[start][0]]
        k = 1
        for name, op in calls[start + 1:]:
            if k == len(ops):
                break
            if name not in used and op == ops[k]:
                picked.append(name)
                k += 1
        if k == len(ops):
            return picked
    return []
