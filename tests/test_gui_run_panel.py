"""The Build & Run panel: build + run + check, compare chart, GPU refusal, advanced target editor
(validated by the engine, undoable), device list, export library.

Builds, checks and the engine's device list are ``e2e`` (real session engine, ``studio``); undoing a
picked device target is GUI logic and runs on the TVM-free fake engine (``fake_studio``)."""

from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QFileDialog  # noqa: E402

from tests.conftest import PIPELINES_DIR, qt_wait  # noqa: E402

BUILD_TIMEOUT_MS = 180_000


def _mlp(window):
    window.ctrl.undo_stack.setClean()
    assert window.files.open_pipeline(os.path.join(PIPELINES_DIR, "fusion_walkthrough.json"), remember=False, as_template=True)
    assert qt_wait(lambda: not window.run_controller.busy, BUILD_TIMEOUT_MS)
    window.run_panel.random_radio.setChecked(True)
    window.run_panel.set_tolerances(1e-4, 1e-4)
    return window


@pytest.fixture
def mlp(studio):
    """The tutorial fusion pipeline on the MLP, CPU target, clean undo stack (real engine)."""
    return _mlp(studio)


@pytest.fixture
def fake_mlp(fake_studio):
    """As ``mlp``, on the fake engine."""
    return _mlp(fake_studio)


def _finish(win, action) -> tuple[str, object]:
    got: list = []
    win.run_controller.finished.connect(lambda k, v: got.append((k, v)))
    win.run_controller.failed.connect(lambda k, m: got.append((k, m)))
    action()
    assert qt_wait(lambda: bool(got), BUILD_TIMEOUT_MS), "no answer from the engine"
    return got[0]


@pytest.mark.e2e
def test_devices_listed_with_cpu_target(studio):
    assert qt_wait(lambda: bool(studio.run_controller.devices), 60_000)
    cpu = studio.run_controller.devices[0]
    assert cpu["kind"] == "cpu"
    assert cpu["target"]["kind"] == "llvm" and int(cpu["target"]["num-cores"]) >= 1
    labels = [studio.run_panel.target_combo.itemText(i) for i in range(studio.run_panel.target_combo.count())]
    assert any("cores" in label and label.startswith("CPU") for label in labels)


@pytest.mark.e2e
def test_build_and_run_shows_latency_and_passing_check(mlp):
    assert mlp.act_build.shortcut().toString() == "Ctrl+B"
    kind, result = _finish(mlp, mlp.act_build.trigger)
    assert kind == "build_run", result
    assert result["latency"]["median_us"] > 0
    assert result["check"]["passed"] is True
    assert result["outputs"][0]["shape"] == [1, 10]
    panel = mlp.run_panel
    text = panel.results.toPlainText()
    assert "check passed" in text and "median" in text and "max abs error" in text
    assert "[1, 10]" in text
    assert "check passed" in panel.status.text()
    assert panel.build_button.isEnabled()


@pytest.mark.e2e
def test_tight_tolerance_is_sent_and_reported(mlp):
    mlp.run_panel.set_tolerances(0.0, 0.0)
    _kind, result = _finish(mlp, mlp.run_controller.build_and_run)
    assert result["check"]["rtol"] == 0.0 and result["check"]["atol"] == 0.0
    mlp.run_panel.rtol_spin.setText("abc")
    assert mlp.run_controller.build_and_run() is False
    assert "rtol" in mlp.run_panel.status.text()


@pytest.mark.e2e
def test_compare_shows_speedup_chart(mlp, qtbot):
    kind, result = _finish(mlp, mlp.act_compare.trigger)
    assert kind == "compare", result
    assert result["speedup"] > 0
    from pipeline_model.latency_stats import VERDICTS
    from widgets.run_panel import compare_headline

    assert result["comparison"]["verdict"] in VERDICTS and result["comparison"]["paired"]
    chart = mlp.run_panel.chart
    assert [b.label for b in chart.bars] == ["baseline", "pipeline"]
    assert all(b.median_us > 0 for b in chart.bars)
    # The caption is the verdict with its interval, never a bare "speed-up" (issue 18).
    assert chart.caption == compare_headline(result) and "speed-up" not in chart.caption
    assert " against " in mlp.run_panel.results.toPlainText()
    image = chart.grab().toImage()
    assert image.width() > 100  # painted without error


@pytest.mark.e2e
def test_input_file_with_wrong_shape_is_named(mlp, tmp_path):
    path = tmp_path / "bad.npy"
    np.save(path, np.zeros((3, 3), dtype="float32"))
    mlp.run_panel.input_path.setText(str(path))
    mlp.run_panel.file_radio.setChecked(True)
    try:
        kind, message = _finish(mlp, mlp.run_controller.build_and_run)
    finally:
        mlp.run_panel.random_radio.setChecked(True)
    assert kind == "build_run" and isinstance(message, str)
    assert "[3, 3]" in message and "784" in message


@pytest.mark.e2e
def test_cuda_target_via_advanced_editor_is_refused_naming_functions(mlp):
    dialog = mlp.run_controller.edit_target()
    dialog.set_text("{\"kind\": \"cuda\", \"arch\": ")
    dialog.buttons.accepted.emit()
    assert "line" in dialog.status.text() and dialog.isVisible()
    dialog.set_text('{"kind": "no_such_kind"}')
    dialog.buttons.accepted.emit()
    assert qt_wait(lambda: dialog.status.text().startswith("✗"), 30_000)
    assert dialog.isVisible() and mlp.ctrl.doc.target["kind"] == "llvm"
    dialog.set_text('{"kind": "cuda", "arch": "sm_80"}')
    dialog.buttons.accepted.emit()
    assert qt_wait(lambda: not dialog.isVisible(), 30_000), dialog.status.text()
    assert mlp.ctrl.doc.target == {"kind": "cuda", "arch": "sm_80"}
    assert mlp.ctrl.undo_stack.undoText() == "Set target cuda"
    assert mlp.run_panel.target_combo.currentData() == {"kind": "cuda", "arch": "sm_80"}
    kind, message = _finish(mlp, mlp.run_controller.build_and_run)
    assert kind == "build_run" and isinstance(message, str)
    from tests.zh_texts import rich_plain

    status = rich_plain(mlp.run_panel.status.text())  # rich text: the target and the PrimFuncs in a code font
    assert "refusing to build for cuda" in status
    assert "matmul" in status and "DLight" in status
    assert not status.startswith("✗ BuildError")
    mlp.ctrl.undo_stack.undo()
    assert mlp.ctrl.doc.target == {"kind": "llvm"}
    assert mlp.run_panel.target_combo.currentData() == {"kind": "llvm"}


def test_picking_a_device_target_is_undoable(fake_mlp):
    mlp = fake_mlp
    assert qt_wait(lambda: bool(mlp.run_controller.devices), 60_000)
    combo = mlp.run_panel.target_combo
    cpu = mlp.run_controller.devices[0]["target"]
    row = next(i for i in range(combo.count()) if combo.itemData(i) == cpu)
    combo.setCurrentIndex(row)
    combo.activated.emit(row)
    assert mlp.ctrl.doc.target == cpu and mlp.ctrl.modified
    mlp.ctrl.undo_stack.undo()
    assert mlp.ctrl.doc.target == {"kind": "llvm"}


@pytest.mark.e2e
def test_export_library_says_where_deploy_is(mlp, tmp_path, monkeypatch):
    out = tmp_path / "export"
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: str(out)))
    kind, result = _finish(mlp, mlp.run_panel.export_button.click)
    assert kind == "export_library", result
    assert os.path.isfile(out / "model.so") and os.path.isfile(out / "deploy.py")
    assert str(out / "deploy.py") in mlp.run_panel.status.text()


def test_latency_chart_follows_dark_palette(qtbot):
    from PySide6.QtGui import QColor, QPalette

    from widgets.latency_chart import LatencyBar, LatencyChart

    chart = LatencyChart()
    qtbot.addWidget(chart)
    chart.resize(400, chart.sizeHint().height())
    chart.set_bars([LatencyBar("baseline", 300.0, 280.0, 320.0), LatencyBar("pipeline", 150.0, 140.0, 170.0)], "speed-up 2.00×")
    light = chart.grab().toImage().pixelColor(2, 2)
    pal = chart.palette()
    pal.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    pal.setColor(QPalette.ColorRole.Text, QColor("#eeeeee"))
    chart.setPalette(pal)
    dark = chart.grab().toImage().pixelColor(2, 2)
    assert dark.lightness() < 64 and dark != light


def test_request_status_lines_and_engine_refusal_on_the_fake(fake_mlp, tmp_path):
    """Each build request names itself on the status line (translatable texts with placeholders);
    an engine error (the fake refuses to build) reaches the status line without its class prefix."""
    win = fake_mlp
    statuses: list[str] = []
    win.run_panel.status.setText("")
    for action, expected in (
        (win.run_controller.build_and_run, f"Building {len(win.ctrl.doc.steps)} step(s) for CPU…"),
        (win.run_controller.compare, "Building and timing the baseline and the pipeline…"),
        (lambda: win.run_controller.export_library(str(tmp_path / "out")), f"Building and exporting into {tmp_path / 'out'}…"),
    ):
        def start(action=action) -> None:
            action()
            statuses.append(win.run_panel.status.text())

        _kind, message = _finish(win, start)
        assert statuses[-1] == expected
        assert isinstance(message, str) and "the fake engine does not run" in message
        assert "fake engine does not run" in win.run_panel.status.text()
        assert win.run_panel.build_button.isEnabled() and not win.run_controller.busy
