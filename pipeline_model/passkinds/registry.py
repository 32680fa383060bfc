"""The pass-kind registry: which :class:`~pipeline_model.passkinds.base.PassKind` handles a pass id.

A :class:`pipeline_model.registry.Registry` (:data:`KINDS`). The built-in kinds (:data:`BUILTIN_MODULES`, one
folder package each) are imported on first use; each package calls :func:`register` for its kind. Extra
kinds come from the modules named in the environment variable ``RPS_PASSKIND_MODULES`` (comma-separated
dotted module names, imported on first use in every process that asks the registry: the GUI, the CLI and
the engine, which inherits the environment) or from :func:`register` called at run time.

:func:`recipe_for` asks the kind of a pass id for its construction (:mod:`pipeline_model.emit`).

TVM-free.
"""

from __future__ import annotations

from typing import Any, Optional

from pipeline_model import emit
from pipeline_model.passkinds.base import PassKind
from pipeline_model.passkinds.report_html import COMMON_SECTIONS, ReportSection
from pipeline_model.registry import Registry

#: Packages defining the built-in kinds (imported by :func:`load_kinds`), one folder each.
BUILTIN_MODULES = (
    "pipeline_model.passkinds.relax_pass",
    "pipeline_model.passkinds.fuse_by_pattern",
    "pipeline_model.passkinds.metaschedule",
    "pipeline_model.passkinds.pipeline",
    "pipeline_model.passkinds.stage",
    "pipeline_model.passkinds.dlight",
    "pipeline_model.passkinds.custom_python",
    "pipeline_model.passkinds.bind_weights",
    "pipeline_model.passkinds.sink_reshape",
    "pipeline_model.passkinds.expand_sigmoid",
    "pipeline_model.passkinds.fold_batch_norm",
    "pipeline_model.passkinds.quantized_int",
    "pipeline_model.passkinds.fold_constants",
)

#: Environment variable naming extra modules that register kinds.
ENV_MODULES = "RPS_PASSKIND_MODULES"


class PassKindLoadError(ImportError):
    """A module named in ``RPS_PASSKIND_MODULES`` could not be imported; the message names it."""


#: Every registered kind by name, asked in ascending ``priority``.
KINDS: Registry[PassKind] = Registry("pass-kind", BUILTIN_MODULES, ENV_MODULES, name_of=lambda k: k.name,
                                     order_of=lambda k: k.priority, load_error=PassKindLoadError)


def register(kind: PassKind) -> PassKind:
    """Register ``kind`` (an instance); a kind with the same ``name`` is replaced. Returns ``kind``."""
    return KINDS.add(kind)


def unregister(name: str) -> None:
    """Remove the kind called ``name`` (tests)."""
    KINDS.remove(name)


def extra_module_names() -> list[str]:
    """The module names in ``RPS_PASSKIND_MODULES`` (empty when unset)."""
    return KINDS.plugin_modules()


def load_kinds() -> None:
    """Import the built-in kind packages and the modules in ``RPS_PASSKIND_MODULES`` (once per process).

    Raises :class:`PassKindLoadError` naming the module when an extra module cannot be imported.
    """
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
