"""The pass-kind registry: which :class:`~pipeline_model.passkinds.base.PassKind` handles a pass id.

The built-in kinds (:data:`BUILTIN_MODULES`) are imported on first use; each module calls
:func:`register` for its kind. Extra kinds come from the modules named in the environment variable
``RPS_PASSKIND_MODULES`` (comma- or ``os.pathsep``-separated dotted module names, imported on first use
in every process that asks the registry: the GUI, the CLI and the engine, which inherits the
environment) or from :func:`register` called at run time.

TVM-free.
"""

from __future__ import annotations

import importlib
import os
import re
from typing import Optional

from pipeline_model.passkinds.base import PassKind
from pipeline_model.passkinds.report_html import COMMON_SECTIONS, ReportSection

#: Modules defining the built-in kinds (imported by :func:`load_kinds`).
BUILTIN_MODULES = (
    "pipeline_model.passkinds.relax_pass",
    "pipeline_model.passkinds.fuse_by_pattern",
    "pipeline_model.passkinds.metaschedule",
    "pipeline_model.passkinds.pipeline",
    "pipeline_model.passkinds.stage",
    "pipeline_model.passkinds.dlight",
    "pipeline_model.passkinds.custom_python",
    "pipeline_model.passkinds.bind_weights",
)

#: Environment variable naming extra modules that register kinds.
ENV_MODULES = "RPS_PASSKIND_MODULES"

_KINDS: list[PassKind] = []
_LOADED = False


class PassKindLoadError(ImportError):
    """A module named in ``RPS_PASSKIND_MODULES`` could not be imported; the message names it."""


def register(kind: PassKind) -> PassKind:
    """Register ``kind`` (an instance); a kind with the same ``name`` is replaced. Returns ``kind``."""
    for i, known in enumerate(_KINDS):
        if known.name == kind.name:
            _KINDS[i] = kind
            return kind
    _KINDS.append(kind)
    return kind


def unregister(name: str) -> None:
    """Remove the kind called ``name`` (tests)."""
    _KINDS[:] = [k for k in _KINDS if k.name != name]


def extra_module_names() -> list[str]:
    """The module names in ``RPS_PASSKIND_MODULES`` (empty when unset)."""
    raw = os.environ.get(ENV_MODULES, "")
    return [n.strip() for n in re.split(r"[,;:]", raw) if n.strip()]


def load_kinds() -> None:
    """Import the built-in kind modules and those in ``RPS_PASSKIND_MODULES`` (once per process).

    Raises :class:`PassKindLoadError` naming the module when an extra module cannot be imported.
    """
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    for name in BUILTIN_MODULES:
        importlib.import_module(name)
    for name in extra_module_names():
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - a plug-in's failure is reported with its name
            raise PassKindLoadError(f"{ENV_MODULES}: cannot import pass-kind module {name!r}: "
                                    f"{type(exc).__name__}: {exc}") from exc


def all_kinds() -> list[PassKind]:
    """All registered kinds, in the order :func:`kind_for` asks them (ascending ``priority``)."""
    load_kinds()
    return sorted(_KINDS, key=lambda k: k.priority)


def kind_for(pass_id: str) -> Optional[PassKind]:
    """The kind handling ``pass_id``, or ``None`` when no kind claims it."""
    for kind in all_kinds():
        if kind.matches(pass_id):
            return kind
    return None


def kind_name(pass_id: str) -> str:
    """The name of ``pass_id``'s kind, or ``""``."""
    kind = kind_for(pass_id)
    return kind.name if kind is not None else ""


def all_report_sections() -> list[ReportSection]:
    """The report sections of every registered kind plus the common ones."""
    sections: list[ReportSection] = list(COMMON_SECTIONS)
    for kind in all_kinds():
        sections.extend(kind.report_sections())
    return sections


def step_report_html(pass_id: str, report: dict, target: dict, error_css: Optional[str] = None) -> str:
    """HTML for a step's ``StepResult.report`` ("" when there is nothing to show), by its kind."""
    from pipeline_model.passkinds.report_html import DEFAULT_ERROR_CSS, render_report

    css = error_css or DEFAULT_ERROR_CSS
    kind = kind_for(pass_id)
    if kind is None:
        return render_report(report, target, all_report_sections(), css)
    return kind.report_html(report, target, css)
