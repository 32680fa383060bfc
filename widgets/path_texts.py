"""Why a file or folder may not be written (``pipeline_model.safe_write.OutputPathError``), as the user reads it
(issue 33): each refusal is read back as a message id (``widgets.engine_texts``), what was to be written and what the
path is in the interface's language, the paths in a code font."""

from __future__ import annotations

import html
from typing import Optional

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from widgets.engine_texts import code, match_form, shown_html

CONTEXT = "OutputPath"
#: What the app writes (``what`` of ``safe_write``), translated.
WHATS = {
    "script": QT_TRANSLATE_NOOP("OutputPath", "script"),
    "export folder": QT_TRANSLATE_NOOP("OutputPath", "export folder"),
    "reproducer folder": QT_TRANSLATE_NOOP("OutputPath", "reproducer folder"),
    "output file": QT_TRANSLATE_NOOP("OutputPath", "output file"),
    "output folder": QT_TRANSLATE_NOOP("OutputPath", "output folder"),
    "reproducer file": QT_TRANSLATE_NOOP("OutputPath", "reproducer file"),
}
#: What a path is (``pipeline_model.safe_files.kind_of``), translated.
KINDS = {
    "a symbolic link": QT_TRANSLATE_NOOP("OutputPath", "a symbolic link"),
    "a FIFO (named pipe)": QT_TRANSLATE_NOOP("OutputPath", "a FIFO (named pipe)"),
    "a character device": QT_TRANSLATE_NOOP("OutputPath", "a character device"),
    "a block device": QT_TRANSLATE_NOOP("OutputPath", "a block device"),
    "a socket": QT_TRANSLATE_NOOP("OutputPath", "a socket"),
    "a directory": QT_TRANSLATE_NOOP("OutputPath", "a directory"),
    "a regular file": QT_TRANSLATE_NOOP("OutputPath", "a regular file"),
}
_WHAT = "(" + "|".join(WHATS) + ")"
_KIND = r"(a symbolic link|a FIFO \(named pipe\)|a character device|a block device|a socket|a directory|a regular file)"

PATH_FORMS = (
    (_WHAT + " (.+): is " + _KIND + "; name a regular file",
     QT_TRANSLATE_NOOP("OutputPath", "{0} {1}: is {2}; name a regular file")),
    (_WHAT + " (.+): is " + _KIND + "; name a folder", QT_TRANSLATE_NOOP("OutputPath", "{0} {1}: is {2}; name a folder")),
    (_WHAT + " (.+): names a folder, not a file", QT_TRANSLATE_NOOP("OutputPath", "{0} {1}: names a folder, not a file")),
    (_WHAT + r" (.+): nothing is written under (\S+)",
     QT_TRANSLATE_NOOP("OutputPath", "{0} {1}: nothing is written under {2}")),
    (_WHAT + " (.+): the folder (.+) does not exist", QT_TRANSLATE_NOOP("OutputPath", "{0} {1}: the folder {2} does not exist")),
    (_WHAT + " (.+): the folder (.+) is not a folder", QT_TRANSLATE_NOOP("OutputPath", "{0} {1}: the folder {2} is not a folder")),
    (_WHAT + r" (.+): already exists and would be replaced; name a new file or allow overwriting \(--force\)",
     QT_TRANSLATE_NOOP("OutputPath", "{0} {1}: already exists and would be replaced; name a new file or allow "
                                     "overwriting")),
    (_WHAT + r" (.+?): (.+) already exists and would be replaced; choose a new folder or allow overwriting \(--force\)",
     QT_TRANSLATE_NOOP("OutputPath", "{0} {1}: {2} already exists and would be replaced; choose a new folder or allow "
                                     "overwriting")),
    (_WHAT + r" '(.*)': not a file name", QT_TRANSLATE_NOOP("OutputPath", "{0} {1}: not a file name")),
    (_WHAT + r" '(.*)': not a folder name", QT_TRANSLATE_NOOP("OutputPath", "{0} {1}: not a folder name")),
    # the system's reason (its strerror: "Permission denied"), as code
    (_WHAT + r" (.+?): ([^:]+)", QT_TRANSLATE_NOOP("OutputPath", "{0} {1}: {2}")),
)


def _arg(value: str) -> str:
    if value in WHATS:
        return html.escape(QCoreApplication.translate(CONTEXT, WHATS[value]))
    if value in KINDS:
        return html.escape(QCoreApplication.translate(CONTEXT, KINDS[value]))
    return code(value)


def shown_path_error(text: str) -> Optional[str]:
    """A refusal of ``safe_write`` as rich text in the interface's language (``None``: not one of them)."""
    if match_form(text, PATH_FORMS) is None:
        return None
    return shown_html(text, PATH_FORMS, CONTEXT, _arg)
