"""Issue 33: the whole Chinese interface on the real engine shows no Latin word outside code, identifiers and
numbers (the rule of ``tests/zh_texts.latin_words``): the main window at start, a builtin model with steps run
(each step selected, a failing one with TVM's error), Build & Run with the check, Where Values Diverge, the library
export's result, File ▸ Export Python Script (written, and refused with its reason), Build & Run and Find Breaking
Step on the failing pipeline, the consent question and what is said once it is declined, the tuning panel at rest,
Preferences and About. Every visible text is read: titles,
labels, buttons, menus and submenus, tooltips, placeholders, combo items, the status bar, item views' cells,
tooltips and headers, rich text outside its code font, and message boxes."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("pytestqt")
pytestmark = [pytest.mark.e2e]

from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QDialog, QFileDialog, QMessageBox  # noqa: E402

from app.consent_service import ConsentDialog  # noqa: E402
from pipeline_model import consent  # noqa: E402
from pipeline_model.document import PipelineDocument, Step  # noqa: E402
from tests.conftest import qt_wait  # noqa: E402
from tests.zh_texts import ir_names, latin_left, latin_words, rich_prose, shown_prose  # noqa: E402

TIMEOUT_MS = 300_000
#: A step TVM refuses on the MLP (its default func_name "main" is not a function of it): TVM's own error text.
FAILING = "relax.Gradient"


@pytest.fixture(scope="module")
def zh_studio(gui_env, engine, qapp, tmp_path_factory):
    """A shown main window in zh_CN on the session engine (the translator installed before the window)."""
    from app.i18n import install_translator
    from app.main_window import MainWindow

    translator = install_translator(qapp, "zh_CN")
    assert translator is not None
    settings = QSettings(str(tmp_path_factory.mktemp("zh") / "s.ini"), QSettings.Format.IniFormat)
    win = MainWindow(client_factory=lambda: engine, close_client=False, settings=settings)
    win.ctx.consent.override = True
    win.resize(1400, 900)
    win.show()
    assert qt_wait(lambda: win.ctx.catalogue.catalogue is not None, TIMEOUT_MS), "no catalogue"
    yield win
    win.ctrl.undo_stack.setClean()
    win.close()
    qapp.removeTranslator(translator)


class Seen:
    """What the walk found: ``(stage, where, text, words)`` of every text with Latin words left."""

    def __init__(self, win) -> None:
        self.win = win
        cat = win.ctx.catalogue.catalogue
        names: set[str] = set()
        for pass_id in cat.ids():
            spec = cat.get(pass_id)
            names |= {spec.id, spec.title}  # TVM's pass names ("Fuse Ops By Pattern")
            names |= {p.name for p in spec.params}
            names |= {str(c) for p in spec.params for c in (p.choices or [])}
        self.identifiers = sorted(names)
        self.found: list[tuple[str, str, str, list[str]]] = []
        self.read = 0  # texts read (the walk saw the interface, not an empty window)

    def window(self, stage: str, widget) -> None:
        qt_wait(lambda: False, 100)
        names = self.identifiers + sorted(ir_names(self.win))  # a dialog names the IR the main window shows
        names += [str(d.get("name") or "") for d in self.win.run_controller.devices  # a GPU's hardware name
                  if d.get("kind") != "cpu"]  # (the CPU's name is the app's: "znver4, 8 cores", translated)
        self.read += len(shown_prose(widget))
        self.found += [(stage, where, text, words) for where, text, words in latin_left(widget, names)]

    def text(self, stage: str, where: str, text: str) -> None:
        words = latin_words(rich_prose(text), self.identifiers)
        if words:
            self.found.append((stage, where, text[:300], words))


@pytest.fixture
def boxes(monkeypatch):
    """Message boxes record their title and texts instead of waiting for a click."""
    shown: list[tuple[str, str]] = []

    def record(answer):
        def box(parent, title, text, *args, **kwargs):
            shown.append((title, text))
            return answer
        return staticmethod(box)

    for name, answer in (("information", QMessageBox.StandardButton.Ok), ("warning", QMessageBox.StandardButton.Ok),
                         ("critical", QMessageBox.StandardButton.Ok), ("question", QMessageBox.StandardButton.No),
                         ("about", None)):
        monkeypatch.setattr(QMessageBox, name, record(answer))
    return shown


def _run(win, doc: PipelineDocument) -> None:
    done: list = []
    win.session.run_finished.connect(lambda _rev, result: done.append(result))
    win.files.replace_document(doc, ask=False)
    assert qt_wait(lambda: bool(done) and not win.act_stop.isEnabled(), TIMEOUT_MS), "the run did not end"


def _engine_call(win, start) -> object:
    got: list = []
    win.run_controller.finished.connect(lambda kind, value: got.append(value))
    win.run_controller.failed.connect(lambda kind, message: got.append(message))
    assert start()
    assert qt_wait(lambda: bool(got), TIMEOUT_MS), "no answer from the engine"
    win.raise_run_panel()
    return got[0]


def test_the_chinese_interface_shows_no_latin_words(zh_studio, boxes, monkeypatch, tmp_path):
    win = zh_studio
    seen = Seen(win)
    seen.window("start", win)

    doc = PipelineDocument(model="builtin:mlp", steps=[
        Step("relax.LegalizeOps"), Step("relax.FoldConstant", enabled=False), Step("relax.FuseOps"),
        Step("relax.FuseTIR")])
    _run(win, doc)
    for step in doc.steps:
        win.pipeline_view.select_uids([step.uid], current=step.uid)
        seen.window(f"run/{step.pass_id}", win)

    win.pipeline_view.select_uids([doc.steps[-1].uid], current=doc.steps[-1].uid)
    win.run_panel.random_radio.setChecked(True)
    built = _engine_call(win, win.run_controller.build_and_run)
    assert isinstance(built, dict) and built["check"]["passed"], built
    seen.window("build", win)
    _diverge(win, seen)

    exported = _engine_call(win, lambda: win.run_controller.export_library(str(tmp_path / "lib")))
    assert isinstance(exported, dict), exported
    seen.window("export", win)

    script = str(tmp_path / "pipeline.py")  # File ▸ Export Python Script…
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (script, "")))
    win.files.export_script_dialog()
    assert os.path.exists(script) and script in win.statusBar().currentMessage()
    seen.window("export script", win)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(tmp_path), "")))
    win.files.export_script_dialog()  # a folder: refused, the reason as code under the app's sentence
    assert boxes and boxes[-1][0] == "无法导出脚本", boxes

    failing = PipelineDocument(model="builtin:mlp", steps=[Step(FAILING), Step("relax.LegalizeOps")])
    _run(win, failing)
    win.pipeline_view.select_uids([failing.steps[0].uid], current=failing.steps[0].uid)
    seen.window("failed step", win)
    assert win.diff_view.error_text.toPlainText(), "no error text shown"
    win.pipeline_view.select_uids([failing.steps[1].uid], current=failing.steps[1].uid)
    seen.window("after the failed step", win)
    built = _engine_call(win, win.run_controller.build_and_run)
    seen.window("build of a failed pipeline", win)
    _bisect(win, seen)

    win.raise_dock(win.tuning_dock) if hasattr(win, "raise_dock") else win.tuning_dock.raise_()
    seen.window("tuning", win)

    _consent(win, seen, monkeypatch, tmp_path)

    about = win.help.about_text()
    seen.text("about", "about", about)
    from app.preferences import PreferencesDialog
    prefs = PreferencesDialog(win.settings, win)
    prefs.show()
    seen.window("preferences", prefs)
    prefs.close()
    for title, text in boxes:
        seen.text("message box", title, title + "\n" + text)
    first: dict = {}
    for stage, where, text, words in seen.found:  # each text once, with the first stage that showed it
        first.setdefault((where, text), (stage, words))
    report = "\n".join(f"[{stage}] {where}: {words} in {text!r}" for (where, text), (stage, words) in first.items())
    assert not seen.found, report
    assert seen.read > 2000, seen.read


def _diverge(win, seen: Seen) -> None:
    """Run ▸ Where Values Diverge… on the selected step: the dialog's table and verdict."""
    replies: list = []
    win.diverger.finished.connect(replies.append)
    win.diverger.failed.connect(replies.append)
    assert win.diverger.show_dialog()
    assert qt_wait(lambda: bool(replies), TIMEOUT_MS), "no diverge answer"
    assert isinstance(replies[0], dict), replies[0]
    seen.window("diverge", win.diverger.dialog)
    win.diverger.dialog.close()


def _bisect(win, seen: Seen) -> None:
    """Run ▸ Find Breaking Step… on the failing pipeline: the dialog's result."""
    win.act_bisect.trigger()
    dialog = win.bisector.dialog
    reports: list = []
    win.bisector.finished.connect(reports.append)
    win.bisector.failed.connect(reports.append)
    assert win.bisector.find()
    assert qt_wait(lambda: bool(reports), TIMEOUT_MS), "no bisect answer"
    seen.window("bisect", dialog)
    dialog.close()


def _consent(win, seen: Seen, monkeypatch, tmp_path) -> None:
    """The consent question of a custom step, and what the GUI says once it was declined."""
    asked: list = []

    def decline(dialog):
        dialog.show()
        seen.window("consent", dialog)
        asked.append(dialog)
        return int(QDialog.DialogCode.Rejected)

    monkeypatch.setattr(ConsentDialog, "exec", decline)
    service = win.ctx.consent
    service.store, service.override = consent.ConsentStore(str(tmp_path / "c.json")), None
    try:
        doc = PipelineDocument(model="builtin:mlp", steps=[
            Step("custom.python", {"source": "def f(mod):\n    return mod\n"})])
        win.session.auto_run = False
        win.files.replace_document(doc, ask=False)
        win.session.run_pipeline()
        assert qt_wait(lambda: bool(asked) and not win.act_stop.isEnabled(), TIMEOUT_MS), "no consent question"
        win.pipeline_view.select_uids([doc.steps[0].uid], current=doc.steps[0].uid)
        seen.window("consent declined", win)
    finally:
        service.override = True
        win.session.auto_run = True
