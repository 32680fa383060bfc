"""Error text of a failed build or run: TVM's whole message without backtrace lines."""

from __future__ import annotations

import re

_TRACE_LINE = re.compile(r"^\s*(File \"|Traceback \(|\d+: |at |\[bt\]|Stack trace)")


def error_text(exc: BaseException, limit: int = 4000) -> str:
    """The whole message of ``exc`` (every line), without Python/C++ backtrace lines.

    TVM's runtime errors span several lines ("Mismatched x.ndim on argument #1 when calling:" then the
    callee's signature and what was expected); the first or last line alone does not say what failed.
    """
    text = str(exc).strip() or type(exc).__name__
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip() and not _TRACE_LINE.match(ln)]
    joined = "\n".join(lines) if lines else text
    if len(joined) > limit:
        joined = joined[:limit] + " ..."
    return joined
