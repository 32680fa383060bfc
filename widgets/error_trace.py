"""Where in the user's own code a failed step went wrong (Qt-free helpers for the error views).

The engine compiles a custom step's source under the pseudo file name ``<custom step N>`` and runs
pattern files with ``runpy`` under their real path, so its messages and tracebacks name the line:

- ``<custom step 3>: syntax error at line 4, column 9: expected ':': def f(mod)``
- ``<custom step 3>: line 2: y = x: NameError: name 'x' is not defined`` (running the source failed)
- ``File "<custom step 3>", line 5, in broken`` frames in the traceback (the pass itself failed)
- ``File "/path/patterns.py", line 4, in <module>`` for a pattern file.

:func:`locate_user_error` turns that into an :class:`ErrorLocation`; :func:`user_frames_first`
reorders a traceback so the user's frames come before the engine's.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Optional, Sequence

from PySide6.QtCore import QCoreApplication

#: Pseudo file names of custom steps' sources (``pipeline_model.passkinds.custom_python.custom_label``).
CUSTOM_LABEL_RE = re.compile(r"<custom step(?: \d+)?>")
_SYNTAX_RE = re.compile(r"(<custom step(?: \d+)?>): syntax error at line (\d+)(?:, column (\d+))?: (.*)", re.S)
_EXEC_RE = re.compile(r"(<custom step(?: \d+)?>): line (\d+)(?:: [^\n]*?)?: (\w+(?:Error|Exception|Exit|Interrupt)\b.*)", re.S)
_FRAME_RE = re.compile(r'^\s*File "([^"]+)", line (\d+)(?:, in (.*))?$')
_STEP_PREFIX_RE = re.compile(r"^step \d+ \([^)]*\) failed: ")


@dataclass(frozen=True)
class ErrorLocation:
    """A line in the user's code: ``file`` as the engine names it (``<custom step 3>`` or a path),
    ``line`` (1-based), ``column`` when known, and the short ``message`` to show at that line."""

    file: str
    line: int
    message: str
    column: Optional[int] = None

    @property
    def is_custom_source(self) -> bool:
        """True for a custom step's in-app source, false for a file on disk."""
        return bool(CUSTOM_LABEL_RE.fullmatch(self.file))

    def describe(self) -> str:
        """``line 5 of <custom step 3>`` / ``patterns.py line 4``."""
        column = QCoreApplication.translate("error_trace", ", column {0}").format(self.column) if self.column else ""
        if self.is_custom_source:
            return QCoreApplication.translate("error_trace", "line {0} of {1}").format(self.line, self.file) + column
        return QCoreApplication.translate("error_trace", "{0} line {1}").format(os.path.basename(self.file), self.line) + column


def _is_user_file(name: str, user_files: Sequence[str]) -> bool:
    if not user_files:
        return bool(CUSTOM_LABEL_RE.fullmatch(name))
    for user in user_files:
        if not user:
            continue
        if CUSTOM_LABEL_RE.fullmatch(user):
            # Step numbers shift when steps move; any custom label is the step's code.
            if CUSTOM_LABEL_RE.fullmatch(name):
                return True
            continue
        n, u = os.path.normpath(name), os.path.normpath(user)
        if n == u or (not os.path.isabs(u) and n.endswith(os.sep + u)):
            return True
    return False


def _frames(traceback_text: str) -> list[tuple[str, int, str, str]]:
    """``(file, line, function, source line)`` of every frame in a formatted traceback."""
    out: list[tuple[str, int, str, str]] = []
    lines = (traceback_text or "").splitlines()
    for i, text in enumerate(lines):
        m = _FRAME_RE.match(text)
        if not m:
            continue
        source = ""
        if i + 1 < len(lines) and not _FRAME_RE.match(lines[i + 1]) and lines[i + 1].startswith("    "):
            source = lines[i + 1].strip()
        out.append((m.group(1), int(m.group(2)), m.group(3) or "", source))
    return out


def short_error(error: str) -> str:
    """The engine's step error without the ``step N (pass) failed:`` prefix."""
    return _STEP_PREFIX_RE.sub("", (error or "").strip(), count=1)


def locate_user_error(error: str, traceback_text: str = "", user_files: Sequence[str] = ()) -> Optional[ErrorLocation]:
    """The line of the user's code a step error points at, or ``None``.

    ``user_files``: the file names that are the user's code (``<custom step N>`` labels, pattern
    file paths; empty = any custom step label). Syntax errors and errors while running the source
    come from the message; otherwise the innermost traceback frame in a user file is used.
    """
    text = short_error(error)
    m = _SYNTAX_RE.search(text)
    if m and _is_user_file(m.group(1), user_files):
        return ErrorLocation(m.group(1), int(m.group(2)), "SyntaxError: " + m.group(4).strip(), int(m.group(3)) if m.group(3) else None)
    m = _EXEC_RE.search(text)
    if m and _is_user_file(m.group(1), user_files):
        return ErrorLocation(m.group(1), int(m.group(2)), m.group(3).strip())
    user = [f for f in _frames(traceback_text) if _is_user_file(f[0], user_files)]
    if user:
        file, line, _func, _src = user[-1]
        return ErrorLocation(file, line, _exception_line(traceback_text) or _strip_label(text, file))
    return None


def _exception_line(traceback_text: str) -> str:
    """The first exception line of a (chained) traceback that is not the engine's wrapper."""
    lines = [ln for ln in (traceback_text or "").splitlines() if ln.strip() and not ln[0].isspace()
             and not ln.startswith(("Traceback", "The above exception", "During handling"))]
    return next((ln.strip() for ln in lines if "PassConfigError" not in ln), "")


def _strip_label(message: str, file: str) -> str:
    for prefix in (f"{file}: ",):
        if message.startswith(prefix):
            return message[len(prefix):]
    return message


def user_frames_first(traceback_text: str, user_files: Sequence[str] = ()) -> str:
    """``traceback_text`` with a short "in your code" section (the user's frames and the exception
    line) in front of the full traceback; unchanged when no frame is the user's."""
    text = (traceback_text or "").rstrip()
    if not text:
        return ""
    frames = [f for f in _frames(text) if _is_user_file(f[0], user_files)]
    if not frames:
        return text
    lines = [QCoreApplication.translate("error_trace", "In your code (innermost last):")]
    for file, line, func, source in frames:
        lines.append(f'  File "{file}", line {line}' + (f", in {func}" if func else ""))
        if source:
            lines.append(f"    {source}")
    exception = _exception_line(text)
    if exception:
        lines.append(exception)
    lines.append("")
    lines.append(QCoreApplication.translate("error_trace", "Full traceback:"))
    lines.append(text)
    return "\n".join(lines)


def engine_step_words(error: str) -> Optional[str]:
    """What TVM or Python said in an engine step error (``step 3 (relax.X) failed: ValueError: …``), without the
    engine's framing; ``None`` when ``error`` is not one (a text of the app's own, already translated)."""
    match = _STEP_PREFIX_RE.match(error or "")
    return error[match.end():] if match else None


def error_html(error: str, limit: int = 600) -> str:
    """A step's error as rich text: TVM's or Python's words (an engine step error) in a code font, the app's own
    (translated) texts as prose."""
    import html

    words = engine_step_words(error)
    if words is None:
        return html.escape(error[:limit], quote=False)
    return "<code>" + html.escape(words[:limit], quote=False).replace("\n", "<br>") + "</code>"

