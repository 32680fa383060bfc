"""The main window's actions and menus, built from declarative tables.

:func:`action_specs` lists every window action — translated text, shortcut, icon (a standard pixmap and
a theme / ``resources/icons`` name), tip and the slot a controller gives; :func:`create_actions` turns
the table into ``QAction`` objects; :func:`menu_table` says which actions each menu and the toolbar
hold, and :func:`fill` adds them (``None`` is a separator). No behaviour lives here: the slots are the
controllers'.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Union

from PySide6.QtGui import QAction, QIcon, QKeySequence
from PySide6.QtWidgets import QMenu, QStyle, QToolBar, QWidget

from app.i18n import tr
from pipeline_model.resources import resource_path

_SP = QStyle.StandardPixmap
_KEY = QKeySequence.StandardKey


@dataclass(frozen=True)
class ActionSpec:
    """One action: ``name`` is the window attribute it is kept in (``act_…``)."""

    name: str
    text: str
    slot: Optional[Callable[..., Any]] = None
    shortcut: Any = None
    icon: Optional[tuple[QStyle.StandardPixmap, str]] = None
    tip: str = ""
    tip_on: str = "both"  # or "tooltip" / "status": where ``tip`` shows
    checkable: bool = False
    checked: bool = False
    toggled: Optional[Callable[[bool], Any]] = None


def make_icon(widget: QWidget, standard: QStyle.StandardPixmap, theme: str = "") -> QIcon:
    """The theme icon ``theme``, else ``resources/icons/<theme>.svg``, else the style's ``standard`` pixmap."""
    icon = QIcon.fromTheme(theme) if theme else QIcon()
    path = resource_path("icons", f"{theme}.svg")
    if icon.isNull() and theme and path.exists():
        icon = QIcon(str(path))
    return widget.style().standardIcon(standard) if icon.isNull() else icon


def action_specs(w: Any) -> list[ActionSpec]:
    """The window's actions; ``w`` is the main window (its controllers give the slots)."""
    files, session, graphs, gv = w.files, w.session, w.graphs, w.graph_view
    return [
        ActionSpec("act_new", tr("&New Pipeline"), files.new_pipeline, _KEY.New, (_SP.SP_FileIcon, "document-new")),
        ActionSpec("act_open", tr("&Open Pipeline…"), files.open_pipeline_dialog, _KEY.Open,
                   (_SP.SP_DialogOpenButton, "document-open")),
        ActionSpec("act_save", tr("&Save"), files.save, _KEY.Save, (_SP.SP_DialogSaveButton, "document-save")),
        ActionSpec("act_save_as", tr("Save &As…"), files.save_as, _KEY.SaveAs),
        ActionSpec("act_open_model", tr("Open &Model…"), files.open_model_dialog, "Ctrl+M",
                   tip=tr("Use a model file (TVMScript, nn.Module, ONNX, torch)")),
        ActionSpec("act_export", tr("&Export Python Script…"), files.export_script_dialog, "Ctrl+E",
                   tip=tr("Write a standalone Python script that applies this pipeline")),
        ActionSpec("act_quit", tr("&Quit"), w.close, _KEY.Quit),
        ActionSpec("act_delete", tr("&Delete Step"), w.editor.delete_selected, _KEY.Delete),
        ActionSpec("act_run", tr("&Run Pipeline"), session.run_pipeline, "F5", (_SP.SP_MediaPlay, "media-playback-start"),
                   tr("Run every step (F5)")),
        ActionSpec("act_run_to", tr("Run &to Selected Step"), session.run_to_selected, "Shift+F5",
                   (_SP.SP_MediaSeekForward, "media-seek-forward"), tr("Run the steps up to the selected one")),
        ActionSpec("act_stop", tr("&Stop"), session.stop, "Esc", (_SP.SP_MediaStop, "media-playback-stop"),
                   tr("Stop the running step")),
        ActionSpec("act_restart_engine", tr("Restart &Engine"), w.restart_engine,
                   tip=tr("Stop the engine process (also a step that does not return) and start a fresh one")),
        ActionSpec("act_preferences", tr("&Preferences…"), w.show_preferences, tip=tr("Engine watchdog limit and memory limit")),
        ActionSpec("act_auto", tr("Re-run &Automatically After Edits"), checkable=True, checked=True,
                   toggled=lambda on: setattr(session, "auto_run", on)),
        ActionSpec("act_fit", tr("Fit &Graph"), graphs.fit_graph, "Ctrl+0"),
        ActionSpec("act_zoom_in", tr("Zoom &In"), lambda: gv.zoom_by(1.25), _KEY.ZoomIn,
                   tip=tr("Zoom into the graph (also + in the graph, or the mouse wheel)"), tip_on="status"),
        ActionSpec("act_zoom_out", tr("Zoom O&ut"), lambda: gv.zoom_by(0.8), _KEY.ZoomOut,
                   tip=tr("Zoom out of the graph (also - in the graph)"), tip_on="status"),
        ActionSpec("act_zoom_reset", tr("&Actual Size"), gv.reset_zoom, "Ctrl+1"),
        ActionSpec("act_find", tr("&Find in Graph…"), graphs.open_find, _KEY.Find,
                   tip=tr("Find a node by name, op, callee or shape (Ctrl+F)")),
        ActionSpec("act_find_next", tr("Find &Next"), lambda: graphs.find_next(), "F3"),
        ActionSpec("act_find_prev", tr("Find Pre&vious"), lambda: graphs.find_next(backwards=True), "Shift+F3"),
        ActionSpec("act_expand_all", tr("E&xpand All Groups"), gv.expand_all, tip=tr("Show every layer and module of the graph")),
        ActionSpec("act_collapse_all", tr("&Collapse All Groups"), gv.collapse_all, tip=tr("Show each module group as one node")),
        ActionSpec("act_overview", tr("Show &Overview"), tip=tr("A minimap of the whole graph with the visible part framed"),
                   tip_on="tooltip", checkable=True, checked=w.graph_area.overview_setting(w.settings),
                   toggled=lambda on: w.graph_area.set_overview(w.settings, on)),
        ActionSpec("act_reset_layout", tr("&Reset Layout"), w.reset_layout,
                   tip=tr("Arrange the panes for the window's size (the graph gets at least half the width)")),
        ActionSpec("act_build", tr("&Build && Run"), lambda: w.raise_run_panel(w.run_controller.build_and_run), "Ctrl+B",
                   tip=tr("Build the module, run it, time it and check it (Ctrl+B)")),
        ActionSpec("act_compare", tr("&Compare with Baseline"), lambda: w.raise_run_panel(w.run_controller.compare), "Ctrl+Shift+B",
                   tip=tr("Latency of this pipeline vs the unoptimized model")),
        ActionSpec("act_compare_many", tr("Compare &Pipelines…"), lambda: w.comparer.show_dialog(),
                   tip=tr("Build and time two or more pipeline files on this model, inputs and target")),
        ActionSpec("act_bisect", tr("Find Brea&king Step…"), lambda: w.bisector.show_dialog(),
                   tip=tr("Bisect the pipeline to the first step after which the built model is wrong")),
        ActionSpec("act_diverge", tr("Where Values &Diverge…"), lambda: w.diverger.show_dialog(),
                   tip=tr("Every intermediate value before and after the selected step, the first diverging one marked")),
        ActionSpec("act_save_reproducer", tr("Save Reprod&ucer of Failed Step…"), lambda: w.reproducers.save_dialog(),
                   tip=tr("A folder with a standalone repro.py of plain TVM calls that fails the same way")),
        ActionSpec("act_reduce", tr("Reduce Repr&oducer…"), lambda: w.reducer.show_dialog(),
                   tip=tr("Shrink a saved reproducer's module while it still fails the same way")),
        ActionSpec("act_pass_context", tr("&PassContext…"), lambda: w.pass_context.show_dialog(),
                   tip=tr("opt_level, config entries and disabled passes every step runs with")),
        ActionSpec("act_heat", tr("Profile &Heat Overlay"), tip=tr("Tint the graph's nodes by their share of the profiled run time"),
                   tip_on="status", checkable=True, checked=True, toggled=lambda on: w.profiles.set_heat_visible(on)),
    ]


def create_actions(owner: QWidget, specs: Sequence[ActionSpec]) -> dict[str, QAction]:
    """The actions of ``specs`` (parented to and added to ``owner``, so their shortcuts work), by name."""
    actions: dict[str, QAction] = {}
    for spec in specs:
        act = QAction(spec.text, owner)
        if spec.shortcut is not None:
            act.setShortcut(QKeySequence(spec.shortcut))
        if spec.icon is not None:
            act.setIcon(make_icon(owner, *spec.icon))
        if spec.tip and spec.tip_on != "tooltip":
            act.setStatusTip(spec.tip)
        if spec.tip and spec.tip_on != "status":
            act.setToolTip(spec.tip)
        if spec.checkable:
            act.setCheckable(True)
            act.setChecked(spec.checked)
        if spec.toggled is not None:
            act.toggled.connect(spec.toggled)
        if spec.slot is not None:
            act.triggered.connect(spec.slot)
            owner.addAction(act)
        actions[spec.name] = act
    return actions


def menu_table(w: Any) -> dict[str, list[Optional[QAction]]]:
    """The plain action lists of the Edit, Run and View menus and of the toolbar (``None``: separator)."""
    return {
        "edit": [w.act_undo, w.act_redo, None, w.act_duplicate, w.act_delete, None, w.act_preferences],
        "run": [w.act_run, w.act_run_to, w.act_stop, w.act_restart_engine, None, w.act_build, w.act_compare,
                w.act_compare_many, w.act_bisect, w.act_diverge, w.act_save_reproducer, w.act_reduce, None, w.act_auto],
        "view": [w.act_fit, w.act_zoom_in, w.act_zoom_out, w.act_zoom_reset, None, w.act_find, w.act_find_next, w.act_find_prev, None, w.act_expand_all,
                 w.act_collapse_all, w.act_overview, w.act_heat, None, w.act_reset_layout],
        "toolbar": [w.act_new, w.act_open, w.act_save, None, w.act_undo, w.act_redo, None, w.act_run, w.act_run_to,
                    w.act_stop, None, w.act_build],
    }


def fill(target: Union[QMenu, QToolBar], actions: Sequence[Optional[QAction]]) -> None:
    """Add ``actions`` to a menu or toolbar, a separator for each ``None``."""
    for act in actions:
        if act is None:
            target.addSeparator()
        else:
            target.addAction(act)
