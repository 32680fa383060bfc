"""Pipelines with one wrong custom step injected at a seeded position (issue 21 tests)."""

from __future__ import annotations

import os
import random
from typing import Optional

from pipeline_model.document import PipelineDocument, Step
from pipeline_model.fileformat import save_pipeline
from pipeline_model.resources import resource_path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: A Relax-level wrong rewrite: the first ``R.add`` of the module becomes ``R.subtract``.
RELAX_WRONG = resource_path("custom_passes", "wrong_add_to_subtract.py").read_text(encoding="utf-8")

#: A TIR-level wrong rewrite: the first PrimFunc holding ``T.max`` (a ReLU) gets ``T.min`` instead.
TIR_WRONG = '''import tvm
from tvm import tirx


def transform(mod):
    out = tvm.IRModule(dict(mod.functions_items()), attrs=mod.attrs)
    for gv, func in mod.functions_items():
        if isinstance(func, tirx.PrimFunc) and "T.max(" in func.script():
            out[gv] = tvm.script.from_source(func.script().replace("T.max(", "T.min(", 1))
            break
    return out
'''


#: A TIR-level rewrite that crashes at run time: the ReLU's store goes 2**40 rows past its buffer (SIGSEGV).
TIR_CRASH = '''import re

import tvm
from tvm import tirx


def transform(mod):
    out = tvm.IRModule(dict(mod.functions_items()), attrs=mod.attrs)
    for gv, func in mod.functions_items():
        text = func.script() if isinstance(func, tirx.PrimFunc) else ""
        if "T.max(" in text:
            lines = text.splitlines()
            for i, line in enumerate(lines):
                if "T.max(" in line and "] = " in line:
                    lines[i] = re.sub(r"(\\w+)\\[(\\w+),", r"\\1[\\2 + T.int64(1099511627776),", line, count=1)
                    break
            out[gv] = tvm.script.from_source("\\n".join(lines))
            break
    return out
'''


def tag_source(number: int) -> str:
    """A harmless custom step that changes the module (a module attribute), so every step is a candidate."""
    return f'''def transform(mod):
    return mod.with_attr("rps_tag_{number}", {number})
'''


PRE = ["relax.CanonicalizeBindings", "relax.FoldConstant", "relax.DeadCodeElimination", "tag"]
POST = ["relax.AnnotateTIROpPattern", "relax.FuseOps", "relax.FuseTIR"]


def _step(pass_id: str, number: int) -> Step:
    if pass_id == "tag":
        return Step("custom.python", {"source": tag_source(number)})
    return Step(pass_id)


def save_case(folder: str, name: str, model: str, steps: list[Step]) -> str:
    """Save the pipeline of ``steps`` on ``model`` for an llvm target as ``<folder>/<name>.json``; returns the path."""
    doc = PipelineDocument(name=name, model=model, target={"kind": "llvm"}, steps=steps)
    path = os.path.join(folder, f"{name}.json")
    save_pipeline(doc, path)
    return path


def place_wrong(rng: random.Random, pre: list[Step], post: list[Step], tail: list[Step], wrong: Step, level: str,
                first: int = 0) -> list[Step]:
    """The steps ``pre + post + tail`` (``post`` starting with LegalizeOps, ``tail`` the lowering or nothing) with
    ``wrong`` at a place drawn from ``rng`` that is valid for ``level``: "relax" anywhere from ``first`` up to the
    lowering; "tir" after LegalizeOps, or after the lowering when there is one."""
    if level == "relax":
        steps = pre + post
        steps.insert(rng.randint(first, len(steps)), wrong)
        return steps + tail
    if tail:
        return pre + post + tail + [wrong]
    post.insert(rng.randint(1, len(post)), wrong)
    return pre + post


def injected_pipeline(folder: str, n: int, seed: int, level: str, model: str = "builtin:mlp",
                      name: str = "injected") -> tuple[str, int]:
    """Write a pipeline of ``n`` steps (LegalizeOps, AnnotateTIROpPattern, FuseOps, FuseTIR, harmless
    steps) with one wrong custom step (``level``: ``"relax"`` before LegalizeOps, ``"tir"`` after it,
    ``"crash"`` after it and crashing at run time, or ``"none"``); returns ``(path, 1-based position of the wrong step or 0)``."""
    rng = random.Random(seed)
    fixed = 4 + (0 if level == "none" else 1)
    free = n - fixed
    pre_n = rng.randint(1, max(1, free - 1))
    post_tags = free - pre_n
    pre = [_step(rng.choice(PRE), i) for i in range(pre_n)]
    post = [_step(p, 0) for p in POST]
    for i in range(post_tags):
        post.insert(rng.randint(0, len(post)), _step("tag", 100 + i))
    wrong: Optional[Step] = None
    if level == "relax":
        wrong = Step("custom.python", {"source": RELAX_WRONG})
        pre.insert(rng.randint(0, len(pre)), wrong)
    elif level in ("tir", "crash"):
        wrong = Step("custom.python", {"source": TIR_WRONG if level == "tir" else TIR_CRASH})
        post.insert(rng.randint(0, len(post)), wrong)
    steps = pre + [Step("relax.LegalizeOps")] + post
    assert len(steps) == n, (len(steps), n)
    path = save_case(folder, name, model, steps)
    position = steps.index(wrong) + 1 if wrong is not None else 0
    return path, position


#: The beginning of a seeded wrong step: its imports and ``SEED``, ``LEVEL``, ``OUT`` (a ``str.format`` template).
SEEDED_STEP_HEAD = '''import json
import random
import re

import tvm
from tvm import relax

SEED = {seed}
LEVEL = "{level}"
OUT = {out!r}
'''

#: How the seeded wrong steps (:data:`WRONG_VALUE`, ``diverge_cases.WRONG_STRUCT``) walk a module and rewrite a
#: PrimFunc (part of their ``str.format`` templates): the entry function, a function's bindings, the function a
#: call calls, whether a call reaches a function, the PrimFuncs writing a float32 output, and a PrimFunc's last
#: store to its output (or, half the time, to an intermediate buffer) scaled.
MODULE_WALK = '''def _entry(mod):
    names = [gv.name_hint for gv, f in mod.functions_items()
             if isinstance(f, relax.Function) and "global_symbol" in (f.attrs or {{}})]
    for name in ("main", "forward"):
        if name in names:
            return name
    return sorted(names)[0]


def _bindings(func):
    return [b for block in func.body.blocks for b in block.bindings]


def _called(value):
    if not isinstance(value, relax.Call):
        return None
    if isinstance(value.op, tvm.ir.GlobalVar):
        return value.op
    if isinstance(value.op, tvm.ir.Op) and value.op.name.startswith("relax.call_tir") and value.args:
        if isinstance(value.args[0], tvm.ir.GlobalVar):
            return value.args[0]
    return None


def _reaches(mod, gv, name, depth=0):
    if gv.name_hint == name:
        return True
    func = mod[gv]
    if depth > 4 or not isinstance(func, relax.Function):
        return False
    return any(_called(b.value) is not None and _reaches(mod, _called(b.value), name, depth + 1)
               for b in _bindings(func))


def _float_prim_funcs(mod):
    return [gv.name_hint for gv, func in mod.functions_items()
            if isinstance(func, tvm.tirx.PrimFunc) and func.params and str(func.params[-1].dtype) == "float32"]


def _scale_last_store(mod, rng, name):
    func = mod[name]
    out_name = func.params[-1].name
    lines = func.script().splitlines()
    allocs = [m.group(1) for m in (re.match(r"^    (\\w+) = T\\.sblock_alloc_buffer\\(", line) for line in lines) if m]
    intermediate = bool(allocs) and rng.random() < 0.5
    if intermediate:
        out_name = rng.choice(allocs)
    pattern = re.compile(r"^(\\s*)" + re.escape(out_name) + r"\\[(.*)\\] = (.*)$")
    last = max(i for i, line in enumerate(lines) if pattern.match(line))
    indent, index, rhs = pattern.match(lines[last]).groups()
    lines[last] = f"{{indent}}{{out_name}}[{{index}}] = ({{rhs}}) * T.float32(1.01)"
    out = tvm.IRModule(dict(mod.functions_items()), attrs=mod.attrs)
    out[mod.get_global_var(name)] = tvm.script.from_source("\\n".join(lines))
    return out, out_name, intermediate
'''

#: The rewrite of one binding the seeded wrong steps share (scaled, offset, or ``R.add`` -> ``R.subtract``;
#: pasted into the steps' code), and which values it takes (float32 tensors of known shape).
REWRITE_HELPERS = '''def _float(var):
    ty = var.ty
    return isinstance(ty, relax.TensorType) and ty.dtype == "float32" and ty.shape is not None


def _rewrite_binding(func, target, mode):
    blocks = []
    for block in func.body.blocks:
        new = []
        for b in block.bindings:
            if not b.var.same_as(target):
                new.append(b)
                continue
            value = b.value
            if mode == "swap":
                new.append(relax.VarBinding(b.var, relax.op.subtract(value.args[0], value.args[1])))
                continue
            orig = relax.Var(b.var.name + "_orig", b.var.ty)
            new.append(relax.VarBinding(orig, value))
            if mode == "scale":
                new.append(relax.VarBinding(b.var, relax.op.multiply(orig, relax.const(1.5, b.var.ty.dtype))))
            else:
                new.append(relax.VarBinding(b.var, relax.op.add(orig, relax.const(0.5, b.var.ty.dtype))))
        blocks.append(relax.DataflowBlock(new) if isinstance(block, relax.DataflowBlock) else relax.BindingBlock(new))
    return relax.Function(func.params, relax.SeqExpr(blocks, func.body.body), func.ret_ty, func.is_pure, func.attrs)
'''

#: A wrong rewrite of one value, chosen by ``SEED`` (for ``main.py diverge``'s acceptance): ``LEVEL`` "relax"
#: rewrites a binding of the entry function or of a fused Relax function it calls (scaled, offset, or
#: ``R.add`` -> ``R.subtract``; inner bindings and ``R.add`` drawn more often); "tir" scales the last store to
#: the output (or, half the time, to an intermediate buffer) of a PrimFunc the entry function reaches. The step writes to ``OUT`` what it rewrote and the node ``diverge`` should mark first
#: (``expected``: the entry-function bindings that hold the rewritten value, in binding order; ``inside``:
#: the rewritten binding when it sits inside a called function).
WRONG_VALUE = SEEDED_STEP_HEAD + '''

''' + MODULE_WALK + '''

def _node_name(mod, binding):
    gv = _called(binding.value)
    if gv is not None and isinstance(binding.value.op, tvm.ir.GlobalVar) and not isinstance(mod[gv], relax.Function):
        tensors = [a for a in binding.value.args if isinstance(a, relax.Var)]
        return tensors[-1].name
    return binding.var.name


''' + REWRITE_HELPERS + '''

def _relax(mod, rng, entry):
    top = _bindings(mod[entry])
    picks = [(None, entry, b) for b in top if isinstance(b.value, relax.Call) and _float(b.var)]
    for caller in top:
        gv = _called(caller.value)
        if gv is not None and isinstance(caller.value.op, tvm.ir.GlobalVar) and isinstance(mod[gv], relax.Function):
            picks += [(caller, gv.name_hint, b) for b in _bindings(mod[gv])
                      if isinstance(b.value, relax.Call) and _float(b.var)]
    inner = [p for p in picks if p[0] is not None]
    adds = [p for p in picks if isinstance(p[2].value.op, tvm.ir.Op) and p[2].value.op.name == "relax.add"]
    draw = rng.random()
    caller, fname, b = rng.choice(inner if inner and draw < 0.4 else adds if adds and draw < 0.7 else picks)
    if caller is not None:  # a function called from several places: the first call holds the wrong value first
        caller = next(c for c in top if _called(c.value) is not None and _called(c.value).name_hint == fname)
    op = b.value.op
    mode = "swap" if isinstance(op, tvm.ir.Op) and op.name == "relax.add" else rng.choice(["scale", "offset"])
    out = tvm.IRModule(dict(mod.functions_items()), attrs=mod.attrs)
    out[mod.get_global_var(fname)] = _rewrite_binding(mod[fname], b.var, mode)
    expected = [b.var.name] if caller is None else [caller.var.name]
    return relax.transform.Normalize()(out), {{"target": b.var.name, "function": fname, "mode": mode,
                                               "expected": expected, "inside": None if caller is None else b.var.name}}


def _tir(mod, rng, entry):
    names = _float_prim_funcs(mod)
    top = _bindings(mod[entry])
    names = [n for n in sorted(names) if any(_called(b.value) is not None and _reaches(mod, _called(b.value), n)
                                             for b in top)]
    name = rng.choice(names)
    out, out_name, intermediate = _scale_last_store(mod, rng, name)
    expected = [_node_name(mod, b) for b in top if _called(b.value) is not None and _reaches(mod, _called(b.value), name)]
    inside = None
    first = next(b for b in top if _called(b.value) is not None and _reaches(mod, _called(b.value), name))
    gv = _called(first.value)
    if isinstance(mod[gv], relax.Function):
        inside = next((b.var.name for b in _bindings(mod[gv]) if _called(b.value) is not None
                       and _called(b.value).name_hint == name), None)
    return out, {{"target": name + ("." + out_name if intermediate else ""), "mode": "scale", "expected": expected,
                 "inside": out_name if intermediate else inside}}


def transform(mod):
    rng = random.Random(SEED)
    entry = _entry(mod)
    out, facts = (_relax if LEVEL == "relax" else _tir)(mod, rng, entry)
    with open(OUT, "w") as f:
        json.dump(dict(facts, level=LEVEL, entry=entry), f)
    return out
'''


def diverge_case(folder: str, seed: int, model: str, level: str, name: str = "case") -> tuple[str, int, str]:
    """A pipeline (stock passes around LegalizeOps, AnnotateTIROpPattern, FuseOps, FuseTIR, sometimes the whole
    ``default_build`` lowering) with one :data:`WRONG_VALUE` step at a seeded position valid for ``level``
    ("relax": anywhere before the lowering; "tir": after LegalizeOps). Returns ``(path, 1-based position of the
    wrong step, file the step writes its facts to)``."""
    rng = random.Random(seed)
    pre = [_step(rng.choice(PRE), i) for i in range(rng.randint(1, 3))]
    lowered = rng.random() < 0.2
    post = [Step("relax.LegalizeOps")] + [_step(p, 0) for p in POST]
    tail = [Step("pipeline.default_build")] if lowered else []
    out = os.path.join(folder, f"{name}_facts.json")
    wrong = Step("custom.python", {"source": WRONG_VALUE.format(seed=seed, level=level, out=out)})
    steps = place_wrong(rng, pre, post, tail, wrong, level)
    return save_case(folder, name, model, steps), steps.index(wrong) + 1, out


#: A custom step that fails only on a chain of ``len(CHAIN)`` operations (issue 31: reduce to the essence):
#: a binding of ``CHAIN[0]`` with an argument made by ``CHAIN[1]``, whose argument is made by ``CHAIN[2]``...
#: (in any Relax function). ``MODE``: "exception" raises a ValueError, "tvm" a TVM error (from its C++),
#: "crash" dies of SIGSEGV, "hang" never ends, "numeric" scales the head of the chain by 1.5.
CHAIN_STEP = '''import ctypes
import time

import tvm
from tvm import relax

CHAIN = {chain!r}
MODE = "{mode}"


def _op(value):
    return value.op.name if isinstance(value, relax.Call) and isinstance(value.op, tvm.ir.Op) else None


def _args(value):
    for arg in value.args:
        yield from (arg.fields if isinstance(arg, relax.Tuple) else [arg])


def _matches(value, depth, made):
    if _op(value) != CHAIN[depth]:
        return False
    if depth + 1 == len(CHAIN):
        return True
    return any(isinstance(a, relax.Var) and a in made and _matches(made[a], depth + 1, made) for a in _args(value))


def _head(func):
    made = {{b.var: b.value for block in func.body.blocks for b in block.bindings}}
    return next((var for var, value in made.items() if _matches(value, 0, made)), None)


''' + REWRITE_HELPERS + '''

def transform(mod):
    for gv, func in mod.functions_items():
        if not isinstance(func, relax.Function) or not isinstance(func.body, relax.SeqExpr):
            continue
        head = _head(func)
        if head is None:
            continue
        if MODE == "exception":
            raise ValueError("this chain of operations is not supported: " + " <- ".join(CHAIN))
        if MODE == "tvm":
            tvm.ir.load_json("{{not json")
        if MODE == "crash":
            ctypes.string_at(0)
        if MODE == "hang":
            while True:
                time.sleep(0.05)
        out = tvm.IRModule(dict(mod.functions_items()), attrs=mod.attrs)
        out[gv] = _rewrite_binding(func, head, "scale")
        return relax.transform.Normalize()(out)
    return mod
'''

REDUCE_MODELS = ("builtin:transformer", os.path.join(ROOT, "resources", "models", "cnn_bn.onnx"))


def _op_chains(model: str, k: int) -> list[list[str]]:
    """The chains of ``k`` operations (head first, each fed by the next) of ``model``'s entry function as
    loaded; a numerics chain's head is a float32 tensor."""
    import tvm
    from tvm import relax

    from pipeline_model.importers.load_tvm import load_model

    mod = load_model(model, ROOT).mod
    func = next(f for _gv, f in mod.functions_items() if isinstance(f, relax.Function))
    made = {b.var: b.value for block in func.body.blocks for b in block.bindings}

    def op(value):
        return value.op.name if isinstance(value, relax.Call) and isinstance(value.op, tvm.ir.Op) else None

    def args(value):
        for arg in value.args:
            yield from (arg.fields if isinstance(arg, relax.Tuple) else [arg])

    def chains(var, depth):
        name = op(made[var])
        if name is None:
            return []
        if depth == 1:
            return [[name]]
        return [[name] + rest for a in args(made[var]) if isinstance(a, relax.Var) and a in made
                for rest in chains(a, depth - 1)]

    out = []
    for var in made:
        ty = var.ty
        if isinstance(ty, relax.TensorType) and ty.dtype == "float32":
            out += [c for c in chains(var, k) if c not in out]
    return out


def reduce_case(folder: str, seed: int, mode: str, name: str = "case") -> tuple[str, list[str]]:
    """A pipeline whose custom step fails (``mode``: see :data:`CHAIN_STEP`) only on a seeded chain of k = 1..3
    operations of ``builtin:transformer`` (37 bindings) or ``cnn_bn.onnx`` (17), maybe after FoldConstant or
    CanonicalizeBindings; returns ``(path, chain)``."""
    rng = random.Random(seed)
    model = REDUCE_MODELS[rng.randrange(len(REDUCE_MODELS))]
    k = 1 + seed % 3
    chain = rng.choice(_op_chains(model, k))
    pre = [Step(rng.choice(["relax.FoldConstant", "relax.CanonicalizeBindings"])) for _ in range(rng.randint(0, 1))]
    steps = pre + [Step("custom.python", {"source": CHAIN_STEP.format(chain=chain, mode=mode)})]
    return save_case(folder, name, model, steps), chain


def run_reduce_case(client, folder: str, seed: int, mode: str, max_checks: int = 400, hang_s: float = 3.0) -> dict:
    """Save the reproducer of :func:`reduce_case` (``run --reproducer``; ``bisect --reproducer`` for
    "numeric"; hangs with a ``hang_s`` watchdog) with ``client`` and reduce it into ``<folder>/reduced``: the chain,
    k, the bindings before and after, the checks, and ``ok`` (at most k + 2 bindings left)."""
    import argparse
    import contextlib
    import io

    from pipeline_model.cli import bisect_cmd, run_cmd
    from pipeline_model.consent import Consent
    from pipeline_model.debugging.reduce import reduce_folder

    path, chain = reduce_case(folder, seed, mode, name=f"case{seed}")
    repro, reduced = os.path.join(folder, "repro"), os.path.join(folder, "reduced")
    module, name = (bisect_cmd, "bisect") if mode == "numeric" else (run_cmd, "run")
    parser = argparse.ArgumentParser()
    module.add_parser(parser.add_subparsers(dest="command"))
    argv = [name, path, "--trust", "--reproducer", repro] + (["--timeout", str(hang_s)] if mode == "hang" else [])
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = module.main(parser.parse_args(argv), client=client)
    assert code == 1 and os.path.isdir(repro), (mode, seed, code)
    with client.consented(Consent.everything()):
        out = reduce_folder(client, repro, reduced, max_checks=max_checks)
    k = len(chain)
    return {"seed": seed, "mode": mode, "chain": chain, "k": k, "before": out.start.bindings,
            "after": out.best.bindings, "checks": out.stats.checks, "seconds": round(out.stats.seconds, 1),
            "ok": out.best.bindings <= k + 2, "folder": reduced}
