"""Custom Python code in a pipeline runs only when trusted: asked once per content (remembered in the
settings), shown before it runs, asked again when the code changes; refused → none of it runs.

On the TVM-free fake engine (``fake_studio``): the GUI's part is the question and the trust flag it
sends; the fake records which custom sources it was allowed to run (``custom_sources_run``). That the
real engine refuses untrusted code is tested in ``test_engine.py`` / ``test_custom_pass.py``."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QDialog  # noqa: E402

from app.trust import TrustDialog  # noqa: E402
from app.undo_commands import AddStepCommand, SetParamCommand  # noqa: E402
from pipeline_model.document import Step  # noqa: E402
from pipeline_model.engine.results import CHANGED, FAILED  # noqa: E402
from tests.conftest import qt_wait  # noqa: E402

SOURCE = '''
import tvm

def mark(mod):
    with open({marker!r}, "a") as handle:
        handle.write("ran\\n")
    return tvm.relax.transform.LegalizeOps()(mod)
'''


@pytest.fixture
def studio(fake_studio):
    """The module window on the fake engine."""
    return fake_studio


@pytest.fixture
def asked(studio, monkeypatch):
    """Record each trust question (the code it shows) and answer with ``answers`` (pop from the front)."""
    questions: list[str] = []
    answers: list[bool] = []

    def fake_exec(dialog: TrustDialog) -> int:
        questions.append(dialog.code.toPlainText())
        ok = answers.pop(0) if answers else False
        return int(QDialog.DialogCode.Accepted if ok else QDialog.DialogCode.Rejected)

    monkeypatch.setattr(TrustDialog, "exec", fake_exec)
    studio.ctx.trust.override = None
    studio.session.auto_run = False
    studio.ctrl.undo_stack.setClean()
    studio.files.new_pipeline(force=True)
    yield questions, answers
    studio.ctx.trust.override = True
    studio.session.auto_run = True


def _run(win):
    revision = win.ctrl.revision
    done: list = []
    win.session.run_finished.connect(lambda rev, res: done.append(res) if rev == revision else None)
    win.session.run_pipeline()
    assert qt_wait(lambda: bool(done), 120_000), "run never finished"
    return done[0]


def test_trust_asked_once_per_content_and_refusal_runs_nothing(studio, asked, tmp_path):
    questions, answers = asked
    marker = tmp_path / "marker.txt"
    source = SOURCE.format(marker=str(marker))
    step = Step(pass_id="custom.python", params={"source": source})
    studio.ctrl.undo_stack.push(AddStepCommand(studio.ctrl, 0, step))

    fake = studio.fake_client
    ran = fake.custom_sources_run
    ran.clear()

    # Refused: the question showed the code; the step fails with the engine's trust message; nothing ran.
    answers.append(False)
    result = _run(studio)
    assert len(questions) == 1 and str(marker) in questions[0] and "def mark(mod)" in questions[0]
    assert result.steps[0].state == FAILED and "trust" in (result.steps[0].error or "").lower()
    assert fake.calls[-1][0] == "run" and fake.calls[-1][1]["trust"] is False
    assert ran == []

    # Accepted: runs; the hash is remembered in the settings.
    answers.append(True)
    result = _run(studio)
    assert len(questions) == 2
    assert result.steps[0].state == CHANGED, result.steps[0].error
    assert fake.calls[-1][1]["trust"] is True and ran == [source]

    # Same content: not asked again.
    result = _run(studio)
    assert len(questions) == 2 and result.steps[0].state == CHANGED
    from app import settings as app_settings

    assert app_settings.trusted_hashes(app_settings.app_settings()), "trust not stored in the settings"

    # Changed content: asked again; refusing stops the new code.
    studio.ctrl.undo_stack.push(SetParamCommand(studio.ctrl, step.uid, "source", source + "\n# edited\n"))
    answers.append(False)
    ran.clear()
    result = _run(studio)
    assert len(questions) == 3 and "# edited" in questions[2]
    assert result.steps[0].state == FAILED and fake.calls[-1][1]["trust"] is False and ran == []


def test_trust_dialog_shows_code_and_defaults_to_refusal(qtbot):
    dialog = TrustDialog([(2, "custom.python", "def f(mod):\n    return mod\n")], "/tmp/p.json")
    qtbot.addWidget(dialog)
    assert "def f(mod)" in dialog.code.toPlainText() and "step 2" in dialog.code.toPlainText()
    assert dialog.code.isReadOnly()
    assert dialog.refuse_button.isDefault()
