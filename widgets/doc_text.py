"""How the GUI shows a text that describes a pass or a parameter (issue 33).

The app's own descriptions are translated (``app.pass_texts`` registers them here with :func:`mark_own` once
translated) and read as prose. Everything else is TVM's docstring, which the app does not translate: it is shown as
TVM's words, in a code font (``<code>``), so a Chinese interface shows no English prose of its own."""

from __future__ import annotations

import html
import re

from PySide6.QtCore import QCoreApplication

#: Descriptions of the app's own passes and parameters, in the interface's language.
_OWN: set[str] = set()


def mark_own(text: str) -> None:
    """Register ``text`` (an own description, already translated) as prose."""
    if text:
        _OWN.add(text)


def is_own(text: str) -> bool:
    """Whether ``text`` is one of the app's own (translated) descriptions."""
    return text in _OWN


def labelled(label: str, value_html: str = "") -> str:
    """``label: value`` as rich text: ``label`` (plain, translated) escaped, ``value_html`` as it is, the colon
    the interface's language writes (full-width in Chinese)."""
    template = html.escape(QCoreApplication.translate("Labels", "{0}: {1}"), quote=False)
    return template.format(html.escape(label, quote=False), value_html).rstrip()


def own_html(text: str) -> str:
    """One of the app's own texts as rich text: escaped, its `quoted` code (formulas, op names) in a code font."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text)).replace("\n", "<br>")


def doc_html(text: str) -> str:
    """``text`` as rich text: an own description as :func:`own_html`, TVM's words in ``<code>`` (line breaks
    kept)."""
    if is_own(text):
        return own_html(text)
    return "<code>" + html.escape(text).replace("\n", "<br>") + "</code>"


def tvm_doc_heading() -> str:
    """The heading above TVM's docstring in a documentation pane."""
    return QCoreApplication.translate("doc_text", "TVM's documentation (as TVM writes it):")
