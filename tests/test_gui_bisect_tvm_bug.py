"""Issue 31: the Find Breaking Step dialog says when TVM's own default pipeline fails on the model (a TVM bug),
names the reference used instead, and offers Save Reproducer… of the breaking step (in English and Chinese)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from pipeline_model.debugging import bisect as bisect_report  # noqa: E402
from pipeline_model.debugging.bisect import BisectReport  # noqa: E402


def _report(kind="crash", culprit=11) -> BisectReport:
    return BisectReport(
        culprit_step=culprit, culprit_pass_id="relax.StaticPlanBlockMemory" if culprit else None,
        method="leave-one-out", builds=6, max_builds=6, default_pipeline_fails=kind,
        reference_failure="model as loaded, tvm.compile default pipeline, llvm: the engine crashed (signal SIGSEGV)",
        reference="the pipeline without step 11 (relax.StaticPlanBlockMemory) (the first tested module that built "
                  "and ran)",
        tested=[bisect_report.TestedStep(14, 11, "relax.StaticPlanBlockMemory", "pass", mode="without", built=True, ran=True,
                           max_abs_over_ref=0.0)],
        message="culprit: step 11 (relax.StaticPlanBlockMemory): leaving it out makes the pipeline pass")


def test_dialog_says_tvm_bug_and_offers_the_reproducer(qtbot):
    from app.bisect_controller import BisectDialog

    dialog = BisectDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    assert not dialog.tvm_bug.isVisible() and not dialog.reproducer_button.isVisible()
    dialog.show_report(_report())
    assert dialog.tvm_bug.isVisible() and dialog.tvm_bug.text().startswith("TVM's default pipeline crashes")
    assert dialog.reference.isVisible() and "without step 11" in dialog.reference.text()
    assert "SIGSEGV" in dialog.reference.text()
    with qtbot.waitSignal(dialog.reproducer_requested, timeout=5000):
        dialog.reproducer_button.click()
    # No step to blame: the line stays, nothing to save; a plain bisection shows neither.
    dialog.show_report(_report("build", culprit=None))
    assert "fails to build" in dialog.tvm_bug.text() and not dialog.reproducer_button.isVisible()
    dialog.show_report(BisectReport(ok=True, message="the pipeline is correct"))
    assert not dialog.tvm_bug.isVisible() and not dialog.reference.isVisible()


def test_dialog_lines_are_translated(qapp, qtbot):
    from app.bisect_controller import BisectDialog
    from app.i18n import install_translator

    translator = install_translator(qapp, "zh_CN")
    assert translator is not None
    try:
        dialog = BisectDialog()
        qtbot.addWidget(dialog)
        dialog.show_report(_report())
        assert "TVM 的缺陷" in dialog.tvm_bug.text() and dialog.reproducer_button.text() == "保存复现包…"
        assert "改用的参考" in dialog.reference.text()
    finally:
        qapp.removeTranslator(translator)


def test_build_panel_says_only_the_reference_failed(qapp):
    """Build & Run of a module that built and ran while the reference crashed: the outputs show, the check says it
    could not be done and why (or that it fell back)."""
    from widgets.run_panel import build_run_html

    check = {"passed": False, "rtol": 1e-4, "atol": 1e-4, "max_abs": None, "max_rel": None,
             "error": "the reference failed, so the check could not be done", "reference": "model as loaded",
             "reference_failure": "the reference crashed: the engine crashed (signal SIGSEGV)"}
    result = {"label": "pipeline", "function": "main", "device": "cpu:0", "target": {"kind": "llvm"}, "build_ms": 9.0,
              "weights": "random", "check": check,
              "outputs": [{"index": 0, "shape": [4, 8], "dtype": "float32", "min": 0.0, "max": 1.0, "mean": 0.5,
                           "std": 0.2}]}
    text = build_run_html(result)
    assert "not checked" in text and "SIGSEGV" in text and "this module built and ran" in text and "[4, 8]" in text
    fallback = dict(check, passed=True, max_abs=1e-6, max_rel=1e-5, error=None, reference="onnxruntime 1.2 on m.onnx")
    text = build_run_html(dict(result, check=fallback))
    assert "check passed" in text and "so this is the fallback" in text and "not checked" not in text
