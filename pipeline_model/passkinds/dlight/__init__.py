"""Kind ``dlight``: ``dlight.ApplyDefaultSchedule`` with an ordered list of DLight rules.

The recipe builds ``tvm.s_tir.dlight.ApplyDefaultSchedule(rule(), ...)``; in the engine the built rules
are applied by :func:`.report_tvm.reporting_step` (same algorithm) so the step reports which PrimFunc got
which rule (``report["dlight"]``), with a warning for PrimFuncs without a GPU schedule on a GPU target.

Files of this kind: ``__init__.py`` (spec, recipe, hooks, report; TVM-free), ``script_tvm.py`` (the app's own
rules, group ``app``: ``CPUMatmul``, ``CPUConv2d``, ``CPUParallel``; the classes exported scripts contain and the engine
instantiates; engine side because a rule class needs its TVM base class), ``int8_tvm.py`` (``CPUInt8``) and
``report_tvm.py`` (engine half: the reporting pass).
"""

from __future__ import annotations

from typing import Any, Optional

from pipeline_model import emit
from pipeline_model.i18n import translate
from pipeline_model.passkinds.base import PassKind
from pipeline_model.passkinds.context import PassBuildContext
from pipeline_model.passkinds.registry import register
from pipeline_model.passkinds.report_html import ReportSection, esc

PASS_ID = "dlight.ApplyDefaultSchedule"
#: The app's own rules (group ``app``): the code exported scripts contain, instantiated by the engine too.
SCRIPT_MODULE = "pipeline_model.passkinds.dlight.script_tvm"
#: DLight rule group ("gpu" of "gpu.Matmul") -> module holding the rule classes; group "app" holds the
#: app's own rules (:data:`SCRIPT_MODULE`, copied into exported scripts).
DLIGHT_RULE_MODULES = {"gpu": "tvm.s_tir.dlight.gpu", "cpu": "tvm.s_tir.dlight.cpu"}
APP_GROUP = "app"
#: The app's int8 rule (``app.CPUInt8``: VNNI products of ``app.QuantizedToInteger``), a module of its own.
INT8_MODULE = "pipeline_model.passkinds.dlight.int8_tvm"
#: The app's own rules -> the module holding the class (:data:`SCRIPT_MODULE` or :data:`INT8_MODULE`).
APP_RULE_MODULES = {"CPUInt8": INT8_MODULE, "CPUMatmul": SCRIPT_MODULE, "CPUConv2d": SCRIPT_MODULE,
                    "CPUParallel": SCRIPT_MODULE}
APP_RULES = tuple(APP_RULE_MODULES)
#: Rules of a new step on a GPU target (those present in this TVM build).
DEFAULT_RULES = ["gpu.Matmul", "gpu.GEMV", "gpu.Reduction", "gpu.GeneralReduction", "gpu.Fallback"]
#: Rules of a new step on a CPU target (``gpu.*`` rules schedule nothing there): those of the bundled
#: ``cpu_build.json``. Not TVM's cpu.* rules: they slowed the CNNs down and can make LLVM take minutes on one function
#: (docs/PERFORMANCE.md); a PrimFunc no app rule takes (the tutorial's 256x10 matrix-vector product) builds as it is.
DEFAULT_CPU_RULES = ["app.CPUInt8", "app.CPUMatmul", "app.CPUConv2d", "app.CPUParallel"]


def app_rule_sources(name: str) -> list[str]:
    """What an exported script holds to define the app's rule ``name``: its base class (``AppRule``), then the
    rule (:func:`pipeline_model.emit.script_sources`)."""
    if name not in APP_RULES:
        raise emit.EmitError(f"unknown DLight rule {APP_GROUP}.{name}")
    return emit.script_sources(APP_RULE_MODULES[name], name)


def dlight_rule_names() -> list[str]:
    """DLight rule names ``"gpu.Matmul"`` ... found in ``tvm.s_tir.dlight.gpu`` / ``.cpu``. Engine side."""
    import inspect

    from tvm.s_tir import dlight as dl

    names = []
    for group, module in (("gpu", dl.gpu), ("cpu", dl.cpu)):
        for attr, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, dl.ScheduleRule) and not attr.startswith("_"):
                names.append(f"{group}.{attr}")
    names.extend(f"{APP_GROUP}.{name}" for name in APP_RULES)
    return names


def dlight_spec() -> Any:
    """The ``dlight.ApplyDefaultSchedule`` spec. Engine side."""
    import inspect

    from tvm.s_tir import dlight as dl

    from pipeline_model.catalogue import ParamSpec, PassSpec
    from pipeline_model.passkinds.catalogue_tvm import first_paragraph

    rules = dlight_rule_names()
    gpu_rules = [r for r in DEFAULT_RULES if r in rules]
    cpu_rules = [r for r in DEFAULT_CPU_RULES if r in rules]
    return PassSpec(
        id=PASS_ID,
        title="DLight: Apply Default Schedule",
        category="Scheduling (DLight)",
        doc=first_paragraph(inspect.getdoc(dl.ApplyDefaultSchedule))
        + " Rules are tried in order on each PrimFunc; the first that applies wins. gpu rules need a GPU target; "
        "app.CPUMatmul (the app's own rule) gives matmuls and their fused epilogues a register-blocked, "
        "vectorized, parallel CPU schedule; app.CPUConv2d (the app's own rule) gives NCHW convolutions a "
        "register-blocked, vectorized CPU schedule with weights packed by a separate stage (follow it with "
        "SplitLayoutRewritePreproc and LiftTransformParams to pack them once); app.CPUParallel (the app's own "
        "rule) runs each block's spatial loops on all CPU cores; app.CPUInt8 (the app's own rule) computes the "
        "integer products of app.QuantizedToInteger with VNNI (vpdpbusd) where the CPU has it.",
        params=[
            ParamSpec("rules", "rule_list", gpu_rules, "Ordered DLight rules (by default the target's: gpu.* "
                      "rules on a GPU, the app's CPU rules on llvm).", choices=rules,
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
        rules: list[emit.Expr] = []
        for rule in params.get("rules") or []:
            group, _, name = str(rule).partition(".")
            if group == APP_GROUP and name in APP_RULES:  # the app's rule class, copied into exported scripts
                rules.append(emit.ScriptCall(APP_RULE_MODULES[name], name))
                continue
            if group not in DLIGHT_RULE_MODULES or not emit.is_identifier(name):
                raise emit.EmitError(f"unknown DLight rule {rule!r}")
            rules.append(emit.Call(DLIGHT_RULE_MODULES[group], name))
        return emit.Call("tvm.s_tir.dlight", "ApplyDefaultSchedule", tuple(rules))

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


KIND = register(DLightKind())
