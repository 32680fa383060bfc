"""The apply step's ``keep_wins`` in the engine (engine side, imports TVM): the default schedule is the app's
DLight rules, the verdict :func:`pipeline_model.latency_stats.compare_runs` on paired rounds, the timing the
engine's (``PassBuildContext.measure``); the decision itself is
:func:`pipeline_model.passkinds.metaschedule.keep.keep_faster`, the code exported scripts run too."""

from __future__ import annotations

from typing import Any, Callable

import tvm

from pipeline_model.latency_stats import compare_runs
from pipeline_model.passkinds.metaschedule.keep import keep_faster
from pipeline_model.passkinds.metaschedule.seed_tvm import app_rules


def keeper(rule_names: list[str], measure_fn: Callable[[list], list]) -> Callable[[Any, Any], tuple[Any, dict]]:
    """``keep(mod, applied) -> (module, report)``: :func:`keep_faster` with ``rule_names``' default schedule
    (applied for the current target) and ``measure_fn``'s in-place timing."""
    from tvm.s_tir import dlight

    rules = app_rules(rule_names)

    def schedule_default(mod: tvm.IRModule) -> tvm.IRModule:
        return dlight.ApplyDefaultSchedule(*rules)(mod)

    def compare(a: list[float], b: list[float]) -> dict[str, Any]:
        return compare_runs(a, b, paired=True).to_json()

    def keep(mod: tvm.IRModule, applied: tvm.IRModule) -> tuple[tvm.IRModule, dict]:
        out, report = keep_faster(mod, applied, schedule_default, measure_fn, compare)
        report["rules"] = list(rule_names)
        return out, report

    return keep
