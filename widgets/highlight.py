"""Pygments syntax highlighting for Qt text documents (Python/TVMScript), light and dark palettes.

:class:`QtPygmentsHighlighter` is a ``QSyntaxHighlighter`` that lexes each text block (line) with a
pygments lexer and maps token types to cached ``QTextCharFormat`` objects. The result of lexing a
line is cached by (line text, state), so the many repeated lines of a TVMScript module are lexed
once. Triple-quoted strings spanning lines are tracked with the block state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from pygments.token import String  # small (the lexers and styles are the costly part)
from PySide6.QtGui import (
    QColor, QFont, QGuiApplication, QPalette, QSyntaxHighlighter, QTextCharFormat, QTextDocument, QTextLayout,
)

if TYPE_CHECKING:  # pygments is imported when the first line is highlighted (an empty editor needs none of it)
    from pygments.lexer import Lexer
    from pygments.token import _TokenType

LIGHT_STYLE = "default"
DARK_STYLE = "monokai"

_STATE_NONE = -1
_STATE_PENDING = -2  # lazy mode: block not highlighted yet
#: Documents with more characters than this are highlighted lazily (visible blocks only).
LAZY_CHARS = 20000
_STATE_TRIPLE_DQ = 1
_STATE_TRIPLE_SQ = 2
_DELIMS = {_STATE_TRIPLE_DQ: '"""', _STATE_TRIPLE_SQ: "'''"}
_CACHE_LIMIT = 20000
#: Characters of one line that are lexed (the rest of a longer line stays plain).
MAX_LEX_CHARS = 1000


def palette_is_dark(palette: Optional[QPalette] = None) -> bool:
    """True when the (application) palette's base colour is dark."""
    if palette is None:
        app = QGuiApplication.instance()
        palette = app.palette() if app is not None else QPalette()
    return palette.color(QPalette.ColorRole.Base).lightnessF() < 0.5


class QtPygmentsHighlighter(QSyntaxHighlighter):
    """Highlights a ``QTextDocument`` with a pygments lexer (default: Python).

    ``dark=None`` picks the light or dark style from the application palette; call
    :meth:`set_dark` (or :meth:`refresh_palette`) when the palette changes.
    """

    def __init__(self, document: QTextDocument, lexer: str = "python", dark: Optional[bool] = None) -> None:
        super().__init__(document)
        # made on the first line lexed: building the Python lexer compiles its regular expressions (~0.2 s),
        # and the main window makes its editors before its first paint
        self._lexer_name = lexer
        self._lexer: Optional[Lexer] = None
        self._dark_setting = dark
        self._formats: dict[_TokenType, Optional[QTextCharFormat]] = {}
        self._line_cache: dict[tuple[int, str], tuple[list[tuple[int, int, _TokenType]], int]] = {}
        self._style_object: Any = None  # the pygments style, looked up when first needed (:attr:`_style`)
        self.enabled = True
        self._window = (0, 200)
        self._ensuring = False
        # Detached lazy mode (big read-only texts): Qt would call highlightBlock for every block of the
        # document on each setPlainText (~60 us each even when skipped); detached, only the blocks asked
        # for are formatted, directly in their layouts.
        self._detached: Optional[QTextDocument] = None
        self._formatted: set[int] = set()

    # -- lazy highlighting ---------------------------------------------------------------------------
    def is_lazy(self) -> bool:
        """True when the document is big enough to be highlighted on demand (visible blocks only)."""
        if self._detached is not None:
            return True
        return self.document() is not None and self.document().characterCount() > LAZY_CHARS

    def prepare_for_text(self, document: QTextDocument, chars: int, detach: bool, force: bool = False) -> None:
        """Before ``document`` gets a text of ``chars`` characters: with ``detach`` (a read-only view) and a
        big text (or ``force``: a big text comes in pieces), stop following the document (no per-block
        callbacks) and format visible blocks on demand (:meth:`ensure_highlighted`); otherwise follow it
        as usual."""
        if detach and (chars > LAZY_CHARS or force):
            if self.document() is not None:
                self.setDocument(None)
            self._detached = document
            self._formatted = set()
        elif self._detached is not None:
            self._detached = None
            self._formatted = set()
            self.setDocument(document)

    def _ensure_detached(self, first: int, last: int) -> int:
        doc = self._detached
        assert doc is not None
        done = 0
        block = doc.findBlockByNumber(max(0, first))
        state = _STATE_NONE
        while block.isValid() and block.blockNumber() <= last:
            number = block.blockNumber()
            if number not in self._formatted:
                text = block.text()
                ranges = []
                if self.enabled and text:
                    spans, state = self.lex_line(text, state)
                    for start, length, ttype in spans:
                        fmt = self.format_for(ttype)
                        if fmt is not None:
                            r = QTextLayout.FormatRange()
                            r.start, r.length, r.format = start, length, fmt
                            ranges.append(r)
                else:
                    state = state if state in _DELIMS else _STATE_NONE
                block.layout().setFormats(ranges)
                doc.markContentsDirty(block.position(), block.length())
                self._formatted.add(number)
                done += 1
            block = block.next()
        return done

    def forget_blocks_from(self, number: int) -> None:
        """Detached lazy mode: blocks ``number`` and after are formatted again when next asked for (their
        layouts were redone, e.g. lines appended to the last block)."""
        if self._formatted:
            self._formatted = {n for n in self._formatted if n < number}

    def set_window(self, first: int, last: int) -> None:
        """Block numbers to highlight eagerly in lazy mode (the next full pass uses this window)."""
        self._window = (first, last)

    def ensure_highlighted(self, first: int, last: int) -> int:
        """Highlight blocks ``first..last`` that lazy mode skipped; returns how many were done."""
        doc = self.document()
        if (doc is None and self._detached is None) or self._ensuring:
            return 0
        self._ensuring = True
        try:
            self._window = (first, last)
            if self._detached is not None:
                return self._ensure_detached(first, last)
            done = 0
            block = doc.findBlockByNumber(max(0, first))
            while block.isValid() and block.blockNumber() <= last:
                if block.userState() == _STATE_PENDING:
                    self.rehighlightBlock(block)  # continues through the following pending blocks
                    done += 1
                block = block.next()
            return done
        finally:
            self._ensuring = False

    def is_block_highlighted(self, number: int) -> bool:
        """False while lazy mode has not highlighted block ``number`` yet."""
        if self._detached is not None:
            return number in self._formatted
        doc = self.document()
        block = doc.findBlockByNumber(number) if doc is not None else None
        return block is not None and block.isValid() and block.userState() != _STATE_PENDING

    # -- style -----------------------------------------------------------------------------------
    @property
    def is_dark(self) -> bool:
        """Whether the dark style is in use."""
        return palette_is_dark() if self._dark_setting is None else self._dark_setting

    @property
    def _style(self) -> Any:
        """The pygments style of :attr:`style_name` (looked up on first use, again after a palette change)."""
        if self._style_object is None:
            from pygments.styles import get_style_by_name

            self._style_object = get_style_by_name(self.style_name)
        return self._style_object

    @property
    def style_name(self) -> str:
        """Name of the pygments style in use."""
        return DARK_STYLE if self.is_dark else LIGHT_STYLE

    def set_dark(self, dark: Optional[bool]) -> None:
        """Force the dark (True) or light (False) style, or follow the palette (None); rehighlights."""
        self._dark_setting = dark
        self.refresh_palette()

    def refresh_palette(self) -> None:
        """Re-read the palette / style setting, drop cached formats and rehighlight."""
        self._style_object = None  # looked up again for the new palette
        self._formats.clear()
        self._formatted = set()  # detached: the visible blocks are formatted again on demand
        self.rehighlight()

    def background_color(self) -> QColor:
        """The style's background colour (views may use it as their base colour)."""
        return QColor(self._style.background_color or ("#272822" if self.is_dark else "#ffffff"))

    def format_for(self, ttype: _TokenType) -> Optional[QTextCharFormat]:
        """The (cached) character format of a token type; ``None`` when the style leaves it plain."""
        if ttype in self._formats:
            return self._formats[ttype]
        style = self._style.style_for_token(ttype)
        fmt: Optional[QTextCharFormat] = QTextCharFormat()
        plain = True
        if style.get("color"):
            fmt.setForeground(QColor("#" + style["color"]))
            plain = False
        if style.get("bgcolor"):
            fmt.setBackground(QColor("#" + style["bgcolor"]))
            plain = False
        if style.get("bold"):
            fmt.setFontWeight(QFont.Weight.Bold)
            plain = False
        if style.get("italic"):
            fmt.setFontItalic(True)
            plain = False
        if style.get("underline"):
            fmt.setFontUnderline(True)
            plain = False
        if plain:
            fmt = None
        self._formats[ttype] = fmt
        return fmt

    # -- lexing ------------------------------------------------------------------------------------
    def lex_line(self, text: str, state: int) -> tuple[list[tuple[int, int, _TokenType]], int]:
        """Tokens ``(start, length, type)`` of one line given the previous line's state, and the new state."""
        key = (state, text)
        cached = self._line_cache.get(key)
        if cached is not None:
            return cached
        spans: list[tuple[int, int, _TokenType]] = []
        offset = 0
        new_state = _STATE_NONE
        if state in _DELIMS:
            end = text.find(_DELIMS[state])
            if end < 0:
                result = ([(0, len(text), String.Doc)], state)
                self._remember(key, result)
                return result
            spans.append((0, end + 3, String.Doc))
            offset = end + 3
        rest = text[offset:]
        # A function signature with hundreds of weights is one line of 10k+ characters: lex its start
        # (what a view shows) and leave the rest plain, or one such line costs tens of milliseconds.
        lexed = rest if len(rest) <= MAX_LEX_CHARS else rest[:MAX_LEX_CHARS]
        if self._lexer is None:
            from pygments.lexers import get_lexer_by_name

            self._lexer = get_lexer_by_name(self._lexer_name, stripnl=False, ensurenl=False)
        for pos, ttype, value in self._lexer.get_tokens_unprocessed(lexed):
            if value:
                spans.append((offset + pos, len(value), ttype))
        # an unclosed triple-quoted string continues on the next line
        for st, delim in _DELIMS.items():
            if rest.count(delim) % 2 == 1 and "#" not in rest[: rest.find(delim)]:
                start = offset + rest.rfind(delim)
                spans.append((start, len(text) - start, String.Doc))
                new_state = st
                break
        result = (spans, new_state)
        self._remember(key, result)
        return result

    def _remember(self, key: tuple[int, str], value: tuple[list[tuple[int, int, _TokenType]], int]) -> None:
        if len(self._line_cache) > _CACHE_LIMIT:
            self._line_cache.clear()
        self._line_cache[key] = value

    def highlightBlock(self, text: str) -> None:  # noqa: N802 (Qt override)
        """Qt hook: format one block."""
        previous = self.previousBlockState()
        if previous == _STATE_PENDING:
            previous = _STATE_NONE
        if self.is_lazy():
            number = self.currentBlock().blockNumber()
            if not (self._window[0] <= number <= self._window[1]):
                self.setCurrentBlockState(_STATE_PENDING)
                return
        if not self.enabled or not text:
            self.setCurrentBlockState(previous if previous in _DELIMS else _STATE_NONE)
            return
        spans, state = self.lex_line(text, previous)
        for start, length, ttype in spans:
            fmt = self.format_for(ttype)
            if fmt is not None:
                self.setFormat(start, length, fmt)
        self.setCurrentBlockState(state)


__all__ = ["QtPygmentsHighlighter", "palette_is_dark"]
