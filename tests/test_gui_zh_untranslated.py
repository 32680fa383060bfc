"""Issue 18: GUI flows run in zh_CN show no English text left untranslated: a run with a disabled, a custom
and a failing step (each step selected), the engine-crash banner, the consent dialog of a custom step,
Help ▸ Environment. TVM's own pass names and docstrings, code and technical values stay as they are
(see ``tests/zh_texts.py``)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QDialog  # noqa: E402

from app.consent_service import ConsentDialog  # noqa: E402
from pipeline_model import consent  # noqa: E402
from pipeline_model.document import PipelineDocument, Step  # noqa: E402
from tests.conftest import qt_wait  # noqa: E402
from tests.zh_texts import (  # noqa: E402
    english_sources, is_untranslated, latin_left, latin_words, rich_prose, untranslated,
)


def _tvm_docs(win) -> list[str]:
    from app.pass_texts import OWN_TEXTS

    cat = win.ctx.catalogue.catalogue
    return [cat.get(i).doc for i in cat.ids() if cat.get(i).doc not in OWN_TEXTS]


def _check(widget, allowed) -> None:
    left = untranslated(widget, allowed)
    assert not left, left
    strict = latin_left(widget, _names(widget))  # the rule of tests/test_gui_zh_e2e.py
    assert not strict, strict


def _names(widget) -> list[str]:
    """TVM's pass names and parameter names of the window's catalogue (identifiers)."""
    win = widget.window()
    cat = getattr(getattr(getattr(win, "ctx", None), "catalogue", None), "catalogue", None)
    if cat is None:
        return []
    names = {"fake"}  # the fake engine's device name and TVM version are its data
    for pass_id in cat.ids():
        spec = cat.get(pass_id)
        names |= {spec.id, spec.title} | {p.name for p in spec.params}
    return sorted(names)


def test_the_checker_finds_english():
    sources = english_sources()
    assert is_untranslated("skipped", sources) and is_untranslated("Custom Python pass", sources)
    assert is_untranslated("引擎已重启。\nThe engine process died while running the step", sources)
    assert not is_untranslated("Fuse Ops By Pattern", sources)  # a TVM pass name
    assert not is_untranslated("步骤 3（custom.python）", sources)


def test_the_latin_word_rule(qapp):
    """The strict rule of tests/test_gui_zh_e2e.py: Latin words fail unless code, identifiers or numbers."""
    assert latin_words("库：/o/model.so；权重: random") == ["random"]
    assert latin_words("library: /o/model.so") == ["library"]
    assert latin_words("运行方式：python deploy.py") == ["python"]
    assert latin_words("步骤 1（relax.FuseOps）失败：FuseOps 在 llvm -mcpu=native 上 12 ms，float32 (1, 784)") == []
    assert latin_words("保存(&S)　新建(N)　.npy / .npz") == []  # access keys, file extensions
    assert latin_words("Fuse Ops By Pattern 之后", ["Fuse Ops By Pattern"]) == []  # a TVM pass title
    assert latin_words("warm-up") == ["warm", "up"] and latin_words("step 1 failed") == ["step", "failed"]
    said = rich_prose("<p>步骤 1 失败：<code>ValueError: Cannot find global var</code></p><pre>Traceback (most recent)</pre>")
    assert latin_words(said) == []  # what TVM said, as code
    assert latin_words(rich_prose("<p>Cannot find <b>global</b> var</p>")) == ["Cannot", "find", "global", "var"]


def test_a_run_in_chinese_shows_no_english(zh_window):
    win = zh_window
    allowed = _tvm_docs(win)
    doc = PipelineDocument(model="builtin:mlp", steps=[
        Step("relax.LegalizeOps"), Step("relax.FoldConstant", enabled=False),
        Step("custom.python", {"source": "def f(mod):\n    return mod\n"}),
        Step("custom.python", {"source": "def broken(:\n"}), Step("relax.FuseOps")])
    done: list = []
    win.session.run_finished.connect(lambda _rev, result: done.append(result))
    win.files.replace_document(doc, ask=False)
    assert qt_wait(lambda: bool(done), 20_000)
    for step in doc.steps:
        win.pipeline_view.select_uids([step.uid], current=step.uid)
        qt_wait(lambda: False, 150)
        _check(win, allowed)
    # A real crash: the banner names the step in Chinese (the engine's detail is its tooltip).
    win.worker.engine_crashed.emit(win.worker._crash_message(doc, {"index": 2}, "the engine process died (signal 9)"))
    qt_wait(lambda: False, 100)
    assert win.banner.isVisible() and "custom.python" in win.banner.label.text()
    assert "signal 9" in win.banner.label.toolTip()
    _check(win, allowed)
    assert not is_untranslated(win.statusBar().currentMessage(), english_sources())


def test_consent_dialog_in_chinese(zh_window, monkeypatch, tmp_path):
    win = zh_window
    shown: list[ConsentDialog] = []

    def fake_exec(dialog):
        dialog.show()
        qt_wait(lambda: False, 50)
        shown.append(dialog)
        _check(dialog, ())
        return int(QDialog.DialogCode.Rejected)

    monkeypatch.setattr(ConsentDialog, "exec", fake_exec)
    service = win.ctx.consent
    service.store, service.override = consent.ConsentStore(str(tmp_path / "c.json")), None
    win.session.auto_run = False
    win.files.replace_document(PipelineDocument(model="builtin:mlp"), ask=False)
    win.editor.add_pass("custom.python")
    win.session.run_pipeline()
    assert shown, "no consent question"
    service.override = True


def test_environment_report_in_chinese(zh_window):
    win = zh_window
    dialog = win.help.show_environment()
    assert qt_wait(lambda: dialog.report() is not None, 20_000)
    qt_wait(lambda: False, 100)
    _check(dialog, ())
    sources = english_sources()
    body = dialog.text.toPlainText()
    assert "==" in body
    left = [line for line in body.splitlines() if is_untranslated(line, sources)]
    assert not left, left
    dialog.close()
