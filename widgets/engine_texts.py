"""Texts the engine sends for display, as the user reads them (issue 33).

The engine writes its messages as fixed English framings around values: a step, a target kind, a file, or what TVM
or Python said. Each framing is a message id here: a pattern that reads its parameters back out of the engine's text
and the template (marked for ``lupdate``) the GUI shows in the interface's language. The parameters are identifiers,
paths or TVM's own words, and are shown in a code font; a text no form knows is the engine's or TVM's as it came and
is shown as code too (never as prose of the interface)."""

from __future__ import annotations

import html
import re
from typing import Callable, Optional, Sequence

from PySide6.QtCore import QCoreApplication

#: ``(pattern of the engine's whole text, template)``: the pattern's groups are the template's ``{0}``, ``{1}``, ….
Forms = Sequence[tuple[str, str]]


def code(value: str) -> str:
    """``value`` escaped, in a code font."""
    return f"<code>{html.escape(value, quote=False)}</code>"


def match_form(text: str, forms: Forms) -> Optional[tuple[str, tuple[str, ...]]]:
    """The template and parameters of the first form whose pattern reads all of ``text`` (``None``: no form)."""
    for pattern, template in forms:
        match = re.fullmatch(pattern, text, re.S)
        if match:
            return template, tuple(g or "" for g in match.groups())
    return None


def shown_html(text: str, forms: Forms, context: str, arg: Callable[[str], str] = code) -> str:
    """``text`` from the engine as rich text: the template of its form translated (in ``context``) with the
    parameters rendered by ``arg`` (in a code font); an unknown text as code."""
    found = match_form(text, forms)
    if found is None:
        return code(text)
    template, args = found
    return html.escape(QCoreApplication.translate(context, template)).format(*(arg(a) for a in args))


def shown_plain(text: str, forms: Forms, context: str) -> str:
    """``text`` from the engine as plain text: its form's template translated, the parameters as they are; an
    unknown text as it came."""
    found = match_form(text, forms)
    if found is None:
        return text
    template, args = found
    return QCoreApplication.translate(context, template).format(*args)
