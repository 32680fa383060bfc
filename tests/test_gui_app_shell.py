"""View ▸ Theme / Language, the Help menu, first-run hints, panels cleared when their document/model
changes, and the window at 1024×700 — on the TVM-free fake engine."""

from __future__ import annotations

import os

from tests.conftest import PIPELINES_DIR, qt_wait


def _run_all(win) -> None:
    assert qt_wait(lambda: all(win.step_model.result(s.uid) is not None for s in win.ctrl.doc.steps), 10_000)


def test_theme_menu_applies_and_remembers(fake_studio, qapp):
    from app.appearance import THEME_KEY, theme_setting
    from widgets.highlight import palette_is_dark

    win = fake_studio
    labels = [a.text() for a in win.appearance.theme_menu.actions()]
    assert labels == ["&System", "&Light", "&Dark"]
    start_dark = palette_is_dark(qapp.palette())
    try:
        win.appearance.theme_actions["dark"].trigger()
        assert palette_is_dark(qapp.palette())
        assert win.settings.value(THEME_KEY) == "dark" and theme_setting(win.settings) == "dark"
        assert win.appearance.theme_actions["dark"].isChecked()
        win.appearance.theme_actions["light"].trigger()
        assert not palette_is_dark(qapp.palette())
        assert qapp.style().name().lower() == "fusion"
    finally:
        win.appearance.theme_actions["system"].trigger()
    assert palette_is_dark(qapp.palette()) == start_dark
    assert theme_setting(win.settings) == "system"


def test_language_menu_remembers_for_the_next_start(fake_studio):
    from app.i18n import LANGUAGE_KEY, language_setting

    win = fake_studio
    notes: list = []
    win.appearance.notify_restart = lambda: notes.append(1)
    assert "next start" in win.appearance.language_menu.title()
    assert [a.text() for a in win.appearance.language_menu.actions()] == ["System", "English", "简体中文"]
    win.appearance.language_actions["zh_CN"].trigger()
    assert win.settings.value(LANGUAGE_KEY) == "zh_CN" and notes == [1]
    win.appearance.language_actions["system"].trigger()
    assert language_setting(win.settings) == "system" and notes == [1, 1]


def test_help_menu_shortcuts_docs_about(fake_studio):
    from PySide6.QtWidgets import QMenu

    from app import __version__
    from app.help_controller import menu_shortcuts

    win = fake_studio
    titles = [a.text() for a in win.menuBar().actions()]
    assert titles[-1] == "&Help"
    rows = menu_shortcuts(win.menuBar())
    by_action = {(menu, text): keys for menu, text, keys in rows}
    assert by_action[("Run", "Run Pipeline")] == "F5"
    assert by_action[("Run", "Build & Run")] == "Ctrl+B"
    # Generated from the actions: every menu action with a shortcut is listed, no other.
    expected = 0
    stack = [a.menu() for a in win.menuBar().actions() if a.menu()]
    while stack:
        menu: QMenu = stack.pop()
        for act in menu.actions():
            if act.menu():
                stack.append(act.menu())
            elif any(not k.isEmpty() for k in act.shortcuts()):
                expected += 1
    assert len(rows) == expected > 10
    dialog = win.help.show_shortcuts()
    assert dialog.table.rowCount() == len(rows)
    dialog.close()
    docs = win.help.show_documentation()
    names = [docs.list.item(i).text() for i in range(docs.list.count())]
    assert names[0] == "README.md" and "docs/TUNING.md" in names
    # Only user documents (issue 18): the developers' guides are not in the Help menu.
    assert not any(n.endswith(("DEVELOPERS.md", "ARCHITECTURE.md")) for n in names), names
    assert "Relax Pipeline Studio" in docs.viewer.toPlainText()
    docs.list.setCurrentRow(names.index("docs/TUNING.md"))
    assert "MetaSchedule" in docs.viewer.toPlainText()
    docs.close()
    assert qt_wait(lambda: win.help.engine_info.get("tvm") == "fake", 5_000)
    about = win.help.about_text()
    assert __version__ in about and "TVM fake" in about


def test_first_run_hints_in_empty_states(fake_studio):
    win = fake_studio
    win.files.new_pipeline(force=True)
    assert not win.ctrl.doc.steps
    assert win.pipeline_view.empty_hint.isVisible()
    assert "Passes panel" in win.pipeline_view.empty_hint.text()
    assert "drag passes from the Passes panel" in win.diff_view.left_title.text()


def test_panels_clear_when_their_document_or_model_changes(fake_studio):
    from widgets.pipeline_view import PipelineView  # noqa: F401 - the nested table lives there

    win = fake_studio
    win.files.new_pipeline(force=True)
    uid = win.editor.add_pass("relax.LegalizeOps")
    _run_all(win)
    win.pipeline_view.select_uids([uid])

    def fill_panels() -> None:
        build = {"label": "pipeline", "function": "main", "device": "cpu", "target": {"kind": "llvm"},
                 "build_ms": 12.0, "latency": {"median_us": 10.0, "min_us": 9.0, "max_us": 11.0, "std_us": 0.5}}
        win.run_panel.show_build_result(build)
        win.run_panel.show_compare_result({"a": {"label": "baseline", "latency": {"median_us": 20.0}},
                                           "b": {"label": "pipeline", "latency": {"median_us": 10.0}}, "speedup": 2.0})
        win.tuning_panel.update_progress({"done": 3, "total": 8, "pass_id": "relax.MetaScheduleTuneTIR",
                                          "tasks": [{"name": "matmul", "trials": 3}]})
        win.graphs.area.details.setHtml("<h3>DLight report</h3>")
        win.graphs.details_kind = "report"
        assert win.run_panel.chart.bars and win.run_panel.results.toPlainText()
        assert win.tuning_panel.table.rowCount() == 1

    def assert_cleared() -> None:
        assert not win.run_panel.chart.bars
        assert not win.run_panel.results.toPlainText()
        assert win.run_panel.last_build is None and win.run_panel.last_compare is None
        assert win.tuning_panel.table.rowCount() == 0 and win.tuning_panel.last is None

    # New Pipeline: run panel, chart, tuning, report, nested-pass table.
    fill_panels()
    win.files.new_pipeline(force=True)
    assert_cleared()
    assert win.graphs.details_kind == "placeholder" and "DLight report" not in win.graphs.area.details.toPlainText()
    assert not win.pipeline_view.nested_box.isVisibleTo(win.pipeline_view)
    # Opening another pipeline: the chart and results go.
    fill_panels()
    assert win.files.open_pipeline(os.path.join(PIPELINES_DIR, "cpu_build.json"), remember=False)
    assert_cleared()
    # Another model (same document): old Build & Run results go, with the reason.
    fill_panels()
    win.editor.set_model("builtin:transformer" if win.ctrl.doc.model != "builtin:transformer" else "builtin:mlp")
    assert_cleared()
    assert "model or target changed" in win.run_panel.status.text()
    # A step edit does not describe another model: the results stay.
    fill_panels()
    win.editor.add_pass("relax.FoldConstant")
    assert win.run_panel.chart.bars and win.run_panel.last_build is not None
    win.ctrl.undo_stack.setClean()


def test_one_signal_per_document_event(fake_studio):
    """Document events have one owner, the document controller: the context re-emits none of them, and
    one replacement / one model change is one emission that every panel hears (in connection order)."""
    from PySide6.QtCore import Signal

    from app.context import AppContext
    from app.document_controller import DocumentController
    from pipeline_model.document import PipelineDocument

    def signals(cls) -> set[str]:  # the class's own signals (QObject's are everyone's)
        return {name for name, value in vars(cls).items() if isinstance(value, Signal)}

    assert "document_replaced" in signals(DocumentController) and "model_changed" in signals(DocumentController)
    assert not signals(AppContext) & signals(DocumentController), signals(AppContext) & signals(DocumentController)
    win = fake_studio
    events: list[str] = []
    c = win.ctrl
    spies = [(c.document_replaced, lambda: events.append("replaced")), (c.model_changed, lambda: events.append("model")),
             (c.edited, lambda first: events.append(f"edited {first}"))]
    for sig, slot in spies:
        sig.connect(slot)
    try:
        win.files.replace_document(PipelineDocument(model="builtin:mlp", name="one"), ask=False)
        assert events == ["replaced", "edited 0"]
        events.clear()
        win.editor.set_model("builtin:transformer")  # another model: once, before the re-run
        assert events == ["model", "edited 0"]
        events.clear()
        win.ctrl.undo_stack.undo()
        assert events == ["model", "edited 0"] and c.doc.model == "builtin:mlp"
        events.clear()
        c.set_target(dict(c.doc.target))  # the same target: the results still describe it
        uid = win.editor.add_pass("relax.FoldConstant")  # a step edit is no model change
        assert "model" not in events and uid
        # A listener of a replacement (the run panel) still clears once the context forwards nothing.
        win.run_panel.show_build_result({"label": "pipeline", "function": "main", "device": "cpu",
                                         "target": {"kind": "llvm"}, "build_ms": 1.0,
                                         "latency": {"median_us": 1.0, "min_us": 1.0, "max_us": 1.0, "std_us": 0.0}})
        assert win.run_panel.last_build is not None
        win.files.new_pipeline(force=True)
        assert win.run_panel.last_build is None
    finally:
        for sig, slot in spies:
            sig.disconnect(slot)
    win.ctrl.undo_stack.setClean()


def test_window_fits_1024x700_with_a_long_caption(fake_studio, qapp):
    win = fake_studio
    win.showNormal()
    win.resize(1024, 700)
    qt_wait(lambda: False, 200)
    long_caption = "Graph unavailable: module '86f6" + "0123456789abcdef" * 20 + "' could not be laid out"
    win.graph_caption.setText(long_caption)
    win.graphs.show(None, None, long_caption)
    qt_wait(lambda: False, 300)
    assert win.width() <= 1024 and win.height() <= 700, win.size()
    assert win.graph_caption.toolTip() == long_caption
    assert win.palette_dock.width() >= 180, win.palette_dock.width()
    assert win.pipeline_dock.width() >= 240, win.pipeline_dock.width()
    # The parameter form stays inside the pipeline dock, above the bottom (Diff) docks.
    panel = win.pipeline_panel
    bottom = panel.param_scroll.mapTo(win, panel.param_scroll.rect().bottomLeft()).y()
    assert bottom <= win.diff_dock.mapTo(win, win.diff_dock.rect().topLeft()).y() or \
        win.dockWidgetArea(win.pipeline_dock) != win.dockWidgetArea(win.diff_dock)
    assert panel.param_title.height() >= panel.param_title.fontMetrics().height()
