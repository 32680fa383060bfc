"""TVM-free HTML for a step's ``StepResult.report``, assembled from sections that pass kinds provide.

A :class:`ReportSection` renders one key of the report dict (``"dlight"``, ``"fusion"``,
``"tuning"`` ...); each pass-kind module declares its sections (:meth:`PassKind.report_sections`).
:func:`render_report` pops the known keys in section order (``rank``) and shows what is left as JSON.
This module is shared by the GUI (which passes its palette's error colour) and tests; it imports
neither Qt nor TVM.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from pipeline_model.i18n import translate

#: Colour of warnings when the caller does not give its palette's (``widgets.theme.status_css("error")``).
DEFAULT_ERROR_CSS = "#c62828"


def esc(value: Any) -> str:
    """``value`` as escaped HTML text."""
    return html.escape(str(value))


@dataclass(frozen=True)
class ReportSection:
    """Renders ``report[key]``: ``render(value, target, error_css) -> html`` ("" for nothing).

    Sections are shown in ``rank`` order, whatever the order of the report's keys.
    """

    key: str
    rank: int
    render: Callable[[Any, dict, str], str]


def warnings_html(value: Any, _target: dict, error_css: str) -> str:
    """The ``warnings`` section: plain sentences in a list."""
    if isinstance(value, list) and value:
        items = "".join(f"<li>{esc(w)}</li>" for w in value)
        word = esc(translate("StepReport", "Warning"))
        return f"<p style='color:{error_css}'><b>{word}</b>:</p><ul>{items}</ul>"
    return ""


#: Sections every kind's report may carry.
COMMON_SECTIONS = (ReportSection("warnings", 20, warnings_html),)


def render_report(report: dict, target: dict, sections: Iterable[ReportSection],
                  error_css: str = DEFAULT_ERROR_CSS) -> str:
    """HTML for ``report`` with ``sections`` ("" for an empty report); unknown keys are shown as JSON."""
    if not report:
        return ""
    rest = dict(report)
    parts: list[str] = []
    seen: set[str] = set()
    for section in sorted(sections, key=lambda s: s.rank):
        if section.key in seen:
            continue
        seen.add(section.key)
        value = rest.pop(section.key, None)
        if value is None:
            continue
        text = section.render(value, dict(target or {}), error_css)
        if text:
            parts.append(text)
    if rest:
        parts.append("<pre>" + esc(json.dumps(rest, indent=2, default=str)[:4000]) + "</pre>")
    return "".join(parts)
