"""The pass-kind registry: which :class:`~pipeline_model.passkinds.base.PassKind` handles a pass id.

A :class:`pipeline_model.registry.Registry` (:data:`KINDS`) of the entry-point group
``relax_pipeline_studio.pass_kinds`` (:mod:`pipeline_model.plugins`), loaded on first use in every process that
asks it (the GUI and the CLI for the specs' hooks, the engine for the TVM halves): the built-in kinds
(:data:`BUILTIN`, one folder package each, entries ``name = package:KIND``), the installed plug-ins' entry
points (a ``PassKind`` instance or subclass), then the development shortcut ``RPS_PASSKIND_MODULES`` (modules that
call :func:`register` when imported). :func:`register` adds a kind at run time (tests).

:func:`recipe_for` asks the kind of a pass id for its construction (:mod:`pipeline_model.emit`).

TVM-free.
"""

from __future__ import annotations

from typing import Any, Optional

from pipeline_model import emit, plugins
from pipeline_model.passkinds.base import PassKind
from pipeline_model.passkinds.report_html import COMMON_SECTIONS, ReportSection
from pipeline_model.registry import Registry

#: The built-in kinds, one folder package each, declared as entry points are (``name = module:attr``).
BUILTIN = tuple(f"{name} = pipeline_model.passkinds.{name}:KIND" for name in (
    "relax_pass", "fuse_by_pattern", "metaschedule", "pipeline", "stage", "dlight", "custom_python", "bind_weights",
    "sink_reshape", "expand_sigmoid", "expand_power", "fold_batch_norm", "quantized_int", "fold_constants",
    "channels_last", "winograd"))

#: Development shortcut: modules (comma-separated) imported as pass-kind plug-ins without installing them.
ENV_MODULES = plugins.DEV_VARIABLES[plugins.GROUP_PASS_KINDS]

#: Every registered kind by name, asked in ascending ``priority``.
KINDS: Registry[PassKind] = Registry("pass kind", plugins.GROUP_PASS_KINDS, BUILTIN, name_of=lambda k: k.name,
                                     order_of=lambda k: k.priority, member_type=PassKind)


def register(kind: PassKind) -> PassKind:
    """Register ``kind`` (an instance); a kind with the same ``name`` is replaced. Returns ``kind``."""
    return KINDS.add(kind)


def unregister(name: str) -> None:
    """Remove the kind called ``name`` (tests)."""
    KINDS.remove(name)


def load_kinds() -> None:
    """Load the built-in kinds and the plug-ins (once per process; a plug-in that cannot be loaded is recorded
    in :func:`pipeline_model.plugins.failures` and left out)."""
    KINDS.load()


def all_kinds() -> list[PassKind]:
    """All registered kinds, in the order :func:`kind_for` asks them (ascending ``priority``)."""
    return KINDS.members()


def kind_for(pass_id: str) -> Optional[PassKind]:
    """The kind handling ``pass_id``, or ``None`` when no kind claims it."""
    return KINDS.first(lambda kind: kind.matches(pass_id))


def kind_name(pass_id: str) -> str:
    """The name of ``pass_id``'s kind, or ``""``."""
    kind = kind_for(pass_id)
    return kind.name if kind is not None else ""


def unknown_pass_reason(pass_id: str) -> str:
    """Why ``pass_id`` is in no catalogue, for messages that name the step: a kind of the app claims it (misspelt,
    or from another TVM build), or none does (the plug-in of its namespace is not installed)."""
    kind = kind_for(pass_id)
    entry = KINDS.entry_of(kind.name) if kind is not None else None
    if kind is not None and (entry is None or entry.builtin):
        return "misspelt, or from another TVM build"
    if entry is not None:
        return f"misspelt, or not offered by the installed plug-in {entry.dist or entry.origin} {entry.version}".rstrip()
    namespace = pass_id.partition(".")[0] if "." in pass_id else pass_id
    return (f"no installed plug-in provides it: the plug-in of the {namespace!r} passes is not installed "
            "('main.py env' lists the plug-ins)")


def recipe_for(pass_id: str, params: dict[str, Any], *, step_number: Optional[int] = None) -> emit.Expr:
    """The construction of ``pass_id`` with (already validated) ``params`` as an expression tree
    (:mod:`pipeline_model.emit`), from the pass's kind. Raises :class:`~pipeline_model.emit.EmitError` for an
    id no kind knows how to build."""
    params = dict(params or {})
    if not emit.SAFE_PASS_ID.match(pass_id or ""):
        raise emit.EmitError(f"pass id {pass_id!r} has characters other than letters, digits, '_' and '.'")
    kind = kind_for(pass_id)
    if kind is None:
        raise emit.EmitError(f"no construction known for pass {pass_id!r}")
    return kind.recipe(pass_id, params, step_number=step_number)


def all_report_sections() -> list[ReportSection]:
    """The report sections of every registered kind plus the common ones."""
    sections: list[ReportSection] = list(COMMON_SECTIONS)
    for kind in all_kinds():
        sections.extend(kind.report_sections())
    return sections


def step_result_line(pass_id: str, report: Any) -> str:
    """What step ``pass_id`` produced, in one line (:meth:`~.base.PassKind.result_line`; "" when nothing)."""
    kind = kind_for(pass_id)
    return kind.result_line(report) if kind is not None and isinstance(report, dict) and report else ""


def step_report_html(pass_id: str, report: dict, target: dict, error_css: Optional[str] = None) -> str:
    """HTML for a step's ``StepResult.report`` ("" when there is nothing to show), by its kind."""
    from pipeline_model.passkinds.report_html import DEFAULT_ERROR_CSS, render_report

    css = error_css or DEFAULT_ERROR_CSS
    kind = kind_for(pass_id)
    if kind is None:
        return render_report(report, target, all_report_sections(), css)
    return kind.report_html(report, target, css, all_report_sections())
