"""The desktop application: QApplication, main window, controllers, undo commands, engine workers."""

# PySide6 6.12 reference-count defect: see app/qt_compat.py. Applied once, before any signal flows.
from app.qt_compat import protect_singletons as _protect_singletons  # noqa: E402

_protect_singletons()
