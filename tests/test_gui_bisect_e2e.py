"""Run ▸ Find Breaking Step… on the real engine (issue 21): the dialog lists the tested steps and the culprit is
selected in the pipeline list."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from tests.conftest import qt_wait  # noqa: E402
from tests.debug_fixtures import injected_pipeline  # noqa: E402

pytestmark = pytest.mark.e2e


def test_find_breaking_step_selects_the_culprit(studio, tmp_path):
    win = studio
    path, wrong = injected_pipeline(str(tmp_path), 10, 71, "relax")
    win.ctrl.undo_stack.setClean()
    assert win.files.open_pipeline(path, remember=False)
    assert qt_wait(lambda: not win.act_stop.isEnabled(), 240_000)
    assert win.act_bisect in win.findChildren(type(win.act_bisect))
    win.act_bisect.trigger()
    dialog = win.bisector.dialog
    assert dialog is not None and dialog.isVisible()
    reports: list = []
    win.bisector.finished.connect(reports.append)
    win.bisector.failed.connect(reports.append)
    assert win.bisector.find()
    assert qt_wait(lambda: bool(reports), 240_000)
    report = reports[0]
    assert not isinstance(report, str), report
    assert report.culprit_step == wrong
    assert win.pipeline_view.selected_uids() == [win.ctrl.doc.steps[wrong - 1].uid]
    assert dialog.table.rowCount() == len(report.tested) and f"step {wrong}" in dialog.status.text()
    assert dialog.find_button.isEnabled() and not dialog.stop_button.isEnabled()
    dialog.close()
