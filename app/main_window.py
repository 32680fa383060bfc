"""The main window: assembles docks, menus, actions and the controllers; owns no behaviour.

Graph (centre, :class:`app.panels.GraphArea`), pass palette (left), pipeline + parameters (right,
:class:`app.panels.PipelinePanel`), diff / Build & Run / Tuning (bottom). The controllers share one
:class:`app.context.AppContext` (document, undo stack, engine, settings, catalogue, trust):
:class:`app.pipeline_editor.PipelineEditor` (edits, selection, parameters),
:class:`app.step_inspector.StepInspector` (diff, texts, reports, errors in user code),
:class:`app.graph_controller.GraphController` (graph, its cache, find, node details),
:class:`app.run_session.RunSession` (run/stop/progress/tuning), :class:`app.run_controller.RunController`
(Build & Run panel, targets) and :class:`app.file_controller.FileController` (files). Actions and
menus come from the tables of :mod:`app.actions`. Nothing here imports TVM. Only what the first frame shows is
built before it (issue 33): the panels behind its tabs follow the first paint, the dialogs' controllers their
first use (cached properties below).
"""

from __future__ import annotations

import html
from functools import cached_property
from typing import TYPE_CHECKING, Any, Optional

from PySide6.QtCore import QEvent, QSettings, Qt, QTimer
from PySide6.QtGui import QCloseEvent, QKeySequence
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow, QProgressBar, QStyle, QToolBar, QWidget

from app import settings as app_settings_mod
from app import window_layout
from app.actions import action_specs, create_actions, fill, make_icon, menu_table
from app.appearance import AppearanceController
from app.autosave import AutosaveController
from app.context import AppContext
from app.document_controller import DocumentController
from app.engine_worker import QtEngineWorker, load_cached_catalogue
from app.file_controller import FileController
from app.first_paint import after_first_paint
from app.graph_controller import GraphController
from app.help_controller import HelpController
from app.i18n import tr
from app.panels import GraphArea, PipelinePanel, scrolled
from app.pipeline_editor import PipelineEditor
from app.run_session import RunSession
from app.step_inspector import StepInspector
from widgets.diff_view import DiffView
from widgets.pass_palette import PassPalette
from widgets.stable_label import StableLabel
from widgets.step_model import QtPipelineModel
from widgets.tuning_panel import TuningPanel

if TYPE_CHECKING:  # built on first use or after the first paint (MainWindow's cached properties), modules too
    from app.bisect_controller import BisectController
    from app.compare_controller import CompareController
    from app.diverge_controller import DivergeController
    from app.pass_context_controller import PassContextController
    from app.profile_controller import ProfileController
    from app.reduce_controller import ReduceController
    from app.reproducer_controller import ReproducerController
    from app.run_controller import RunController
    from widgets.profile_view import ProfileView
    from widgets.run_panel import RunPanel


#: Narrowest the Passes dock gets (the window fits 1024×700 with it).
PALETTE_MIN_WIDTH = 190


class MainWindow(QMainWindow):
    """Relax Pipeline Studio's main window."""

    def __init__(self, start_engine: bool = True, settings: Optional[QSettings] = None,
                 client_factory: Any = None, close_client: bool = True) -> None:
        super().__init__()
        self.setWindowTitle(tr("Relax Pipeline Studio"))
        self.setDockNestingEnabled(True)
        self.ctrl = DocumentController(self)
        cache = app_settings_mod.cache_dir()
        key, cached = load_cached_catalogue(cache)
        settings = settings or app_settings_mod.app_settings()
        self.worker = QtEngineWorker(cache_dir=cache, cached_catalogue_key=key, parent=self,
                                     client_factory=client_factory, close_client=close_client,
                                     client_options=lambda: app_settings_mod.engine_options(settings))
        self.ctx = AppContext(self.ctrl, self.worker, settings, self, self)
        self.settings = self.ctx.settings
        #: Set by a termination signal: close without questions, keep the recovery copy.
        self._exiting_on_signal = False
        self._build_widgets()
        self._build_controllers()
        self._build_actions()
        self._build_menus()
        self._connect()
        self._restore_layout()
        self._update_title()
        self._devices_requested = False
        if cached is not None:
            self._set_catalogue(cached)
        # The panels behind the first frame's tabs come right after the first paint (or on first use).
        after_first_paint(self, self.build_hidden_parts, fallback_ms=None)
        if start_engine:
            self.worker.start()

    # ---- construction ---------------------------------------------------------------------------
    def _build_widgets(self) -> None:
        self.graph_area = area = GraphArea(self)
        self.banner, self.graph_view, self.details = area.banner, area.graph_view, area.details
        self.graph_split, self.function_picker, self.graph_caption = area.graph_split, area.function_picker, area.graph_caption
        self.setCentralWidget(area)
        self.palette = PassPalette(self)
        self.palette.setMinimumWidth(PALETTE_MIN_WIDTH)  # long captions elsewhere must not squeeze it
        self.palette_dock = self._dock(tr("Passes"), "paletteDock", self.palette, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.step_model = QtPipelineModel(self.ctrl.doc, self)
        self.pipeline_panel = panel = PipelinePanel(self.step_model, self)
        self.pipeline_view, self.param_editor = panel.pipeline_view, panel.param_editor
        self.model_label, self.model_button = panel.model_label, panel.model_button
        self.target_label, self.target_button, self.target_menu = panel.target_label, panel.target_button, panel.target_menu
        self.pipeline_dock = self._dock(tr("Pipeline"), "pipelineDock", panel, Qt.DockWidgetArea.RightDockWidgetArea)
        self.diff_view = DiffView(self)
        self.diff_dock = self._dock(tr("Diff"), "diffDock", self.diff_view, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.run_dock = self._dock(tr("Build && Run"), "runDock", None, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tuning_panel = TuningPanel(self)
        self.tuning_dock = self._dock(tr("Tuning"), "tuningDock", self.tuning_panel, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.profile_dock = self._dock(tr("Profile"), "profileDock", None, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.diff_dock, self.run_dock)
        self.tabifyDockWidget(self.run_dock, self.profile_dock)
        self.tabifyDockWidget(self.profile_dock, self.tuning_dock)
        self.diff_dock.raise_()
        # A hidden panel shown before it was built (its tab chosen, a remembered layout with it on top) is built
        # before the frame that shows it is painted (the check waits for the layout to settle: re-tabifying
        # docks makes each one visible for a moment).
        self._lazy_docks = {self.run_dock: "run_controller", self.profile_dock: "profiles"}
        for dock in self._lazy_docks:
            dock.visibilityChanged.connect(self._on_lazy_dock_visibility)
        # Its text changes with every engine request (several per step shown): a label whose size does not
        # follow its text (it only grows, once, to the longest), so the status bar (and the main window) is
        # not laid out again each time.
        self.engine_label = StableLabel(tr("Engine: stopped"), self, min_chars=24, grow=True, label_name="engineState")
        self.run_label = QLabel("", self)
        self.progress = QProgressBar(self)
        self.progress.setMaximumWidth(180)
        self.progress.setTextVisible(True)
        self.progress.hide()
        self.statusBar().addWidget(self.engine_label)
        self.statusBar().addWidget(self.run_label, 1)
        self.statusBar().addPermanentWidget(self.progress)
        self.resize(*window_layout.initial_size(self))

    def _build_controllers(self) -> None:
        ctx, current = self.ctx, self.pipeline_view.current_uid
        # Order matters: the editor shows a step's form before the inspector marks errors in it.
        self.editor = PipelineEditor(ctx, self.pipeline_panel, self.step_model, self.palette)
        self.graphs = GraphController(ctx, self.graph_area)
        self.inspector = StepInspector(ctx, self.graphs, self.pipeline_panel, self.diff_view, self.step_model)
        self.session = RunSession(ctx, self.step_model, self.tuning_panel, self.progress, self.run_label, current)
        self.session.code_gate.editor_of = lambda uid, name: self.inspector.source_editor(uid, name)
        self.files = FileController(ctx, self.editor.set_model)
        self.appearance = AppearanceController(ctx.settings, self, self)
        self.autosave = AutosaveController(ctx)
        self.help = HelpController(ctx, self)

    # ---- the panels behind the first frame's tabs: built after the first paint, or on first use -------------
    def build_hidden_parts(self) -> None:
        """Build the Build & Run and Profile panels and their controllers now (once; the window calls this on
        the event-loop turn after its first paint, and their first use builds them when that comes first)."""
        _ = self.run_controller, self.profiles

    def _on_lazy_dock_visibility(self, visible: bool) -> None:
        if visible and not getattr(self, "_lazy_dock_check_pending", False):
            self._lazy_dock_check_pending = True
            QTimer.singleShot(0, self._build_shown_docks)  # before the paint that would show the dock

    def _build_shown_docks(self) -> None:
        self._lazy_dock_check_pending = False
        for dock, part in self._lazy_docks.items():
            if dock.widget() is None and dock.isVisible() and not dock.visibleRegion().isEmpty():
                getattr(self, part)

    @cached_property
    def run_controller(self) -> RunController:
        """Build & Run, Compare with Baseline, export library, targets and devices; built with its panel."""
        from app.run_controller import RunController
        from widgets.run_panel import RunPanel

        panel = RunPanel(self)
        self.run_dock.setWidget(scrolled(panel))
        run = RunController(self.ctx, panel, self.pipeline_view.current_uid)
        run.finished.connect(lambda kind, value: self.profiles.on_build_finished(kind, value))
        run.finished.connect(lambda kind, value: self._raise_profile_dock()
                             if kind == "build_run" and isinstance(value, dict) and value.get("profile") else None)
        return run

    @property
    def run_panel(self) -> RunPanel:
        """The Build & Run dock's panel (built with its controller)."""
        return self.run_controller.panel

    @cached_property
    def profiles(self) -> ProfileController:
        """The Profile dock and the graph's heat overlay, built with the dock's table; follows the selected step
        (connected after the inspector, so the heat lands on the graph the inspector showed)."""
        from app.profile_controller import ProfileController, profiled_modules
        from widgets.profile_view import ProfileView

        view = ProfileView(self)
        self.profile_dock.setWidget(view)
        profiles = ProfileController(self.ctx, view, self.graph_view, self.graphs.shown_graph,
                                     self._step_key, self.pipeline_view.current_uid,
                                     lambda: profiled_modules(self.inspector.input_key, self.ctrl.doc,
                                                              self.step_model, self._step_key))
        self.pipeline_view.current_step_changed.connect(profiles.show_step)
        self.session.step_result.connect(lambda result: profiles.show_step(result.uid)
                                         if result.uid == self.pipeline_view.current_uid() else None)
        self.session.run_finished.connect(lambda _rev, _result: profiles.refresh_comparison())  # steps' keys changed
        return profiles

    @property
    def profile_view(self) -> ProfileView:
        """The Profile dock's table (built with its controller)."""
        return self.profiles.view

    # ---- controllers of dialogs, built on first use (nothing of them is on the first frame) ---------------
    # Their document listeners only drop what an earlier use left (a report, a dialog's state, colours on the graph).
    @cached_property
    def pass_context(self) -> PassContextController:
        """Pipeline ▸ PassContext…"""
        from app.pass_context_controller import PassContextController

        return PassContextController(self.ctx)

    @cached_property
    def comparer(self) -> CompareController:
        """Run ▸ Compare Pipelines…"""
        from app.compare_controller import CompareController

        return CompareController(self.ctx, self.run_controller.run_settings, self.files.open_pipeline,
                                 self.files.maybe_save)

    @cached_property
    def bisector(self) -> BisectController:
        """Run ▸ Find Breaking Step…"""
        from app.bisect_controller import BisectController

        # (empty tolerance fields: each tested module judged as Build & Run's check judges it, int8 models included)
        bisector = BisectController(self.ctx, lambda: self.run_controller.run_settings(typed=True),
                                    self.pipeline_view.select_uids, self.step_model.set_bisect_marks)
        bisector.reproducer_requested.connect(lambda uid: self.reproducers.save_dialog(uid))
        return bisector

    @cached_property
    def reproducers(self) -> ReproducerController:
        """Run ▸ Save Reproducer of Failed Step… (also a bisection's culprit, and the pipeline list's menu)."""
        from app.reproducer_controller import ReproducerController

        return ReproducerController(self.ctx, self.step_model.result, self.pipeline_view.current_uid,
                                    self.run_controller.run_settings, self.bisector)

    @cached_property
    def reducer(self) -> ReduceController:
        """Run ▸ Reduce Reproducer… (also the pipeline list's menu)."""
        from app.reduce_controller import ReduceController

        return ReduceController(self.ctx, self.reproducers)

    @cached_property
    def diverger(self) -> DivergeController:
        """Run ▸ Where Values Diverge…"""
        from app.diverge_controller import DivergeController

        return DivergeController(self.ctx, self.run_controller.run_settings, self.pipeline_view.current_uid,
                                 self.graphs, self.step_model.result)

    def _dock(self, title: str, name: str, widget: Optional[QWidget], area: Qt.DockWidgetArea) -> QDockWidget:
        """A dock of ``widget`` (``None``: a panel hidden at first, set when it is built)."""
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        if widget is not None:
            dock.setWidget(widget)
        features = QDockWidget.DockWidgetFeature
        dock.setFeatures(features.DockWidgetMovable | features.DockWidgetFloatable | features.DockWidgetClosable)
        self.addDockWidget(area, dock)
        return dock

    def _build_actions(self) -> None:
        for name, act in create_actions(self, action_specs(self)).items():
            setattr(self, name, act)
        self.act_undo = self.ctrl.undo_stack.createUndoAction(self, tr("&Undo"))
        self.act_undo.setShortcuts([QKeySequence("Ctrl+Z")])
        self.act_redo = self.ctrl.undo_stack.createRedoAction(self, tr("&Redo"))
        self.act_redo.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        sp = QStyle.StandardPixmap
        self.act_undo.setIcon(make_icon(self, sp.SP_ArrowBack, "edit-undo"))
        self.act_redo.setIcon(make_icon(self, sp.SP_ArrowForward, "edit-redo"))
        self.addAction(self.act_undo)
        self.addAction(self.act_redo)
        self.act_delete.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.pipeline_view.addAction(self.act_delete)
        self.act_duplicate = self.pipeline_view.duplicate_action
        self.act_stop.setEnabled(False)
        self.graph_view.set_overview_visible(self.act_overview.isChecked())

    def _build_menus(self) -> None:
        menu, table = self.menuBar(), menu_table(self)
        file_menu = menu.addMenu(tr("&File"))
        fill(file_menu, [self.act_new, self.act_open])
        self.recent_menu = file_menu.addMenu(tr("Open &Recent"))
        self.recent_menu.aboutToShow.connect(lambda: self.files.fill_recent_menu(self.recent_menu))
        fill(file_menu, [None, self.act_save, self.act_save_as, None, self.act_open_model])
        self.builtin_menu = self.files.builtin_models_menu(file_menu.addMenu(tr("&Built-in Models")))
        self.model_button.setMenu(self.builtin_menu)
        fill(file_menu, [self.act_export, None, self.act_quit])
        fill(menu.addMenu(tr("&Edit")), table["edit"])
        fill(menu.addMenu(tr("&Run")), table["run"])
        view = menu.addMenu(tr("&View"))
        fill(view, table["view"] + [None])
        for dock in (self.palette_dock, self.pipeline_dock, self.diff_dock, self.run_dock, self.profile_dock,
                     self.tuning_dock):
            view.addAction(dock.toggleViewAction())
        view.addSeparator()
        self.appearance.build_menus(view)
        self.pipeline_menu = menu.addMenu(tr("&Pipeline"))
        self.pipeline_menu.addAction(self.act_pass_context)
        self.help.build_menu(menu)
        self.toolbar = bar = QToolBar(tr("Main"), self)
        bar.setObjectName("mainToolbar")
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        fill(bar, table["toolbar"])
        self.addToolBar(bar)
        self.target_menu.aboutToShow.connect(self._fill_target_menu)

    def _connect(self) -> None:
        c, ctx = self.ctrl, self.ctx
        c.modified_changed.connect(lambda _m: self._update_title())
        self.graphs.functions_changed.connect(self.pipeline_panel.param_editor.set_function_names)
        # Order matters: the inspector forgets the old input before the editor selects a step.
        c.document_replaced.connect(self.inspector.on_document_replaced)
        c.document_replaced.connect(self.editor.on_document_replaced)
        c.document_replaced.connect(self._update_title)
        c.document_replaced.connect(self.banner.hide)
        c.edited.connect(lambda _first: self._update_title())
        c.edited.connect(lambda _first: self.run_controller.sync_target())
        c.edited.connect(self.session.on_edited)  # clears stale results before the inspector shows
        c.edited.connect(self.inspector.on_edited)
        self.files.title_changed.connect(self._update_title)
        ctx.status_message.connect(lambda text, ms: self.statusBar().showMessage(text, ms))
        ctx.banner_message.connect(self.banner.show_message)
        self.pipeline_view.run_to_requested.connect(self.session.run_to_uid)
        self.pipeline_view.reproducer_requested.connect(lambda uid: self.reproducers.save_dialog(uid))
        self.pipeline_view.reduce_requested.connect(lambda uid: self.reducer.save_and_reduce(uid))
        s = self.session
        s.running_changed.connect(self.act_stop.setEnabled)
        s.input_loaded.connect(self.inspector.on_input_loaded)
        s.step_result.connect(self.inspector.on_step_result)
        s.run_finished.connect(lambda _rev, result: self.inspector.on_run_finished(result))
        w = self.worker
        w.state_changed.connect(self._on_engine_state)
        w.catalogue_ready.connect(lambda data, _cached: self._set_catalogue(data))
        w.engine_crashed.connect(self._on_engine_crashed)
        w.engine_restarted.connect(self.graphs.on_engine_restarted)
        self.setAcceptDrops(True)

    # ---- window-level reactions --------------------------------------------------------------
    def _set_catalogue(self, data: dict) -> None:
        error = self.ctx.catalogue.set_json(data)
        if error:
            self.banner.show_message(error)

    def _on_engine_state(self, state: str, message: str) -> None:
        if state == "ready" and not self._devices_requested:
            self._devices_requested = True
            self.run_controller.refresh_devices()
        self.engine_label.setText(message)
        label = self.engine_label.label
        if label.property("state") != state:  # re-styled only when the state changes (colour by state)
            label.setProperty("state", state)
            label.style().unpolish(label)
            label.style().polish(label)

    def _on_engine_crashed(self, message: str) -> None:
        """A real crash (never a run that Stop or an edit ended): the banner names the step; the engine's
        own (technical) detail is its tooltip."""
        head, _sep, detail = message.partition("\n")
        self.banner.show_message(head + "\n" + tr("The engine was restarted; your pipeline is unchanged."), "error",
                                 self.act_restart_engine)
        # the engine client's own words, as code (technical, English)
        self.banner.label.setToolTip(f"<pre style='white-space: pre-wrap'>{html.escape(detail.strip(), quote=False)}</pre>"
                                     if detail.strip() else "")
        self.statusBar().showMessage(tr("Engine crashed and was restarted"), 8000)

    def raise_run_panel(self, then: Any = None) -> None:
        """Show the Build & Run dock, then call ``then``."""
        self.run_dock.show()
        self.run_dock.raise_()
        if then is not None:
            then()

    def _step_key(self, uid: str) -> Optional[str]:
        """Snapshot key of step ``uid``'s module in the latest results (``None`` when it has none)."""
        result = self.step_model.result(uid) if uid else None
        return result.snapshot_key if result is not None else None

    def _raise_profile_dock(self) -> None:
        self.profile_dock.show()
        self.profile_dock.raise_()

    def _fill_target_menu(self) -> None:
        def show_in_panel() -> None:
            self.raise_run_panel()
            self.run_panel.target_combo.setFocus()

        self.run_controller.fill_target_menu(self.target_menu, show_in_panel)

    def _update_title(self) -> None:
        self.setWindowTitle(self.files.title())
        model, target, target_json = self.files.model_and_target_texts()
        self.model_label.setText(model)
        self.model_label.setToolTip(model)
        self.target_label.setText(target)
        self.target_label.setToolTip(target_json)

    def open_initial(self, path: Optional[str] = None, model: Optional[str] = None,
                     recovery_answer: Optional[bool] = None) -> None:
        """Start-up document (see :meth:`app.file_controller.FileController.open_initial`), then the offer
        to restore unsaved changes a previous session left (crash, kill, signal); ``recovery_answer``
        answers it without the dialog."""
        self.files.open_initial(path, model)
        self.offer_restore(recovery_answer)

    def offer_restore(self, answer: Optional[bool] = None) -> bool:
        """Offer the recovery copy of a previous session (see :meth:`AutosaveController.offer_restore`)."""
        return self.autosave.offer_restore(lambda doc: self.files.replace_document(doc, modified=True), self, answer)

    # ---- engine ----------------------------------------------------------------------------------
    def restart_engine(self) -> None:
        """Run ▸ Restart Engine."""
        self.banner.hide()
        self.worker.restart_engine()
        self.statusBar().showMessage(tr("Restarting the engine…"), 5000)

    def show_preferences(self) -> None:
        """Edit ▸ Preferences…: engine limits (remembered; applied to the engine client)."""
        from app.preferences import PreferencesDialog

        dialog = PreferencesDialog(self.settings, self)
        self.preferences_dialog = dialog
        if dialog.exec() == PreferencesDialog.DialogCode.Accepted:
            dialog.apply()
            self.worker.apply_client_options()
            self.run_controller.refresh_devices()  # the RPC tracker's devices, when one is set

    # ---- drops -----------------------------------------------------------------------------------
    def dragEnterEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        """Accept a pipeline file dragged onto the window."""
        if self.files.dropped_pipeline(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        self.dragEnterEvent(event)

    def dropEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        """Open a dropped pipeline file (unsaved changes asked about first)."""
        if self.files.dropped_pipeline(event.mimeData()):
            event.acceptProposedAction()
            self.files.open_dropped(event.mimeData())
        else:
            event.ignore()

    # ---- layout, palette, close ------------------------------------------------------------------
    def _restore_layout(self) -> None:
        """The user's remembered layout, else the default one for the window's size once it is shown."""
        window_layout.set_corners(self)
        self._default_layout_pending = not window_layout.restore_layout(self)

    def reset_layout(self) -> None:
        """View ▸ Reset Layout: the default arrangement of the panes for the window's current size."""
        window_layout.apply_default_layout(self)

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        if getattr(self, "_default_layout_pending", False):
            self._default_layout_pending = False
            window_layout.apply_default_layout(self)  # at the size the window is shown with
            QTimer.singleShot(0, lambda: window_layout.apply_default_layout(self))  # after the window manager's
        QTimer.singleShot(0, lambda: window_layout.hide_stale_tab_bars(self))  # left over by restoreState

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt API
        """A narrower window: the side docks give way so the graph keeps its share of the width."""
        super().resizeEvent(event)
        if self.isVisible() and 0 < event.size().width() < event.oldSize().width():
            QTimer.singleShot(0, self._fit_panes)

    def _fit_panes(self) -> None:
        window_layout.keep_graph_room(self)
        window_layout.hide_stale_tab_bars(self)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        """Follow a system light/dark palette switch in the parts painted with fixed colours."""
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange) and hasattr(self, "inspector"):
            self.inspector.refresh_colours()
        super().changeEvent(event)

    def exit_on_signal(self, signum: int = 15) -> None:
        """SIGTERM/SIGINT/SIGHUP: write a recovery copy (kept for the next start) and close without questions."""
        self.autosave.save_now()
        self._exiting_on_signal = True
        self.close()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt API
        if not self._exiting_on_signal and not self.files.maybe_save():
            event.ignore()
            return
        window_layout.save_layout(self)
        app_settings_mod.set_last_document(self.settings, self.ctx.doc.path)
        self.settings.sync()
        self.session.run_timer.stop()
        self.session.code_gate.timer.stop()
        self.autosave.timer.stop()
        if not self._exiting_on_signal:
            self.autosave.discard()  # a clean exit: the edits were saved or discarded by the user
        self.worker.shutdown()  # bounded, also during a hung step
        event.accept()
