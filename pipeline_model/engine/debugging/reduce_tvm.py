"""Engine half of ``main.py reduce``: candidate modules and the check of one (imports TVM).

Candidates of a module (:func:`candidates`), each applied by :func:`apply_candidate`:

* ``dce``: drop the functions the entry does not reach (unused PrimFuncs too) and unused bindings;
* ``cut``: end a Relax function after binding ``at`` and return that value (a dataflow variable is bound
  to a new output variable first); later bindings are dropped;
* ``params``: the values used from bindings before ``at`` become new function parameters
  (``v = R.add(...)`` becomes ``v = v_in``), so the bindings that computed them die;
* ``unused_params``: drop the parameters the function no longer uses;
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


def candidates(mod: Any, entry: str) -> list[dict[str, Any]]:
    """The candidate reductions of ``mod``, most reducing first (see the module docstring)."""
    out: list[dict[str, Any]] = [{"op": "dce"}]
    for gv, func in _relax_functions(mod, entry):
        n = len(_flat(func))
        name = gv.name_hint
        out += [{"op": "cut", "function": name, "at": k} for k in halving_order(n) if k < n - 1]
        out += [{"op": "params", "function": name, "at": k} for k in halving_order(n) if k > 0]
        out.append({"op": "unused_params", "function": name})
    dims = sorted({d for shape in _static_shapes(mod) for d in shape if d > 1}, reverse=True)
    for d in dims:
        out += [{"op": "shrink", "from": d, "to": to} for to in sorted({1, d // 2}) if to < d]
    return out


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
    from tvm import relax

    flat = _flat(func)
    bi, i, binding = flat[at]
    blocks = list(func.body.blocks[:bi])
    block = func.body.blocks[bi]
    kept = list(block.bindings[: i + 1])
    out = binding.var
    if isinstance(block, relax.DataflowBlock):
        out = relax.Var(f"{binding.var.name}_out", binding.var.ty)
        kept.append(relax.VarBinding(out, binding.var))
        blocks.append(relax.DataflowBlock(kept))
    else:
        blocks.append(relax.BindingBlock(kept))
    return relax.Function(func.params, relax.SeqExpr(blocks, out), ret_ty=out.ty, is_pure=func.is_pure,
                          attrs=func.attrs)


def _params(func: Any, at: int) -> Any:
    from tvm import relax

    flat = _flat(func)
    later: set[Any] = set()
    for _bi, _i, binding in flat[at:]:
        later.update(relax.analysis.free_vars(binding.value))
    later.update(relax.analysis.free_vars(func.body.body))
    new_params = list(func.params)
    blocks = []
    for bi, block in enumerate(func.body.blocks):
        bindings = []
        for i, binding in enumerate(block.bindings):
            position = next(k for k, (b2, i2, _b) in enumerate(flat) if (b2, i2) == (bi, i))
            if position < at and binding.var in later:
                param = relax.Var(f"{binding.var.name}_in", binding.var.ty)
                new_params.append(param)
                binding = relax.VarBinding(binding.var, param)
            bindings.append(binding)
        blocks.append(relax.DataflowBlock(bindings) if isinstance(block, relax.DataflowBlock)
                      else relax.BindingBlock(bindings))
    return relax.Function(new_params, relax.SeqExpr(blocks, func.body.body), ret_ty=func.ret_ty,
                          is_pure=func.is_pure, attrs=func.attrs)


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
        else:
            gv = mod.get_global_var(str(candidate.get("function")))
            func = mod[gv]
            makers: dict[str, Callable[[Any, int], Any]] = {"cut": _cut, "params": _params,
                                                             "unused_params": _unused_params}
            make = makers.get(str(op))
            if make is None:
                return None
            new = _dce(_with(mod, gv, make(func, int(candidate.get("at") or 0))), entry)
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
