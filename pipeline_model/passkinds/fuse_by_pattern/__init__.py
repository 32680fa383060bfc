"""Kind ``fuse_by_pattern``: ``relax.FuseOpsByPattern`` with a registered pattern table or a user pattern file.

The pattern file is the user's Python code (it needs trust, like a custom step, and its lines are
where errors point). Before the run, a step that cannot work as configured (a table without
patterns, ``annotate_codegen`` for a codegen this TVM build lacks) gets a warning; after the step,
``report["fusion"]`` says which bindings went into which composite/offloaded function.

Files of this kind: ``__init__.py`` (spec, recipe, hooks, report; TVM-free), ``tables.py`` (the pattern tables),
``script.py`` (:func:`~.script.load_pattern_file`, called by the engine and copied into exported scripts) and
``patterns_tvm.py`` (engine half: table availability, preflight, fusion report).
"""

from __future__ import annotations

from typing import Any, Optional

from pipeline_model import emit
from pipeline_model.i18n import translate
from pipeline_model.passkinds.base import (
    PassKind,
    UserCodeRef,
    read_text_or_comment,
    resolve_user_path,
)
from pipeline_model.passkinds.context import PassBuildContext, PassConfigError
from pipeline_model.passkinds.fuse_by_pattern.tables import PATTERN_TABLE_MODULES
from pipeline_model.passkinds.report_html import ReportSection, esc

PASS_ID = "relax.FuseOpsByPattern"

#: The code exported scripts contain (and the engine calls): :func:`.script.load_pattern_file`.
SCRIPT_MODULE = "pipeline_model.passkinds.fuse_by_pattern.script"


def pattern_table_status() -> dict[str, dict[str, Any]]:
    """Pattern tables: prefix -> {"registered": bool, "patterns": n, "codegen": bool, "reason": str}
    (from :func:`.patterns_tvm.pattern_tables`, the one place that probes them). Engine side."""
    from pipeline_model.passkinds.fuse_by_pattern import patterns_tvm

    status: dict[str, dict[str, Any]] = {}
    for prefix, entry in patterns_tvm.pattern_tables().items():
        registered = entry["patterns"] > 0
        status[prefix] = {
            "registered": registered,
            "patterns": entry["patterns"],
            "codegen": entry["codegen"],
            "reason": "" if registered else entry["message"],
        }
    return status


def fuse_by_pattern_spec(base: Any) -> Any:
    """The curated ``relax.FuseOpsByPattern`` spec (``base``: the introspected one, for its doc). Engine side."""
    import inspect

    from tvm import relax

    from pipeline_model.catalogue import ParamSpec, PassSpec
    from pipeline_model.passkinds.catalogue_tvm import first_paragraph

    status = pattern_table_status()
    prefixes = [p for p, s in status.items() if s["registered"]]
    notes: dict[str, str] = {}
    for prefix, s in status.items():
        if not s["registered"]:
            notes[prefix] = f"unavailable: {s['reason']}"
        elif not s["codegen"]:
            notes[prefix] = (
                f"{s['patterns']} patterns; relax.ext.{prefix} codegen is not in this TVM build "
                "(annotate_codegen=True marks functions that RunCodegen cannot compile)"
            )
        else:
            notes[prefix] = f"{s['patterns']} patterns; codegen relax.ext.{prefix} available"
    missing = [p for p in prefixes if not status[p]["codegen"]]
    default_prefix = "cublas" if "cublas" in prefixes else (prefixes[0] if prefixes else "")
    params = [
        ParamSpec("pattern_source", "choice", "table", "Where the patterns come from: a registered pattern "
                  "table (by prefix) or a Python file defining 'patterns'.", choices=["table", "file"]),
        ParamSpec("table_prefix", "choice", default_prefix, "Registered pattern table (pattern name prefix).",
                  choices=prefixes, choice_notes=notes),
        ParamSpec("pattern_file", "file", "", "A .py file defining 'patterns': a list of "
                  "tvm.relax.transform.FusionPattern or (name, pattern[, check]) tuples built with tvm.relax.dpl "
                  "(running it needs trust, like custom code)."),
        ParamSpec("bind_constants", "bool", True, "Whether to keep bound constants in the grouped function."),
        ParamSpec("annotate_codegen", "bool", False, "Wrap composite functions in outer functions annotated "
                  "with the codegen name (the pattern prefix), for RunCodegen."),
        ParamSpec("entry_functions", "str_list", None, "Functions to start from (empty: all externally "
                  "visible ones).", nullable=True),
    ]
    warning = ""
    if missing:
        warning = "codegen not in this TVM build for: " + ", ".join(f"relax.ext.{p}" for p in missing) + \
            " (fusing works; with annotate_codegen, RunCodegen for those tables fails — the run says so " \
            "before it starts)"
    return PassSpec(
        id=PASS_ID,
        title="Fuse Ops By Pattern",
        category="Fusion",
        doc=base.doc if base else first_paragraph(inspect.getdoc(relax.transform.FuseOpsByPattern)),
        params=params,
        available=bool(prefixes) or True,
        warning=warning,
        tvm_name="tvm.relax.transform.FuseOpsByPattern",
    )


#: Warning for a user pattern file fused with ``annotate_codegen=true`` (issue 12: the build then fails).
USER_PATTERN_CODEGEN_WARNING = (
    "annotate_codegen is on for a user pattern file: the fused functions are marked for an external codegen "
    "that user patterns do not have, so the build will fail (TVM: \"VMShapeLower do not work for local "
    "functions\"). Switch annotate_codegen off to get composite functions that build and run"
)


def fuse_by_pattern_problems(params: dict[str, Any]) -> tuple[Optional[str], Optional[str]]:
    """``(fatal, warning)`` for a ``relax.FuseOpsByPattern`` step's (validated) parameters. Engine side.

    Fatal: the step cannot work (a table with no patterns in this TVM build, no pattern file given).
    Warning: it fuses, but ``annotate_codegen`` asks for a codegen ``relax.ext.<prefix>`` this TVM
    build does not have, so a later ``RunCodegen`` (or the build) fails. Both come from
    :func:`.patterns_tvm.preflight`, as plain sentences.
    """
    from pipeline_model.passkinds.fuse_by_pattern import patterns_tvm

    message = patterns_tvm.preflight(params)
    if not message and params.get("pattern_source") == "file" and params.get("annotate_codegen"):
        return None, USER_PATTERN_CODEGEN_WARNING
    if not message:
        return None, None
    if params.get("pattern_source", "table") == "table" and params.get("annotate_codegen"):
        entry = patterns_tvm.pattern_tables().get(str(params.get("table_prefix") or ""))
        if entry is not None and entry["patterns"] > 0 and not entry["codegen"]:
            return None, message
    return message, None


# ---- report sections (TVM-free) ------------------------------------------------------------------
def fusion_html(value: Any, _target: dict, _error_css: str) -> str:
    """``report["fusion"]``: which bindings went into which composite/offloaded function."""
    if not isinstance(value, dict):
        return ""
    groups = [g for g in value.get("groups") or [] if isinstance(g, dict)]
    items = []
    for g in groups:
        what = g.get("composite") or (translate("StepReport", "offloaded to {0}").format(g.get("codegen"))
                                      if g.get("codegen") else "")
        nodes = ", ".join(str(n) for n in g.get("nodes") or [])
        where = esc(translate("StepReport", "in"))
        items.append(f"<li><code>{esc(g.get('function', '?'))}</code>{' (' + esc(what) + ')' if what else ''}: "
                     f"{esc(nodes) or '–'} → <code>{esc(g.get('call', ''))}</code> {where} {esc(g.get('caller', ''))}</li>")
    title = esc(translate("StepReport", "Fused by pattern"))
    if groups:
        summary = translate("StepReport", "{0} group(s), highlighted in the graph:").format(len(groups))
        return f"<p><b>{title}</b>: {esc(summary)}</p><ul>{''.join(items)}</ul>"
    nothing = esc(translate("StepReport", "no binding matched the patterns."))
    return f"<p><b>{title}</b>: {nothing}</p>"


def fused_list_html(value: Any, _target: dict, _error_css: str) -> str:
    """Older reports (``fused`` / ``patterns`` / ``composites``): a list of composite functions."""
    if not (isinstance(value, list) and value):
        return ""
    items = []
    for entry in value:
        if isinstance(entry, dict):
            name = entry.get("function") or entry.get("name") or "?"
            pattern = entry.get("pattern") or entry.get("composite") or ""
            bindings = entry.get("bindings") or entry.get("ops") or []
            items.append(f"<li><code>{esc(name)}</code> {esc(pattern)}: {esc(', '.join(map(str, bindings)))}</li>")
        else:
            items.append(f"<li>{esc(entry)}</li>")
    title = esc(translate("StepReport", "Fused by pattern (highlighted in the graph):"))
    return f"<p><b>{title}</b></p><ul>{''.join(items)}</ul>"


def fusion_call_node_ids(graph: dict, report: dict) -> set[str]:
    """Ids of the graph nodes bound to the calls the step's ``report["fusion"]`` names
    (``groups[].call``: var names of the calls of the new composite/offloaded functions)."""
    fusion = report.get("fusion") if isinstance(report, dict) else None
    if not isinstance(fusion, dict):
        return set()
    calls = {str(g.get("call")) for g in fusion.get("groups") or [] if isinstance(g, dict) and g.get("call")}
    return {str(n["id"]) for n in graph.get("nodes", []) if n.get("kind", "binding") == "binding" and n.get("name") in calls}


class FuseByPatternKind(PassKind):
    """``relax.FuseOpsByPattern`` (see the module docstring)."""

    name = "fuse_by_pattern"
    priority = 10
    catalogue_order = 10

    def matches(self, pass_id: str) -> bool:
        return pass_id == PASS_ID

    def add_specs(self, cat: Any) -> None:
        cat.add(fuse_by_pattern_spec(cat.get(PASS_ID)))
        cat.meta.setdefault("not_buildable", {}).pop("FuseOpsByPattern", None)

    def recipe(self, pass_id: str, params: dict[str, Any], *, step_number: Optional[int] = None) -> emit.Expr:
        source = params.get("pattern_source", "table")
        if source == "file":  # the user's file, run by the script function the exported script holds too
            path = str(params.get("pattern_file") or "")
            patterns: emit.Expr = emit.ScriptCall(
                SCRIPT_MODULE, "load_pattern_file", (emit.Lit(path), emit.Ref("base_dir")),
                needs_trust="a pattern file is Python code; it runs only when custom code is trusted",
                what=f"pattern file {path}")
        else:
            prefix = str(params.get("table_prefix") or "")
            if not prefix:  # parameters as written, without the catalogue that holds the default (export --no-engine)
                raise emit.EmitError("no pattern table given (table_prefix is empty; its default comes from the "
                                     "engine's catalogue)")
            if prefix not in PATTERN_TABLE_MODULES:
                raise emit.EmitError(f"unknown pattern table {prefix!r}")
            patterns = emit.Call(
                "tvm.relax.backend.pattern_registry",
                "get_patterns_with_prefix",
                (emit.Lit(prefix),),
                imports=(PATTERN_TABLE_MODULES[prefix],),
            )
        kwargs = emit.keyword_args(params, ["bind_constants", "annotate_codegen", "entry_functions"])
        return emit.Call("tvm.relax.transform", "FuseOpsByPattern", (patterns,), kwargs)

    def build_pass(self, pass_id: str, params: dict[str, Any], expr: emit.Expr, ctx: PassBuildContext) -> Any:
        fatal, warning = fuse_by_pattern_problems(params)
        if fatal:
            raise PassConfigError(fatal)
        if warning:
            ctx.report.setdefault("warnings", []).append(warning)  # the runner warned before the run
        return super().build_pass(pass_id, params, expr, ctx)

    def run_preflight(self, pass_id: str, params: dict[str, Any]) -> Optional[str]:
        fatal, warning = fuse_by_pattern_problems(params)
        return fatal or warning

    def after_step(self, pass_id: str, before: Any, after: Any, report: dict[str, Any]) -> None:
        """``report["fusion"]``: which bindings (by the graph's var names) went into which
        composite/offloaded function (:func:`.patterns_tvm.fusion_report`)."""
        if after is None:
            return
        from pipeline_model.passkinds.fuse_by_pattern import patterns_tvm

        try:
            report["fusion"] = patterns_tvm.fusion_report(before, after)
        except Exception as exc:  # noqa: BLE001 - the report is extra; the fused module stands
            report["fusion"] = {"groups": [], "fused_nodes": {}, "error": f"{type(exc).__name__}: {exc}"}

    def environment(self) -> dict[str, Any]:
        """``pattern_tables``: every table with its pattern count, codegen and a plain message."""
        from pipeline_model.passkinds.fuse_by_pattern import patterns_tvm

        return {"pattern_tables": patterns_tvm.pattern_tables()}

    def report_sections(self) -> tuple[ReportSection, ...]:
        return (
            ReportSection("fusion", 30, fusion_html),
            ReportSection("fused", 40, fused_list_html),
            ReportSection("patterns", 41, fused_list_html),
            ReportSection("composites", 42, fused_list_html),
        )

    def user_code(self, step: Any, base_dir: Optional[str], number: Optional[int] = None) -> list[UserCodeRef]:
        """The pattern file of a ``pattern_source = "file"`` step (named as written and resolved)."""
        params = getattr(step, "params", None) or {}
        path = params.get("pattern_file")
        if params.get("pattern_source") != "file" or not path:
            return []
        path = str(path)
        full = resolve_user_path(path, base_dir)
        return [UserCodeRef(label=f"{step.pass_id} pattern file {full}", path=full, filenames=(path, full),
                            read=read_text_or_comment(full))]


KIND = FuseByPatternKind()
