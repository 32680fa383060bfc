"""Engine half of ``main.py diverge``: where values diverge across one step (imports TVM).

The entry function of the module before the step and of the module after it is rewritten to return every
tensor it binds (each dataflow block binds a tuple of its tensors to a new output variable; the function
returns the tuple of those), both are completed and built as the reference build does, run on the same
inputs and weights, and the values are matched by binding name where shape and dtype agree (a pass that
kept a binding kept its name). Per node: max |diff| / max |ref| (the value before the step is the
reference) and pass/fail with the check's tolerance; the first failing node in binding order of the module
after the step is marked; nodes with no counterpart are listed as such, not as errors. Modules already
lowered for the VM (memory planned: an intermediate buffer may be reused) are refused.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from pipeline_model.engine.debugging.bisect_tvm import Tester
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
    """Binding name -> what it calls (an operator, a PrimFunc of ``call_tir``, a Relax function)."""
    import tvm
    from tvm import relax

    out: dict[str, str] = {}
    for block in mod[func_name].body.blocks:
        for binding in block.bindings:
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
            out[binding.var.name] = callee
    return out


def graph_ids(mod: Any, func_name: str) -> dict[str, str]:
    """Binding name -> node id in the graph the app draws of ``func_name``
    (:mod:`pipeline_model.engine.graph_extract_tvm`)."""
    from pipeline_model.engine import graph_extract_tvm

    try:
        graph = graph_extract_tvm.extract_graph_json(mod, func_name)
    except Exception:  # noqa: BLE001 - a module the graph extractor cannot walk: no ids
        return {}
    return {str(n["name"]): str(n["id"]) for n in graph["nodes"] if n.get("kind") == "binding"}


def _values(tester: Tester, mod: Any, what: str) -> tuple[dict[str, np.ndarray], list[str], str]:
    func_name, arrays, _ref, _described = tester.arguments(mod)
    if _is_vm_lowered(mod):
        raise BuildError(f"the module {what} the step is already lowered for the VM: its intermediate buffers "
                         "may be reused, so its values cannot be compared binding by binding")
    exposed, names = expose_bindings(mod, func_name)
    tester.check_cancel()
    ex = build_module(exposed, tester.target)
    dev = _device_for(tester.target)
    outputs = run_function(_vm(ex, dev, exposed), func_name, dev, arrays)
    return dict(zip(names, outputs)), names, func_name


def diverge(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """The ``diverge`` request: per-node errors of the module after step ``step_index`` vs before it."""
    t0 = time.perf_counter()
    tester = Tester(args, ctx)
    index = int(args["step_index"])
    steps = list(tester.run_args.get("steps") or [])
    if not 0 <= index < len(steps):
        raise BuildError(f"step {index + 1}: the pipeline has steps 1..{len(steps)}")
    before = module_after(tester.run_args, index - 1, ctx)
    after = module_after(tester.run_args, index, ctx)
    ref, ref_names, func_name = _values(tester, before, "before")
    got, got_names, _ = _values(tester, after, "after")
    rows, first = [], None
    calls = callees(after, func_name)
    ids = graph_ids(after, func_name)
    for name in got_names:
        value = got[name]
        row: dict[str, Any] = {"name": name, "callee": calls.get(name, ""), "node_id": ids.get(name),
                               "shape": list(value.shape), "dtype": str(value.dtype)}
        other = ref.get(name)
        if other is None or other.shape != value.shape:
            row["status"] = "no counterpart"
        else:
            check = compare_outputs([value], [other], tester.rtol, tester.atol)
            row.update(max_abs=check["max_abs"], max_abs_over_ref=check["max_abs_over_ref"],
                       status="ok" if check["passed"] else "diverges")
            if not check["passed"] and first is None:
                first = name
                row["first"] = True
        rows.append(row)
    only_before = [n for n in ref_names if n not in got]
    return {"step": index + 1, "pass_id": str(steps[index].get("pass") or ""), "function": func_name,
            "first_divergent": first, "nodes": rows, "only_before": only_before,
            "rtol": tester.rtol, "atol": tester.atol, "ms": round((time.perf_counter() - t0) * 1000.0, 3)}
