"""Translation hook of the Qt-free core (TVM-free, Qt-free).

Texts the core renders for people (step report HTML of the pass kinds, the environment report's
problems) go through :func:`translate` with a literal context and text, so Qt's ``lupdate`` finds them
(``scripts/update_translations.sh`` scans these modules too). The GUI installs Qt's
``QCoreApplication.translate`` with :func:`set_translator` at start; without one (CLI, engine, tests)
texts stay in English. Error texts that come from TVM are never translated.
"""

from __future__ import annotations

from typing import Callable, Optional

_translator: Optional[Callable[[str, str], str]] = None


def set_translator(translator: Optional[Callable[[str, str], str]]) -> None:
    """Use ``translator(context, text) -> text`` for :func:`translate` (``None``: English)."""
    global _translator
    _translator = translator


def translate(context: str, text: str) -> str:
    """``text`` translated in ``context`` by the installed translator (unchanged without one)."""
    if _translator is None:
        return text
    try:
        return _translator(context, text) or text
    except Exception:  # noqa: BLE001 - a broken translator must never hide a text
        return text


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # noqa: N802 - the name Qt's lupdate looks for
    """Marks ``text`` for translation in ``context`` (lupdate finds it) and returns it unchanged; it is
    translated with :func:`translate` where it is shown."""
    return text


def translate_marked(context: str, text: str) -> str:
    """A text marked with :func:`QT_TRANSLATE_NOOP` (held in a table), translated where it is shown."""
    return translate(context, text)
