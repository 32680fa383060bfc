"""One consent model in the GUI (issue 9): code a file brings — a model ``.py`` file, custom step
sources, pattern files — runs only with consent given per content hash (remembered in the
``ConsentStore``), asked in a dialog showing that code; requests send only the consented hashes
(``trusted_hashes``). On the TVM-free fake engine, which refuses a run without consent exactly like
the engine (``pipeline_model.consent``) and records what it refused (``refusals``) and which custom
sources it ran (``custom_sources_run``)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QDialog, QMessageBox  # noqa: E402

from app.consent_service import ConsentDialog  # noqa: E402
from app.undo_commands import AddStepCommand, SetParamCommand  # noqa: E402
from pipeline_model import consent  # noqa: E402
from pipeline_model.document import PipelineDocument, Step  # noqa: E402
from pipeline_model.engine.results import CHANGED, FAILED  # noqa: E402
from tests.conftest import qt_wait  # noqa: E402

SOURCE = "def mark(mod):\n    return mod\n"
MODEL = "import os\nopen({marker!r}, 'w').write('ran')\n"


@pytest.fixture
def studio(fake_studio):
    return fake_studio


@pytest.fixture
def asked(studio, monkeypatch, tmp_path):
    """Record each consent question (the code it shows) and answer from ``answers`` (default: refuse).
    A fresh consent store per test."""
    questions: list[str] = []
    answers: list[bool] = []

    def fake_exec(dialog: ConsentDialog) -> int:
        questions.append(dialog.code_text)
        ok = answers.pop(0) if answers else False
        return int(QDialog.DialogCode.Accepted if ok else QDialog.DialogCode.Rejected)

    monkeypatch.setattr(ConsentDialog, "exec", fake_exec)

    def no_box(*args, **_kw):
        raise AssertionError(f"unexpected message box: {args[1:3]}")

    monkeypatch.setattr(QMessageBox, "critical", staticmethod(no_box))
    service = studio.ctx.consent
    old_store = service.store
    service.store = consent.ConsentStore(str(tmp_path / "consent.json"))
    service.override = None
    studio.session.auto_run = False
    studio.ctrl.undo_stack.setClean()
    studio.files.new_pipeline(force=True)
    studio.fake_client.refusals.clear()
    studio.fake_client.custom_sources_run.clear()
    yield questions, answers
    service.store = old_store
    service.override = True
    studio.session.auto_run = True
    studio.ctrl.undo_stack.setClean()


def _run(win):
    revision = win.ctrl.revision
    done: list = []
    win.session.run_finished.connect(lambda rev, res: done.append(res) if rev == revision else None)
    win.session.run_pipeline()
    assert qt_wait(lambda: bool(done), 20_000), "run never finished"
    return done[0]


def _last_run(fake):
    return [c for c in fake.calls if c[0] == "run"][-1][1]


def test_custom_code_consent_per_content(studio, asked, tmp_path):
    questions, answers = asked
    fake = studio.fake_client
    step = Step("custom.python", {"source": SOURCE})
    studio.ctrl.undo_stack.push(AddStepCommand(studio.ctrl, 0, step))

    # Refused: the dialog showed the code; nothing ran; the engine's message says why.
    result = _run(studio)
    assert len(questions) == 1 and "def mark(mod)" in questions[0]
    assert result.steps[0].state == FAILED and "nothing ran" in result.steps[0].error
    assert _last_run(fake)["trusted_hashes"] == [] and fake.custom_sources_run == []

    # Accepted: only that code's hash is sent, and remembered in the consent file.
    answers.append(True)
    result = _run(studio)
    digest = consent.sha256_text(SOURCE)
    assert result.steps[0].state == CHANGED and _last_run(fake)["trusted_hashes"] == [digest]
    assert digest in json.loads((tmp_path / "consent.json").read_text())["hashes"]
    assert fake.custom_sources_run == [SOURCE]
    # Same content: not asked again.
    _run(studio)
    assert len(questions) == 2

    # Changed not by the user's typing (an undo command, like a file's content): asked again.
    studio.ctrl.undo_stack.push(SetParamCommand(studio.ctrl, step.uid, "source", SOURCE + "# other\n"))
    result = _run(studio)
    assert len(questions) == 3 and "# other" in questions[2] and result.steps[0].state == FAILED


def test_own_edits_in_the_editor_do_not_reprompt(studio, asked):
    questions, answers = asked
    fake = studio.fake_client
    step = Step("custom.python", {"source": SOURCE})
    studio.ctrl.undo_stack.push(AddStepCommand(studio.ctrl, 0, step))
    answers.append(True)
    assert _run(studio).steps[0].state == CHANGED  # "Trust and Run"
    assert len(questions) == 1
    studio.session.auto_run = True
    studio.pipeline_view.select_uids([step.uid])
    editor = studio.inspector.source_editor(step.uid)
    assert editor is not None
    for text in ("x = 1\n", "y = 2\n"):  # typing with pauses: each pause re-runs automatically
        cursor = editor.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        editor.setTextCursor(cursor)
        editor.insertPlainText(text)
        assert qt_wait(lambda t=text: any(t in s for s in fake.custom_sources_run), 20_000), "edit never re-ran"
    assert len(questions) == 1, "the dialog popped up after the user's own edit"
    assert qt_wait(lambda: getattr(studio.step_model.result(step.uid), "state", None) == CHANGED, 20_000)
    # The user's own code is remembered on save (no question after a reopen either).
    own = studio.ctrl.doc.steps[0].params["source"]
    assert studio.ctx.consent.is_trusted(consent.sha256_text(own))


def test_editing_unconsented_code_is_not_laundered(studio, asked):
    questions, _answers = asked
    step = Step("custom.python", {"source": SOURCE + "# from a file\n"})
    studio.ctrl.undo_stack.push(AddStepCommand(studio.ctrl, 0, step))
    studio.pipeline_view.select_uids([step.uid])
    editor = studio.inspector.source_editor(step.uid)
    editor.insertPlainText("# typed\n")
    new = studio.ctrl.doc.steps[0].params["source"]
    assert not studio.ctx.consent.is_trusted(consent.sha256_text(new))
    # An automatic re-run does not ask about it; an explicit Run does.
    assert studio.ctx.consent.for_run(explicit=False) == [] and questions == []
    studio.ctx.consent.for_run(explicit=True)
    assert len(questions) == 1


def test_pipeline_with_model_py_asks_before_the_model_loads(studio, asked, tmp_path):
    questions, answers = asked
    fake = studio.fake_client
    marker = tmp_path / "ran.txt"
    model = tmp_path / "net.py"
    model.write_text(MODEL.format(marker=str(marker)))
    path = tmp_path / "p.json"
    from pipeline_model.fileformat import save_pipeline

    save_pipeline(PipelineDocument(model="net.py", steps=[Step("relax.LegalizeOps")]), str(path))
    studio.session.auto_run = True
    assert studio.files.open_pipeline(str(path))
    assert qt_wait(lambda: bool(questions), 10_000), "no consent question for the model file"
    assert "open(" in questions[0] and str(marker) in questions[0]
    assert qt_wait(lambda: studio.session.last_run is not None and studio.session.last_run.error, 10_000)
    error = studio.session.last_run.error
    assert "nothing ran" in error and str(model) in error and not marker.exists()
    assert fake.refusals and fake.refusals[-1][0]["kind"] == consent.KIND_MODEL
    # Consent, then the file changes on disk: asked again.
    answers.append(True)
    result = _run(studio)
    assert result.error is None and result.steps[0].state == CHANGED
    model.write_text(MODEL.format(marker=str(marker)) + "# changed\n")
    _run(studio)
    assert len(questions) == 3 and "# changed" in questions[2]


def test_open_model_py_asks_first_and_refusal_loads_nothing(studio, asked, tmp_path, monkeypatch):
    questions, _answers = asked
    fake = studio.fake_client
    model = tmp_path / "other.py"
    model.write_text("x = 1\n")
    warnings: list = []
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda *a, **k: warnings.append(a[2])))
    runs_before = len([c for c in fake.calls if c[0] == "run"])
    studio.files.open_model(str(model))
    assert len(questions) == 1 and "x = 1" in questions[0]
    assert warnings and str(model) in warnings[0]
    assert studio.ctrl.doc.model == "builtin:mlp"
    qt_wait(lambda: False, 300)
    assert len([c for c in fake.calls if c[0] == "run"]) == runs_before, "the engine was asked to load it"


def test_consent_dialog_shows_each_item(qtbot, tmp_path):
    model = tmp_path / "m.py"
    model.write_text("print('hi')\n")
    doc = PipelineDocument(model=str(model), steps=[Step("custom.python", {"source": SOURCE})])
    from app.consent_service import document_items, item_code

    items = document_items(doc)
    assert [i.kind for i in items] == [consent.KIND_MODEL, consent.KIND_CUSTOM]
    dialog = ConsentDialog(items, "p.json", [item_code(i, doc) for i in items])
    qtbot.addWidget(dialog)
    assert dialog.tabs.count() == 2 and "print('hi')" in dialog.code_text and "def mark" in dialog.code_text
    assert dialog.refuse_button.isDefault() and dialog.editors[0].isReadOnly()


def test_add_custom_pass_then_run_shows_exactly_the_code_that_runs(studio, monkeypatch, tmp_path):
    """Issue 18: a Custom Python pass added from the palette holds the template; Run asks with that code
    shown (not an empty view), and "Trust and Run" runs exactly the code shown."""
    from pipeline_model.passkinds.custom_python import CUSTOM_TEMPLATE

    dialogs: list[ConsentDialog] = []

    def fake_exec(dialog: ConsentDialog) -> int:
        dialogs.append(dialog)
        return int(QDialog.DialogCode.Accepted)

    monkeypatch.setattr(ConsentDialog, "exec", fake_exec)
    service = studio.ctx.consent
    old_store, service.store, service.override = service.store, consent.ConsentStore(str(tmp_path / "c.json")), None
    studio.session.auto_run = False
    studio.ctrl.undo_stack.setClean()
    studio.files.new_pipeline(force=True)
    fake = studio.fake_client
    fake.custom_sources_run.clear()
    try:
        uid = studio.editor.add_pass("custom.python")
        studio.pipeline_view.select_uids([uid])
        editor = studio.inspector.source_editor(uid)
        assert editor is not None
        shown_in_step = editor.toPlainText()
        assert shown_in_step.strip() == CUSTOM_TEMPLATE.strip()
        result = _run(studio)
        assert len(dialogs) == 1
        dialog = dialogs[0]
        assert [e.toPlainText() for e in dialog.editors] == dialog.codes == [CUSTOM_TEMPLATE]
        assert dialog.codes[0].strip() == shown_in_step.strip()
        assert dialog.editors[0].verticalScrollBarPolicy() != Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        assert result.steps[0].state == CHANGED
        assert fake.custom_sources_run == dialog.codes, "the code that ran is not the code shown"
        assert consent.sha256_text(CUSTOM_TEMPLATE) in _last_run(fake)["trusted_hashes"]
    finally:
        service.store, service.override = old_store, True
        studio.session.auto_run = True
        studio.ctrl.undo_stack.setClean()


def test_consent_dialog_never_consents_to_code_it_did_not_show(studio, monkeypatch, tmp_path):
    """A custom item whose shown code does not hash to the item's hash cannot be consented to."""
    items = [consent.CodeItem(consent.KIND_CUSTOM, "step 1 (custom.python)", None, consent.sha256_text("x = 1\n"), 0,
                              "is custom Python code")]
    doc = PipelineDocument(model="builtin:mlp", steps=[Step("custom.python", {"source": "y = 2\n"})])
    monkeypatch.setattr(ConsentDialog, "exec", lambda _d: int(QDialog.DialogCode.Accepted))
    service = studio.ctx.consent
    old_store, service.store, service.override = service.store, consent.ConsentStore(str(tmp_path / "c.json")), None
    try:
        assert service.ask(items, doc) is False
        assert not service.is_trusted(consent.sha256_text("x = 1\n"))
    finally:
        service.store, service.override = old_store, True


def test_a_step_without_source_is_consented_as_the_template():
    """The engine fills in the template for a step without ``source``: that is the code consent covers."""
    from pipeline_model.passkinds.custom_python import CUSTOM_TEMPLATE

    items = consent.step_items([{"pass": "custom.python", "params": {}}], None)
    assert [i.sha256 for i in items] == [consent.sha256_text(CUSTOM_TEMPLATE)]
