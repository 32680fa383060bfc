"""The target picker lists an RPC tracker's devices (asked through the engine, Edit ▸ Preferences sets the
tracker); choosing one makes Build & Run and Compare run there, without changing the pipeline's target."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402

from tests.conftest import PIPELINES_DIR, qt_wait  # noqa: E402

RPC_REPLY = {"tracker": "10.0.0.7:9190", "error": "",
             "devices": [{"key": "rasp4", "total": 3, "free": 2, "pending": 0,
                          "servers": ["10.0.0.21:9090", "10.0.0.22:9090", "10.0.0.23:9090"]}]}


def _texts(combo) -> list[str]:
    return [combo.itemText(i) for i in range(combo.count())]


def test_unreachable_tracker_is_one_line_in_the_picker(fake_studio):
    win = fake_studio
    win.run_controller.ctx.settings.setValue("rpc/tracker", "127.0.0.1:1")
    try:
        win.run_controller.refresh_devices()
        assert qt_wait(lambda: any("RPC devices at 127.0.0.1:1" in t for t in _texts(win.run_panel.target_combo)), 60_000)
        combo = win.run_panel.target_combo
        note = next(i for i, t in enumerate(_texts(combo)) if t.startswith("The tracker did not answer"))
        assert "cannot reach the RPC tracker at 127.0.0.1:1" in combo.itemText(note)
        assert not combo.model().item(note).isEnabled()
        assert any(c[0] == "rpc_devices" for c in win.fake_client.calls)  # asked by the engine, not the GUI
    finally:
        win.run_controller.ctx.settings.remove("rpc/tracker")


def test_choosing_an_rpc_device_runs_there(fake_studio):
    win = fake_studio
    win.ctrl.undo_stack.setClean()
    assert win.files.open_pipeline(os.path.join(PIPELINES_DIR, "fusion_walkthrough.json"), remember=False,
                                   as_template=True)
    assert qt_wait(lambda: bool(win.run_controller.devices), 60_000)
    panel, target = win.run_panel, dict(win.ctrl.doc.target)
    panel.set_devices(win.run_controller.devices, target, [], RPC_REPLY)
    combo = panel.target_combo
    row = next(i for i, t in enumerate(_texts(combo)) if t.startswith("RPC rasp4"))
    assert "2/3 free" in combo.itemText(row) and "10.0.0.22:9090" in combo.itemData(row, Qt.ItemDataRole.ToolTipRole)  # its tooltip
    combo.setCurrentIndex(row)
    combo.activated.emit(row)
    assert panel.remote == {"tracker": "10.0.0.7:9190", "key": "rasp4"}
    assert win.ctrl.doc.target == target and win.ctrl.undo_stack.isClean()  # the pipeline's target stays
    panel.show_target(target)  # a document change keeps the RPC device selected
    assert combo.currentIndex() == row
    assert not any(t.startswith("RPC") for t, _ in win.run_controller.target_choices())
    win.fake_client.calls.clear()
    win.run_controller.build_and_run()
    assert qt_wait(lambda: not win.run_controller.busy, 60_000)
    sent = [args for cmd, args in win.fake_client.calls if cmd == "build_run"]
    assert sent and sent[0]["remote"] == {"tracker": "10.0.0.7:9190", "key": "rasp4"}
    local = next(i for i in range(combo.count()) if isinstance(combo.itemData(i), dict))
    combo.setCurrentIndex(local)
    combo.activated.emit(local)
    assert panel.remote is None


def test_tuning_panel_says_what_each_device_measured(qtbot):
    from widgets.tuning_panel import TuningPanel

    panel = TuningPanel()
    qtbot.addWidget(panel)
    panel.start("step 5: MetaSchedule")
    panel.update_progress({"done": 8, "total": 32, "pass_id": "relax.MetaScheduleTuneTIR", "runner": "rpc", "tasks": [],
                           "devices": {"10.0.0.22:9090": {"measured": 3, "failed": 0, "requeued": 0},
                                       "10.0.0.21:9090": {"measured": 5, "failed": 0, "requeued": 1}}})
    assert ("RPC devices: 10.0.0.21:9090 5 measured (1 re-queued), 10.0.0.22:9090 3 measured"
            in panel.footer.text()), panel.footer.text()
