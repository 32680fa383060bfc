"""Engine half of ``main.py diverge``: where values diverge across one step (imports TVM).

The module before the step and the module after it are each built unchanged (as ``bisect`` builds a tested
module) and run once on the same inputs and weights with the VM instrument
(:mod:`pipeline_model.engine.debugging.capture_tvm`): a copy of the output of every ``call_tir`` / packed /
Relax-function call is kept under the binding that made it, also inside a called Relax function (a fused
function before ``FuseTIR``: its operators are inner values, rows with ``parent``) and in a module already
lowered for the VM; the intermediate buffers of the first diverging PrimFunc calls are split out
(:mod:`pipeline_model.engine.debugging.split_tvm`). Values are matched by binding name where shape and dtype
agree (a pass that kept a binding kept its name; an operator moved into a fused function is found there by
its name, except for the names the BlockBuilder makes up and inside a function called from several places).
Per value: max |diff| / max |ref| (the value before the step is the reference) and ok / diverges with the
check's tolerance. The first diverging value in the order the values were made (inner values before their
call's output) names the first diverging node: its top-level binding in the module after the step (the fused
call that holds it). Values with no counterpart are listed as such, not as errors.

``via="expose"`` is the older way, kept for comparison (``bench/bench_diverge.py``): the entry function is
rewritten to return every tensor it binds (modules not yet lowered for the VM only, no inner values).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from pipeline_model.engine.debugging.bisect_tvm import Tester
from pipeline_model.engine.debugging.align import Alignment, align, ancestors, canonical, inner_first
from pipeline_model.engine.debugging.capture_tvm import Entry, BindingScope, capture
from pipeline_model.engine.debugging.split_tvm import inner_values
from pipeline_model.engine.debugging.reproducer_tvm import module_after

# The build functions these checks reuse (engine/build and the scriptlib rules exported scripts share).
from pipeline_model.engine.build.devices import device_for as _device_for
from pipeline_model.engine.build.measure import _is_vm_lowered, build_module, make_vm as _vm, run_function
from pipeline_model.scriptlib.functions import BuildError
from pipeline_model.scriptlib.outputs import compare_outputs


def expose_bindings(mod: Any, func_name: str) -> tuple[Any, list[str]]:
    """``mod`` whose ``func_name`` returns every tensor binding (in binding order), and their names."""
    import tvm
    from tvm import relax

    func = mod[func_name]
    if not isinstance(func, relax.Function) or not isinstance(func.body, relax.SeqExpr):
        raise BuildError(f"{func_name} is not a Relax function with bindings")
    names: list[str] = []
    blocks, outs = [], []
    for b, block in enumerate(func.body.blocks):
        tensors = [bd.var for bd in block.bindings
                   if isinstance(bd.var.ty, relax.TensorType) and bd.var.ty.shape is not None]
        if not tensors:
            blocks.append(block)
            continue
        out = relax.Var(f"rps_values_{b}", relax.TupleType([v.ty for v in tensors]))
        bindings = [*block.bindings, relax.VarBinding(out, relax.Tuple(tensors))]
        blocks.append(relax.DataflowBlock(bindings) if isinstance(block, relax.DataflowBlock)
                      else relax.BindingBlock(bindings))
        outs.append(out)
        names += [v.name for v in tensors]
    if not outs:
        raise BuildError(f"{func_name} binds no tensors")
    body = relax.SeqExpr(blocks, relax.Tuple(outs))
    new_func = relax.Function(func.params, body, ret_ty=relax.TupleType([o.ty for o in outs]),
                              is_pure=func.is_pure, attrs=func.attrs)
    new = tvm.IRModule(dict(mod.functions_items()), attrs=mod.attrs)
    new[mod.get_global_var(func_name)] = new_func
    return new, names


def callees(mod: Any, func_name: str) -> dict[str, str]:
    """Binding key (:class:`~.capture_tvm.Entry` keys: ``name``, ``name#2`` ...) -> what it calls (an operator,
    a PrimFunc of ``call_tir``, a Relax function)."""
    import tvm
    from tvm import relax

    func = mod[func_name]
    scope = BindingScope({}, {p.name for p in func.params}, None)
    out: dict[str, str] = {}
    for block in func.body.blocks:
        for binding in block.bindings:
            key = scope.key(binding.var.name)
            value = binding.value
            if not isinstance(value, relax.Call):
                continue
            op = value.op
            if isinstance(op, tvm.ir.Op):
                callee = op.name
                if op.name in ("relax.call_tir", "relax.call_tir_inplace", "relax.call_dps_packed") and value.args:
                    callee = getattr(value.args[0], "name_hint", callee)
            else:
                callee = getattr(op, "name_hint", "") or str(type(op).__name__)
            out[key] = callee
    return out


def graph_ids(mod: Any, func_name: str) -> set[str]:
    """The ids of the binding nodes in the graph the app draws of ``func_name``
    (:mod:`pipeline_model.engine.graph_extract_tvm`: ``name``, ``name#2`` ..., as the entry keys)."""
    from pipeline_model.engine import graph_extract_tvm

    try:
        graph = graph_extract_tvm.extract_graph_json(mod, func_name)
    except Exception:  # noqa: BLE001 - a module the graph extractor cannot walk: no ids
        return set()
    return {str(n["id"]) for n in graph["nodes"] if n.get("kind") == "binding"}


@dataclass
class Side:
    """The values of the module before or after the step: by key, in binding order (``entries``)."""

    values: dict[str, Any]
    entries: list[Entry]
    func_name: str
    via: str
    unmatched: int = 0
    inputs: dict[str, list[Any]] = field(default_factory=dict)
    module: Any = None
    returns: Optional[str] = None  # the id of the value the entry function returns (the ``result`` rule)


def _side(tester: Tester, mod: Any, via: str) -> Side:
    """Build and run ``mod`` once and keep every intermediate value (through the VM instrument, or with
    ``via="expose"`` by returning every binding of the entry function)."""
    func_name, arrays, _ref, _described = tester.arguments(mod)
    tester.check_cancel()
    if via == "expose":
        if _is_vm_lowered(mod):
            raise BuildError("a module already lowered for the VM cannot return its bindings (use the instrument)")
        exposed, names = expose_bindings(mod, func_name)
        ex = build_module(exposed, tester.target)
        dev = _device_for(tester.target)
        outputs = run_function(_vm(ex, dev, exposed), func_name, dev, arrays)
        entries = [Entry(n, n, None, "", "exposed") for n in names]
        return Side(dict(zip(names, outputs)), entries, func_name, via)
    captured = capture(mod, tester.target, func_name, arrays, tester.check_cancel)
    return Side(captured.values, captured.entries, func_name, via, captured.unmatched, captured.inputs,
                captured.module, captured.returns)


def _flat(value: Any) -> list[np.ndarray]:
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, list):
        return [a for v in value for a in _flat(v)]
    return []


def _shape_of(value: Any) -> tuple[list[Any], str]:
    arrays = _flat(value)
    if isinstance(value, np.ndarray):
        return list(value.shape), str(value.dtype)
    return [list(a.shape) for a in arrays], ",".join(str(a.dtype) for a in arrays)


def run_order(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` (each parent followed by its inner rows) in the order the values were made: the inner values of
    a call before the call's own output."""
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []  # parents whose inner rows are being listed, innermost last
    for row in rows:
        while pending and not str(row["key"]).startswith(str(pending[-1]["key"]) + "/"):
            out.append(pending.pop())
        pending.append(row)
    while pending:
        out.append(pending.pop())
    return out


def _compare(row: dict[str, Any], mine: list[np.ndarray], theirs: list[np.ndarray], rtol: float,
             atol: float) -> bool:
    """Fill ``row``'s status and errors; False when there is nothing to compare with."""
    if not mine or [a.shape for a in mine] != [b.shape for b in theirs]:
        row["status"] = "no counterpart"
        return False
    check = compare_outputs(mine, theirs, rtol, atol)
    row.update(max_abs=check["max_abs"], max_abs_over_ref=check["max_abs_over_ref"],
               status="ok" if check["passed"] else "diverges")
    return True


#: What a row with no counterpart says (the step made a value whose place in the dataflow has none before it).
NO_COUNTERPART_NOTE = "no counterpart: the step changed the structure here"
#: What a row says whose value the step gave another dtype (compared after casting).
DTYPE_CHANGED_NOTE = "the step changed its dtype: {was} before, {now} after"


def value_rows(got: Side, ref: Side, calls: dict[str, str], ids: set[str], rtol: float,
               atol: float) -> tuple[list[dict[str, Any]], set[str], list[str], Alignment]:
    """One row per value after the step (inner values after their parent, with ``parent``), the keys of the
    values before it that were compared, the top-level bindings with no value captured, and the alignment
    (:func:`~.align.align`: each value's counterpart by its place in the dataflow)."""
    if got.via == "expose":  # the older way: the entry function's bindings by key only
        aligned = Alignment({k: k for k in got.values if k in ref.values})
    else:
        aligned = align(got.entries, ref.entries, (got.returns, ref.returns))
    rows: list[dict[str, Any]] = []
    used: set[str] = set()
    missing: list[str] = []
    for entry in got.entries:
        value = got.values.get(entry.key)
        if value is None:
            if entry.parent is None and entry.kind != "struct":
                missing.append(entry.key)
            continue
        shape, dtype = _shape_of(value)
        top = entry.parent is None
        callee = calls.get(entry.key) if top and entry.kind != "lowered" else None
        node_id = (entry.name if entry.kind == "lowered" else entry.key) if top else None
        row: dict[str, Any] = {"name": entry.name, "key": entry.key, "callee": callee or entry.callee,
                               "node_id": node_id if node_id in ids else None, "shape": shape, "dtype": dtype,
                               "via": got.via}
        if not top:
            row["parent"] = entry.parent
        other_key = aligned.counterpart.get(entry.key)
        other = ref.values.get(other_key) if other_key is not None else None
        if _compare(row, _flat(value), _flat(other), rtol, atol):
            used.add(str(other_key))
            row["match"] = aligned.how.get(entry.key, "")
            if other_key != entry.key:
                row["counterpart"] = other_key
            was = _shape_of(other)[1]
            if was != dtype:
                row["note"] = DTYPE_CHANGED_NOTE.format(was=was, now=dtype)
        else:
            row["note"] = NO_COUNTERPART_NOTE
        rows.append(row)
    return rows, used, missing, aligned


def _inner(side: Side, key: str, target: dict[str, Any]) -> dict[str, np.ndarray]:
    entry = next((e for e in side.entries if e.key == key), None)
    if entry is None or key not in side.inputs or side.module is None:
        return {}
    outputs = _flat(side.values.get(key))
    return inner_values(side.module[entry.callee], side.inputs[key], outputs, entry.n_in, target)


#: Diverging PrimFunc calls whose intermediate buffers are split out (the first ones in run order).
SPLIT_LIMIT = 4


def split_rows(rows: list[dict[str, Any]], got: Side, ref: Side, target: dict[str, Any], rtol: float,
               atol: float) -> None:
    """Add rows for the intermediate buffers of the first diverging PrimFunc calls (:mod:`.split_tvm`), after
    the call's row, compared with the same buffers of its counterpart before the step when it has them."""
    todo = [r for r in run_order(rows) if r["status"] == "diverges" and r["key"] in got.inputs][:SPLIT_LIMIT]
    for row in todo:
        key = str(row["key"])
        mine = _inner(got, key, target)
        if not mine:
            continue
        theirs = _inner(ref, str(row.get("counterpart") or key), target)
        added = []
        for name, value in mine.items():
            new: dict[str, Any] = {"name": name, "key": f"{key}/{name}", "parent": key, "callee": row["callee"],
                                   "node_id": None, "shape": list(value.shape), "dtype": str(value.dtype),
                                   "via": "split"}
            other = theirs.get(name)
            _compare(new, [value], [other] if other is not None else [], rtol, atol)
            added.append(new)
        at = rows.index(row) + 1
        while at < len(rows) and str(rows[at]["key"]).startswith(key + "/"):
            at += 1
        rows[at:at] = added


def mark_first(rows: list[dict[str, Any]]) -> tuple[Optional[str], Optional[str]]:
    """Mark the first diverging node (``first``: the top-level row holding the first diverging value in the
    order values were made) and that value when it is inside a call (``first_inside``); their keys."""
    first_row = next((r for r in run_order(rows) if r["status"] == "diverges"), None)
    if first_row is None:
        return None, None
    first = str(first_row["key"]).split("/", 1)[0]
    for row in rows:
        if row["key"] == first:
            row["first"] = True
    if "parent" not in first_row:
        return first, None
    first_row["first_inside"] = True
    return first, str(first_row["key"])


def likelier_culprit(first_key: Optional[str], got: Side, aligned: Alignment) -> Optional[dict[str, Any]]:
    """When the first diverging value depends on a value with no counterpart before the step (the step changed
    the structure there, so nothing says that value is right), that value: ``key``, ``node`` (its top-level
    binding), ``reason``. ``None`` when every value it depends on was compared."""
    if first_key is None:
        return None
    entries = {e.key: e for e in got.entries}
    while first_key not in entries and "/" in first_key:  # a buffer split out of a PrimFunc call: its call
        first_key = first_key.rsplit("/", 1)[0]
    upstream = set(ancestors(first_key, entries))
    if first_key in entries and entries[first_key].kind == "relax":
        upstream |= {k for k in entries if k.startswith(first_key + "/")}
    unmatched = [e.key for e in inner_first(got.entries) if e.key in upstream and e.key not in aligned.counterpart
                 and not e.key.startswith(("param:", "const:"))]
    if not unmatched:
        return None
    origins = [k for k in unmatched if k in aligned.origins]
    key = (origins or unmatched)[0]
    return {"key": key, "node": key.split("/", 1)[0],
            "reason": "it has no counterpart before the step (the step changed the structure there) and the first "
                      "diverging value depends on it: it is the likelier culprit"}


def compare_sides(got: Side, ref: Side, calls: dict[str, str], ids: set[str], rtol: float,
                  atol: float, target: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """Rows (:func:`value_rows`, with :func:`split_rows` when ``target`` is given), the first diverging node
    (:func:`mark_first`), a likelier culprit upstream of it (:func:`likelier_culprit`) and what is only before
    the step."""
    rows, used, missing, aligned = value_rows(got, ref, calls, ids, rtol, atol)
    if target is not None:
        split_rows(rows, got, ref, target, rtol, atol)
    first, first_inside = mark_first(rows)
    culprit = likelier_culprit(first_inside or first, got, aligned)
    same = canonical(ref.entries)  # a call of a Relax function (an alias) is compared as the value it returns
    only_before = [e.key for e in ref.entries if e.key in ref.values and same.get(e.key, e.key) not in used]
    return {"nodes": rows, "first_divergent": first, "first_inside": first_inside, "likelier_culprit": culprit,
            "only_before": only_before, "not_captured": missing}


def diverge(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """The ``diverge`` request: per-node errors of the module after step ``step_index`` vs before it
    (``via``: ``"instrument"``, the default, or ``"expose"``)."""
    t0 = time.perf_counter()
    tester = Tester(args, ctx)
    index = int(args["step_index"])
    via = str(args.get("via") or "instrument")
    if via not in ("instrument", "expose"):
        raise BuildError(f"via must be instrument or expose, not {via!r}")
    steps = list(tester.run_args.get("steps") or [])
    if not 0 <= index < len(steps):
        raise BuildError(f"step {index + 1}: the pipeline has steps 1..{len(steps)}")
    before = module_after(tester.run_args, index - 1, ctx)
    after = module_after(tester.run_args, index, ctx)
    ref = _side(tester, before, via)
    got = _side(tester, after, via)
    func_name = got.func_name
    result = compare_sides(got, ref, callees(after, func_name), graph_ids(after, func_name), tester.rtol,
                           tester.atol, tester.target)
    return {"step": index + 1, "pass_id": str(steps[index].get("pass") or ""), "function": func_name,
            "via": via, "unmatched_calls": got.unmatched + ref.unmatched, **result,
            "rtol": tester.rtol, "atol": tester.atol, "ms": round((time.perf_counter() - t0) * 1000.0, 3)}
