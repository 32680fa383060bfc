"""Why File ▸ Export Python Script refused (``pipeline_model.export.ExportError`` and the pass kinds' ``EmitError``),
as the user reads it (issue 33): the exporter's sentences are message ids (``widgets.engine_texts``) translated,
the step's pass id, names, values and what TVM or Python said in a code font; a refused output path is
``widgets.path_texts``'; a text no form knows is shown as code."""

from __future__ import annotations

import html
from typing import Optional

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from widgets.engine_texts import code, match_form, shown_html
from widgets.path_texts import shown_path_error

CONTEXT = "ExportScript"

#: What one step's export said (after ``step N (pass id): ``).
STEP_FORMS = (
    (r"unknown pattern table (.+)", QT_TRANSLATE_NOOP("ExportScript", "unknown pattern table {0}")),
    (r"no pattern table given \(table_prefix is empty; its default comes from the engine's catalogue\)",
     QT_TRANSLATE_NOOP("ExportScript", "no pattern table given (table_prefix is empty; its default comes from the "
                                       "engine's catalogue)")),
    (r"no construction known for pass (.+)", QT_TRANSLATE_NOOP("ExportScript", "no construction known for pass {0}")),
    (r"unknown pass", QT_TRANSLATE_NOOP("ExportScript", "unknown pass")),
    (r"not available: (.+)", QT_TRANSLATE_NOOP("ExportScript", "not available: {0}")),
    (r"pass id has characters other than letters, digits, '_' and '.'",
     QT_TRANSLATE_NOOP("ExportScript", "pass id has characters other than letters, digits, '_' and '.'")),
    (r"bad function name (.+)", QT_TRANSLATE_NOOP("ExportScript", "bad function name {0}")),
    (r"bad pipeline name (.+)", QT_TRANSLATE_NOOP("ExportScript", "bad pipeline name {0}")),
    (r"bad pass name (.+)", QT_TRANSLATE_NOOP("ExportScript", "bad pass name {0}")),
    (r"unknown backend stage (.+)", QT_TRANSLATE_NOOP("ExportScript", "unknown backend stage {0}")),
    (r"syntax error at line (\d+): (.+)", QT_TRANSLATE_NOOP("ExportScript", "syntax error at line {0}: {1}")),
    (r"schedule_fn: syntax error at line (\d+): (.+)",
     QT_TRANSLATE_NOOP("ExportScript", "schedule_fn: syntax error at line {0}: {1}")),
    (r"(?:step \d+: )?unknown DLight rule (.+)", QT_TRANSLATE_NOOP("ExportScript", "unknown DLight rule {0}")),
    (r"(?:step \d+: )?DLight rule (.+) is not in (\S+)", QT_TRANSLATE_NOOP("ExportScript", "DLight rule {0} is not in {1}")),
    (r"(?:step \d+: )?DLight rule (.+) is not installed \(no installed plug-in provides DLight rules of group (.+); "
     r"Help ▸ Environment lists the plug-ins\)",
     QT_TRANSLATE_NOOP("ExportScript", "DLight rule {0} is not installed (no installed plug-in provides DLight rules "
                                       "of group {1}; Help ▸ Environment lists the plug-ins)")),
)
#: The whole refusal.
FORMS = (
    (r"step (\d+) \((.+?)\): (.+)", QT_TRANSLATE_NOOP("ExportScript", "step {0} ({1}): {2}")),
    (r"model (.+?): (.+)", QT_TRANSLATE_NOOP("ExportScript", "model {0}: {1}")),
    (r"pipeline target: (.+)", QT_TRANSLATE_NOOP("ExportScript", "pipeline target: {0}")),
    (r"the exported script does not compile \(line (\d+): (.+)\)",
     QT_TRANSLATE_NOOP("ExportScript", "the exported script does not compile (line {0}: {1})")),
    *STEP_FORMS,
)


def _arg(value: str) -> str:
    if value.isdigit():
        return value
    if match_form(value, STEP_FORMS) is not None:
        return shown_html(value, STEP_FORMS, CONTEXT, _arg)
    return code(value)


def shown_export_error(text: str) -> Optional[str]:
    """An export refusal as rich text in the interface's language; ``None`` when no form knows it (the caller
    shows it as code)."""
    refused = shown_path_error(text)
    if refused is not None:
        return refused
    if match_form(text, FORMS) is None:
        return None
    return shown_html(text, FORMS, CONTEXT, _arg)


def export_failed_html(path: str, text: str) -> str:
    """The message box of a failed export: the refusal in the interface's language, else the app's sentence
    naming ``path`` with the exporter's or TVM's words as code."""
    shown = shown_export_error(text)
    if shown is not None:
        return f"<p>{shown}</p>"
    sentence = html.escape(QCoreApplication.translate("ExportScript", "Exporting {0} failed:")).format(code(path))
    return f"<p>{sentence}</p><pre style='white-space: pre-wrap'>{html.escape(text)}</pre>"
