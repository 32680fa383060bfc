"""Kind ``dlight``: ``dlight.ApplyDefaultSchedule`` with an ordered list of DLight rules.

The recipe builds ``tvm.s_tir.dlight.ApplyDefaultSchedule(rule(), ...)``; in the engine the built rules
are applied by :func:`.report_tvm.reporting_step` (same algorithm) so the step reports which PrimFunc got
which rule (``report["dlight"]``), with a warning for PrimFuncs without a GPU schedule on a GPU target.

Files of this kind: ``__init__.py`` (spec, recipe, hooks, report; TVM-free), ``rules/`` (the DLight rules beyond
TVM's: the app's own, group ``app``, one module per rule — ``CPUInt8`` among them — and the plug-ins' of the entry-point group
``relax_pipeline_studio.dlight_rules``; the classes exported scripts contain and the engine instantiates) and
``report_tvm.py`` (engine half: the reporting pass).
"""

from __future__ import annotations

from typing import Any, Optional

from pipeline_model import emit
from pipeline_model.i18n import translate
from pipeline_model.passkinds.base import PassKind
from pipeline_model.passkinds.context import PassBuildContext
from pipeline_model.passkinds.dlight import rules
from pipeline_model.passkinds.report_html import ReportSection, esc

PASS_ID = "dlight.ApplyDefaultSchedule"
#: TVM's DLight rule group ("gpu" of "gpu.Matmul") -> module holding the rule classes; the other groups are
#: the app's (``app``) and the plug-ins' rules (:mod:`.rules`, copied into exported scripts).
DLIGHT_RULE_MODULES = {group: f"tvm.s_tir.dlight.{group}" for group in rules.TVM_GROUPS}
#: Rules of a new step on a GPU target (those present in this TVM build).
DEFAULT_RULES = ["gpu.Matmul", "gpu.GEMV", "gpu.Reduction", "gpu.GeneralReduction", "gpu.Fallback"]
#: Rules of a new step on a CPU target (``gpu.*`` rules schedule nothing there): those of the bundled
#: ``cpu_build.json``. Not TVM's cpu.* rules: they slowed the CNNs down (docs/PERFORMANCE.md "Default-pipeline choices
#: cited by the code") and made LLVM take minutes on one function (2026-11-23); a PrimFunc no app rule takes (the
#: tutorial's 256x10 matrix-vector product) builds as it is.
DEFAULT_CPU_RULES = ["app.CPUInt8", "app.CPUMatmul", "app.CPUConv2d", "app.CPUParallel"]


def dlight_rule_names() -> list[str]:
    """DLight rule names ``"gpu.Matmul"`` ... found in ``tvm.s_tir.dlight.gpu`` / ``.cpu``. Engine side."""
    import inspect

    from tvm.s_tir import dlight as dl

    names = []
    for group, module in (("gpu", dl.gpu), ("cpu", dl.cpu)):
        for attr, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, dl.ScheduleRule) and not attr.startswith("_"):
                names.append(f"{group}.{attr}")
    names.extend(rules.rule_names())
    return names


def dlight_spec() -> Any:
    """The ``dlight.ApplyDefaultSchedule`` spec. Engine side."""
    import inspect

    from tvm.s_tir import dlight as dl

    from pipeline_model.catalogue import ParamSpec, PassSpec
    from pipeline_model.passkinds.catalogue_tvm import first_paragraph

    names = dlight_rule_names()
    gpu_rules = [r for r in DEFAULT_RULES if r in names]
    cpu_rules = [r for r in DEFAULT_CPU_RULES if r in names]
    return PassSpec(
        id=PASS_ID,
        title="DLight: Apply Default Schedule",
        category="Scheduling (DLight)",
        doc=first_paragraph(inspect.getdoc(dl.ApplyDefaultSchedule))
        + " Rules are tried in order on each PrimFunc; the first that applies wins. gpu rules need a GPU target; "
        "app.CPUMatmul (the app's own rule) gives matmuls and their fused epilogues a register-blocked, "
        "vectorized, parallel CPU schedule, a weight matrix read through a copy packed by a separate stage; "
        "app.CPUConv2d (the app's own rule) gives convolutions a register-blocked, vectorized CPU schedule with "
        "weights packed by a separate stage (follow either with SplitLayoutRewritePreproc and "
        "LiftTransformParams to pack them once); app.CPUParallel (the app's own "
        "rule) runs each block's spatial loops on all CPU cores; app.CPUInt8 (the app's own rule) computes the "
        "integer products of app.QuantizedToInteger with VNNI (vpdpbusd) where the CPU has it. Installed "
        "plug-ins add rules of their own groups.",
        params=[
            ParamSpec("rules", "rule_list", gpu_rules, "Ordered DLight rules (by default the target's: gpu.* "
                      "rules on a GPU, the app's CPU rules on llvm; plug-ins add rules of their own groups).", choices=names,
                      target_defaults={"gpu": gpu_rules, "cpu": cpu_rules})
        ],
        tvm_name="tvm.s_tir.dlight.ApplyDefaultSchedule",
    )


def dlight_html(value: Any, target: dict, error_css: str) -> str:
    """``report["dlight"]``: the rule per PrimFunc, unscheduled ones, and a warning on GPU targets."""
    if not isinstance(value, dict):
        return ""
    from pipeline_model.targets import is_gpu_target

    dl = value
    parts: list[str] = []
    scheduled = dl.get("scheduled") or {}
    if isinstance(scheduled, list):
        scheduled = {str(e.get("name", e.get("func", "?"))): e.get("rule") for e in scheduled if isinstance(e, dict)}
    unscheduled = [str(n) for n in dl.get("unscheduled") or dl.get("none") or []]
    no_rule = esc(translate("StepReport", "no rule applied"))
    already_text = esc(translate("StepReport", "already scheduled"))
    rows = "".join(f"<tr><td><code>{esc(f)}</code></td><td>{esc(r or '–')}</td></tr>" for f, r in scheduled.items())
    rows += "".join(f"<tr><td><code>{esc(f)}</code></td><td><i>{no_rule}</i></td></tr>" for f in unscheduled)
    already = [str(n) for n in dl.get("already_scheduled") or []]
    rows += "".join(f"<tr><td><code>{esc(f)}</code></td><td><i>{already_text}</i></td></tr>" for f in already)
    rules = ", ".join(str(r) for r in dl.get("rules") or []) if isinstance(dl.get("rules"), list) else ""
    summary = translate("StepReport", "{0} PrimFunc(s) scheduled, {1} not").format(len(scheduled), len(unscheduled))
    parts.append(f"<p><b>DLight</b>{' (' + esc(rules) + ')' if rules else ''}: {esc(summary)}</p><table>{rows}</table>")
    gpu = bool(dl["gpu"]) if "gpu" in dl else is_gpu_target(target)
    warnings = [str(w) for w in dl.get("warnings") or []]
    if gpu and (warnings or unscheduled):
        fallback = translate("StepReport", "{0}: no GPU schedule; building for {1} will fail").format(
            ", ".join(unscheduled[:8]), target.get("kind"))
        items = "".join(f"<li>{esc(w)}</li>" for w in warnings) or f"<li>{esc(fallback)}</li>"
        word = esc(translate("StepReport", "Warning"))
        advice = translate("StepReport", "{0} PrimFunc(s) have no GPU schedule — add rules (e.g. gpu.Fallback) or a "
                                         "MetaSchedule step.").format(len(unscheduled))
        parts.append(f"<p style='color:{error_css}'><b>{word}</b>: {esc(advice)}</p><ul>{items}</ul>")
    return "".join(parts)


class DLightKind(PassKind):
    """DLight's default schedule with a per-PrimFunc rule report (see the module docstring)."""

    name = "dlight"
    priority = 10
    catalogue_order = 50

    def matches(self, pass_id: str) -> bool:
        return pass_id == PASS_ID

    def add_specs(self, cat: Any) -> None:
        cat.add(dlight_spec())

    def recipe(self, pass_id: str, params: dict[str, Any], *, step_number: Optional[int] = None) -> emit.Expr:
        built: list[emit.Expr] = []
        where = f"step {step_number}: " if step_number is not None else ""
        for rule in params.get("rules") or []:
            group, _, name = str(rule).partition(".")
            if group in DLIGHT_RULE_MODULES:  # TVM's rules
                if not emit.is_identifier(name):
                    raise emit.EmitError(f"{where}unknown DLight rule {rule!r}")
                built.append(emit.Call(DLIGHT_RULE_MODULES[group], name))
                continue
            if rules.rule_entry(str(rule)) is None:  # only installed rules: a file never names a module
                raise emit.EmitError(where + rules.missing_rule_message(str(rule)))
            built.append(rules.rule_call(str(rule)))  # the rule's class, copied into exported scripts
        return emit.Call("tvm.s_tir.dlight", "ApplyDefaultSchedule", tuple(built))

    def wrap_pass(self, pass_id: str, built: Any, ctx: PassBuildContext) -> Any:
        """The rules the shared recipe built, applied by the reporting pass (same algorithm as
        ApplyDefaultSchedule) so the step reports which PrimFunc got which rule."""
        import tvm

        if not isinstance(built, tvm.transform.Pass):
            return built
        from pipeline_model.passkinds.dlight import report_tvm

        return report_tvm.reporting_step(list(built.rules), ctx, pass_id=pass_id)

    def report_sections(self) -> tuple[ReportSection, ...]:
        return (ReportSection("dlight", 10, dlight_html),)

    def environment(self) -> dict[str, Any]:
        """Engine side: every rule class imported, so a plug-in rule that cannot be loaded is recorded
        (:func:`pipeline_model.plugins.failures`, listed in the ``env`` reply); nothing to add."""
        rules.load_all()
        return {}


KIND = DLightKind()
