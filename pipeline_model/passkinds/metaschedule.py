"""Kind ``metaschedule``: TVM's MetaSchedule passes ``relax.MetaScheduleTuneTIR``,
``relax.MetaScheduleTuneIRMod`` (they tune) and ``relax.MetaScheduleApplyDatabase``.

Their ``work_dir`` "" means the session's tuning folder (``Ref("work_dir")``). Only the TVM keyword
arguments (:data:`TVM_TUNING_KWARGS`) reach TVM's constructor in the recipe; the other parameters
configure the builder/runner. In the engine a step is built by
:func:`pipeline_model.tuning_tvm.make_tuning_pass` (progress events, stop, report); an exported script
installs the same CPU set-up with ``install_meta_schedule_cpu`` (copied from :mod:`pipeline_model.emit`)
before the stock pass. The cache key of a step includes its work directory and, for the apply step,
the database's size and mtime.
"""

from __future__ import annotations

import os
from typing import Any, Optional

from pipeline_model import emit
from pipeline_model.i18n import translate
from pipeline_model.passkinds.base import ExportPiece, PassKind, UserCodeRef
from pipeline_model.passkinds.context import PassBuildContext
from pipeline_model.passkinds.registry import register
from pipeline_model.passkinds.report_html import ReportSection, esc
from pipeline_model.tuning import COMMON_TUNING_PARAMS, tuning_param
from pipeline_model.tuning_focus import is_targeted

TUNE_TIR = "relax.MetaScheduleTuneTIR"
TUNE_IRMOD = "relax.MetaScheduleTuneIRMod"
APPLY_DATABASE = "relax.MetaScheduleApplyDatabase"
#: The three pass ids of this kind.
PASS_IDS = (TUNE_TIR, TUNE_IRMOD, APPLY_DATABASE)
#: The ids whose steps tune (emit ``tuning_progress``).
TUNING_IDS = (TUNE_TIR, TUNE_IRMOD)

#: TVM keyword arguments of the MetaSchedule passes; their other params only configure tuning.
TVM_TUNING_KWARGS: dict[str, tuple[str, ...]] = {
    TUNE_TIR: ("work_dir", "max_trials_global"),
    TUNE_IRMOD: ("work_dir", "max_trials_global", "max_trials_per_task", "op_names"),
    APPLY_DATABASE: ("work_dir", "enable_warning"),
}

#: ``make_tuning_pass`` modes by pass id.
_MODES = {TUNE_TIR: "tir", TUNE_IRMOD: "irmod", APPLY_DATABASE: "apply"}


def target_dict(target: Any) -> dict[str, Any]:
    """A target dict of a dict or ``tvm.target.Target`` (whose ``str`` is its JSON)."""
    import json

    if isinstance(target, dict):
        return dict(target)
    try:
        data = json.loads(str(target))
        return data if isinstance(data, dict) else {"kind": str(target)}
    except ValueError:
        return {"kind": getattr(getattr(target, "kind", None), "name", str(target))}


def tuning_mode(pass_id: str) -> Optional[str]:
    """``"tir"``, ``"irmod"`` or ``"apply"`` for the three MetaSchedule ids, else ``None``."""
    return _MODES.get(pass_id)


def tvm_tuning_params(pass_id: str, params: dict[str, Any]) -> dict[str, Any]:
    """TVM keyword arguments of a MetaSchedule step (0 / [] mean "no limit" / "all tasks")."""
    out = {k: v for k, v in params.items() if k in TVM_TUNING_KWARGS.get(pass_id, ())}
    if out.get("max_trials_per_task") == 0:
        out["max_trials_per_task"] = None
    if out.get("op_names") == []:
        out["op_names"] = None
    return out


#: Parameters of the MetaSchedule steps (``ParamSpec(**d)`` for each dict), keyed by pass id. The
#: first parameters are TVM's own keyword arguments; the others configure the builder/runner.
TUNING_PARAMS: dict[str, list[dict]] = {
    TUNE_TIR: [
        tuning_param("max_trials_global", "int", 64, "Trials per PrimFunc (TVM tunes each PrimFunc separately)."),
        *COMMON_TUNING_PARAMS,
    ],
    TUNE_IRMOD: [
        tuning_param("max_trials_global", "int", 64, "Trials in total over all tasks."),
        tuning_param("max_trials_per_task", "int", 0, "Trials per task at most (0: no limit)."),
        tuning_param("op_names", "str_list", [], "Only tune tasks whose name contains one of these (empty: all)."),
        *COMMON_TUNING_PARAMS,
    ],
    APPLY_DATABASE: [
        tuning_param("work_dir", "str", "", "Tuning work directory to read (empty: the default one, as for tuning)."),
        tuning_param("enable_warning", "bool", False, "Warn for PrimFuncs without a tuning record."),
    ],
}


def tuning_spec(base: Any, pass_id: str) -> Any:
    """The curated spec of a MetaSchedule pass (``base``: the introspected one, if any). Engine side."""
    import inspect

    from tvm import relax

    from pipeline_model.catalogue import ParamSpec, PassSpec, title_from_name
    from pipeline_model.catalogue_tvm import first_paragraph
    from pipeline_model.tuning_focus import FOCUS_PARAMS

    extra = FOCUS_PARAMS if pass_id == TUNE_TIR else []
    params = [ParamSpec.from_json(d) for d in [*TUNING_PARAMS[pass_id][:1], *extra, *TUNING_PARAMS[pass_id][1:]]]
    for p in params:
        if p.name == "max_trials_per_task" and p.default == 0:
            p.doc = p.doc or "0: no limit"
    name = pass_id.split(".", 1)[1]
    spec = base or PassSpec(
        id=pass_id,
        title=title_from_name(name),
        category="",
        doc=first_paragraph(inspect.getdoc(getattr(relax.transform, name))),
        tvm_name=f"tvm.relax.transform.{name}",
    )
    spec.params = params
    spec.category = "Tuning (MetaSchedule)"
    spec.omitted_params = {}
    if pass_id == TUNE_IRMOD:
        spec.omitted_params = {"params": "weights are function inputs here; tuned with params={}"}
    return spec


def database_fingerprint(pass_id: str, params: dict[str, Any], run_args: dict[str, Any]) -> str:
    """Extra cache-key part of the MetaSchedule steps: the tuning work directory they use (the same
    step tunes into another database for another pipeline file) and, for the apply step, the size and
    mtime of the database it reads (a cached apply step is not reused after the database changed)."""
    from pipeline_model.engine.runner import run_work_dir
    from pipeline_model.tuning import STATE_FILE, database_files, resolve_work_dir

    try:
        work_dir = resolve_work_dir(str(params.get("work_dir") or ""), run_work_dir(run_args), run_args.get("base_dir"))
    except ValueError:
        return ""
    if pass_id != APPLY_DATABASE:
        return f"work_dir={work_dir}"
    parts = []
    for path in (*database_files(work_dir), os.path.join(work_dir, STATE_FILE)):
        try:
            st = os.stat(path)
            parts.append(f"{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append("-")
    return f"work_dir={work_dir};db=" + ",".join(parts)


# ---- report sections (TVM-free) ------------------------------------------------------------------
def format_best(value: Any) -> str:
    """A best latency in µs for the report table."""
    try:
        return f"{float(value):.1f} µs"
    except (TypeError, ValueError):
        return "–"


def tuning_html(value: Any, _target: dict, _error_css: str) -> str:
    """``report["tuning"]``: trials done, per-task best latency, the database folder."""
    if not isinstance(value, dict):
        return ""
    tasks = value.get("tasks") or []
    rows = "".join(
        f"<tr><td><code>{esc(t.get('name'))}</code></td><td align='right'>{esc(t.get('trials'))}</td>"
        f"<td align='right'>{esc(format_best(t.get('best_us')))}</td><td>{esc(t.get('status', ''))}</td></tr>"
        for t in tasks if isinstance(t, dict)
    )
    if value.get("stopped"):
        summary = translate("StepReport", "{done}/{total} trials, stopped")
    elif value.get("finished"):
        summary = translate("StepReport", "{done}/{total} trials, done")
    else:
        summary = translate("StepReport", "{done}/{total} trials")
    summary = summary.format(done=value.get("done"), total=value.get("total"))
    database = esc(translate("StepReport", "database"))
    return (f"<p><b>MetaSchedule</b>: {esc(summary)}; {database} <code>{esc(value.get('work_dir', ''))}</code></p>"
            f"<table>{rows}</table>" + focus_html(value.get("focus")) + best_html(value.get("best")))


def focus_html(plan: Any) -> str:
    """The targeted tuning plan: chosen PrimFuncs with their time share and trials, the others."""
    if not isinstance(plan, dict):
        return ""
    rows = "".join(
        f"<tr><td><code>{esc(c.get('name'))}</code></td><td align='right'>{float(c.get('share') or 0) * 100:.1f} %</td>"
        f"<td align='right'>{esc(c.get('trials'))}</td></tr>"
        for c in plan.get("chosen") or [] if isinstance(c, dict)
    )
    prof = plan.get("profile") or {}
    skipped = plan.get("skipped") or []
    source = {"stored": translate("StepReport", "the stored profile"), "measured": translate("StepReport", "a profile measured for this step")}.get(
        str(prof.get("source")), translate("StepReport", "no profile"))
    title = translate("StepReport", "Targeted")
    if plan.get("schedule_fn"):
        how = translate("StepReport", "focus {focus}, budget {budget} trials, from {source}, own schedule function")
    else:
        how = translate("StepReport", "focus {focus}, budget {budget} trials, from {source}")
    how = how.format(focus=plan.get("focus"), budget=plan.get("budget"), source=source)
    heads = "".join(f"<th>{esc(h)}</th>" for h in (translate("StepReport", "PrimFunc"),
                                                   translate("StepReport", "time share"),
                                                   translate("StepReport", "trials")))
    not_tuned = ""
    if skipped:
        listed = ", ".join(map(str, skipped[:20])) + (" …" if len(skipped) > 20 else "")
        not_tuned_text = translate("StepReport", "Not tuned: {0}").format(listed)
        not_tuned = f"<p>{esc(not_tuned_text)}</p>"
    return f"<p><b>{esc(title)}</b> ({esc(how)}):</p><table><tr>{heads}</tr>{rows}</table>{not_tuned}"


def best_html(best: Any) -> str:
    """Each task's best schedule: its trace and tuned TensorIR (shortened; the full texts' files named)."""
    if not isinstance(best, dict) or not best:
        return ""
    parts = []
    for name, entry in best.items():
        if not isinstance(entry, dict):
            continue
        files = " · ".join(f"<code>{esc(entry.get(k))}</code>" for k in ("trace_file", "tir_file") if entry.get(k))
        title = esc(translate("StepReport", "Best schedule of {0}")).format(f"<code>{esc(name)}</code>")
        full_word = esc(translate("StepReport", "full text:"))
        full = f" — {full_word} {files}" if files else ""
        parts.append(f"<p><b>{title}</b>{full}</p>"
                     f"<pre>{esc(entry.get('trace', ''))}</pre><pre>{esc(entry.get('tir', ''))}</pre>")
    return "".join(parts)


def apply_database_html(value: Any, _target: dict, _error_css: str) -> str:
    """``report["apply_database"]``: PrimFuncs that got a tuned schedule, and those without one."""
    if not isinstance(value, dict):
        return ""
    ok, missing = value.get("applied") or [], value.get("missing") or []
    title = esc(translate("StepReport", "Tuned schedules applied"))
    text = translate("StepReport", "to {0} PrimFunc(s); none found for {1}").format(len(ok), len(missing))
    listed = f": {esc(', '.join(map(str, missing[:12])))}" if missing else ""
    return f"<p><b>{title}</b> {esc(text)}{listed}</p>"


class MetaScheduleKind(PassKind):
    """The MetaSchedule passes (see the module docstring)."""

    name = "metaschedule"
    priority = 10
    catalogue_order = 20

    def matches(self, pass_id: str) -> bool:
        return pass_id in PASS_IDS

    def runs_tuning(self, pass_id: str) -> bool:
        return pass_id in TUNING_IDS

    def add_specs(self, cat: Any) -> None:
        for pass_id in PASS_IDS:
            cat.add(tuning_spec(cat.get(pass_id), pass_id))
            cat.meta.setdefault("not_buildable", {}).pop(pass_id.split(".", 1)[1], None)

    def recipe(self, pass_id: str, params: dict[str, Any], *, step_number: Optional[int] = None) -> emit.Expr:
        name = pass_id.split(".", 1)[1]
        tvm_params = tvm_tuning_params(pass_id, params)
        kwargs = [(k, v) for k, v in emit.keyword_args(tvm_params) if k != "work_dir"]
        wd = tvm_params.get("work_dir")
        kwargs.insert(0, ("work_dir", emit.Ref("work_dir") if not wd else emit.Lit(emit.check_literal(wd))))
        if pass_id == TUNE_IRMOD:
            kwargs.insert(0, ("params", emit.Lit({})))
        return emit.Call("tvm.relax.transform", name, (), tuple(kwargs))

    def build_pass(self, pass_id: str, params: dict[str, Any], expr: emit.Expr, ctx: PassBuildContext) -> Any:
        """:func:`pipeline_model.tuning_tvm.make_tuning_pass` with the context's work folder, events,
        stop flags and report (``report["tuning"]`` / ``report["apply_database"]``)."""
        from pipeline_model import tuning_tvm
        from pipeline_model.tuning import default_work_dir

        tuning_tvm.install_overrides()
        report: dict[str, Any] = {}
        ctx.report = report
        target = ctx.target
        default = ctx.work_dir or default_work_dir(None, "", target if isinstance(target, dict) else str(target))
        input_key = getattr(ctx, "input_key", None)

        def profile_fn(mod: Any) -> tuple[dict, str]:
            from pipeline_model.engine.build.profile import profile_module

            return profile_module(mod, target_dict(target), input_key)

        return tuning_tvm.make_tuning_pass(pass_id, params, target, default, ctx.base_dir, ctx.emit,
                                           ctx.cancelled, report, stop_early=ctx.should_stop_tuning,
                                           profile_fn=profile_fn, trusted=ctx.trust_custom_code,
                                           step_number=ctx.step_number)

    def user_code(self, step: Any, base_dir: Optional[str], number: Optional[int] = None) -> list[UserCodeRef]:
        """A ``relax.MetaScheduleTuneTIR`` step's ``schedule_fn`` source (the user's search space)."""
        from pipeline_model.tuning_focus import schedule_label

        params = getattr(step, "params", None) or {}
        source = str(params.get("schedule_fn") or "")
        if getattr(step, "pass_id", TUNE_TIR) != TUNE_TIR or not source.strip():
            return []
        return [UserCodeRef(label=f"{TUNE_TIR} schedule_fn", path=None, filenames=(schedule_label(number),),
                            read=lambda: source)]

    def cache_key_extra(self, pass_id: str, params: dict[str, Any], run_args: dict[str, Any]) -> str:
        return database_fingerprint(pass_id, params, run_args)

    def report_sections(self) -> tuple[ReportSection, ...]:
        return (ReportSection("tuning", 50, tuning_html), ReportSection("apply_database", 60, apply_database_html))

    def export_step(self, pass_id: str, params: dict[str, Any], expr: emit.Expr, *, index: int,
                    label: str) -> ExportPiece:
        """A tuning step is preceded by ``install_meta_schedule_cpu(work_dir, options)`` (the helpers
        are copied into the script), so TVM's own pass measures real candidates on a CPU."""
        if pass_id not in TUNING_IDS:
            return super().export_step(pass_id, params, expr, index=index, label=label)
        from pipeline_model.tuning import TuningConfig, TuningConfigError

        try:
            options = TuningConfig.from_params(params, where=label).to_json()
        except TuningConfigError as exc:
            raise emit.EmitError(str(exc)) from None
        for key in ("max_trials_global", "max_trials_per_task", "op_names", "work_dir"):
            options.pop(key, None)  # the pass's own arguments
        piece = ExportPiece(helpers=[emit.helper_source(f) for f in emit.META_SCHEDULE_HELPERS])
        wd = params.get("work_dir")
        wd_src = emit.render(emit.Lit(emit.check_literal(wd)) if wd else emit.Ref("work_dir"))
        if pass_id == TUNE_TIR and is_targeted(params):
            return self._export_targeted(params, piece, wd_src, options, index, label)
        piece.lines.append(f"install_meta_schedule_cpu({wd_src}, {emit.check_literal(options, 'options')!r})")
        rest = super().export_step(pass_id, params, expr, index=index, label=label)
        piece.helpers.extend(rest.helpers)
        piece.imports.extend(rest.imports)
        piece.lines.extend(rest.lines)
        return piece


    @staticmethod
    def _export_targeted(params: dict[str, Any], piece: ExportPiece, wd_src: str, options: dict[str, Any],
                         index: int, label: str) -> ExportPiece:
        """A targeted ``MetaScheduleTuneTIR`` step: the script profiles the step's input, computes the
        same choice and trial allocation as the engine (the helpers of
        :data:`pipeline_model.tuning_focus.SCRIPT_HELPERS`, copied verbatim) and tunes those PrimFuncs."""
        from pipeline_model.tuning_focus import SCRIPT_HELPERS, FocusError, focus_settings, schedule_label

        try:
            settings = focus_settings(params, label)
        except FocusError as exc:
            raise emit.EmitError(str(exc)) from None
        source = settings.pop("schedule_fn")
        if source.strip():
            try:
                compile(source, schedule_label(index + 1), "exec")
            except SyntaxError as exc:
                raise emit.EmitError(f"schedule_fn: syntax error at line {exc.lineno}: {exc.msg}") from None
        piece.helpers.extend(emit.helper_source(f) for f in SCRIPT_HELPERS)
        trials = int(params.get("max_trials_global", 64))
        piece.lines.append(f"tune_tir = install_meta_schedule_cpu({wd_src}, {emit.check_literal(options, 'options')!r})")
        piece.lines.append(f"pass_ = targeted_tuning_pass(tune_tir, {wd_src}, {emit.check_literal(settings, 'settings')!r}, "
                           f"{trials!r}, {source!r}, {schedule_label(index + 1)!r})")
        return piece


KIND = register(MetaScheduleKind())
