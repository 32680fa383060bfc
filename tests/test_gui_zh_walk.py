"""Issue 33 on the fake engine: what the real-engine walk (``tests/test_gui_zh_e2e.py``) does not open, in zh_CN,
under the strict rule (no Latin word outside code, identifiers and numbers; ``tests/zh_texts.latin_words``):
the graph scene — every node's hover tooltip, the painted box titles and subtitles and frame labels (groups
collapsed and expanded), the selected node's details, the find bar, the "where values diverge" legend and its
tooltips — and every dialog reachable from the menus: each action of each menu is triggered in turn, the dialogs
and message boxes it opens are read and closed (file choosers answer "cancelled"), plus the Reduce dialog on a
reproducer folder and the exporter's refusals."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QApplication, QDialog, QFileDialog, QInputDialog, QMessageBox, QWidget  # noqa: E402

from pipeline_model.document import PipelineDocument, Step  # noqa: E402
from tests.conftest import qt_wait  # noqa: E402
from tests.zh_texts import catalogue_names, ir_names, latin_left, latin_words, rich_prose, shown_prose  # noqa: E402

#: Menu actions the walk does not trigger: they end or restart what the walk reads.
SKIPPED = ("act_quit", "act_restart_engine", "act_new", "act_stop")
#: Widgets the walk does not read: Help ▸ Documentation shows the project's Markdown files (README, docs/), which
#: are written in English and not interface texts.
NOT_READ = ("docViewer",)


class Found:
    """Texts with Latin words left: ``(stage, where, text, words)``."""

    def __init__(self, win) -> None:
        self.win = win
        self.names = catalogue_names(win) + ["fake"]  # the fake engine's device name and version are its data
        self.items: list[tuple[str, str, str, list[str]]] = []
        self.read = 0

    def window(self, stage: str, widget: QWidget) -> None:
        self.read += len(shown_prose(widget))
        names = self.names + sorted(ir_names(self.win))
        self.items += [(stage, where, text, words) for where, text, words in latin_left(widget, names)
                       if not any(f"({name})" in where for name in NOT_READ)]

    def text(self, stage: str, where: str, text: str) -> None:
        self.read += 1
        words = latin_words(rich_prose(text), self.names + sorted(ir_names(self.win)))
        if words:
            self.items.append((stage, where, text[:300], words))

    def report(self) -> str:
        first: dict = {}
        for stage, where, text, words in self.items:
            first.setdefault((where, text), (stage, words))
        return "\n".join(f"[{stage}] {where}: {words} in {text!r}" for (where, text), (stage, words) in first.items())


def _run(win, doc: PipelineDocument) -> None:
    done: list = []
    win.session.run_finished.connect(lambda _rev, result: done.append(result))
    win.files.replace_document(doc, ask=False)
    assert qt_wait(lambda: bool(done) and not win.graph_view.is_busy(), 20_000), "the run did not end"
    qt_wait(lambda: False, 100)


def _scene(win, found: Found, stage: str) -> None:
    """The graph as painted: box titles and subtitles, frame labels, each node's tooltip."""
    gv = win.graph_view
    assert qt_wait(lambda: not gv.is_busy(), 20_000)
    p = gv._prepared
    assert p is not None and p.attrs, "no graph shown"
    # A module group is named by the model's parameter paths (layers.0.proj): identifiers.
    found.names += sorted({part for g in gv.groups() for part in g.split(":", 1)[-1].split(".")})
    lines = [line for details in p.details.values() for line in details]
    for text in [*p.titles, *p.subs, *lines, *(frame[1] for frame in p.frames)]:
        found.text(stage, "graph label", str(text))
    for node in list(p.attrs)[:200]:
        found.text(stage, f"tooltip({node})", gv.tooltip_html(node))


def _context_menus(win, found: Found, doc: PipelineDocument) -> None:
    """The pipeline list's context menu of each step (a failed one offers its reproducer)."""
    _run(win, doc)
    texts = []
    for step in doc.steps:
        menu = win.pipeline_view.context_menu(step.uid)
        texts += [act.text() for act in menu.actions()]
        for act in menu.actions():
            if not act.isSeparator():
                found.text("step menu", f"menu({step.pass_id})", act.text())
                found.text("step menu", f"menu({step.pass_id}).tooltip", act.toolTip())
        menu.deleteLater()
        win.pipeline_view.select_uids([step.uid], current=step.uid)  # its parameters (an unknown pass: why)
        qt_wait(lambda: False, 50)
        found.window(f"step {step.pass_id}", win)
    assert "保存复现包…" in texts, texts  # the failed step's menu was read


def _graph(win, found: Found) -> None:
    gv = win.graph_view
    _scene(win, found, "graph")
    gv.collapse_all()
    _scene(win, found, "graph collapsed")
    groups = [g for g in gv.groups() if not g.startswith("call:")]
    assert groups, "the fake graph has no module group"
    gv.expand_all()
    _scene(win, found, "graph expanded")
    node = next(n for n, a in gv._prepared.attrs.items() if a.get("callee"))
    gv.select_node(node)  # the node's details beside the graph
    qt_wait(lambda: False, 100)
    found.window("node selected", win)
    win.graphs.open_find()  # the find bar, with no match and with matches
    for text in ("zzzz", "lv"):
        win.graph_area.find_bar.edit.setText(text)
        qt_wait(lambda: False, 300)
        found.window(f"find {text}", win)
    win.graph_area.find_bar.hide()
    _diverge_legend(win, found, node)


def _diverge_legend(win, found: Found, node: str) -> None:
    from app.diverge_controller import node_errors

    gv = win.graph_view
    nodes = list(gv._prepared.attrs)
    reply = {"step": 2, "pass_id": "relax.FuseOps", "first_inside": "lv0", "likelier_culprit": {"key": "lv1"},
             "nodes": [{"node_id": node, "key": "lv0", "status": "diverges", "max_abs_over_ref": 0.3, "shape": [1, 10],
                        "first": True},
                       {"node_id": nodes[0], "key": "x", "status": "ok", "max_abs_over_ref": 0.0, "shape": [1, 784]},
                       {"node_id": nodes[1], "key": nodes[1], "status": "no counterpart", "shape": [10, 10]}]}
    errors, first = node_errors(reply)
    gv.set_node_errors(errors, first, 1e-5, reveal=False)
    qt_wait(lambda: False, 100)
    legend = gv._error_legend
    for key, text in legend.texts().items():
        found.text("diverge legend", f"legend.{key}", text)
    found.text("diverge legend", "legend.tooltip", legend.toolTip())
    for n in (node, nodes[0], nodes[1]):
        found.text("diverge", f"tooltip({n})", gv.tooltip_html(n))
    gv.clear_node_errors()


@pytest.fixture
def modal(monkeypatch):
    """Modal dialogs are read and rejected, message boxes recorded, file choosers cancelled."""
    opened: list = []

    def exec_(dialog, *args, **kwargs):
        dialog.show()
        qt_wait(lambda: False, 30)
        opened.append(("dialog", dialog))
        return int(QDialog.DialogCode.Rejected)

    monkeypatch.setattr(QDialog, "exec", exec_)

    def record(answer):
        def box(parent, title, text, *args, **kwargs):
            opened.append(("box", f"{title}\n{text}"))
            return answer
        return staticmethod(box)

    for name, answer in (("information", QMessageBox.StandardButton.Ok), ("warning", QMessageBox.StandardButton.Ok),
                         ("critical", QMessageBox.StandardButton.Ok), ("question", QMessageBox.StandardButton.No),
                         ("about", None)):
        monkeypatch.setattr(QMessageBox, name, record(answer))
    for name, answer in (("getOpenFileName", ("", "")), ("getSaveFileName", ("", "")), ("getExistingDirectory", ""),
                         ("getOpenFileNames", ([], ""))):
        monkeypatch.setattr(QFileDialog, name, staticmethod(lambda *a, _answer=answer, **k: _answer))
    for name in ("getText", "getItem", "getInt", "getDouble"):
        monkeypatch.setattr(QInputDialog, name, staticmethod(lambda *a, **k: ("", False)))
    return opened


def _menu_actions(win) -> list:
    stack = [a.menu() for a in win.menuBar().actions() if a.menu() is not None]
    skipped = {id(getattr(win, name)) for name in SKIPPED}
    # the theme and language choices open no dialog and change the application's palette and settings, which the
    # window fixture of other test files shares (their words are read with the menus)
    skipped |= {id(a) for a in (*win.appearance.theme_actions.values(), *win.appearance.language_actions.values())}
    out, seen = [], set()
    while stack:
        menu = stack.pop()
        menu.aboutToShow.emit()
        for act in menu.actions():
            if act.menu() is not None:
                stack.append(act.menu())
            elif not act.isSeparator() and id(act) not in skipped and id(act) not in seen and act.isEnabled():
                seen.add(id(act))
                out.append((menu.title(), act))
    return out


def _read_dialogs(win, found: Found, stage: str, opened: list, before: set) -> None:
    for kind, what in opened:
        if kind == "box":
            found.text(stage, "message box", what)
        else:
            found.window(stage, what)
    opened.clear()
    for w in QApplication.topLevelWidgets():
        if w.isVisible() and w is not win and id(w) not in before and w.windowTitle():
            found.window(stage, w)
            w.close()
    found.text(stage, "statusbar", win.statusBar().currentMessage())


def test_graph_and_every_menu_dialog_in_chinese(zh_window, modal, tmp_path):
    win = zh_window
    found = Found(win)
    doc = PipelineDocument(model="builtin:mlp", steps=[Step("relax.LegalizeOps"), Step("relax.FuseOps"),
                                                       Step("relax.FuseTIR")])
    _context_menus(win, found, PipelineDocument(model="builtin:mlp", steps=[
        Step("relax.LegalizeOps"), Step("relax.FoldConstant", enabled=False),
        Step("custom.python", {"source": "def broken(:\n"}), Step("relax.NoSuchPass"), Step("acme.Pass")]))
    _run(win, doc)
    win.pipeline_view.select_uids([doc.steps[-1].uid], current=doc.steps[-1].uid)
    qt_wait(lambda: not win.graph_view.is_busy(), 20_000)
    _graph(win, found)
    triggered = 0
    for title, act in _menu_actions(win):
        if not act.isEnabled():
            continue
        before = {id(w) for w in QApplication.topLevelWidgets() if w.isVisible()}
        act.trigger()
        qt_wait(lambda: False, 60)
        _read_dialogs(win, found, f"{title} ▸ {act.text()}", modal, before)
        triggered += 1
    _reduce(win, found, tmp_path)
    assert triggered > 30, triggered
    assert not found.items, found.report()
    assert found.read > 500, found.read


def _reduce(win, found: Found, tmp_path) -> None:
    """The Reduce dialog on reproducers of each kind, on a folder that is not one, a bad description, and an
    output folder that is refused."""
    import json

    from pipeline_model.debugging import reproducer

    for kind in reproducer.KINDS:
        spec = reproducer.ReproSpec(
            kind=kind, expected=reproducer.expected_for(kind, "ValueError: fake failure", timeout_s=5.0),
            target={"kind": "llvm"}, pass_context={}, module_text="# fake module\n", step_index=1,
            pass_id="relax.FuseOps", bindings=7, note="")
        folder = str(tmp_path / f"repro-{kind}")
        reproducer.write_folder(folder, reproducer.spec_files(spec))
        dialog = win.reducer.show_dialog(folder)
        qt_wait(lambda: False, 30)
        found.window(f"reduce: {kind}", dialog)
    bad = tmp_path / "repro-bad"
    bad.mkdir()
    (bad / "repro.py").write_text("pass\n")
    for text in ("[1]", "{", json.dumps({"kind": "exception"})):
        (bad / "repro.json").write_text(text)
        win.reducer.show_dialog(str(bad))
        found.window(f"reduce: repro.json {text}", dialog)
    dialog = win.reducer.show_dialog(str(tmp_path / "nowhere"))
    found.window("reduce: not a reproducer", dialog)
    win.reducer.show_dialog(str(tmp_path / "repro-hang"))
    dialog.output_edit.setText(str(tmp_path / "s.ini"))
    dialog.reduce_button.click()
    qt_wait(lambda: False, 50)
    assert "s.ini" in dialog.status.text()
    found.window("reduce: refused output", dialog)
    dialog.close()


def test_export_and_reproducer_refusals_in_chinese(qapp, tmp_path):
    """The exporter's and the reproducer reader's own sentences, as they are raised, read back translated: names,
    paths and Python's words in a code font (``widgets.export_texts``, ``widgets.repro_texts``, ``path_texts``)."""
    from app.i18n import install_translator
    from pipeline_model import safe_write
    from pipeline_model.debugging import repro_folder, reproducer
    from pipeline_model.export import export_script
    from widgets.export_texts import export_failed_html, shown_export_error
    from widgets.repro_texts import shown_repro_error

    translator = install_translator(qapp, "zh_CN")
    try:
        said: list[str] = []
        for step in (Step("relax.FuseOpsByPattern", {"pattern_source": "table", "table_prefix": "nope"}),
                     Step("relax.FuseOpsByPattern", {"pattern_source": "table", "table_prefix": ""}),
                     Step("custom.python", {"source": "def f(:\n"}), Step("dlight.ApplyDefaultSchedule",
                                                                         {"rules": ["nogroup.X"]})):
            with pytest.raises(Exception) as raised:
                export_script(PipelineDocument(model="builtin:mlp", steps=[step]))
            shown = shown_export_error(str(raised.value))
            assert shown is not None and shown.startswith("步骤 1（<code>"), (str(raised.value), shown)
            said.append(shown)
        assert "未知的模式表 <code>'nope'</code>" in said[0]
        for make in (lambda: safe_write.check_output_file("", "script"),
                     lambda: safe_write.check_output_folder("", "output folder")):
            with pytest.raises(safe_write.OutputPathError) as raised:
                make()
            said.append(export_failed_html("/x.py", str(raised.value)))
        (tmp_path / "f").write_text("x")
        for folder in (tmp_path / "nowhere", tmp_path / "f"):
            with pytest.raises(repro_folder.ReproducerFolderError) as raised:
                reproducer.read_description(str(folder))
            said.append(shown_repro_error(str(raised.value)))
        assert "复现包文件夹 <code>" in said[-1] and "不是文件夹" in said[-1], said[-1]
        left = [(text, latin_words(rich_prose(text), ["FuseOpsByPattern", "DLight"])) for text in said]
        assert not [x for x in left if x[1]], left
    finally:
        qapp.removeTranslator(translator)
