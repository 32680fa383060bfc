"""Issue 33: a MetaSchedule step that leaves the module unchanged after minutes of tuning still says, in the
pipeline list, what it produced: the records it measured and the PrimFuncs with a best schedule."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from pipeline_model.document import PipelineDocument, Step  # noqa: E402
from pipeline_model.engine.results import UNCHANGED, StepResult  # noqa: E402
from pipeline_model.passkinds import step_result_line  # noqa: E402

REPORT = {"tuning": {"done": 64, "total": 64, "measured": 61, "finished": True,
                     "tasks": [{"name": "fused_matmul_add_relu", "trials": 32, "best_us": 12.5, "status": "done"},
                               {"name": "matmul1", "trials": 32, "best_us": None, "status": "done"}]}}


def test_tuning_step_says_what_it_produced():
    line = step_result_line("relax.MetaScheduleTuneTIR", REPORT)
    assert "61 record(s) measured" in line and "1 of 2 PrimFunc(s)" in line
    assert step_result_line("relax.FuseOps", {"anything": 1}) == ""  # other kinds add nothing
    assert step_result_line("relax.MetaScheduleTuneTIR", {}) == ""


def test_pipeline_list_row_shows_it(qtbot):
    from PySide6.QtCore import Qt

    from widgets.step_model import QtPipelineModel

    step = Step("relax.MetaScheduleTuneTIR")
    model = QtPipelineModel()
    model.set_document(PipelineDocument(steps=[step]))
    model.set_result(StepResult(index=0, uid=step.uid, pass_id=step.pass_id, title="tune", state=UNCHANGED,
                                elapsed_ms=100_000.0, report=REPORT))
    text = model.index(0).data(Qt.ItemDataRole.DisplayRole)
    assert "61 record(s) measured" in text, text
