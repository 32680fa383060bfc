"""Evaluates a construction recipe (:mod:`pipeline_model.emit` expression tree) with TVM.

TVM-free at import: modules named by :class:`~pipeline_model.emit.Call` and
:class:`~pipeline_model.emit.ScriptCall` nodes are imported when the expression is evaluated (in the engine
process). Names no pass kind: a kind's own code is reached through the dotted names its recipe holds.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from pipeline_model import emit
from pipeline_model.passkinds.context import NO_MODEL_WEIGHTS, PassBuildContext, PassConfigError


def evaluate(expr: Any, ctx: PassBuildContext, pass_id: str) -> Any:
    """The value of ``expr`` (usually a ``tvm.transform.Pass``); ``pass_id`` names errors.

    References resolve from ``ctx``; a :class:`~pipeline_model.emit.ScriptCall` with ``needs_trust`` runs only
    with ``ctx.trust_custom_code``. Raises :class:`PassConfigError` for what the user can fix (untrusted code,
    a failing user file, a model without weights).
    """
    if isinstance(expr, emit.Lit):
        return expr.value
    if isinstance(expr, emit.Ref):
        return _reference(expr.name, ctx, pass_id)
    if isinstance(expr, emit.ListOf):
        return [evaluate(e, ctx, pass_id) for e in expr.items]
    if isinstance(expr, emit.ScriptCall):
        return _script_call(expr, ctx, pass_id)
    if isinstance(expr, emit.Call):
        for module in expr.imports:
            importlib.import_module(module)
        return _call(expr, ctx, pass_id)
    raise PassConfigError(f"{pass_id}: cannot evaluate {type(expr).__name__}")


def _reference(name: str, ctx: PassBuildContext, pass_id: str) -> Any:
    if name == "target":
        return ctx.tvm_target()
    if name == "work_dir":
        return ctx.work_dir or os.path.abspath("tuning_logs")
    if name == "base_dir":
        return ctx.base_dir
    if name == "trusted":
        return bool(ctx.trust_custom_code)
    if name == "weights":
        weights = ctx.weights() if ctx.weights is not None else None
        if not weights:
            raise PassConfigError(f"{pass_id}: {NO_MODEL_WEIGHTS}")
        return weights
    raise PassConfigError(f"{pass_id}: unknown reference {name}")


def _call(expr: Any, ctx: PassBuildContext, pass_id: str) -> Any:
    func = getattr(importlib.import_module(expr.module), expr.attr)
    args = [evaluate(a, ctx, pass_id) for a in expr.args]
    kwargs = {k: evaluate(v, ctx, pass_id) for k, v in expr.kwargs}
    return func(*args, **kwargs)


def _script_call(expr: emit.ScriptCall, ctx: PassBuildContext, pass_id: str) -> Any:
    """A script function called as the exported script calls it; user code is refused without trust and its
    failures name ``expr.what``."""
    if expr.needs_trust and not ctx.trust_custom_code:
        raise PassConfigError(f"{pass_id}: {expr.needs_trust}")
    if not expr.what:
        return _call(expr, ctx, pass_id)
    try:
        return _call(expr, ctx, pass_id)
    except PassConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - user code: report, do not crash
        raise PassConfigError(f"{pass_id}: {expr.what}: {type(exc).__name__}: {exc}") from exc
