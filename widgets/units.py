"""Human labels for durations, shared by every panel (step list, run panel, tuning panel, nested passes).

:func:`format_duration_ms` picks the unit: ``0.4 ms``, ``12 ms``, ``1.25 s``, ``13.0 s``, ``2 min 5 s``,
``1 h 3 min`` — never an exponent (``1.3e+04 ms``). Units go through Qt's translation system.
"""

from __future__ import annotations

import math
from typing import Optional

from PySide6.QtCore import QCoreApplication


def _tr(text: str) -> str:
    return QCoreApplication.translate("units", text)


def format_duration_ms(ms: Optional[float], missing: str = "–") -> str:
    """A compact duration label for ``ms`` milliseconds (``missing`` for ``None``/NaN/negative)."""
    if ms is None or not isinstance(ms, (int, float)) or math.isnan(ms) or ms < 0:
        return missing
    if ms < 10:
        return _tr("{0} ms").format(f"{ms:.1f}")
    if ms < 1000:
        return _tr("{0} ms").format(f"{ms:.0f}")
    seconds = ms / 1000.0
    if seconds < 10:
        return _tr("{0} s").format(f"{seconds:.2f}")
    if seconds < 60:
        return _tr("{0} s").format(f"{seconds:.1f}")
    total = int(round(seconds))
    if total < 3600:
        minutes, secs = divmod(total, 60)
        return _tr("{0} min {1} s").format(minutes, secs)
    hours, rest = divmod(total, 3600)
    return _tr("{0} h {1} min").format(hours, rest // 60)


def format_duration_s(seconds: Optional[float], missing: str = "–") -> str:
    """:func:`format_duration_ms` for a value in seconds."""
    return format_duration_ms(None if seconds is None else float(seconds) * 1000.0, missing)
