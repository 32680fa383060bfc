"""Work-arounds for defects of the pinned PySide6 build that the app must survive.

PySide6 6.12 (as pinned) has two reference-counting bugs, measured in this environment:

- every Python-side ``Signal.emit(...)`` returns ``True`` without a new reference, so each emit
  takes one reference from ``True``;
- every call of a Python slot from a C++ signal drops one reference too many on the slot's return
  value (``None`` for ordinary slots).

On Python 3.11 ``None``/``True``/``False`` are not immortal, so after enough signals the process
dies with "Fatal Python error: bool_dealloc / none_dealloc". :func:`protect_singletons` measures
the defect once and, only when present, raises the reference counts of those singletons by a large
constant (what Python 3.12 does for them anyway: they become effectively immortal).
"""

from __future__ import annotations

import ctypes
import sys

_BOOST = 1 << 40
_done = False


def _emit_leaks() -> bool:
    from PySide6.QtCore import QObject, Signal

    class _Probe(QObject):
        ping = Signal()

    probe = _Probe()
    before = sys.getrefcount(True)
    for _ in range(8):
        probe.ping.emit()
    return sys.getrefcount(True) < before


def _slot_return_leaks() -> bool:
    from PySide6.QtCore import QObject

    probe = QObject()
    calls: list[str] = []

    def _slot(name: str) -> None:
        calls.append(name)

    probe.objectNameChanged.connect(_slot)
    before = sys.getrefcount(None)
    for i in range(8):
        probe.setObjectName(f"p{i}")
    after = sys.getrefcount(None)
    probe.objectNameChanged.disconnect(_slot)
    return after < before - 4


def protect_singletons() -> bool:
    """Make ``None``/``True``/``False`` effectively immortal when the PySide6 defect is present.

    Idempotent. Returns True when the work-around was applied.
    """
    global _done
    if _done or sys.version_info >= (3, 12):
        return False
    _done = True
    if not (_emit_leaks() or _slot_return_leaks()):
        return False
    for obj in (None, True, False):
        ref = ctypes.c_ssize_t.from_address(id(obj))  # ob_refcnt is the first field of PyObject
        ref.value += _BOOST
    return True
