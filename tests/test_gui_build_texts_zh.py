"""Issue 33: in the Chinese UI the Build & Run panel shows no English of the app's own: the fixed texts the engine
sends (where weights and inputs came from, what the check compared with, the tolerance's scale and the precision
that chose it), the export result's labels and the framing of build errors. TVM's own words stay as they are."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from widgets.build_texts import shown_error  # noqa: E402
from widgets.run_panel import RunPanel, build_run_html  # noqa: E402

RESULT = {
    "label": "pipeline", "function": "forward", "device": "cpu:0", "target": {"kind": "llvm"}, "build_ms": 300.0,
    "weights": "random", "arguments": [{"name": "x", "shape": [1, 784], "source": "random(seed=0)"}],
    "outputs": [{"index": 0, "shape": [1, 10], "dtype": "float32"}],
    "check": {"passed": True, "rtol": 0.01, "atol": 0.01, "max_abs": 1e-3, "max_rel": 1e-3, "max_ref": 2.9,
              "max_abs_over_ref": 5e-3, "scale": "output", "warnings": [], "tolerance_dtype": "float16",
              "reference": "model as loaded, tvm.compile default pipeline, llvm"},
}
EXPORT = {"library": "/o/model.so", "weights": "/o/weights.npz", "metadata": "/o/model.json",
          "deploy_script": "/o/deploy.py"}


@pytest.fixture
def zh(qapp):
    from app.i18n import install_translator

    translator = install_translator(qapp, "zh_CN")
    assert translator is not None
    yield
    qapp.removeTranslator(translator)


def test_build_result_texts_in_chinese(zh, qtbot):
    from PySide6.QtGui import QTextDocument

    doc = QTextDocument()
    doc.setHtml(build_run_html(RESULT))
    text = doc.toPlainText()
    for english in ("random", "model as loaded", "scaled to the output", "tolerance chosen", "weights:"):
        assert english not in text, (english, text)
    assert "随机（种子 0）" in text and "float16" in text
    panel = RunPanel()
    qtbot.addWidget(panel)
    panel.show_export_result(EXPORT)
    shown = panel.results.toPlainText()
    assert "library:" not in shown and "weights:" not in shown and "库" in shown and "权重" in shown


def test_build_errors_framed_in_chinese_with_tvms_words_kept(zh):
    said = shown_error("tvm.compile for rocm failed: Cannot find ROCm path\nTraceback ...")
    assert said.startswith("为 rocm") and "Cannot find ROCm path" in said and said.endswith("\nTraceback ...")
    assert shown_error("the pipeline failed at step 2 (relax.FuseOps): boom").startswith("流水线在第 2 步")
    assert shown_error("something TVM said") == "something TVM said"


def test_english_texts_unchanged(qapp):
    assert shown_error("tvm.compile for rocm failed: Cannot find ROCm path") == \
        "tvm.compile for rocm failed: Cannot find ROCm path"
    assert "random (seed 0)" in build_run_html(RESULT)


def test_progress_warnings_and_errors_read_back_in_chinese(zh):
    from tests.zh_texts import latin_words, rich_prose
    from widgets.build_texts import shown_error_html, shown_progress
    from widgets.run_panel import check_scale_html

    said = shown_progress("building pipeline 'Untitled pipeline' for llvm -mcpu=native")
    assert said.startswith("正在为 <code>llvm -mcpu=native</code> 构建流水线") and "未命名流水线" in said, said
    assert "参照" in shown_progress("building and running the reference (model as loaded, default pipeline, CPU)")
    assert shown_progress("testing the module after step 2 (relax.FuseOps)") == \
        "正在测试步骤 <code>2</code>（<code>relax.FuseOps</code>）之后的模块"  # Find Breaking Step's progress
    assert shown_progress("Stopping…") == "Stopping…"  # the app's own line, already in the interface's language
    warned = check_scale_html({"warnings": ["output 0: the reference is all zeros: the check cannot tell a right "
                                            "result from a wrong one (use real inputs/weights)"]})
    assert "参照全为零" in warned and not latin_words(rich_prose(warned))
    sentence, rest = shown_error_html("the pipeline failed at step 1 (relax.Gradient): step 1 (relax.Gradient) "
                                      "failed: ValueError: Cannot find global var \"main\"\ncandidates are: [forward]")
    assert "<code>ValueError: Cannot find global var" in sentence and rest == "candidates are: [forward]"
    assert not latin_words(rich_prose(sentence))
    sentence, rest = shown_error_html("something the app does not know")  # shown as code under a sentence
    assert sentence == "引擎报告了一个错误： <code>something the app does not know</code>" and rest == ""


def test_a_refused_output_path_in_chinese(zh):
    from tests.zh_texts import latin_words, rich_prose
    from widgets.build_texts import shown_error_html
    from widgets.path_texts import shown_path_error

    said = shown_path_error("script /tmp/out: is a directory; name a regular file")
    assert said == "脚本 <code>/tmp/out</code>：是一个文件夹；请指定一个普通文件", said
    assert shown_path_error("something else") is None
    sentence, _rest = shown_error_html("export folder /o: /o/model.so already exists and would be replaced; choose a "
                                       "new folder or allow overwriting (--force)")
    assert sentence.startswith("导出文件夹 <code>/o</code>") and not latin_words(rich_prose(sentence)), sentence


def test_int8_check_says_its_reference_and_tolerance_in_chinese(zh):
    from PySide6.QtGui import QTextDocument

    from pipeline_model.scriptlib.quant_reference import QUANT_REFERENCE

    check = {**RESULT["check"], "scale": "absolute", "tolerance_dtype": "int8", "quant_step": 0.0459,
             "step_from": "scale", "reference": QUANT_REFERENCE}
    doc = QTextDocument()
    doc.setHtml(build_run_html({**RESULT, "check": check}))
    text = doc.toPlainText()
    assert "model as loaded" not in text and "float64" in text and "0.0459" in text, text
