"""Why a folder is not a reproducer (``pipeline_model.debugging.repro_folder.ReproducerFolderError``), as the user
reads it (issue 33): each of the reader's sentences is a message id (``widgets.engine_texts``) translated, the
paths, field names and what Python or the system said in a code font."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from widgets.engine_texts import code, shown_html
from widgets.path_texts import KINDS

CONTEXT = "ReproFolder"
_KIND = "(" + "|".join(k.replace("(", r"\(").replace(")", r"\)") for k in KINDS) + ")"
#: What a field of ``repro.json`` must be (``repro_folder._TYPE_NAMES``), translated.
TYPES = {
    "a string": QT_TRANSLATE_NOOP("ReproFolder", "a string"),
    "an object": QT_TRANSLATE_NOOP("ReproFolder", "an object"),
    "an integer": QT_TRANSLATE_NOOP("ReproFolder", "an integer"),
    "a list": QT_TRANSLATE_NOOP("ReproFolder", "a list"),
    "true or false": QT_TRANSLATE_NOOP("ReproFolder", "true or false"),
}
OR = QT_TRANSLATE_NOOP("ReproFolder", "{0} or {1}")

FORMS = (
    (r"reproducer folder (.+) is under (\S+) \(a system folder\); refused",
     QT_TRANSLATE_NOOP("ReproFolder", "reproducer folder {0} is under {1} (a system folder); refused")),
    (r"reproducer folder (.+) is " + _KIND + ", not a folder",
     QT_TRANSLATE_NOOP("ReproFolder", "reproducer folder {0} is {1}, not a folder")),
    (r"reproducer folder (.+?): ([^:]+)", QT_TRANSLATE_NOOP("ReproFolder", "reproducer folder {0}: {1}")),
    (r"cannot read (.+)", QT_TRANSLATE_NOOP("ReproFolder", "cannot read {0}")),
    (r"(.+): not a reproducer description \(a JSON object\); it holds (.+)",
     QT_TRANSLATE_NOOP("ReproFolder", "{0}: not a reproducer description (a JSON object); it holds {1}")),
    (r"(.+): the field '(.+)' is missing", QT_TRANSLATE_NOOP("ReproFolder", "{0}: the field {1} is missing")),
    (r"(.+): (\w+) must be (.+)", QT_TRANSLATE_NOOP("ReproFolder", "{0}: {1} must be {2}")),
    (r"(.+): kind ('.*') is not one of (.+)", QT_TRANSLATE_NOOP("ReproFolder", "{0}: kind {1} is not one of {2}")),
    (r"(.+): step_index (-?\d+) is out of range", QT_TRANSLATE_NOOP("ReproFolder", "{0}: step_index {1} is out of range")),
    (r"(.+): pieces\[(\d+)\] must be an object of lists of strings",
     QT_TRANSLATE_NOOP("ReproFolder", "{0}: pieces[{1}] must be an object of lists of strings")),
    (r"(.+): line (\d+): not valid JSON \((.+)\)", QT_TRANSLATE_NOOP("ReproFolder", "{0}: line {1}: not valid JSON ({2})")),
    (r"(.+): nested too deeply to be a reproducer description",
     QT_TRANSLATE_NOOP("ReproFolder", "{0}: nested too deeply to be a reproducer description")),
    (r"(.+): line (\d+): not valid Python \((.+)\)",
     QT_TRANSLATE_NOOP("ReproFolder", "{0}: line {1}: not valid Python ({2})")),
    (r"(.+): cannot be parsed \(nested too deeply, or not Python text\)",
     QT_TRANSLATE_NOOP("ReproFolder", "{0}: cannot be parsed (nested too deeply, or not Python text)")),
)


def _arg(value: str) -> str:
    if value in KINDS:
        return html.escape(QCoreApplication.translate("OutputPath", KINDS[value]))
    if value.isdigit():
        return value
    parts = value.split(" or ")
    if all(p in TYPES for p in parts):
        joined = QCoreApplication.translate(CONTEXT, OR)
        out = html.escape(QCoreApplication.translate(CONTEXT, TYPES[parts[0]]))
        for p in parts[1:]:
            out = html.escape(joined).format(out, html.escape(QCoreApplication.translate(CONTEXT, TYPES[p])))
        return out
    return code(value)


def shown_repro_error(text: str) -> str:
    """A reproducer folder's refusal as rich text in the interface's language (an unknown text as code)."""
    return shown_html(text, FORMS, CONTEXT, _arg)


#: What a reproducer expects, by kind (``{0}``, ``{1}``: values).
EXPECTED = {
    "crash_after": QT_TRANSLATE_NOOP("ReproFolder", "the process dies with signal {0} when the module after the step "
                                                    "is built and run"),
    "crash": QT_TRANSLATE_NOOP("ReproFolder", "the process dies with signal {0} while the step runs"),
    "hang": QT_TRANSLATE_NOOP("ReproFolder", "the step does not finish within {0} s"),
    "numeric": QT_TRANSLATE_NOOP("ReproFolder", "the outputs before and after the step differ beyond rtol {0}, "
                                                "atol {1} × max|ref|"),
    "build": QT_TRANSLATE_NOOP("ReproFolder", "building or running the module after the step fails"),
}


def expected_html(expected: dict[str, Any]) -> str:
    """What a reproducer expects (its ``EXPECTED``; the words of
    :func:`pipeline_model.debugging.reproducer.describe_expected`) as rich text in the interface's language; an
    expected error is TVM's or Python's line, as code."""
    from pipeline_model.debugging import reproducer

    kind = expected.get("kind")
    key = {reproducer.KIND_CRASH: "crash_after" if expected.get("run_after") else "crash", reproducer.KIND_HANG: "hang",
           reproducer.KIND_NUMERIC: "numeric", reproducer.KIND_BUILD: "build"}.get(str(kind))
    if key is None:
        return code(reproducer.describe_expected(expected))
    values = {"crash_after": ("signal",), "crash": ("signal",), "hang": ("timeout",), "numeric": ("rtol", "atol"),
              "build": ()}[key]
    text = html.escape(QCoreApplication.translate(CONTEXT, EXPECTED[key]), quote=False)
    return text.format(*(code(str(expected.get(v))) for v in values))
