"""Edit ▸ Preferences…: the engine's watchdog limit (per step) and memory limit, remembered in the settings
and applied to the ``EngineClient`` the worker makes (see :func:`app.settings.engine_options`), and the RPC
tracker whose devices the target picker lists (:func:`app.settings.rpc_tracker`)."""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QSpinBox, QWidget

from app import settings as app_settings_mod
from app.i18n import tr


class PreferencesDialog(QDialog):
    """Engine limits: seconds one step may run, MiB the engine may use (0: no limit)."""

    def __init__(self, settings: QSettings, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.setWindowTitle(tr("Preferences"))
        self.timeout = QSpinBox(self)
        self.timeout.setRange(1, 7 * 24 * 3600)
        self.timeout.setSuffix(tr(" s"))
        self.timeout.setValue(app_settings_mod.step_timeout_s(settings))
        self.timeout.setToolTip(tr("A step (or model load) running longer is stopped and the engine restarted"))
        self.memory = QSpinBox(self)
        self.memory.setRange(0, 1 << 30)
        self.memory.setSuffix(tr(" MiB"))
        self.memory.setSpecialValueText(tr("no limit"))
        self.memory.setValue(app_settings_mod.memory_limit_mib(settings))
        self.memory.setToolTip(tr("An engine using more memory is stopped with a message naming the step, and restarted"))
        self.tracker = QLineEdit(app_settings_mod.rpc_tracker(settings), self)
        self.tracker.setPlaceholderText("127.0.0.1:9190")
        self.tracker.setToolTip(tr("An RPC tracker (python -m tvm.exec.rpc_tracker): Build & Run lists its devices "
                                   "and can run there; empty for none"))
        note = QLabel(tr("The watchdog limit applies to the next request; the memory limit from the next engine "
                         "start (Run ▸ Restart Engine)."), self)
        note.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow(tr("Step watchdog limit:"), self.timeout)
        form.addRow(tr("Engine memory limit:"), self.memory)
        form.addRow(tr("RPC tracker (HOST:PORT):"), self.tracker)
        form.addRow(note)
        form.addRow(buttons)

    def apply(self) -> None:
        """Remember the values."""
        self.settings.setValue("engine/step_timeout_s", int(self.timeout.value()))
        self.settings.setValue("engine/memory_limit_mib", int(self.memory.value()))
        self.settings.setValue("rpc/tracker", self.tracker.text().strip())
        self.settings.sync()
