"""Seeded wrong rewrites for ``main.py diverge`` matched by structure (issue 31): the wrong value sits at the top
level, inside a fused function (``FuseOps``), inside a composite function (``FuseOpsByPattern`` with the cuBLAS
table, nothing offloaded on a CPU), inside a PrimFunc (a fused one after ``FuseTIR``: an intermediate buffer) or
in a module lowered for the VM; on four models.

The wrong step writes what it rewrote and the node ``diverge`` must mark first as *keys* (the scheme of the
graph's node ids: ``name``, ``name#2`` ... per function; inner values ``call/inner``): names repeat (``lv``,
``gv``) and identify nothing. The keys are computed here, in the step, from the module (not by the code under
test).
"""

from __future__ import annotations

import os
import random

from pipeline_model.document import Step
from tests.debug_fixtures import (MODULE_WALK, PRE, REWRITE_HELPERS, ROOT, SEEDED_STEP_HEAD, _step, place_wrong,
                                  save_case)

CNN = os.path.join(ROOT, "resources", "models", "cnn_bn.onnx")
#: The fourth model: the Llama-style decoder (symbolic sequence length) with 2 layers instead of 32.
DECODER2 = "decoder2"
MODELS = ("builtin:mlp", "builtin:transformer", CNN, DECODER2)

WRONG_STRUCT = SEEDED_STEP_HEAD + '''_DPS = ("relax.call_tir", "relax.call_tir_inplace", "relax.call_dps_packed", "relax.call_tir_with_grad")
_PACKED = ("relax.call_packed", "relax.call_pure_packed", "relax.call_inplace_packed")


''' + MODULE_WALK + '''

def _lowered(mod):
    return any("vm.builtin." in f.script() or "R.vm.alloc" in f.script()
               for _gv, f in mod.functions_items() if isinstance(f, relax.Function))


def _keys(mod, func, lowered):
    """binding var -> key: its name, else name#2, name#3 ... (every binding; lowered: the calls, named after
    their output argument, aliases and items)."""
    taken = {{p.name for p in func.params}}
    known = set(func.params)
    out = {{}}
    for b in _bindings(func):
        name, holder = b.var.name, b.var
        v = b.value
        if lowered:
            name = None
            if isinstance(v, relax.Call):
                op = v.op
                is_fn = isinstance(op, tvm.ir.GlobalVar) and isinstance(mod[op], relax.Function)
                if isinstance(op, tvm.ir.Op) and op.name == "relax.reshape" and v.args[0] in known:
                    name = b.var.name
                elif isinstance(op, tvm.ir.Op) and op.name in _DPS and v.args:
                    name = b.var.name
                elif isinstance(op, tvm.ir.Op) and op.name in _PACKED and v.args and isinstance(
                        v.args[0], relax.ExternFunc) and not str(v.args[0].global_symbol).startswith("vm.builtin."):
                    name = b.var.name
                elif is_fn:
                    name = b.var.name
                elif isinstance(op, (tvm.ir.GlobalVar, relax.ExternFunc)):
                    symbol = str(op.global_symbol) if isinstance(op, relax.ExternFunc) else ""
                    tensors = [a for a in v.args if isinstance(a, relax.Var) and isinstance(a.ty, relax.TensorType)]
                    if tensors and not symbol.startswith("vm.builtin."):
                        holder = tensors[-1]
                        name = holder.name
            elif isinstance(v, relax.Var) and v in known:
                name = b.var.name
            elif isinstance(v, relax.TupleGetItem) and v.tuple_value in known:
                name = b.var.name
            if name is None:
                continue
        local, k = name, 2
        while local in taken:
            local, k = f"{{name}}#{{k}}", k + 1
        taken.add(local)
        out[b.var] = local
        known.add(holder)
        known.add(b.var)
    return out


''' + REWRITE_HELPERS + '''

def _sites(mod, fname, path, depth, lowered):
    """(path of keys to the call, function name, binding) for every float binding of ``fname`` and of the Relax
    functions it calls (2 levels down), each call instance apart."""
    func = mod[fname]
    keys = _keys(mod, func, lowered)
    out = []
    for b in _bindings(func):
        if isinstance(b.value, relax.Call) and _float(b.var) and b.var in keys:
            out.append((path, fname, b, keys[b.var]))
        gv = _called(b.value)
        if gv is not None and isinstance(b.value.op, tvm.ir.GlobalVar) and isinstance(mod[gv], relax.Function) \\
                and depth < 2 and b.var in keys:
            out += _sites(mod, gv.name_hint, path + [keys[b.var]], depth + 1, lowered)
    return out


def _relax(mod, rng, entry, lowered):
    picks = _sites(mod, entry, [], 0, lowered)
    inner = [p for p in picks if p[0]]
    adds = [p for p in picks if isinstance(p[2].value.op, tvm.ir.Op) and p[2].value.op.name == "relax.add"]
    draw = rng.random()
    path, fname, b, key = rng.choice(inner if inner and draw < 0.6 else adds if adds and draw < 0.8 else picks)
    # a function called from several places: its first call holds the wrong value first
    first = next(p for p in picks if p[1] == fname and p[2].same_as(b))
    path = first[0]
    op = b.value.op
    mode = "swap" if isinstance(op, tvm.ir.Op) and op.name == "relax.add" else rng.choice(["scale", "offset"])
    out = tvm.IRModule(dict(mod.functions_items()), attrs=mod.attrs)
    out[mod.get_global_var(fname)] = _rewrite_binding(mod[fname], b.var, mode)
    expected = path[0] if path else key
    return relax.transform.Normalize()(out), {{"target": f"{{fname}}:{{b.var.name}}", "function": fname,
                                               "mode": mode, "expected": [expected],
                                               "inside": "/".join(path + [key]) if path else None}}


def _tir(mod, rng, entry, lowered):
    names = _float_prim_funcs(mod)
    top = _bindings(mod[entry])
    keys = _keys(mod, mod[entry], lowered)
    # the build turns a call of a reshape PrimFunc into R.reshape (RewriteDataflowReshape): that one never runs
    probe = mod if lowered else relax.transform.RewriteDataflowReshape()(mod)
    ptop = _bindings(probe[entry])
    names = [n for n in sorted(names) if any(_called(b.value) is not None and _reaches(probe, _called(b.value), n)
                                             for b in ptop)]
    name = rng.choice(names)
    out, out_name, intermediate = _scale_last_store(mod, rng, name)
    first = next(b for b, pb in zip(top, ptop) if b.var in keys and _called(pb.value) is not None
                 and _reaches(probe, _called(pb.value), name))
    inside = out_name if intermediate else None
    gv = _called(first.value)
    if isinstance(mod[gv], relax.Function) and not intermediate:
        inner_keys = _keys(mod, mod[gv], lowered)
        inside = next((inner_keys[b.var] for b in _bindings(mod[gv]) if b.var in inner_keys
                       and _called(b.value) is not None and _reaches(mod, _called(b.value), name)), None)
    return out, {{"target": name + ("." + out_name if intermediate else ""), "mode": "scale",
                 "expected": [keys[first.var]], "inside": inside}}


def transform(mod):
    rng = random.Random(SEED)
    entry = _entry(mod)
    lowered = _lowered(mod)
    out, facts = (_relax if LEVEL == "relax" else _tir)(mod, rng, entry, lowered)
    with open(OUT, "w") as f:
        json.dump(dict(facts, level=LEVEL, entry=entry, lowered=lowered), f)
    return out
'''


def decoder2(folder: str) -> str:
    """``resources/models/decoder.py`` with 2 layers, written to ``folder`` (a model file: needs trust)."""
    path = os.path.join(folder, "decoder2.py")
    if not os.path.exists(path):
        from pipeline_model.models import builtin_model_source

        with open(path, "w", encoding="utf-8") as f:
            f.write(builtin_model_source("decoder", layers=2))
    return path


def structure_case(folder: str, seed: int, model: str, level: str, name: str = "case") -> tuple[str, int, str]:
    """A pipeline with one :data:`WRONG_STRUCT` step: stock passes, then (half the cases) ``FuseOpsByPattern``
    with the cuBLAS table, ``LegalizeOps``, ``AnnotateTIROpPattern``, ``FuseOps``, ``FuseTIR`` (a fifth of the
    cases then the whole ``default_build`` lowering); the wrong step at a seeded position valid for ``level``
    ("relax": before the lowering, "tir": after ``LegalizeOps``). Returns ``(path, 1-based position of the
    wrong step, file the step writes its facts to)``."""
    rng = random.Random(seed * 7919 + 17)
    if model == DECODER2:
        model = decoder2(folder)
    pre = [_step(rng.choice(PRE), i) for i in range(rng.randint(0, 2))]
    if rng.random() < 0.5:
        pre.append(Step("relax.FuseOpsByPattern", {"pattern_source": "table", "table_prefix": "cublas"}))
    lowered = rng.random() < 0.2
    post = [Step("relax.LegalizeOps")] + [Step(p) for p in ("relax.AnnotateTIROpPattern", "relax.FuseOps",
                                                            "relax.FuseTIR")]
    out = os.path.join(folder, f"{name}_facts.json")
    wrong = Step("custom.python", {"source": WRONG_STRUCT.format(seed=seed, level=level, out=out)})
    tail = [Step("pipeline.default_build")] if lowered else []
    steps = place_wrong(rng, pre, post, tail, wrong, level, first=len(pre) - 1 if pre else 0)
    return save_case(folder, name, model, steps), steps.index(wrong) + 1, out
