"""Automatic re-runs never execute code the user is still typing (issue 32).

Code typed into the custom-pass editor is the user's own and runs without a consent prompt — so an automatic
re-run after each keystroke would run every intermediate state: ``os.remove("notes.txt`` on the way to
``os.remove("notes.txt.bak")`` is valid Python once quotes and brackets are closed for the user, and a pause to
think would delete the wrong file; a half-typed ``os.abort()`` crashes the engine mid-edit.

:class:`CodeGate` holds automatic re-runs while a code parameter (``kind == "code"``: a custom step's ``source``)
differs from the text the last run ran. The edited code is released to an automatic re-run only when

* it has not changed for :data:`CODE_PAUSE_MS` (each edit starts the wait again),
* it parses (``ast.parse``; a syntax error is marked in the editor instead, nothing runs), and
* the edit is not still being typed: the editor (:meth:`widgets.code_editor.CodeEditor.edit_in_progress`) has
  the cursor outside any string literal and any open bracket, or the user left it. A pause alone never
  completes an edit; while it is in progress the gate looks again every :data:`CODE_PAUSE_MS`, so moving the
  cursor out of the literal or leaving the editor releases it then.

Run (F5) and Run to run whatever is there at once (the user asked) and settle every code parameter.
"""

from __future__ import annotations

import ast
from typing import Any, Callable, Optional

from PySide6.QtCore import QObject, QTimer

from app.context import AppContext
from app.i18n import tr

#: How long edited code must stay unchanged before an automatic re-run may run it (milliseconds).
CODE_PAUSE_MS = 1500


class CodeGate(QObject):
    """Decides when an automatic re-run may run edited code; see the module docstring. ``release()`` is
    called when it may (the session's automatic re-run)."""

    def __init__(self, ctx: AppContext, release: Callable[[], None]) -> None:
        super().__init__(ctx)
        self.ctx = ctx
        self._release = release
        #: ``(uid, name) -> text`` of every code parameter as the last run (or the document's load) had it.
        self._ran: dict[tuple[str, str], str] = {}
        #: The code editor showing parameter ``name`` of step ``uid``, or ``None`` (set by the main window).
        self.editor_of: Callable[[str, str], Any] = lambda _uid, _name: None
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.timeout.connect(self._look)
        ctx.document.document_replaced.connect(self.settle)
        self.settle()

    def code_params(self) -> dict[tuple[str, str], str]:
        """``(uid, name) -> text`` of the document's code parameters."""
        out: dict[tuple[str, str], str] = {}
        for step in self.ctx.doc.steps:
            spec = self.ctx.catalogue.get(step.pass_id)
            for param in (spec.params if spec is not None else []):
                if param.kind == "code":
                    value = step.params.get(param.name, param.default)
                    out[(step.uid, param.name)] = "" if value is None else str(value)
        return out

    def unsettled(self) -> dict[tuple[str, str], str]:
        """The code parameters whose text no run has run yet (the user edited them since)."""
        return {key: text for key, text in self.code_params().items() if self._ran.get(key) != text}

    def settle(self) -> None:
        """Every code parameter as it is now counts as run (a run was submitted; a document was opened)."""
        self.timer.stop()
        self._ran = self.code_params()

    def hold(self) -> bool:
        """``True`` when an automatic re-run must wait for edited code (the wait is started); ``False`` when
        nothing edited is pending."""
        if not self.unsettled():
            return False
        self.timer.start(CODE_PAUSE_MS)
        return True

    def _look(self) -> None:
        pending = self.unsettled()
        if not pending:
            self._release()
            return
        for (uid, name), text in pending.items():
            problem = _parse_problem(text)
            editor = self.editor_of(uid, name)
            if problem is not None:
                if editor is not None and hasattr(editor, "mark_error_line"):
                    editor.mark_error_line(problem[0], problem[1], scroll=False)
                self.ctx.status(tr("The edited code does not parse yet (line {0}); it runs once it does, or on "
                                   "Run (F5).").format(problem[0]), 6000)
                return  # the next edit starts the wait again
            if editor is not None and editor.edit_in_progress():
                self.ctx.status(tr("Still typing in a string or brackets: the edited code runs when the cursor "
                                   "leaves them or the editor, or on Run (F5)."), 4000)
                self.timer.start(CODE_PAUSE_MS)  # look again: the user's move, not the pause, completes it
                return
        self._release()


def _parse_problem(text: str) -> Optional[tuple[int, str]]:
    """``(line, message)`` when ``text`` is not valid Python, else ``None``."""
    try:
        ast.parse(text)
    except SyntaxError as exc:
        return int(exc.lineno or 1), str(exc.msg)
    except (ValueError, RecursionError, MemoryError) as exc:
        return 1, str(exc) or type(exc).__name__
    return None
