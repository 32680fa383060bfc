"""Widget-level defects of issue 12: wheel over unfocused editors, durations, nested table height,
"not run" after a failure, eliding captions, why tuning ended, codegen notes, omitted parameters."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget

from pipeline_model.document import PipelineDocument, Step
from pipeline_model.engine.results import FAILED, NOT_RUN, StepResult
from widgets.units import format_duration_ms, format_duration_s

SPEC = {
    "id": "relax.FuseOpsByPattern", "title": "Fuse by pattern", "category": "Fusion", "doc": "",
    "params": [
        {"name": "level", "kind": "int", "default": 2},
        {"name": "ratio", "kind": "float", "default": 0.5},
        {"name": "table_prefix", "kind": "choice", "default": "cublas", "choices": ["cublas", "coreml"],
         "choice_notes": {"cublas": "cublas: 10 patterns, but this TVM build has no relax.ext.cublas codegen: "
                                    "offloading with RunCodegen (annotate_codegen = true) will fail.",
                          "coreml": "coreml: 10 patterns; codegen relax.ext.coreml available"}},
        {"name": "annotate_codegen", "kind": "bool", "default": False},
    ],
    "omitted_params": {"customize_legalize_map": "needs a Python object (Optional[Dict[str, LegalizeFunc]])"},
}


def _wheel(widget, steps: int = 1) -> None:
    pos = QPointF(widget.rect().center())
    event = QWheelEvent(pos, QPointF(widget.mapToGlobal(QPoint(int(pos.x()), int(pos.y())))), QPoint(0, 0),
                        QPoint(0, 120 * steps), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def _editor(qtbot):
    from widgets.param_editor import ParamEditor

    host = QWidget()
    qtbot.addWidget(host)
    w = ParamEditor(host)
    QVBoxLayout(host).addWidget(w)
    w.set_step(SPEC, {})
    host.show()
    qtbot.waitExposed(host)
    return host, w


def test_wheel_changes_nothing_without_focus(qtbot):
    host, w = _editor(qtbot)
    changed = []
    w.param_changed.connect(lambda n, v: changed.append((n, v)))
    spin, dspin, combo = (w.editor(n).editor for n in ("level", "ratio", "table_prefix"))
    for editor in (spin, dspin, combo):
        assert editor.focusPolicy() == Qt.FocusPolicy.StrongFocus  # the wheel does not take focus
        assert not editor.hasFocus()
        _wheel(editor)
    assert (spin.value(), dspin.value(), combo.currentData()) == (2, 0.5, "cublas") and changed == []
    host.activateWindow()
    spin.setFocus()
    qtbot.waitUntil(spin.hasFocus, timeout=2000)
    _wheel(spin)
    assert spin.value() == 3 and changed == [("level", 3)]


def test_duration_labels():
    assert format_duration_ms(1.3e4) == "13.0 s"
    assert format_duration_ms(0.42) == "0.4 ms" and format_duration_ms(12.4) == "12 ms"
    assert format_duration_ms(1250) == "1.25 s" and format_duration_ms(125_000) == "2 min 5 s"
    assert format_duration_ms(3_780_000) == "1 h 3 min" and format_duration_ms(None) == "–"
    assert format_duration_s(13) == "13.0 s"


def test_run_panel_build_time_is_readable(qtbot):
    from widgets.run_panel import build_run_html

    text = build_run_html({"label": "p", "function": "main", "device": "cpu", "target": {"kind": "llvm"},
                           "build_ms": 13042.0, "weights": "random", "latency": {}, "outputs": []})
    assert "built in 13.0 s" in text and "e+" not in text


def test_step_list_uses_the_duration_helper(qtbot):
    from widgets.step_model import QtPipelineModel

    model = QtPipelineModel(PipelineDocument(steps=[Step("relax.LegalizeOps", uid="a")]))
    model.set_result(StepResult(index=0, uid="a", pass_id="relax.LegalizeOps", title="Legalize", state="changed", elapsed_ms=1.3e4))
    assert "13.0 s" in model.data(model.index(0), Qt.ItemDataRole.DisplayRole)


def test_not_run_after_failure_label_and_no_diff(qtbot):
    from widgets.diff_view import DiffView
    from widgets.step_model import QtPipelineModel

    doc = PipelineDocument(steps=[Step("relax.LegalizeOps", uid="a"), Step("relax.FuseOps", uid="b"),
                                  Step("relax.FuseTIR", uid="c")])
    model = QtPipelineModel(doc)
    model.set_result(StepResult(index=0, uid="a", pass_id="relax.LegalizeOps", title="Legalize", state=FAILED, error="boom"))
    model.set_result(StepResult(index=1, uid="b", pass_id="relax.FuseOps", title="Fuse", state=NOT_RUN))
    text = model.data(model.index(1), Qt.ItemDataRole.DisplayRole)
    assert "not run (an earlier step failed)" in text and "not_run" not in text
    assert "an earlier step failed" not in model.data(model.index(2), Qt.ItemDataRole.DisplayRole)  # no result yet
    view = DiffView()
    qtbot.addWidget(view)
    view.set_snapshots("# a\n", "# b\n")
    view.set_not_run("Step 2: Fuse ops", "step 1 (relax.LegalizeOps)")
    assert view.rows == [] and view.module_diff is None and view.right.toPlainText() == ""
    assert "not run (an earlier step failed" in view.left_title.text()
    assert view.summary_label.text() == "not run (an earlier step failed)"


def test_nested_table_is_tall_enough(qtbot):
    from widgets.pipeline_view import PipelineView
    from widgets.step_model import QtPipelineModel

    view = PipelineView(QtPipelineModel(PipelineDocument()))
    qtbot.addWidget(view)
    row = view.nested.fontMetrics().height()
    assert view.nested.minimumHeight() >= 5 * row  # a header and four rows (issue 33: five steps above it at 1024×700)
    assert not view.splitter.isCollapsible(1)


def test_elided_label_does_not_widen_the_window(qtbot):
    from widgets.elided_label import ElidedLabel

    text = "Graph unavailable: module '86f6" + "0123456789abcdef" * 40 + "' is not in the engine's cache"
    host = QWidget()
    qtbot.addWidget(host)
    label = ElidedLabel(text, host)
    QVBoxLayout(host).addWidget(label)
    assert host.sizeHint().width() < 600
    host.resize(400, 60)
    host.show()
    qtbot.waitExposed(host)
    assert label.text() == text and label.elided_text().endswith("…") and len(label.elided_text()) < len(text)
    assert label.toolTip() == text


def test_tuning_end_reason():
    from widgets.tuning_panel import end_reason

    base = {"done": 10, "total": 16, "tasks": [{"name": "a", "trials": 10, "errors": 0}]}
    assert end_reason(dict(base)) == ""  # still running
    assert "search space exhausted" in end_reason(dict(base, finished=True))
    assert "stopped" in end_reason(dict(base, stopped=True, finished=True))
    assert end_reason(dict(base, done=16, finished=True)) == "done"
    failed = dict(base, finished=True, tasks=[{"name": "a", "errors": 3}])
    assert "3 candidates failed" in end_reason(failed) and "exhausted" not in end_reason(failed)
    reused = dict(base, finished=True, done=0, tasks=[{"name": "a", "reused": True}])
    assert "already tuned" in end_reason(reused)


def test_tuning_bar_says_why_it_ended(qtbot):
    from widgets.tuning_panel import TuningPanel

    panel = TuningPanel()
    qtbot.addWidget(panel)
    panel.update_progress({"done": 10, "total": 16, "finished": True, "pass_id": "relax.MetaScheduleTuneIRMod",
                           "elapsed_s": 75.0, "tasks": [{"name": "fused", "trials": 10}]})
    assert "search space exhausted" in panel.bar.format() and "10/16" in panel.bar.text()
    assert "1 min 15 s" in panel.title.text() and "exhausted" in panel.title.text()


def test_choice_note_shown_before_annotate_codegen(qtbot):
    host, w = _editor(qtbot)
    field = w.editor("table_prefix")
    assert w.values()["annotate_codegen"] is False
    assert field.note_label.isVisible() and "no relax.ext.cublas codegen" in field.note_label.text()
    field.editor.setCurrentIndex(1)
    assert "codegen relax.ext.coreml available" in field.note_label.text()


def test_omitted_params_listed_with_reason(qtbot):
    host, w = _editor(qtbot)
    assert w.omitted_label.isVisible()
    from tests.zh_texts import rich_plain

    assert "customize_legalize_map: needs a Python object" in rich_plain(w.omitted_label.text())
    w.clear()
    assert not w.omitted_label.isVisible()


def test_pass_context_editor(qtbot):
    from widgets.pass_context_editor import PassContextEditor

    w = PassContextEditor()
    qtbot.addWidget(w)
    seen = []
    w.settings_changed.connect(seen.append)
    w.set_known_configs({"relax.FuseOps.max_depth": "int", "tirx.noalias": "bool"})
    w.set_settings({"opt_level": 2, "config": {"tirx.noalias": False}, "disabled_pass": ["FoldConstant"]})
    assert seen == []  # set by code: no signal
    assert w.settings() == {"opt_level": 2, "config": {"tirx.noalias": False}, "disabled_pass": ["FoldConstant"]}
    assert w.key_combo.findText("relax.FuseOps.max_depth") >= 0
    w.key_combo.setEditText("relax.FuseOps.max_depth")
    w.value_edit.setText("1")
    w.add_config_button.click()
    assert seen[-1]["config"] == {"tirx.noalias": False, "relax.FuseOps.max_depth": 1}
    w.value_edit.setText("true")
    w.add_config_button.click()  # an int key refuses a bool
    assert len(seen) == 1 and "integer" in w.message.text()
    w.opt_spin.setValue(3)
    assert seen[-1]["opt_level"] == 3
    w.disabled_list.setCurrentRow(0)
    w.remove_pass_button.click()
    assert seen[-1]["disabled_pass"] == []
    w.pass_edit.setText("FuseOps")
    w.add_pass_button.click()
    assert seen[-1]["disabled_pass"] == ["FuseOps"]
    w.key_combo.setEditText("no.such.key")
    w.value_edit.setText("1")
    w.add_config_button.click()
    assert "not a config key this TVM knows" in w.message.text() and "no.such.key" in seen[-1]["config"]
