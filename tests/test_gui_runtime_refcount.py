"""The pinned PySide6 (6.11.3) must not leak references of None/True (6.12.0 did, until Python aborted).

No work-around is installed any more, so these loops would end in "Fatal Python error: none_dealloc"
(or a drifting reference count) on a defective wheel.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QLabel, QPlainTextEdit


class _Probe(QObject):
    number = Signal(int)
    flag = Signal(bool)
    payload = Signal(object)


def test_signals_slots_and_void_methods_keep_refcounts(qtbot) -> None:
    probe = _Probe()
    seen: list[int] = []
    probe.number.connect(lambda v: None)
    probe.flag.connect(lambda v: None)
    probe.payload.connect(lambda v: seen.append(1) if v is None else None)
    label = QLabel()
    editor = QPlainTextEdit()
    qtbot.addWidget(label)
    qtbot.addWidget(editor)
    none0, true0 = sys.getrefcount(None), sys.getrefcount(True)
    for i in range(20000):
        probe.number.emit(i)
        probe.flag.emit(True)
        probe.payload.emit(None)
        label.setText(str(i))
        editor.setReadOnly(i % 2 == 0)
        probe.setObjectName(f"p{i}")
    assert len(seen) == 20000
    assert sys.getrefcount(None) < 1 << 30, "a refcount work-around is installed again"
    assert abs(sys.getrefcount(None) - none0) < 200
    assert abs(sys.getrefcount(True) - true0) < 200


def test_no_refcount_workaround_module() -> None:
    import importlib.util

    assert importlib.util.find_spec("app.qt_compat") is None
