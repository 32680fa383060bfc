"""Engine half of ``main.py reduce``: candidate modules and the check of one (imports TVM).

Candidates of a module (:func:`candidates`), each applied by :func:`apply_candidate`:

* ``dce``: drop the functions the entry does not reach (unused PrimFuncs too) and unused bindings;
* ``drop``: drop a Relax function other than the entry that nothing calls (e.g. ``<f>_transform_params``);
* ``cut``: end a Relax function after binding ``at`` and return that value (a dataflow variable becomes the
  block's output variable itself); later bindings are dropped;
* ``params``: the values used from bindings before ``at`` become new function parameters ``<name>_in``
  (their bindings go, each use reads the parameter), so the bindings that computed them die;
* ``param``: the value of binding ``at`` alone becomes a new parameter (operand-to-argument; the values
  with the largest producer cone first);
* ``bypass``: binding ``at`` is left out, its uses read its ``arg``-th argument (of the same type);
* ``unused_params``: drop the parameters the function no longer uses;
* ``inline``: a private Relax function (a fused one too) inlined where it is called;
* ``shrink``: a static dimension ``from`` written ``to`` (1 or half) everywhere in the module's TVMScript.

A candidate is kept only when it is well formed (``relax.analysis.well_formed``). The check runs the
reproducer's own ``attempt()``/``verdict()`` (its ``repro.py``, loaded once per folder) on the candidate in
this process: a crash or a hang of a candidate ends the engine, which the client's watchdog sees.
"""

from __future__ import annotations

import hashlib
import os
import re
import runpy
from typing import Any, Callable, Optional

from pipeline_model import safe_files
from pipeline_model.debugging import reproducer
from pipeline_model.debugging.reduce import halving_order
from pipeline_model.engine.debugging.reproducer_tvm import binding_count, module_texts

# Functions of the build handlers (issue 17 moves them to engine/build/; keep these imports together).
# The build functions these checks reuse (engine/build and the scriptlib rules exported scripts share).
from pipeline_model.engine.build.errors import error_text
from pipeline_model.scriptlib.functions import BuildError

_NAMESPACES: dict[str, dict[str, Any]] = {}


def load_folder_module(folder: str) -> Any:
    """The module of a reproducer folder (its TVMScript, else ``module.json``)."""
    import tvm

    spec = reproducer.read_spec(folder)
    try:
        return tvm.script.from_source(spec.module_text)
    except Exception:  # noqa: BLE001 - TVMScript that does not parse back: the JSON beside it
        path = os.path.join(folder, "module.json")
        if not os.path.isfile(path):
            raise
        return tvm.ir.load_json(safe_files.read_text(path, "reproducer file", reproducer.MAX_DATA_BYTES))


def module_of(args: dict[str, Any], ctx: Any) -> tuple[Any, str]:
    """``(module, key)`` of a request: the engine's cached ``key``, else ``module_json`` (cached then)."""
    import tvm

    key = str(args.get("key") or "")
    mod = ctx.cache.get(key) if key else None
    if mod is None:
        text = args.get("module_json")
        if not isinstance(text, str):
            raise BuildError("reduce: the module is not in the engine's cache and no module_json was sent")
        mod = tvm.ir.load_json(text)
        key = key or "reduce:" + hashlib.sha256(text.encode()).hexdigest()[:24]
        ctx.cache.put(key, mod)
    return mod, key


def put(mod: Any, ctx: Any) -> dict[str, Any]:
    """Cache ``mod``; ``{key, module_json, bindings}``."""
    import tvm

    text = tvm.ir.save_json(mod)
    key = "reduce:" + hashlib.sha256(text.encode()).hexdigest()[:24]
    ctx.cache.put(key, mod)
    return {"key": key, "module_json": text, "bindings": binding_count(mod), "elements": element_count(mod)}


def _static_shapes(mod: Any) -> list[list[int]]:
    """Static shapes of the tensors the module's Relax functions take and bind."""
    import tvm
    from tvm import relax

    shapes = []
    for _gv, func in mod.functions_items():
        if not isinstance(func, relax.Function):
            continue
        variables = list(func.params)
        if isinstance(func.body, relax.SeqExpr):
            variables += [b.var for block in func.body.blocks for b in block.bindings]
        for var in variables:
            ty = var.ty
            if isinstance(ty, relax.TensorType) and ty.shape is not None and hasattr(ty.shape, "values"):
                dims = [int(d) for d in ty.shape.values if isinstance(d, tvm.tirx.IntImm)]
                if len(dims) == len(ty.shape.values):
                    shapes.append(dims)
    return shapes


def element_count(mod: Any) -> int:
    """Static tensor elements the module's Relax functions take and bind (what ``shrink`` reduces)."""
    total = 0
    for dims in _static_shapes(mod):
        size = 1
        for d in dims:
            size *= d
        total += size
    return total


def _relax_functions(mod: Any, entry: str) -> list[tuple[Any, Any]]:
    import tvm

    out = [(gv, f) for gv, f in mod.functions_items()
           if isinstance(f, tvm.relax.Function) and isinstance(f.body, tvm.relax.SeqExpr)]
    return sorted(out, key=lambda item: (item[0].name_hint != entry, item[0].name_hint))


def _flat(func: Any) -> list[tuple[int, int, Any]]:
    return [(bi, i, b) for bi, block in enumerate(func.body.blocks) for i, b in enumerate(block.bindings)]


#: Most ``param`` / ``bypass`` candidates listed per function (the largest producer cones first).
MAX_SINGLE = 64


def candidates(mod: Any, entry: str) -> list[dict[str, Any]]:
    """The candidate reductions of ``mod``, most reducing first (see the module docstring)."""
    out: list[dict[str, Any]] = [{"op": "dce"}]
    functions = _relax_functions(mod, entry)
    out += [{"op": "drop", "function": gv.name_hint} for gv, _f in functions if gv.name_hint != entry]
    for gv, func in functions:
        n = len(_flat(func))
        name = gv.name_hint
        out += [{"op": "cut", "function": name, "at": k} for k in halving_order(n) if k < n - 1]
        out += [{"op": "params", "function": name, "at": k} for k in halving_order(n) if k > 0]
    for gv, func in functions:
        cones = [k for k, size in _cones(func) if size > 0][:MAX_SINGLE]
        out += [{"op": "param", "function": gv.name_hint, "at": k} for k in cones]
    for gv, func in functions:
        flat = _flat(func)
        out += [{"op": "bypass", "function": gv.name_hint, "at": k, "arg": j}
                for k, _size in _cones(func)[:MAX_SINGLE] for j in range(len(_arguments(flat[k][2].value)))]
        out.append({"op": "unused_params", "function": gv.name_hint})
    out += [{"op": "inline", "function": gv.name_hint} for gv, f in functions
            if gv.name_hint != entry and "global_symbol" not in (f.attrs or {})]
    dims = sorted({d for shape in _static_shapes(mod) for d in shape if d > 1}, reverse=True)
    for d in dims:
        out += [{"op": "shrink", "from": d, "to": to} for to in sorted({1, d // 2}) if to < d]
    return out


def _inline(mod: Any, name: str) -> Any:
    """``mod`` with the private Relax function ``name`` (a fused ``Primitive`` one too) inlined where it is
    called (``relax.transform.InlinePrivateFunctions``; the other functions are left as they are)."""
    import tvm
    from tvm import relax

    func = mod[name]
    if func.attrs is not None and "Primitive" in func.attrs:
        func = func.without_attr("Primitive")
    hidden = {}
    out = tvm.IRModule(attrs=mod.attrs)
    for gv, f in mod.functions_items():
        if gv.name_hint == name:
            out[gv] = func
        elif isinstance(f, relax.Function) and "global_symbol" not in (f.attrs or {}):
            hidden[gv.name_hint] = f  # kept out of the pass: put back unchanged
            out[gv] = f.with_attr("global_symbol", gv.name_hint)
        else:
            out[gv] = f
    out = relax.transform.InlinePrivateFunctions()(out)
    result = tvm.IRModule(attrs=mod.attrs)
    for gv, f in out.functions_items():
        result[gv] = hidden.get(gv.name_hint, f)
    return result


def _drop(mod: Any, name: str) -> Any:
    """``mod`` without the function ``name`` (one that nothing else calls: else it is not well formed)."""
    import tvm

    return tvm.IRModule({gv: f for gv, f in mod.functions_items() if gv.name_hint != name}, attrs=mod.attrs)


def _dce(mod: Any, entry: str) -> Any:
    import tvm

    names = [gv.name_hint for gv, _f in mod.functions_items()]
    return tvm.relax.transform.DeadCodeElimination([entry] if entry in names else None)(mod)


def _with(mod: Any, gv: Any, func: Any) -> Any:
    import tvm

    new = tvm.IRModule(dict(mod.functions_items()), attrs=mod.attrs)
    new[gv] = func
    return new


def _cut(func: Any, at: int) -> Any:
    """``func`` ending after binding ``at``, which it returns (a dataflow variable becomes the block's output
    variable itself: no extra binding)."""
    from tvm import relax

    flat = _flat(func)
    bi, i, binding = flat[at]
    blocks = list(func.body.blocks[:bi])
    block = func.body.blocks[bi]
    kept = list(block.bindings[:i])
    out = binding.var
    if isinstance(block, relax.DataflowBlock):
        out = relax.Var(binding.var.name, binding.var.ty)
        kept.append(relax.VarBinding(out, binding.value))
        blocks.append(relax.DataflowBlock(kept))
    else:
        kept.append(binding)
        blocks.append(relax.BindingBlock(kept))
    return relax.Function(func.params, relax.SeqExpr(blocks, out), ret_ty=out.ty, is_pure=func.is_pure,
                          attrs=func.attrs)


_REPLACERS: list[Any] = []


def _replacer(mapping: dict[Any, Any]) -> Any:
    """An expression mutator that writes each variable of ``mapping`` as its value."""
    if not _REPLACERS:
        from tvm import relax

        @relax.expr_functor.mutator
        class Replace(relax.PyExprMutator):  # type: ignore[misc,name-defined]
            def __init__(self, mapping: dict[Any, Any]) -> None:
                super().__init__()
                self.mapping = mapping

            def visit_var_(self, var: Any) -> Any:
                return self.mapping.get(var, var)

            def visit_dataflow_var_(self, var: Any) -> Any:
                return self.mapping.get(var, var)

        _REPLACERS.append(Replace)
    return _REPLACERS[0](mapping)


def _replaced(func: Any, mapping: dict[Any, Any], new_params: Optional[list[Any]] = None) -> Any:
    """``func`` without the bindings of the variables of ``mapping``, each use of one written as its value
    (another variable of the same type, or a new parameter: ``new_params`` are appended)."""
    from tvm import relax

    replace = _replacer(mapping)
    blocks = []
    for block in func.body.blocks:
        bindings = [relax.VarBinding(b.var, replace.visit_expr(b.value)) if isinstance(b, relax.VarBinding) else b
                    for b in block.bindings if b.var not in mapping]
        blocks.append(relax.DataflowBlock(bindings) if isinstance(block, relax.DataflowBlock)
                      else relax.BindingBlock(bindings))
    return relax.Function(list(func.params) + list(new_params or []),
                          relax.SeqExpr(blocks, replace.visit_expr(func.body.body)), ret_ty=func.ret_ty,
                          is_pure=func.is_pure, attrs=func.attrs)


def _as_params(func: Any, variables: list[Any]) -> Any:
    """``func`` with ``variables`` (bound in it) made new parameters ``<name>_in``: their bindings go, so what
    only they used dies (mlir-reduce's operand-to-argument, C-Reduce's "replace with input")."""
    from tvm import relax

    mapping = {v: relax.Var(f"{v.name}_in", v.ty) for v in variables}
    return _replaced(func, mapping, list(mapping.values()))


def _feedable(var: Any) -> bool:
    """A value ``repro.py`` can feed as a parameter: a tensor of static shape."""
    import tvm
    from tvm import relax

    ty = var.ty
    return (isinstance(ty, relax.TensorType) and ty.shape is not None and hasattr(ty.shape, "values")
            and all(isinstance(d, tvm.tirx.IntImm) for d in ty.shape.values))


def _param(func: Any, at: int) -> Any:
    """Binding ``at``'s value becomes a new parameter (only that one)."""
    var = _flat(func)[at][2].var
    if not _feedable(var):
        raise ValueError("not a tensor of static shape")
    return _as_params(func, [var])


def _bypass(func: Any, at: int, arg: int) -> Any:
    """Binding ``at`` is left out: its uses read its ``arg``-th variable argument (of the same type) instead."""
    import tvm_ffi

    binding = _flat(func)[at][2]
    value = _arguments(binding.value)[arg]
    if not tvm_ffi.structural_equal(value.ty, binding.var.ty):
        raise ValueError("not of the same type")
    return _replaced(func, {binding.var: value})


def _arguments(value: Any) -> list[Any]:
    """The variables a call reads (tuple fields too), in order."""
    from tvm import relax

    out: list[Any] = []
    for arg in getattr(value, "args", []) if isinstance(value, relax.Call) else []:
        for item in (arg.fields if isinstance(arg, relax.Tuple) else [arg]):
            if isinstance(item, relax.Var) and item not in out:
                out.append(item)
    return out


def _cones(func: Any) -> list[tuple[int, int]]:
    """``(position, bindings in its producer cone)`` of each binding, largest cone first (the order of the
    ``param`` candidates: the value whose producers are most is tried first)."""
    from tvm import relax

    cone: dict[Any, set[Any]] = {}
    order = []
    for k, (_bi, _i, b) in enumerate(_flat(func)):
        mine: set[Any] = set()
        for v in relax.analysis.free_vars(b.value):
            if v in cone:
                mine.add(v)
                mine |= cone[v]
        cone[b.var] = mine
        order.append((k, len(mine)))
    return sorted(order, key=lambda item: (-item[1], item[0]))


def _params(func: Any, at: int) -> Any:
    """The values used from the bindings before ``at`` become new parameters."""
    from tvm import relax

    flat = _flat(func)
    later: set[Any] = set()
    for _bi, _i, binding in flat[at:]:
        later.update(relax.analysis.free_vars(binding.value))
    later.update(relax.analysis.free_vars(func.body.body))
    variables = [b.var for _bi, _i, b in flat[:at] if b.var in later]
    if not variables or not all(_feedable(v) for v in variables):
        raise ValueError("nothing to make a parameter")
    return _as_params(func, variables)


def _unused_params(func: Any, _at: int = 0) -> Any:
    """``func`` without the parameters its body does not use (``num_input`` counted again)."""
    from tvm import relax

    used = set(relax.analysis.free_vars(func.body))
    keep = [p for p in func.params if p in used]
    new = relax.Function(keep, func.body, ret_ty=func.ret_ty, is_pure=func.is_pure, attrs=func.attrs)
    if func.attrs is not None and "num_input" in func.attrs:
        first = set(func.params[: int(func.attrs["num_input"])])
        new = new.with_attr("num_input", len([p for p in keep if p in first]))
    return new


def _shrink(mod: Any, old: int, new: int) -> Any:
    """Every ``old`` in the module's TVMScript written as ``new`` (loop extents, shapes, ``R.shape``), parsed
    back; a module the text does not describe whole (constants, after ``dataflow_lower``) is not shrunk."""
    import tvm

    text = mod.script()
    if "metadata[" in text:
        raise ValueError("the module holds constants")
    return tvm.script.from_source(re.sub(rf"(?<![\w.]){old}(?![\w.])", str(new), text))


def apply_candidate(mod: Any, candidate: dict[str, Any], entry: str) -> Optional[Any]:
    """The module after ``candidate``, or ``None`` when it cannot be made or is not well formed."""
    from tvm import relax

    op = candidate.get("op")
    try:
        if op == "dce":
            new = _dce(mod, entry)
        elif op == "shrink":
            new = _shrink(mod, int(candidate["from"]), int(candidate["to"]))
        elif op == "drop":
            new = _dce(_drop(mod, str(candidate.get("function"))), entry)
        elif op == "inline":
            new = _dce(_inline(mod, str(candidate.get("function"))), entry)
        else:
            gv = mod.get_global_var(str(candidate.get("function")))
            func = mod[gv]
            at = int(candidate.get("at") or 0)
            makers: dict[str, Callable[[Any, int], Any]] = {
                "cut": _cut, "params": _params, "param": _param, "unused_params": _unused_params,
                "bypass": lambda f, k: _bypass(f, k, int(candidate.get("arg") or 0))}
            make = makers.get(str(op))
            if make is None:
                return None
            new = _dce(_with(mod, gv, make(func, at)), entry)
        return new if relax.analysis.check_well_formed(new) else None
    except Exception:  # noqa: BLE001 - a candidate TVM refuses is no candidate
        return None


def _namespace(folder: str) -> dict[str, Any]:
    """The reproducer's ``repro.py`` functions (loaded once per folder and file version)."""
    path = os.path.join(folder, "repro.py")
    stamp = f"{path}:{os.stat(path).st_mtime_ns}"
    if stamp not in _NAMESPACES:
        _NAMESPACES.clear()
        _NAMESPACES[stamp] = runpy.run_path(path, run_name="rps_repro")
    return _NAMESPACES[stamp]


def check(folder: str, mod: Any) -> dict[str, Any]:
    """Run the reproducer's check on ``mod``: ``{"interesting", "seen"}`` (a crash or hang ends the engine)."""
    namespace = _namespace(folder)
    attempt = namespace["attempt"]
    attempt.__globals__["load_module"] = lambda: mod
    try:
        seen = attempt()
    except Exception as exc:  # noqa: BLE001 - attempt() catches; anything else is just uninteresting
        seen = {"what": "setup", "line": error_text(exc)}
    return {"interesting": bool(namespace["verdict"](seen)), "seen": seen}


def write(folder: str, out_dir: str, mod: Any, original: int, checks: int, overwrite: bool = False) -> dict[str, Any]:
    """Write the reduced reproducer: the folder's spec with ``mod`` as its module, its data files copied (an
    existing file in ``out_dir`` is replaced only with ``overwrite``)."""
    spec = reproducer.read_spec(folder)
    text, json_text, note = module_texts(mod)
    spec.module_text, spec.has_module_json = text, json_text is not None
    spec.bindings = binding_count(mod)
    spec.note = (f"Reduced by `main.py reduce` from {original} to {spec.bindings} binding(s) in {checks} check(s)."
                 + (f" {note}" if note else ""))
    extra: dict[str, Any] = {}
    if json_text is not None:
        extra["module.json"] = json_text
    if spec.has_inputs:
        extra["inputs.npz"] = safe_files.read_bytes(os.path.join(folder, "inputs.npz"), "reproducer file",
                                                    reproducer.MAX_DATA_BYTES)
    names = reproducer.write_folder(out_dir, reproducer.spec_files(spec, extra), overwrite=overwrite)
    return {"folder": out_dir, "files": names, "bindings": spec.bindings}
