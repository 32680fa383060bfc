"""A code editor/viewer: line numbers, pygments highlighting, monospace font, error and tint marks.

``CodeEditor`` is used for custom-pass source (editable) and, read-only, for TVMScript in the diff
view. Line numbers are the block numbers by default; the diff view supplies its own (a side of a
side-by-side diff has padding lines without a number) with :meth:`CodeEditor.set_line_numbers`.
A big read-only text can be put in piece by piece (:meth:`CodeEditor.set_text` with the first piece and
``pieces_follow``, then :meth:`CodeEditor.append_text`), so no single call holds the GUI thread long.
"""

from __future__ import annotations

import html

import io
import tokenize
from typing import Optional, Sequence

from PySide6.QtCore import QEvent, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFontDatabase, QPainter, QPaintEvent, QResizeEvent, QTextCursor, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QToolTip, QWidget

from widgets.highlight import QtPygmentsHighlighter, palette_is_dark
from widgets.theme import status_colour


class _LineNumberArea(QWidget):
    def __init__(self, editor: "CodeEditor") -> None:
        super().__init__(editor)
        self._editor = editor

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(self._editor.line_number_area_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        self._editor._paint_line_numbers(event)


class CodeEditor(QPlainTextEdit):
    """Plain-text code editor with line numbers and Python/TVMScript highlighting.

    - ``mark_error_line(n, message)``: tint line ``n`` (1-based) red, show ``message`` as its tooltip
      and scroll to it; ``clear_error()`` removes it.
    - ``set_line_backgrounds({block_index: QColor})``: full-width tints (used by the diff view);
      ``add_line_backgrounds`` adds more.
    - ``set_text(first_piece, pieces_follow=True)`` then ``append_text(piece)``: a big text in pieces.
    - ``set_line_numbers([n or None per block])``: custom gutter numbers.
    - ``set_read_only(bool)``.
    """

    error_marked = Signal(int, str)

    def __init__(self, parent: Optional[QWidget] = None, read_only: bool = False, highlight: bool = True) -> None:
        super().__init__(parent)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setStyleHint(font.StyleHint.Monospace)
        self.setFont(font)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setTabStopDistance(self.fontMetrics().horizontalAdvance(" ") * 4)
        self.highlighter: Optional[QtPygmentsHighlighter] = (
            QtPygmentsHighlighter(self.document()) if highlight else None
        )
        self._highlight_style = self.highlighter.style_name if self.highlighter is not None else ""
        self._numbers: Optional[list[Optional[int]]] = None
        self._numbers_max = 1
        self._backgrounds: dict[int, QColor] = {}
        self._error: Optional[tuple[int, str]] = None
        #: True from a key the user types here until the editor loses the focus (see :meth:`edit_in_progress`).
        self._typing = False
        self._area = _LineNumberArea(self)
        self.blockCountChanged.connect(self._update_margin)
        self.updateRequest.connect(self._update_area)
        self._update_margin()
        self.set_read_only(read_only)
        self.updateRequest.connect(lambda *_: self._highlight_visible())

    # -- API ---------------------------------------------------------------------------------------
    def set_read_only(self, read_only: bool) -> None:
        """Make the editor read-only (selectable, not editable) or editable."""
        self.setReadOnly(read_only)
        flags = Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        if not read_only:
            flags |= Qt.TextInteractionFlag.TextEditable
        self.setTextInteractionFlags(flags)

    def set_text(self, text: str, pieces_follow: bool = False) -> None:
        """Replace the whole text (clears the error mark, custom line numbers and tints).

        ``pieces_follow``: ``text`` is the first piece of a big text that :meth:`append_text` completes;
        a read-only editor then highlights the visible lines only, whatever this piece's size."""
        self._error = None
        self._numbers = None
        self._backgrounds = {}
        if self.highlighter is not None:
            self.highlighter.prepare_for_text(self.document(), len(text), detach=self.isReadOnly(),
                                              force=pieces_follow)
            self.highlighter.set_window(0, self._visible_block_count() + 40)
        self.setPlainText(text)
        self._apply_selections()
        self._highlight_visible()

    def append_text(self, text: str, notify: bool = True) -> None:
        """Append ``text`` as new lines after the last line.

        The scroll position, the selection, custom line numbers and tints stay as they are (the numbers and
        tints may already cover the lines to come); the undo history is dropped, as with :meth:`set_text`.
        Costs about what :meth:`set_text` costs for the same lines, and repaints only when the new lines
        are in view, so a big text can be put in by pieces across event-loop turns. ``notify=False``:
        more pieces follow at once; call :meth:`appended` after the last (the scroll bars lay out the
        last lines of the text each time)."""
        doc = self.document()
        last_old = doc.blockCount() - 1
        if self.highlighter is not None:
            # The last line's layout is redone when the new lines are attached to it: format it again.
            self.highlighter.forget_blocks_from(last_old)
        undo = doc.isUndoRedoEnabled()
        doc.setUndoRedoEnabled(False)
        layout = doc.documentLayout()
        # The plain-text layout asks for a repaint of the whole view on every change; lines added below
        # the view change nothing on screen but the scroll bar's range.
        blocked = layout.blockSignals(True)
        try:
            cursor = QTextCursor(doc)
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertText("\n" + text)
        finally:
            layout.blockSignals(blocked)
            doc.setUndoRedoEnabled(undo)
        if self._block_in_view(last_old):
            self.viewport().update()
            self._area.update()
        if notify:
            self.appended()

    def appended(self) -> None:
        """After :meth:`append_text` calls with ``notify=False``: the scroll bars follow the new size."""
        layout = self.document().documentLayout()
        layout.documentSizeChanged.emit(layout.documentSize())

    def _block_in_view(self, number: int) -> bool:
        first, last = self.visible_block_range()
        return number <= last

    def text(self) -> str:
        """The current text."""
        return self.toPlainText()

    def set_line_numbers(self, numbers: Optional[Sequence[Optional[int]]], largest: Optional[int] = None) -> None:
        """Gutter numbers per block (``None`` = no number); ``None`` restores 1..n.

        ``largest``: the biggest number the gutter will show (its width), when more numbers will follow
        with :meth:`extend_line_numbers`; by default the biggest of ``numbers``."""
        self._numbers = list(numbers) if numbers is not None else None
        if largest is not None:
            self._numbers_max = max(1, largest)
        else:
            self._numbers_max = max((n for n in self._numbers if n is not None), default=1) if self._numbers else 1
        self._update_margin()
        self._area.update()

    def extend_line_numbers(self, numbers: Sequence[Optional[int]]) -> None:
        """Gutter numbers of the blocks after those already numbered (text put in by pieces)."""
        if self._numbers is None:
            self._numbers = []
        start = len(self._numbers)
        self._numbers.extend(numbers)
        if self._block_in_view(start):
            self._area.update()

    def line_number_of_block(self, block: int) -> Optional[int]:
        """The number shown in the gutter for block index ``block``."""
        if self._numbers is None:
            return block + 1
        return self._numbers[block] if 0 <= block < len(self._numbers) else None

    def set_line_backgrounds(self, backgrounds: dict[int, QColor]) -> None:
        """Full-width background tints by block index (replaces the previous ones).

        Painted for the visible blocks only (cheap for thousands of tinted lines)."""
        self._backgrounds = dict(backgrounds)
        self.viewport().update()

    def add_line_backgrounds(self, backgrounds: dict[int, QColor]) -> None:
        """Add (or replace) the tints of some blocks, keeping the others (repaints when one is in view)."""
        self._backgrounds.update(backgrounds)
        if backgrounds and self._block_in_view(min(backgrounds)):
            self.viewport().update()

    def line_background(self, block: int) -> Optional[QColor]:
        """The tint of block ``block``, if any."""
        return self._backgrounds.get(block)

    def mark_error_line(self, line: int, message: str = "", scroll: bool = True) -> None:
        """Tint line ``line`` (1-based) as an error, use ``message`` as its tooltip and, with
        ``scroll``, put the cursor on it and scroll to it (``scroll=False`` while the user types,
        so the cursor stays where it is)."""
        line = max(1, min(line, self.blockCount()))
        self._error = (line, message)
        self._apply_selections()
        if scroll:
            block = self.document().findBlockByNumber(line - 1)
            cursor = QTextCursor(block)
            self.setTextCursor(cursor)
            self.centerCursor()
        self._area.update()
        if message:
            self.setToolTip("<p>" + html.escape(self.tr("line {line}: {message}")).format(  # Python's words as code
                line=line, message=f"<code>{html.escape(message, quote=False)}</code>") + "</p>")
        self.error_marked.emit(line, message)

    def clear_error(self) -> None:
        """Remove the error mark."""
        if self._error is None:
            return
        self._error = None
        self.setToolTip("")
        self._apply_selections()
        self._area.update()

    @property
    def error_line(self) -> Optional[int]:
        """The marked error line (1-based), or ``None``."""
        return self._error[0] if self._error else None

    def error_color(self) -> QColor:
        """Palette-aware error tint."""
        return QColor("#5c1f1f") if palette_is_dark(self.palette()) else QColor("#ffd6d6")

    # -- painting -----------------------------------------------------------------------------------
    def _apply_selections(self) -> None:
        selections = []
        if self._error is not None:
            block = self.document().findBlockByNumber(self._error[0] - 1)
            if block.isValid():
                sel = QTextEdit.ExtraSelection()
                sel.format.setBackground(self.error_color())
                sel.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
                if self._error[1]:
                    sel.format.setToolTip(self._error[1])
                sel.cursor = QTextCursor(block)
                selections.append(sel)
        self.setExtraSelections(selections)

    def _visible_block_count(self) -> int:
        return max(1, self.viewport().height() // max(1, self.fontMetrics().height()) + 1)

    def visible_block_range(self) -> tuple[int, int]:
        """First and last block numbers currently in the viewport."""
        first = self.firstVisibleBlock().blockNumber()
        return first, first + self._visible_block_count()

    def _highlight_visible(self) -> None:
        if self.highlighter is None or not self.highlighter.is_lazy():
            return
        first, last = self.visible_block_range()
        # The visible blocks only: lexing a long TVMScript line costs up to ~1 ms, so margins around
        # the viewport would make every show of a big diff stall the GUI; scrolling lexes what comes in.
        self.highlighter.ensure_highlighted(first, last + 1)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        """Paint the line tints of the visible blocks under the text, then the text."""
        if self._backgrounds:
            painter = QPainter(self.viewport())
            width = self.viewport().width()
            block = self.firstVisibleBlock()
            offset = self.contentOffset()
            bottom_limit = event.rect().bottom()
            while block.isValid():
                geom = self.blockBoundingGeometry(block).translated(offset)
                if geom.top() > bottom_limit:
                    break
                color = self._backgrounds.get(block.blockNumber())
                if color is not None and block.isVisible():
                    painter.fillRect(QRect(0, int(geom.top()), width, int(geom.height()) + 1), color)
                block = block.next()
            painter.end()
        super().paintEvent(event)

    def line_number_area_width(self) -> int:
        """Width of the gutter in pixels."""
        if self._numbers is not None:
            biggest = self._numbers_max
        else:
            biggest = max(1, self.blockCount())
        digits = max(3, len(str(biggest)))
        return 8 + self.fontMetrics().horizontalAdvance("9") * digits

    def _update_margin(self, _count: int = 0) -> None:
        width = self.line_number_area_width()
        # Re-setting the same margins lays the viewport out again, which asks for a full update, which
        # came back here: a big text's first piece went round that loop ~20 times.
        if self.viewportMargins().left() != width:
            self.setViewportMargins(width, 0, 0, 0)

    def _update_area(self, rect: QRect, dy: int) -> None:
        if dy:
            self._area.scroll(0, dy)
        else:
            self._area.update(0, rect.y(), self._area.width(), rect.height())
        if rect.contains(self.viewport().rect()):
            self._update_margin()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        cr = self.contentsRect()
        self._area.setGeometry(QRect(cr.left(), cr.top(), self.line_number_area_width(), cr.height()))

    def _paint_line_numbers(self, event: QPaintEvent) -> None:
        painter = QPainter(self._area)
        pal = self.palette()
        painter.fillRect(event.rect(), pal.color(pal.ColorRole.Window))
        painter.setPen(pal.color(pal.ColorRole.PlaceholderText))
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        height = self.fontMetrics().height()
        width = self._area.width() - 4
        while block.isValid() and top <= event.rect().bottom():
            bottom = top + round(self.blockBoundingRect(block).height())
            if block.isVisible() and bottom >= event.rect().top():
                number = self.line_number_of_block(block.blockNumber())
                if number is not None:
                    if self._error and number == self._error[0] and self._numbers is None:
                        painter.setPen(status_colour("error", pal))
                    painter.drawText(0, top, width, height, Qt.AlignmentFlag.AlignRight, str(number))
                    painter.setPen(pal.color(pal.ColorRole.PlaceholderText))
            block = block.next()
            top = bottom

    def changeEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt API
        """Follow a light/dark palette switch: the highlighting style and the error tint."""
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            hl = self.highlighter
            if hl is not None and hl._dark_setting is None and hl.style_name != self._highlight_style:
                hl.refresh_palette()
                self._highlight_style = hl.style_name
                self._highlight_visible()
            if self._error is not None:
                self._apply_selections()
            self._area.update()
        super().changeEvent(event)

    def event(self, ev) -> bool:  # noqa: ANN001
        """Show the error message when hovering the error line."""
        if ev.type() == ev.Type.ToolTip and self._error is not None:
            cursor = self.cursorForPosition(ev.pos() - self.viewport().pos())
            if cursor.blockNumber() + 1 == self._error[0] and self._error[1]:
                QToolTip.showText(ev.globalPos(), self._error[1], self)
                return True
            QToolTip.hideText()
            return True
        return super().event(ev)

    # -- is the user still typing? -----------------------------------------------------------------
    def edit_in_progress(self) -> bool:
        """True while the user is evidently in the middle of typing something: the editor has had keys typed
        into it since it last had the focus, and the cursor sits inside a string literal or an unclosed bracket
        (:func:`typing_inside`) — where every intermediate state may be valid Python (``os.remove("notes.txt``
        on the way to ``notes.txt.bak``, with or without auto-closed quotes). Leaving the editor, or moving the
        cursor out of the literal or the brackets, ends it. The app re-runs edited code automatically only when
        this is False (``app.run_session``)."""
        return self._typing and typing_inside(self.toPlainText(), self.textCursor().position())

    def focusOutEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt API
        self._typing = False
        super().focusOutEvent(event)

    def inputMethodEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt API
        self._typing = not self.isReadOnly()
        super().inputMethodEvent(event)

    # -- Python editing: indentation -----------------------------------------------------------------
    def keyPressEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt API
        """Enter keeps the line's indentation (one level more after a ``:``, one less after ``return``,
        ``pass``, ``raise``, ``break``, ``continue``); Tab inserts spaces to the next multiple of
        :data:`INDENT` (indents the selected lines); Shift+Tab dedents; Backspace in the indentation
        removes one level."""
        self._typing = not self.isReadOnly()
        if self.isReadOnly() or event.modifiers() & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier):
            super().keyPressEvent(event)
            return
        key = event.key()
        cursor = self.textCursor()
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            cursor.insertText("\n" + next_line_indent(cursor.block().text()[: cursor.positionInBlock()]))
            self.ensureCursorVisible()
        elif key == Qt.Key.Key_Tab and cursor.hasSelection() and "\u2029" in cursor.selectedText():
            self._shift_lines(+1)
        elif key == Qt.Key.Key_Tab:
            column = cursor.positionInBlock()
            cursor.insertText(" " * (INDENT - column % INDENT))
        elif key == Qt.Key.Key_Backtab:
            self._shift_lines(-1)
        elif key == Qt.Key.Key_Backspace and not cursor.hasSelection() and _in_indentation(cursor):
            column = cursor.positionInBlock()
            cursor.movePosition(QTextCursor.MoveOperation.Left, QTextCursor.MoveMode.KeepAnchor,
                                (column - 1) % INDENT + 1)
            cursor.removeSelectedText()
        else:
            super().keyPressEvent(event)

    def _shift_lines(self, direction: int) -> None:
        """Indent (+1) or dedent (-1) the lines of the selection (or the cursor's line) by one level."""
        cursor = self.textCursor()
        doc = self.document()
        first = doc.findBlock(cursor.selectionStart()).blockNumber()
        end_block = doc.findBlock(cursor.selectionEnd())
        last = end_block.blockNumber()
        if last > first and cursor.selectionEnd() == end_block.position():
            last -= 1  # a selection ending at a line's start does not include that line
        edit = QTextCursor(doc)
        edit.beginEditBlock()
        for number in range(first, last + 1):
            block = doc.findBlockByNumber(number)
            edit.setPosition(block.position())
            if direction > 0:
                edit.insertText(" " * INDENT)
            else:
                text = block.text()
                remove = len(text) - len(text.lstrip(" "))
                edit.movePosition(QTextCursor.MoveOperation.Right, QTextCursor.MoveMode.KeepAnchor, min(INDENT, remove))
                edit.removeSelectedText()
        edit.endEditBlock()


#: Spaces per indentation level of the custom-pass editor.
INDENT = 4
_DEDENT_AFTER = ("return", "pass", "raise", "break", "continue")


def next_line_indent(before_cursor: str) -> str:
    """The indentation of a new line started after ``before_cursor`` (the text of the line up to the cursor)."""
    indent = before_cursor[: len(before_cursor) - len(before_cursor.lstrip(" \t"))]
    code = before_cursor.split("#", 1)[0].rstrip()
    if code.endswith(":"):
        return indent + " " * INDENT
    word = code.strip().split(" ", 1)[0] if code.strip() else ""
    if word in _DEDENT_AFTER:
        return indent[:-INDENT] if len(indent) >= INDENT else ""
    return indent


def typing_inside(text: str, position: int) -> bool:
    """True when ``position`` (a character offset into ``text``) is inside a string literal or inside brackets
    that are still open before it: the Python text up to it does not tokenize to its end."""
    prefix = text[:position]
    try:
        for token in tokenize.generate_tokens(io.StringIO(prefix).readline):
            if token.type == tokenize.ERRORTOKEN and token.string[:1] in ("'", '"'):
                return True  # an unterminated one-line string (Python 3.11)
    except tokenize.TokenError:
        return True  # the end came inside brackets or a triple-quoted string
    except (SyntaxError, ValueError):  # an indentation error and the like: not a literal being typed
        return False
    return False


def _in_indentation(cursor: QTextCursor) -> bool:
    """True when the cursor is after only spaces on its line (and not at its start)."""
    before = cursor.block().text()[: cursor.positionInBlock()]
    return bool(before) and not before.strip(" ")
