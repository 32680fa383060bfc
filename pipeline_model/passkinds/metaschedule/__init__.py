"""Kind ``metaschedule``: TVM's MetaSchedule passes ``relax.MetaScheduleTuneTIR``,
``relax.MetaScheduleTuneIRMod`` (they tune) and ``relax.MetaScheduleApplyDatabase``.

The whole kind lives in this folder:

* here (TVM-free): the parameter tables, the catalogue specs and the kind's hooks (recipe, build,
  export, cache key, user code, report sections);
* :mod:`.config` (pass ids, :class:`~.config.TuningConfig` — the one table of tuning defaults —, progress
  records, where tuning writes), :mod:`.focus` (targeted-tuning parameters), :mod:`.budget` (a budget in
  minutes), :mod:`.plan` (a time-budgeted step's rounds, also copied into scripts), :mod:`.seed` (the app's
  DLight schedules measured into the database before the search, ``seed_rules``; also copied into scripts),
  :mod:`.report` (report HTML) — all TVM-free;
* :mod:`.script`: the plain-TVM code exported scripts contain (target and cores, intrinsics, builder and
  runner from the options, the manifest and re-tune rule, targeted tuning), which the engine calls too;
* the engine half, imported lazily by :meth:`MetaScheduleKind.build_pass` and never importing this
  package's ``__init__`` back: ``builder_tvm`` (stoppable builder, runner, RPC check), ``session_tvm``
  (progress and stop), ``tasks_tvm`` (tuning tasks with database reuse, apply), ``overrides_tvm`` (TVM's
  ``tune_tir``/``tune_relax`` overrides), ``budget_tvm`` (the engine's pieces of a time-budgeted step),
  ``seed_tvm`` (the engine's pieces of a seeded step), ``pass_tvm`` (the pass of a step).

Their ``work_dir`` "" means the session's tuning folder (``Ref("work_dir")``). Only the TVM keyword
arguments (:data:`~.config.TVM_TUNING_KWARGS`) reach TVM's constructor in the recipe; the other
parameters configure the builder/runner. In the engine a step is built by
:func:`.pass_tvm.make_tuning_pass` (progress events, stop, report); an exported script installs the
CPU set-up with ``install_meta_schedule_cpu`` (copied from :mod:`.script`) before the stock pass. The
cache key of a step includes its work directory and, for the apply step, the database's size and mtime.
"""

from __future__ import annotations

import os
from typing import Any, Optional

from pipeline_model import emit
from pipeline_model.passkinds.base import ExportPiece, PassKind, UserCodeRef
from pipeline_model.passkinds.context import PassBuildContext
from pipeline_model.passkinds.metaschedule.config import (
    APPLY_DATABASE,
    COMMON_TUNING_PARAMS,
    PASS_IDS,
    SEED_RULES,
    TUNE_IRMOD,
    TUNE_TIR,
    TUNING_IDS,
    TuningConfig,
    database_files,
    resolve_work_dir,
    tuning_param,
    tvm_tuning_params,
)
from pipeline_model.passkinds.metaschedule.focus import is_budgeted, is_targeted
from pipeline_model.passkinds.metaschedule.report import apply_database_html, tuning_html, tuning_line
from pipeline_model.passkinds.metaschedule.script import STATE_FILE
from pipeline_model.passkinds.report_html import ReportSection
from pipeline_model.work_dirs import run_work_dir


#: Parameters of the MetaSchedule steps (``ParamSpec(**d)`` for each dict), keyed by pass id. The
#: first parameters are TVM's own keyword arguments; the others configure the builder/runner.
TUNING_PARAMS: dict[str, list[dict]] = {
    TUNE_TIR: [
        tuning_param("max_trials_global", "int", TuningConfig.max_trials_global, "Trials per PrimFunc (TVM tunes each PrimFunc separately)."),
        *COMMON_TUNING_PARAMS,
        tuning_param("seed_rules", "rule_list", list(TuningConfig().seed_rules), "The app's DLight rules (e.g. app.CPUMatmul, app.CPUConv2d, "
                     "app.CPUParallel) whose schedule of each PrimFunc is measured and put into the database before "
                     "the search, so applying the database keeps it where nothing tuned is faster (empty: off).", list(SEED_RULES)),
    ],
    TUNE_IRMOD: [
        tuning_param("max_trials_global", "int", TuningConfig.max_trials_global, "Trials in total over all tasks."),
        tuning_param("max_trials_per_task", "int", 0, "Trials per task at most (0: no limit)."),
        tuning_param("op_names", "str_list", [], "Only tune tasks whose name contains one of these (empty: all)."),
        *COMMON_TUNING_PARAMS,
    ],
    APPLY_DATABASE: [
        tuning_param("work_dir", "str", "", "Tuning work directory to read (empty: the default one, as for tuning)."),
        tuning_param("enable_warning", "bool", False, "Warn for PrimFuncs without a tuning record."),
        tuning_param("keep_wins", "rule_list", [], "The default schedule (the app's DLight rules, e.g. app.CPUMatmul, "
                     "app.CPUConv2d, app.CPUParallel) each tuned schedule must beat in the built model: both variants "
                     "are timed in place and a PrimFunc keeps its tuned schedule only when it is faster beyond noise "
                     "(empty: off, every record applied).", list(SEED_RULES)),
    ],
}


def tuning_spec(base: Any, pass_id: str) -> Any:
    """The curated spec of a MetaSchedule pass (``base``: the introspected one, if any). Engine side."""
    import inspect

    from tvm import relax

    from pipeline_model.catalogue import ParamSpec, PassSpec, title_from_name
    from pipeline_model.passkinds.catalogue_tvm import first_paragraph
    from pipeline_model.passkinds.metaschedule.focus import FOCUS_PARAMS

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
        """:func:`.pass_tvm.make_tuning_pass` with the context's work folder, events, stop flags,
        profile function (targeted tuning) and report (``report["tuning"]`` / ``report["apply_database"]``)."""
        from pipeline_model.work_dirs import default_work_dir
        from pipeline_model.passkinds.metaschedule.overrides_tvm import install_overrides
        from pipeline_model.passkinds.metaschedule.pass_tvm import make_tuning_pass

        install_overrides()
        report: dict[str, Any] = {}
        ctx.report = report
        target = ctx.target
        default = ctx.work_dir or default_work_dir(None, "", target if isinstance(target, dict) else str(target))
        return make_tuning_pass(pass_id, params, target, default, ctx.base_dir, ctx.emit, ctx.cancelled, report,
                                stop_early=ctx.should_stop_tuning, profile_fn=ctx.profile,
                                trusted=ctx.trust_custom_code, step_number=ctx.step_number, measure_fn=ctx.measure)

    def user_code(self, step: Any, base_dir: Optional[str], number: Optional[int] = None) -> list[UserCodeRef]:
        """A ``relax.MetaScheduleTuneTIR`` step's ``schedule_fn`` source (the user's search space)."""
        from pipeline_model.passkinds.metaschedule.focus import schedule_label

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

    def result_line(self, report: dict) -> str:
        """Records measured and PrimFuncs with a best schedule (:func:`.report.tuning_line`)."""
        return tuning_line(report)

    def export_step(self, pass_id: str, params: dict[str, Any], expr: emit.Expr, *, index: int,
                    label: str) -> ExportPiece:
        """A tuning step is preceded by ``install_meta_schedule_cpu(work_dir, options)`` (the helpers of
        :mod:`.script` are copied into the script; ``options``: :func:`.config.script_options`, every
        default filled in), so TVM's own pass measures real candidates on a CPU."""
        from pipeline_model.passkinds.metaschedule import script
        from pipeline_model.passkinds.metaschedule.config import TuningConfigError, script_options

        if pass_id not in TUNING_IDS:  # the apply step: the work folder's lines checked before TVM reads them
            piece = ExportPiece(helpers=[script.constants_source(), *map(emit.helper_source, script.SCRIPT_HELPERS)])
            wd = params.get("work_dir")
            piece.lines.append(f"check_work_dir({emit.render(emit.Lit(emit.check_literal(wd)) if wd else emit.Ref('work_dir'))})")
            rest = super().export_step(pass_id, params, expr, index=index, label=label)
            piece.helpers.extend(rest.helpers)
            piece.imports.extend(rest.imports)
            piece.lines.extend(rest.lines)
            if params.get("keep_wins"):
                self._export_keep(piece, [str(r) for r in params["keep_wins"]])
            return piece
        try:
            options = script_options(params, where=label)
        except TuningConfigError as exc:
            raise emit.EmitError(str(exc)) from None
        piece = ExportPiece(helpers=[script.constants_source(), *map(emit.helper_source, script.SCRIPT_HELPERS)])
        wd = params.get("work_dir")
        wd_src = emit.render(emit.Lit(emit.check_literal(wd)) if wd else emit.Ref("work_dir"))
        if pass_id == TUNE_TIR and is_budgeted(params):
            piece = self._export_budgeted(params, piece, wd_src, options, label)
        elif pass_id == TUNE_TIR and is_targeted(params):
            piece = self._export_targeted(params, piece, wd_src, options, index, label)
        else:
            seeded = "tune_tir = " if options["seed_rules"] else ""
            piece.lines.append(f"{seeded}install_meta_schedule_cpu({wd_src}, {emit.check_literal(options, 'options')!r})")
            rest = super().export_step(pass_id, params, expr, index=index, label=label)
            piece.helpers.extend(rest.helpers)
            piece.imports.extend(rest.imports)
            piece.lines.extend(rest.lines)
        if options["seed_rules"]:
            self._export_seeds(piece, wd_src, options)
        return piece

    @staticmethod
    def _export_seeds(piece: ExportPiece, wd_src: str, options: dict[str, Any]) -> None:
        """A step with ``seed_rules``: the tuning pass runs between :func:`.seed.seed_tuning_pass` (the app rules'
        schedules measured into the database; the rule classes and the helpers of :data:`.seed.SEED_HELPERS`
        copied verbatim) and :func:`.seed.print_seed_outcome`."""
        from pipeline_model.passkinds.metaschedule.seed import SEED_HELPERS

        rules = MetaScheduleKind._rule_objects(piece, options["seed_rules"])
        piece.helpers.extend(emit.helper_source(f) for f in SEED_HELPERS)
        opts = emit.check_literal(options, "options")
        piece.lines.append(f"pass_ = tvm.transform.Sequential([seed_tuning_pass(tune_tir, {wd_src}, {opts!r}, {rules}), "
                           f"pass_, print_seed_outcome(tune_tir, {wd_src})])")

    @staticmethod
    def _rule_objects(piece: ExportPiece, rule_names: list[str]) -> str:
        """The app rule classes of ``rule_names`` copied into ``piece`` (verbatim); returns the source of the list
        of their objects (``"[CPUMatmul(), ...]"``)."""
        from pipeline_model.passkinds.dlight.rules import rule_entry, rule_sources

        entries = [entry for entry in map(rule_entry, map(str, rule_names)) if entry is not None]
        piece.imports.append("tvm.s_tir.dlight")
        for entry in entries:
            piece.helpers.extend(src for src in rule_sources(entry.name) if src not in piece.helpers)
        names = [entry.attr for entry in entries]
        return "[" + ", ".join(f"{name}()" for name in names) + "]"

    @staticmethod
    def _export_keep(piece: ExportPiece, rule_names: list[str]) -> None:
        """An apply step with ``keep_wins``: the stock pass wrapped by :func:`.keep.keep_wins_pass` (the engine's
        decision, the project's latency statistics and the rule classes copied verbatim)."""
        from pipeline_model.passkinds.metaschedule.keep import keep_sources

        rules = MetaScheduleKind._rule_objects(piece, rule_names)
        piece.helpers.extend(src for src in keep_sources() if src not in piece.helpers)
        piece.lines.append(f"pass_ = keep_wins_pass({rules})(pass_)")

    @staticmethod
    def _export_budgeted(params: dict[str, Any], piece: ExportPiece, wd_src: str, options: dict[str, Any],
                         label: str) -> ExportPiece:
        """A time-budgeted ``MetaScheduleTuneTIR`` step: the script runs the engine's rounds
        (:func:`.plan.run_budgeted_tuning` and the helpers of :data:`.plan.PLAN_HELPERS`, copied verbatim)."""
        from pipeline_model.passkinds.metaschedule.focus import FocusError, focus_settings
        from pipeline_model.passkinds.metaschedule.plan import PLAN_HELPERS, plan_constants_source
        from pipeline_model.passkinds.metaschedule.script import TARGETED_HELPERS

        try:
            settings = focus_settings(params, label)
        except FocusError as exc:
            raise emit.EmitError(str(exc)) from None
        budget = {"time_budget_s": settings["time_budget_s"], "min_trials": settings["min_trials"]}
        piece.helpers.extend(emit.helper_source(f) for f in TARGETED_HELPERS)
        piece.helpers.append(plan_constants_source())
        piece.helpers.extend(emit.helper_source(f) for f in PLAN_HELPERS)
        opts = emit.check_literal(options, "options")
        piece.lines.append(f"tune_tir = install_meta_schedule_cpu({wd_src}, {opts!r})")
        piece.lines.append(f"pass_ = budgeted_tuning_pass(tune_tir, {wd_src}, {emit.check_literal(budget, 'settings')!r}, {opts!r})")
        return piece

    @staticmethod
    def _export_targeted(params: dict[str, Any], piece: ExportPiece, wd_src: str, options: dict[str, Any],
                         index: int, label: str) -> ExportPiece:
        """A targeted ``MetaScheduleTuneTIR`` step: the script profiles the step's input, computes the
        same choice and trial allocation as the engine (the helpers of
        :data:`.script.TARGETED_HELPERS`, copied verbatim) and tunes those PrimFuncs."""
        from pipeline_model.passkinds.metaschedule.focus import FocusError, focus_settings, schedule_label
        from pipeline_model.passkinds.metaschedule.script import TARGETED_HELPERS

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
        piece.helpers.extend(emit.helper_source(f) for f in TARGETED_HELPERS)
        trials = int(params.get("max_trials_global", TuningConfig.max_trials_global))
        piece.lines.append(f"tune_tir = install_meta_schedule_cpu({wd_src}, {emit.check_literal(options, 'options')!r})")
        piece.lines.append(f"pass_ = targeted_tuning_pass(tune_tir, {wd_src}, {emit.check_literal(settings, 'settings')!r}, "
                           f"{trials!r}, {source!r}, {schedule_label(index + 1)!r})")
        return piece


KIND = MetaScheduleKind()
