"""Evaluates a construction recipe (:mod:`pipeline_model.emit` expression tree) with TVM.

TVM-free at import: modules named by :class:`~pipeline_model.emit.Call` nodes are imported when the
expression is evaluated (in the engine process).
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from pipeline_model import emit
from pipeline_model.passkinds.context import NO_MODEL_WEIGHTS, PassBuildContext, PassConfigError


def evaluate(expr: Any, ctx: PassBuildContext, pass_id: str) -> Any:
    """The value of ``expr`` (usually a ``tvm.transform.Pass``); ``pass_id`` names errors.

    References resolve from ``ctx``; pattern files and custom code need ``ctx.trust_custom_code``.
    Raises :class:`PassConfigError` for what the user can fix (untrusted code, missing pattern file).
    """
    if isinstance(expr, emit.Lit):
        return expr.value
    if isinstance(expr, emit.Ref):
        if expr.name == "target":
            return ctx.tvm_target()
        if expr.name == "work_dir":
            return ctx.work_dir or os.path.abspath("tuning_logs")
        if expr.name == "base_dir":
            return ctx.base_dir
        if expr.name == "weights":
            weights = ctx.weights() if ctx.weights is not None else None
            if not weights:
                raise PassConfigError(f"{pass_id}: {NO_MODEL_WEIGHTS}")
            return weights
        raise PassConfigError(f"{pass_id}: unknown reference {expr.name}")
    if isinstance(expr, emit.ListOf):
        return [evaluate(e, ctx, pass_id) for e in expr.items]
    if isinstance(expr, emit.PatternFile):
        if not ctx.trust_custom_code:
            raise PassConfigError(f"{pass_id}: a pattern file is Python code; it runs only when custom code is trusted")
        if not expr.path:
            raise PassConfigError(f"{pass_id}: pattern_source is 'file' but no pattern_file is given")
        try:
            return emit.load_pattern_file(expr.path, ctx.base_dir)
        except Exception as exc:  # noqa: BLE001 - user code: report, do not crash
            raise PassConfigError(f"{pass_id}: pattern file {expr.path}: {type(exc).__name__}: {exc}") from exc
    if isinstance(expr, emit.CustomCode):
        from pipeline_model.custom_pass_tvm import make_custom_pass

        return make_custom_pass(expr.source, expr.label, trusted=ctx.trust_custom_code)
    if isinstance(expr, emit.Call):
        for module in expr.imports:
            importlib.import_module(module)
        module = importlib.import_module(expr.module)
        func = getattr(module, expr.attr)
        args = [evaluate(a, ctx, pass_id) for a in expr.args]
        kwargs = {k: evaluate(v, ctx, pass_id) for k, v in expr.kwargs}
        return func(*args, **kwargs)
    raise PassConfigError(f"{pass_id}: cannot evaluate {type(expr).__name__}")


def uses_pattern_file(expr: Any) -> bool:
    """Whether ``expr`` contains a :class:`~pipeline_model.emit.PatternFile`."""
    if isinstance(expr, emit.PatternFile):
        return True
    if isinstance(expr, emit.Call):
        return any(uses_pattern_file(a) for a in expr.args) or any(uses_pattern_file(v) for _, v in expr.kwargs)
    if isinstance(expr, emit.ListOf):
        return any(uses_pattern_file(a) for a in expr.items)
    return False
