"""Visible texts of a window that were left in English in the zh_CN user interface (test helper).

:func:`untranslated` walks the visible widgets of a top-level window — labels, buttons, tabs, dock
titles, group boxes, menus and the rows of item views — and reports each text that (a) is, with its access
key removed, the English source of a zh_CN translation that differs from it, or (b) has no Chinese
character and reads as English prose (three or more words, one of them lower-case). Code views
(TVMScript, custom-pass source, the diff) and technical values (pass ids, shapes, file paths) are not prose
and are not flagged."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Iterable

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import (
    QAbstractButton, QAbstractItemView, QDockWidget, QGroupBox, QLabel, QMenu, QPlainTextEdit, QTabBar,
    QTextBrowser, QWidget,
)

TS = Path(__file__).resolve().parent.parent / "resources" / "translations" / "relax_pipeline_studio_zh_CN.ts"
_CJK = re.compile(r"[\u4e00-\u9fff]")
_WORDS = re.compile(r"\b[A-Za-z][a-z]+(?:\s+[A-Za-z][a-z]*){2,}\b")
_LOWER = re.compile(r"\b[a-z]{3,}\b")
_TAGS = re.compile(r"<[^>]+>")
_CODE = re.compile(r"<code>.*?</code>|<pre>.*?</pre>", re.S)


def _plain(text: str) -> str:
    return text.replace("&&", "\x00").replace("&", "").replace("\x00", "&").strip()


def english_sources() -> set[str]:
    """English sources of the zh_CN translations whose translation differs from them (access keys removed)."""
    out = set()
    for message in ET.parse(TS).getroot().iter("message"):
        source, translation = message.findtext("source") or "", message.find("translation")
        if translation is None or translation.get("type") in ("vanished", "obsolete", "unfinished"):
            continue
        if _plain(translation.text or "") != _plain(source) and len(_plain(source)) > 1:
            out.add(_plain(source))
    return out


def is_untranslated(text: str, sources: set[str]) -> bool:
    """Whether ``text`` (a visible text of the zh_CN interface) was left in English."""
    plain = _plain(_TAGS.sub(" ", _CODE.sub(" ", text)))
    if not plain:
        return False
    if plain in sources:
        return True
    for line in plain.splitlines():
        if _CJK.search(line):
            continue
        if any(_LOWER.search(m.group(0)) for m in _WORDS.finditer(line)) and not _technical(line):
            return True
    return False


def _technical(line: str) -> bool:
    """A line of code, a path or a traceback: not prose."""
    s = line.strip()
    return (s.startswith(("#", "File \"", "Traceback", "/", "def ", "import ", "from ", "return ", "@", "R.", "T."))
            or "(" in s and ")" in s and "=" in s or s.count("/") >= 2)


def visible_texts(window: QWidget) -> Iterable[tuple[str, str]]:
    """``(where, text)`` of the texts shown by ``window`` and its visible children (no code views)."""
    for w in [window, *window.findChildren(QWidget)]:
        if not w.isVisible() or isinstance(w, QPlainTextEdit):
            continue
        name = f"{type(w).__name__}({w.objectName()})"
        if isinstance(w, QLabel):
            yield name, w.text()
        elif isinstance(w, QAbstractButton):
            yield name, w.text()
        elif isinstance(w, QTabBar):
            for i in range(w.count()):
                yield name, w.tabText(i)
        elif isinstance(w, (QDockWidget,)):
            yield name, w.windowTitle()
        elif isinstance(w, QGroupBox):
            yield name, w.title()
        elif isinstance(w, QTextBrowser):
            yield name, w.toHtml() if w.objectName() != "nodeDetails" else ""
        elif isinstance(w, QAbstractItemView) and w.model() is not None:
            yield from ((name, t) for t in _model_texts(w.model(), QModelIndex(), 200))
    if hasattr(window, "menuBar"):
        stack: list[QMenu] = [a.menu() for a in window.menuBar().actions() if a.menu() is not None]
        while stack:
            menu = stack.pop()
            yield "menu", menu.title()
            for act in menu.actions():
                if act.menu() is not None:
                    stack.append(act.menu())
                elif not act.isSeparator():
                    yield "menu", act.text()


def _model_texts(model, parent: QModelIndex, limit: int) -> Iterable[str]:
    for row in range(min(model.rowCount(parent), limit)):
        for col in range(model.columnCount(parent)):
            index = model.index(row, col, parent)
            value = index.data(Qt.ItemDataRole.DisplayRole)
            if isinstance(value, str):
                yield value
            if col == 0 and model.hasChildren(index):
                yield from _model_texts(model, index, limit)


def untranslated(window: QWidget, allowed: Iterable[str] = ()) -> list[tuple[str, str]]:
    """The visible texts of ``window`` left in English (see the module docstring); ``allowed``: texts that
    stay in English (TVM's own pass docstrings)."""
    sources = english_sources()
    keep = {a.strip() for a in allowed}
    return [(where, text) for where, text in visible_texts(window)
            if text and text.strip() not in keep and is_untranslated(text, sources)]
