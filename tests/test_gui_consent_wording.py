"""Issue 33: after the user declines to run a file's code, the app says so in its own words — what was not
allowed and how to allow it in the app — never the command line's advice ("run with --trust"), and in
Chinese too (GUI logic, fake engine)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from pipeline_model.document import PipelineDocument, Step  # noqa: E402
from pipeline_model.engine.results import FAILED  # noqa: E402
from tests.conftest import qt_wait  # noqa: E402

SOURCE = "def transform(mod):\n    return mod\n"


def _declined_run(win):
    win.ctx.consent.override = False  # the user answers "Don't Run"
    try:
        doc = PipelineDocument(model="builtin:mlp", steps=[Step("relax.LegalizeOps"),
                                                             Step("custom.python", {"source": SOURCE})])
        win.files.replace_document(doc, ask=False)
        win.session.run_pipeline()
        step = doc.steps[1]
        assert qt_wait(lambda: (r := win.step_model.result(step.uid)) is not None and r.state == FAILED, 20_000)
        return win.step_model.result(step.uid).error, win.session.run_label.text()
    finally:
        win.ctx.consent.override = True
        win.ctrl.undo_stack.setClean()


def test_declined_code_is_explained_in_the_apps_words(fake_studio):
    error, summary = _declined_run(fake_studio)
    assert "--trust" not in error and "--trust" not in summary
    assert "Trust and Run" in error and "step 2" in error


def test_declined_code_is_explained_in_chinese(fake_studio, qapp):
    from app.i18n import install_translator

    translator = install_translator(qapp, "zh_CN")
    try:
        error, summary = _declined_run(fake_studio)
    finally:
        qapp.removeTranslator(translator)
    assert "--trust" not in error and "--trust" not in summary
    assert "F5" in error and not error.startswith("nothing ran")
