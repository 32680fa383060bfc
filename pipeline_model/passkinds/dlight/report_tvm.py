"""Which PrimFunc DLight scheduled with which rule — and which none did (engine half of the ``dlight`` kind).

``dlight.ApplyDefaultSchedule(*rules)`` tries the rules in order on every PrimFunc that is not yet
scheduled; the first rule whose ``apply`` returns a schedule wins, and a PrimFunc no rule matches is
left as it was. On a GPU target such a PrimFunc has no thread binding, and the build fails (or, for
CUDA, silently runs it on the host), so the report warns about it.

:func:`make_reporting_pass` is a drop-in replacement of ``ApplyDefaultSchedule`` that does the same
thing (same rule order, same ``tirx.is_scheduled`` attribute) while recording the rule per PrimFunc;
:func:`dlight_report` analyses a module without changing it. Both give a JSON dict for
``StepResult.report["dlight"]``::

    {"target": "cuda", "gpu": true, "rules": ["gpu.Matmul", ...],
     "scheduled": {"fused_matmul_add_relu": "gpu.Matmul", ...},
     "unscheduled": ["transpose"], "already_scheduled": [], "no_thread_binding": ["transpose"],
     "warnings": ["transpose: no DLight rule applied; ..."]}
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import tvm
from tvm import tirx
from tvm.s_tir import dlight as dl
from tvm.target import Target

from pipeline_model.passkinds.dlight.rules import name_of_rule, rule_class


def rule_from_name(name: str) -> Any:
    """``"gpu.Matmul"`` -> ``dl.gpu.Matmul()``, ``"app.CPUParallel"`` (or a plug-in's rule) -> its class called;
    ``ValueError`` naming the rule when unknown."""
    group, _, cls = name.partition(".")
    module = {"gpu": dl.gpu, "cpu": dl.cpu}.get(group)
    if module is None:
        return rule_class(name)()
    rule_cls = getattr(module, cls, None)
    if rule_cls is None or not isinstance(rule_cls, type):
        raise ValueError(f"unknown DLight rule {name!r} (use gpu.<Rule> or cpu.<Rule>)")
    return rule_cls()


def rule_name(rule: Any) -> str:
    """``dl.gpu.Matmul()`` -> ``"gpu.Matmul"``; a rule of the rule table (the app's, a plug-in's) -> its
    registered name (``"app.CPUParallel"``)."""
    named = name_of_rule(rule)
    if named is not None:
        return named
    module = type(rule).__module__
    group = "gpu" if ".gpu" in module else "cpu" if ".cpu" in module else module.rsplit(".", 1)[-1]
    return f"{group}.{type(rule).__name__}"


def is_gpu_target(target: Target) -> bool:
    """True for targets with the ``gpu`` key (cuda, rocm, metal, vulkan, opencl ...)."""
    return "gpu" in [str(k) for k in target.keys]


def _is_scheduled(func: Any) -> bool:
    return bool(isinstance(func, tirx.PrimFunc) and func.attrs is not None and func.attrs.get("tirx.is_scheduled", False))


def has_thread_binding(func: tirx.PrimFunc) -> bool:
    """True when ``func`` binds a loop to a GPU thread (``T.thread_binding`` / ``thread_extent``).

    TVM 0.27 has no Python statement visitor for TIR, so this reads the PrimFunc's TVMScript.
    """
    text = func.script()
    return "T.thread_binding(" in text or '"thread_extent"' in text or "T.launch_thread(" in text


def _as_target(target: Any) -> Target:
    if isinstance(target, Target):
        return target
    if target is None:
        return Target.current(allow_none=False)
    return Target(dict(target) if isinstance(target, dict) else target)


def _finish(report: dict[str, Any], after: Optional[tvm.IRModule]) -> dict[str, Any]:
    if report["gpu"] and after is not None:
        missing = []
        for gv, func in after.functions_items():
            if isinstance(func, tirx.PrimFunc) and not has_thread_binding(func):
                missing.append(gv.name_hint)
        report["no_thread_binding"] = sorted(missing)
    if report["gpu"]:
        for name in report["unscheduled"]:
            report["warnings"].append(
                f"{name}: no DLight rule applied, so it has no thread binding and a {report['target']} "
                "build will fail or run it on the host (add gpu.Fallback at the end of the rules)"
            )
    return report


def _empty_report(target: Target, rules: Sequence[Any]) -> dict[str, Any]:
    return {
        "target": str(target.kind.name),
        "gpu": is_gpu_target(target),
        "rules": [rule_name(r) for r in rules],
        "scheduled": {},
        "unscheduled": [],
        "already_scheduled": [],
        "no_thread_binding": [],
        "warnings": [],
    }


def _resolve_rules(rules: Sequence[Any]) -> list[Any]:
    return [rule_from_name(r) if isinstance(r, str) else r for r in rules]


def dlight_report(mod: tvm.IRModule, rules: Sequence[Any], target: Any = None) -> dict[str, Any]:
    """Which rule ``ApplyDefaultSchedule(*rules)`` would pick for each PrimFunc of ``mod`` (unchanged)."""
    target = _as_target(target)
    rules = _resolve_rules(rules)
    report = _empty_report(target, rules)
    for gv, func in mod.functions_items():
        if not isinstance(func, tirx.PrimFunc):
            continue
        if _is_scheduled(func):
            report["already_scheduled"].append(gv.name_hint)
            continue
        func_target = func.attrs.get("target") if func.attrs is not None else None
        for rule in rules:
            if rule.apply(func, func_target or target, False) is not None:
                report["scheduled"][gv.name_hint] = rule_name(rule)
                break
        else:
            report["unscheduled"].append(gv.name_hint)
    report["unscheduled"].sort()
    return _finish(report, None)


def make_reporting_pass(rules: Sequence[Any], report: dict[str, Any],
                        on_warning: Optional[Callable[[str], None]] = None) -> tvm.transform.Pass:
    """``ApplyDefaultSchedule(*rules)`` that also fills ``report["dlight"]`` (see module docstring).

    The rules are applied exactly as DLight does (first rule returning a schedule wins), under the
    current target (``with target:``) or the PrimFunc's own ``target`` attribute. ``on_warning`` gets
    each warning (an unscheduled PrimFunc on a GPU target).
    """
    rules = _resolve_rules(rules)

    @tvm.transform.module_pass(opt_level=0, name="ApplyDefaultSchedule")
    def apply(mod: tvm.IRModule, _ctx: Any) -> tvm.IRModule:
        target = Target.current(allow_none=False)
        info = _empty_report(target, rules)
        updates = {}
        for gv, func in mod.functions_items():
            if not isinstance(func, tirx.PrimFunc):
                continue
            if _is_scheduled(func):
                info["already_scheduled"].append(gv.name_hint)
                continue
            func_target = func.attrs.get("target") if func.attrs is not None else None
            for rule in rules:
                space = rule.apply(func, func_target or target, False)
                if space is None:
                    continue
                if not isinstance(space, (list, tuple)):
                    space = [space]
                updates[gv] = space[0].mod["main"].with_attr("tirx.is_scheduled", True)
                info["scheduled"][gv.name_hint] = rule_name(rule)
                break
            else:
                info["unscheduled"].append(gv.name_hint)
        mod = mod.clone() if hasattr(mod, "clone") else mod
        for gv, func in updates.items():
            mod[gv] = func
        info["unscheduled"].sort()
        report["dlight"] = _finish(info, mod)
        if on_warning is not None:
            for message in report["dlight"]["warnings"]:
                on_warning(message)
        return mod

    return apply


def reporting_step(rules: Sequence[Any], ctx: Any, pass_id: str) -> tvm.transform.Pass:
    """The pass of a ``dlight.ApplyDefaultSchedule`` step (what ``catalogue_tvm.make_pass`` returns):
    :func:`make_reporting_pass` with ``rules`` (rule objects as the shared recipe built them, or
    names), the report in ``ctx.report["dlight"]`` and one ``warning`` event per unscheduled PrimFunc
    on a GPU target (naming ``pass_id``). One pass, like the stock one."""
    report = getattr(ctx, "report", None)
    if not isinstance(report, dict):
        report = {}
        ctx.report = report

    def warn(message: str) -> None:
        if getattr(ctx, "emit", None) is not None:
            ctx.emit("warning", {"pass_id": pass_id, "message": message})

    return make_reporting_pass(list(rules), report, warn)
