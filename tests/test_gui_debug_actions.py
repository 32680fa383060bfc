"""The debugging GUI (issue 21) on a TVM-free fake engine: the breaking step marked in the pipeline list (and the
marks cleared by an edit), Save Reproducer… on a failed step's context menu and on the bisection's culprit, and the
Reduce dialog's progress and Stop. The fake below models the protocol of ``bisect``, ``save_reproducer`` and the
``reduce_*`` commands (its modules are lists of numbered bindings and say they are fake); what is tested is what
the GUI does with the answers. The engine side is tested in ``tests/test_debug_*.py``."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from typing import Any, Optional

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QFileDialog  # noqa: E402

from pipeline_model import consent as consent_mod  # noqa: E402
from pipeline_model.debugging import reproducer  # noqa: E402
from pipeline_model.document import PipelineDocument, Step  # noqa: E402
from pipeline_model.engine.client import EngineError  # noqa: E402
from pipeline_model.engine.context import ConsentError  # noqa: E402
from tests.conftest import answer_of, qt_wait, shown_window  # noqa: E402
from tests.fake_engine import FakeEngineClient  # noqa: E402
from widgets.step_model import BisectRole, StateRole  # noqa: E402

#: The binding the fake reproducer needs: a module (a list of binding numbers) "fails" while it holds it.
NEEDED = 13


class DebugFakeEngine(FakeEngineClient):
    """The fake engine plus the debugging commands' protocol. ``bisect``: the culprit is the first enabled
    ``custom.python`` step (a fake rule), with the engine's events and report shape. ``save_reproducer``: a
    reproducer folder whose module is ``START`` bindings. ``reduce_*``: candidates keep the first or the last
    part of the list; a module is "interesting" while it holds :data:`NEEDED`; ``reduce_check`` needs consent
    to the folder's ``repro.py`` (as the engine) and takes one of ``permits`` (a test holds checks back)."""

    START = 40

    def __init__(self) -> None:
        super().__init__()
        self.permits = threading.Semaphore(10_000)
        #: A "hang" reproducer: a check of a module holding NEEDED ends the engine past the watchdog (a new one starts).
        self.hang = False
        self.crashed: list[str] = []
        self.checks = 0
        self.modules: dict[str, list[int]] = {}

    def request(self, cmd: str, args: Optional[dict] = None, on_event: Any = None) -> dict:
        if cmd == "bisect":
            return self._bisect(dict(args or {}), on_event or (lambda _n, _d: None))
        if cmd == "save_reproducer":
            self.calls.append((cmd, dict(args or {})))
            return self._save(dict(args or {}))
        if cmd.startswith("reduce_"):
            fields = self.consent.fields()
            self.calls.append((cmd, {k: v for k, v in (args or {}).items() if k != "module_json"}))
            return getattr(self, "_" + cmd)(dict(args or {}), fields)
        return super().request(cmd, args, on_event)

    # ---- bisect ----------------------------------------------------------------------------------
    def _bisect(self, args: dict, emit: Any) -> dict:
        self.calls.append(("bisect", args))
        steps = args["run"]["steps"]
        culprit = next((i + 1 for i, s in enumerate(steps) if s["pass"] == "custom.python" and s.get("enabled", True)),
                       None)
        n = len(steps)
        tested = [self._tested(n, steps, "fail" if culprit else "pass", 0.5 if culprit else 1e-7)]
        emit("bisect_progress", {"message": f"fake: step {n} tested", "builds": 1, "budget": 3, "tested": 1})
        if culprit is None:
            return {"ok": True, "builds": 1, "max_builds": 3, "tested": tested, "message": "fake: the pipeline is correct"}
        if culprit > 1:
            tested.append(self._tested(culprit - 1, steps, "pass", 1e-7))
        if culprit < n:
            tested.append(self._tested(culprit, steps, "fail", 0.5))
        return {"ok": False, "culprit_step": culprit, "culprit_pass_id": steps[culprit - 1]["pass"],
                "builds": len(tested), "max_builds": 3, "tested": tested, "method": "bisect",
                "failure": {"kind": "numeric", "max_abs_over_ref": 0.5, "error": ""},
                "message": f"fake: step {culprit} breaks the model"}

    @staticmethod
    def _tested(step: int, steps: list, outcome: str, ratio: float) -> dict:
        return {"position": step, "step": step, "pass_id": steps[step - 1]["pass"], "outcome": outcome,
                "built": True, "ran": True, "max_abs_over_ref": ratio, "ms": 10.0}

    # ---- save_reproducer -------------------------------------------------------------------------
    def _save(self, args: dict) -> dict:
        return self._write(str(args["out_dir"]), list(range(self.START)), str(args.get("kind") or "exception"),
                           int(args.get("step_index") or 0), "", bool(args.get("overwrite")))

    def _write_kind(self) -> str:
        return "hang" if self.hang else "exception"

    @staticmethod
    def _write(folder: str, bindings: list[int], kind: str, index: int, note: str, overwrite: bool = False) -> dict:
        spec = reproducer.ReproSpec(
            kind=kind, expected=reproducer.expected_for(kind, "ValueError: fake failure"), target={"kind": "llvm"},
            pass_context={}, module_text=f"# fake module: bindings {json.dumps(bindings)}\n", step_index=index,
            pass_id="custom.python", bindings=len(bindings), note=note)
        names = reproducer.write_folder(folder, reproducer.spec_files(spec), overwrite=overwrite)
        return {"folder": folder, "files": names, "kind": kind, "bindings": len(bindings)}

    # ---- reduce ----------------------------------------------------------------------------------
    def _module(self, bindings: list[int]) -> dict:
        text = json.dumps(bindings)
        key = "fake-reduce:" + hashlib.sha256(text.encode()).hexdigest()[:12]
        self.modules[key] = bindings
        return {"key": key, "module_json": text, "bindings": len(bindings), "elements": 0}

    def _of(self, args: dict) -> list[int]:
        """The module of a request: by key, else from its JSON (then held under that key, as the engine does)."""
        key = str(args.get("key") or "")
        if key not in self.modules:
            self.modules[key] = json.loads(args["module_json"])
        return self.modules[key]

    def _reduce_prepare(self, args: dict, _fields: dict) -> dict:
        text = reproducer.read_spec(str(args["folder"])).module_text
        return self._module(json.loads(text.split("bindings ", 1)[1]))

    def _reduce_candidates(self, args: dict, _fields: dict) -> dict:
        n = len(self._of(args))
        cuts = [a for i, a in enumerate([n // 2, n // 4, 3 * n // 4, n - 1]) if a > 0 and a not in [n // 2, n // 4,
                                                                                                  3 * n // 4][:i]]
        return {"candidates": [{"op": "cut", "function": "main", "at": a} for a in cuts]
                + [{"op": "params", "function": "main", "at": a} for a in cuts]}

    def _reduce_apply(self, args: dict, _fields: dict) -> dict:
        bindings, cand = self._of(args), args["candidate"]
        at = int(cand["at"])
        return self._module(bindings[:at] if cand["op"] == "cut" else bindings[at:])

    def _reduce_check(self, args: dict, fields: dict) -> dict:
        item = consent_mod.reproducer_item(str(args["folder"]))
        if consent_mod.missing_consent([item], fields.get("trusted_hashes") or [], bool(fields.get("trust_all"))):
            raise EngineError(str(ConsentError("reducing runs the reproducer's repro.py: not consented to")))
        self.permits.acquire(timeout=30)
        self.checks += 1
        if self.hang and NEEDED in self._of(args):
            from pipeline_model.engine.client import EngineCrashed

            self.crashed.append(str(args.get("key")))
            self.modules.clear()  # the engine's cache went with it
            self.pid += 1
            raise EngineCrashed("the 'reduce_check' request did not answer within 3 s; the engine was restarted",
                                exit_code=-9, timed_out=True)
        return {"interesting": NEEDED in self._of(args), "seen": {}}

    def _reduce_write(self, args: dict, _fields: dict) -> dict:
        bindings = self._of(args)
        return self._write(str(args["out_dir"]), bindings, self._write_kind(), 0, f"fake reduction of {args['original']}",
                           bool(args.get("overwrite")))


@pytest.fixture
def studio(gui_env, qapp):
    client = DebugFakeEngine()
    with shown_window(client, 20_000, close_client=False) as win:
        win.fake_client = client
        yield win


def _open(win, steps: list[Step]) -> PipelineDocument:
    doc = PipelineDocument(name="debug", model="builtin:mlp", target={"kind": "llvm"}, steps=steps)
    assert win.files.replace_document(doc, ask=False)
    win.session.run_pipeline()
    assert qt_wait(lambda: all(win.step_model.result(s.uid) is not None for s in doc.steps)
                   and not win.act_stop.isEnabled(), 20_000)
    return win.ctrl.doc


def _bisect(win) -> Any:
    win.act_bisect.trigger()
    report = answer_of(win.bisector, win.bisector.find)
    assert not isinstance(report, str), report
    return report


def _index(win, uid: str):
    return win.step_model.index(win.ctrl.doc.index_of(uid))


CUSTOM = "def transform(mod):\n    return mod\n"


def test_the_breaking_step_is_marked_until_the_pipeline_is_edited(studio):
    win = studio
    doc = _open(win, [Step("relax.LegalizeOps"), Step("relax.FoldConstant"), Step("custom.python", {"source": CUSTOM}),
                      Step("relax.LegalizeOps")])
    before_icon = _index(win, doc.steps[2].uid).data(Qt.ItemDataRole.DecorationRole).pixmap(16, 16).toImage()
    report = _bisect(win)
    assert report.culprit_step == 3
    uids = [s.uid for s in doc.steps]
    culprit = _index(win, uids[2])
    assert culprit.data(BisectRole) == "culprit" and win.bisector.culprit_uid() == uids[2]
    assert win.pipeline_view.selected_uids() == [uids[2]]
    tip = culprit.data(Qt.ItemDataRole.ToolTipRole)
    assert "breaking step found by bisect: max |diff|/max |ref| 0.5" in tip
    assert "breaking step" in culprit.data(Qt.ItemDataRole.DisplayRole)
    assert culprit.data(Qt.ItemDataRole.BackgroundRole) is not None and culprit.data(Qt.ItemDataRole.FontRole).bold()
    assert culprit.data(Qt.ItemDataRole.DecorationRole).pixmap(16, 16).toImage() != before_icon
    # The tested steps: the one before is good, the last one bad; an untested step has no mark.
    assert _index(win, uids[1]).data(BisectRole) == "pass" and "is right" in _index(win, uids[1]).data(
        Qt.ItemDataRole.ToolTipRole)
    assert _index(win, uids[3]).data(BisectRole) == "fail"
    assert _index(win, uids[0]).data(BisectRole) is None
    # Undoable edit: the marks and the report go.
    win.editor.toggle_step(uids[0], False)
    assert all(_index(win, u).data(BisectRole) is None for u in uids)
    assert win.bisector.report is None and win.bisector.culprit_uid() == ""
    assert "breaking step" not in _index(win, uids[2]).data(Qt.ItemDataRole.ToolTipRole)
    # Marked again by a new bisection, cleared by undo too.
    win.ctrl.undo_stack.undo()
    _bisect(win)
    assert _index(win, uids[2]).data(BisectRole) == "culprit"
    win.ctrl.undo_stack.redo()
    assert _index(win, uids[2]).data(BisectRole) is None


def test_context_menu_saves_a_reproducer_of_the_failed_step(studio, tmp_path, monkeypatch):
    win = studio
    doc = _open(win, [Step("relax.LegalizeOps"), Step("custom.python", {"source": "def transform(mod)\n"})])
    uids = [s.uid for s in doc.steps]
    assert _index(win, uids[1]).data(StateRole) == "failed"
    names = [a.objectName() for a in win.pipeline_view.context_menu(uids[0]).actions()]
    assert "saveReproducerAction" not in names  # a step that did not fail has none
    menu = win.pipeline_view.context_menu(uids[1])
    save = next(a for a in menu.actions() if a.objectName() == "saveReproducerAction")
    assert save.text() == "Save Reproducer…"
    folder = str(tmp_path / "repro")
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: folder)
    saved: list = []
    win.reproducers.saved.connect(saved.append)
    win.reproducers.failed.connect(saved.append)
    save.trigger()
    assert qt_wait(lambda: bool(saved), 10_000)
    assert saved == [folder] and os.path.isfile(os.path.join(folder, "repro.py"))
    args = [a for c, a in win.fake_client.calls if c == "save_reproducer"][-1]
    assert args["step_index"] == 1 and args["out_dir"] == folder and args["kind"] == "exception"
    assert "syntax error" in args["error"]


def test_context_menu_saves_the_bisect_reproducer_of_the_culprit(studio, tmp_path, monkeypatch):
    win = studio
    doc = _open(win, [Step("relax.LegalizeOps"), Step("custom.python", {"source": CUSTOM}), Step("relax.LegalizeOps")])
    uids = [s.uid for s in doc.steps]
    assert "saveReproducerAction" not in [a.objectName() for a in win.pipeline_view.context_menu(uids[1]).actions()]
    _bisect(win)
    bisect_args = [a for c, a in win.fake_client.calls if c == "bisect"][-1]
    menu = win.pipeline_view.context_menu(uids[1])
    save = next(a for a in menu.actions() if a.objectName() == "saveReproducerAction")
    folder = str(tmp_path / "culprit")
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: folder)
    saved: list = []
    win.reproducers.saved.connect(saved.append)
    save.trigger()
    assert qt_wait(lambda: bool(saved), 10_000)
    args = [a for c, a in win.fake_client.calls if c == "save_reproducer"][-1]
    # Like ``main.py bisect --reproducer``: the numerics failure after the culprit, the bisection's inputs/tolerances.
    assert args["kind"] == "numeric" and args["step_index"] == 1 and not args["run_after"]
    # (empty tolerance fields: bisect judged as Build & Run does; the reproducer's own check is float32's 1e-4)
    assert bisect_args["check"] == {"rtol": None, "atol": None}
    assert args["check"] == {"rtol": 1e-4, "atol": 1e-4}
    assert args["inputs"] == bisect_args["inputs"]
    win.editor.toggle_step(uids[0], False)  # an edit: the culprit is no longer one
    assert not win.reproducers.can_save(uids[1])


def _saved_reproducer(win, tmp_path) -> str:
    folder = str(tmp_path / "repro")
    DebugFakeEngine._write(folder, list(range(DebugFakeEngine.START)), "exception", 1, "")
    return folder


def test_reduce_dialog_progress_and_result(studio, tmp_path):
    win = studio
    folder = _saved_reproducer(win, tmp_path)
    win.act_reduce.trigger()
    dialog = win.reducer.show_dialog(folder)
    assert dialog.isVisible() and dialog.output_edit.text() == folder + "-reduced"
    assert "40 binding(s)" in dialog.about.text()
    out = answer_of(win.reducer, win.reducer.start)
    assert isinstance(out, dict), out
    assert out["bindings_before"] == 40 and out["bindings_after"] == 1 and out["stopped"].startswith("no smaller")
    reduced = reproducer.read_spec(folder + "-reduced")
    assert f"[{NEEDED}]" in reduced.module_text
    assert dialog.counts.text() == f"Checks: {out['checks']} · bindings: 1 (at the start: 40)"
    assert dialog.accepted_list.count() == len(out["accepted"]) > 0
    assert "1 binding(s) left" in dialog.accepted_list.item(dialog.accepted_list.count() - 1).text()
    assert dialog.reduce_button.isEnabled() and not dialog.stop_button.isEnabled()
    # The client carried the consent to this repro.py (a check without it is refused by the fake, as by the engine).
    sha = consent_mod.reproducer_item(folder).sha256
    assert sha in (win.fake_client.consent.fields().get("trusted_hashes") or [])


def test_reduce_stop_keeps_and_writes_the_best_so_far(studio, tmp_path):
    win = studio
    folder = _saved_reproducer(win, tmp_path)
    dialog = win.reducer.show_dialog(folder)
    out_dir = str(tmp_path / "chosen")
    dialog.output_edit.setText(out_dir)
    fake = win.fake_client
    done: list = []
    win.reducer.finished.connect(done.append)
    win.reducer.failed.connect(done.append)
    # Let the first check (the reproducer itself) and the first reduction through, then hold the next check.
    fake.permits = threading.Semaphore(2)
    assert win.reducer.start()
    assert not dialog.reduce_button.isEnabled() and dialog.stop_button.isEnabled()
    assert qt_wait(lambda: fake.checks == 2 and "bindings: 20 " in dialog.counts.text(), 10_000), dialog.counts.text()
    checks_at = fake.checks
    shown = dialog.counts.text()
    assert shown == "Checks: 1 · bindings: 20 (at the start: 40)"
    win.reducer.stop()
    assert not dialog.stop_button.isEnabled() and "Stopping" in dialog.status.text()
    fake.permits.release(100)
    assert qt_wait(lambda: bool(done), 20_000)
    out = done[0]
    assert isinstance(out, dict), out
    assert out["stopped"] == "stopped" and out["folder"] == out_dir
    assert out["bindings_after"] in (15, 20) and fake.checks <= checks_at + 1, (out, fake.checks, shown)
    written = reproducer.read_spec(out_dir)
    assert written.bindings == out["bindings_after"] and f"{NEEDED}" in written.module_text
    assert "stopped" in dialog.status.text() and dialog.reduce_button.isEnabled()


def test_reduce_refuses_without_consent_and_with_a_bad_folder(studio, tmp_path, monkeypatch):
    win = studio
    folder = _saved_reproducer(win, tmp_path)
    dialog = win.reducer.show_dialog(folder)
    win.ctx.consent.override = None
    asked: list = []
    monkeypatch.setattr(win.ctx.consent, "ask", lambda items, doc=None: asked.append(items) or False)
    assert not win.reducer.start()
    assert asked and asked[0][0].kind == consent_mod.KIND_REPRO and asked[0][0].path == os.path.join(folder, "repro.py")
    assert "not consented" in dialog.status.text()
    assert not [c for c, _a in win.fake_client.calls if c.startswith("reduce_")]
    dialog.input_edit.setText(str(tmp_path))
    assert not win.reducer.start() and "reproducer folder" in dialog.status.text()


def test_save_and_reduce_opens_the_dialog_on_the_saved_folder(studio, tmp_path, monkeypatch):
    win = studio
    doc = _open(win, [Step("relax.LegalizeOps"), Step("custom.python", {"source": "def transform(mod)\n"})])
    menu = win.pipeline_view.context_menu(doc.steps[1].uid)
    action = next(a for a in menu.actions() if a.objectName() == "saveAndReduceAction")
    folder = str(tmp_path / "saved")
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: folder)
    action.trigger()
    assert qt_wait(lambda: win.reducer.dialog is not None and win.reducer.dialog.isVisible(), 10_000)
    assert win.reducer.dialog.input_edit.text() == folder
    assert win.reducer.dialog.output_edit.text() == folder + "-reduced"
    assert win.reducer.request is None  # the user starts it (and may choose another output folder)


def test_a_hanging_candidate_restarts_the_engine_and_is_no_app_crash(studio, tmp_path):
    win = studio
    fake = win.fake_client
    fake.hang = True
    folder = str(tmp_path / "repro")
    DebugFakeEngine._write(folder, list(range(DebugFakeEngine.START)), "hang", 1, "")
    crashes: list = []
    restarts: list = []
    win.worker.engine_crashed.connect(crashes.append)
    win.worker.engine_restarted.connect(lambda: restarts.append(1))
    dialog = win.reducer.show_dialog(folder)
    out = answer_of(win.reducer, win.reducer.start)
    assert isinstance(out, dict), out
    # Every check of a module holding the binding "hung": each counted as reproduced, the engine started again.
    assert out["bindings_after"] == 1 and len(fake.crashed) == len(out["accepted"]) + 1, (out, fake.crashed)
    assert out["restarted"] and restarts, out  # the app forgets the old engine's modules (graphs)...
    assert not crashes and not win.banner.isVisible()  # ...and reports no crash
    assert reproducer.read_spec(out["folder"]).module_text.endswith(f"[{NEEDED}]\n")
    assert "1 binding(s) left" in dialog.accepted_list.item(dialog.accepted_list.count() - 1).text()


def test_the_pipeline_list_paints_the_culprit_bar_and_tint(qapp):
    # The app's style sheet (``QListView#pipelineList::item``) would leave the row's BackgroundRole out; the view's
    # delegate paints it and the culprit's violet bar (the bar also over the selection).
    from PySide6.QtGui import QColor

    from widgets.pipeline_view import PipelineView
    from widgets.step_model import CULPRIT_COLOUR, QtPipelineModel

    doc = PipelineDocument(steps=[Step("relax.LegalizeOps"), Step("custom.python"), Step("relax.FuseOps")])
    model = QtPipelineModel(doc)
    view = PipelineView(model)
    view.list.setStyleSheet("QListView#pipelineList::item { padding: 3px 2px; border-bottom: 1px solid gray; }")
    view.resize(320, 240)
    model.set_bisect_marks({doc.steps[1].uid: ("culprit", "breaking step found by bisect")})
    view.show()
    qt_wait(lambda: view.isVisible(), 2000)
    rect = view.list.visualRect(view.proxy.index(1, 0))
    image = view.list.viewport().grab().toImage()
    bar = image.pixelColor(rect.left() + 1, rect.center().y())
    assert bar.name() == QColor(CULPRIT_COLOUR).name()
    inside = image.pixelColor(rect.right() - 4, rect.center().y())
    plain = image.pixelColor(rect.right() - 4, view.list.visualRect(view.proxy.index(2, 0)).center().y())
    assert inside != plain and inside.blue() > inside.green(), (inside.name(), plain.name())
    view.select_uids([doc.steps[1].uid])
    qapp.processEvents()
    image = view.list.viewport().grab().toImage()
    assert image.pixelColor(rect.left() + 1, rect.center().y()).name() == QColor(CULPRIT_COLOUR).name()
    view.close()


def test_the_consent_dialog_shows_the_reproducers_code(qapp, tmp_path):
    from app.consent_service import ConsentDialog, item_code

    folder = str(tmp_path / "repro")
    DebugFakeEngine._write(folder, [1, 2, 3], "exception", 0, "")
    item = consent_mod.reproducer_item(folder)
    dialog = ConsentDialog([item], folder, [item_code(item)])
    assert "MODULE_TEXT" in dialog.code_text and "def attempt" in dialog.code_text
    from PySide6.QtWidgets import QLabel

    intro = " ".join(label.text() for label in dialog.findChildren(QLabel))
    assert "Reproducer script" in intro and os.path.join(folder, "repro.py") in intro
    assert dialog.tabs.tabText(0) == "repro.py" and dialog.run_button.isEnabled()
    dialog.close()
