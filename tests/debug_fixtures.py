"""Pipelines with one wrong custom step injected at a seeded position (issue 21 tests)."""

from __future__ import annotations

import os
import random
from typing import Optional

from pipeline_model.document import PipelineDocument, Step
from pipeline_model.fileformat import save_pipeline

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: A Relax-level wrong rewrite: the first ``R.add`` of the module becomes ``R.subtract``.
RELAX_WRONG = '''import tvm
from tvm import relax


@relax.expr_functor.mutator
class _Swap(relax.PyExprMutator):
    def __init__(self, mod):
        super().__init__(mod)
        self.done = False

    def visit_call_(self, call):
        call = super().visit_call_(call)
        if not self.done and isinstance(call.op, tvm.ir.Op) and call.op.name == "relax.add":
            self.done = True
            return relax.op.subtract(call.args[0], call.args[1])
        return call


def transform(mod):
    out = tvm.IRModule(dict(mod.functions_items()), attrs=mod.attrs)
    for gv, func in mod.functions_items():
        if isinstance(func, relax.Function):
            swap = _Swap(mod)
            out[gv] = swap.visit_expr(func)
            if swap.done:
                break
    return out
'''

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
    doc = PipelineDocument(name=name, model=model, target={"kind": "llvm"}, steps=steps)
    path = os.path.join(folder, f"{name}.json")
    save_pipeline(doc, path)
    position = steps.index(wrong) + 1 if wrong is not None else 0
    return path, position
