"""A pipeline step whose pass no catalogue knows, as the user reads why (issue 33): the app's note
(``app.pipeline_editor.PipelineEditor.refresh_placeholders``) read back as a message id
(``widgets.engine_texts``), the pass id, plug-in and command in a code font."""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP

from widgets.engine_texts import shown_html

CONTEXT = "PassCatalogue"
#: A step whose pass no catalogue knows (``PipelineEditor.refresh_placeholders``: ``unknown pass 'id': reason`` with
#: the reason of ``pipeline_model.passkinds.registry.unknown_pass_reason``), as message ids.
UNKNOWN_PASS_FORMS = (
    (r"unknown pass '(.+)': misspelt, or from another TVM build",
     QT_TRANSLATE_NOOP("PassCatalogue", "Unknown pass {0}: misspelt, or from another TVM build")),
    (r"unknown pass '(.+)': misspelt, or not offered by the installed plug-in (.+)",
     QT_TRANSLATE_NOOP("PassCatalogue", "Unknown pass {0}: misspelt, or not offered by the installed plug-in {1}")),
    (r"unknown pass '(.+)': no installed plug-in provides it: the plug-in of the '(.+)' passes is not installed "
     r"\('(main\.py env)' lists the plug-ins\)",
     QT_TRANSLATE_NOOP("PassCatalogue", "Unknown pass {0}: no installed plug-in provides it: the plug-in of the {1} "
                                        "passes is not installed ({2} lists the plug-ins)")),
)


def unknown_pass_html(placeholder: str) -> str:
    """A step's unknown-pass note as rich text in the interface's language, the names in a code font."""
    return shown_html(placeholder, UNKNOWN_PASS_FORMS, CONTEXT)
