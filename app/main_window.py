"""The main window: graph (centre), pass palette (left), pipeline + parameters (right), diff (bottom).

The window owns one :class:`app.document_controller.DocumentController` (document + undo stack)
and one :class:`app.engine_worker.QtEngineWorker` (engine process in a background thread). Every
edit is an undo command; after an edit the affected steps re-run automatically (structural edits
at once, parameter typing debounced by 300 ms). Nothing here imports TVM.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import time
from pathlib import Path
from typing import Any, Optional

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QTextOption
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDialog,
    QDockWidget,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QGridLayout,
    QMenu,
    QSizePolicy,
    QSplitter,
    QStyle,
    QTextBrowser,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app import settings as app_settings_mod
from app.document_controller import DocumentController
from app.engine_worker import QtEngineWorker, load_cached_catalogue
from app.undo_commands import (
    AddStepCommand,
    DuplicateStepsCommand,
    MoveStepsCommand,
    RemoveStepsCommand,
    SetModelCommand,
    SetParamCommand,
    SetParamsCommand,
    SetTargetCommand,
    ToggleEnabledCommand,
)
from pipeline_model.document import PipelineDocument, Step, target_label
from pipeline_model.engine.results import CHANGED, FAILED, SKIPPED, UNCHANGED, RunResult, StepResult
from widgets.error_trace import ErrorLocation, locate_user_error
from widgets.pass_palette import PassPalette
from widgets.pipeline_view import PipelineView
from widgets.step_model import QtPipelineModel, format_ms
from widgets.theme import muted_colour, status_css

#: Pass ids whose steps tune with MetaSchedule (they emit ``tuning_progress``).
TUNING_PASS_IDS = ("relax.MetaScheduleTuneTIR", "relax.MetaScheduleTuneIRMod")

ROOT = Path(__file__).resolve().parent.parent
TUTORIAL_PIPELINE = ROOT / "resources" / "pipelines" / "fusion_walkthrough.json"
FILE_FILTER = "Pipeline files (*.json *.rps.json);;All files (*)"
MODEL_FILTER = "Models (*.py *.onnx *.pt2);;All files (*)"
PARAM_DEBOUNCE_MS = 300
#: Narrowest the node details panel gets (its placeholder and type texts wrap inside it).
DETAILS_MIN_WIDTH = 220


class _Banner(QFrame):
    """A dismissable message strip (engine crash, load errors) that does not block the window."""

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton(self)
        close.setText("✕")
        close.setAutoRaise(True)
        close.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(close)
        self.hide()

    def show_message(self, text: str, kind: str = "warning") -> None:
        """Show ``text`` (plain)."""
        self.setProperty("kind", kind)
        self.style().unpolish(self)
        self.style().polish(self)
        self.label.setText(text)
        self.show()



def _value_row(parent: QWidget, label_name: str, button_text: str, tooltip: str) -> tuple[QLabel, QToolButton]:
    """A plain-text value label that may shrink, and a menu button next to it (model and target rows)."""
    label = QLabel(parent)
    label.setObjectName(label_name)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setMinimumWidth(60)
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
    button = QToolButton(parent)
    button.setText(button_text)
    button.setToolTip(tooltip)
    button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
    return label, button


class MainWindow(QMainWindow):
    """Relax Pipeline Studio's main window."""

    #: Emitted when the diff/graph for the selected step is on screen (used by the benchmark).
    step_shown = Signal(str)

    def __init__(
        self,
        start_engine: bool = True,
        settings: Optional[QSettings] = None,
        client_factory: Any = None,
        close_client: bool = True,
    ) -> None:
        super().__init__()
        self.settings = settings or app_settings_mod.app_settings()
        self.ctrl = DocumentController(self)
        self.catalogue: Any = None
        self.trust_override: Optional[bool] = None  # tests/CLI: skip the trust question
        self.input_script: Optional[str] = None
        self.input_key: Optional[str] = None
        self.last_run: Optional[RunResult] = None
        self.last_good_script: Optional[str] = None
        self._run_started_at = 0.0
        self._run_until: Optional[int] = None
        self._graph_cache: dict[tuple[str, Optional[str]], dict] = {}
        self._graph_functions: list[str] = []
        self._shown_graph: Optional[tuple[str, Optional[str]]] = None
        self._shown_before_key: Optional[str] = None
        self._current_function: Optional[str] = None
        self._engine_state = "stopped"
        self._pending_select: list[str] = []
        self.model_error: Optional[str] = None
        self._tuning_seen = False
        self._shown_pass_id: Optional[str] = None
        self._shown_report: dict = {}
        self._refused_hashes: set[str] = set()

        self.setWindowTitle("Relax Pipeline Studio")
        self.setDockNestingEnabled(True)
        self._build_widgets()
        self._build_actions()
        self._build_menus()
        self._connect()
        self._restore_layout()
        self._update_title()

        self.run_timer = QTimer(self)
        self.run_timer.setSingleShot(True)
        self.run_timer.timeout.connect(self.run_pipeline_auto)
        self.auto_run = True

        cache = app_settings_mod.cache_dir()
        key, cached = load_cached_catalogue(cache)
        if cached is not None:
            self._set_catalogue(cached)
        self.worker = QtEngineWorker(
            cache_dir=cache, cached_catalogue_key=key, parent=self, client_factory=client_factory, close_client=close_client
        )
        from app.run_controller import RunController

        self.run_controller = RunController(self, self.run_panel)
        self._devices_requested = False
        self._connect_worker()
        if start_engine:
            self.worker.start()

    # ------------------------------------------------------------------------------------------
    # construction
    def _build_widgets(self) -> None:
        # Centre: banner + graph + node details.
        from widgets.graph_view import GraphView

        central = QWidget(self)
        self.banner = _Banner(central)
        self.function_picker = QComboBox(central)
        self.function_picker.setToolTip("Relax function shown in the graph")
        self.function_picker.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.graph_caption = QLabel("", central)
        self.graph_caption.setObjectName("graphCaption")
        self.graph_view = GraphView(central)
        self.details = QTextBrowser(central)
        self.details.setObjectName("nodeDetails")
        # Long type texts (tuples, shapes with many dims) break anywhere rather than overflow.
        self.details.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.details.setLineWrapMode(QTextBrowser.LineWrapMode.WidgetWidth)
        self.details.setMinimumWidth(DETAILS_MIN_WIDTH)
        self.details.setOpenLinks(False)
        self.details.anchorClicked.connect(self._on_details_link)
        self._details_kind = "placeholder"  # or "node" (a node's details) or "report" (a step's report)
        self.show_details_placeholder()
        graph_split = QSplitter(Qt.Orientation.Horizontal, central)
        graph_split.addWidget(self.graph_view)
        graph_split.addWidget(self.details)
        graph_split.setStretchFactor(0, 4)
        graph_split.setStretchFactor(1, 1)
        graph_split.setCollapsible(0, False)
        graph_split.setSizes([900, 280])
        self.graph_split = graph_split
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(QLabel("Function:", central))
        top.addWidget(self.function_picker)
        top.addSpacing(12)
        top.addWidget(self.graph_caption, 1)
        layout = QVBoxLayout(central)
        layout.setContentsMargins(4, 4, 4, 0)
        layout.setSpacing(4)
        layout.addWidget(self.banner)
        layout.addLayout(top)
        layout.addWidget(graph_split, 1)
        self.setCentralWidget(central)

        # Left: palette.
        self.palette = PassPalette(self)
        self.palette_dock = self._dock("Passes", "paletteDock", self.palette, Qt.DockWidgetArea.LeftDockWidgetArea)

        # Right: model/target bar, pipeline list, parameters.
        from widgets.param_editor import ParamEditor

        self.step_model = QtPipelineModel(self.ctrl.doc, self)
        self.pipeline_view = PipelineView(self.step_model, self)
        self.param_editor = ParamEditor(self)
        right = QWidget(self)
        self.model_label, self.model_button = _value_row(
            right, "modelLabel", "Model…", "Use a built-in model, or open a model file (Ctrl+M)")
        # The target: shown here, chosen in one place (the Build & Run panel's device list and
        # its JSON editor); this button offers the same choices. Every change is an undo command.
        self.target_label, self.target_button = _value_row(
            right, "targetLabel", "Change…", "Change the compilation target (devices found by the engine, or a JSON target)")
        self.target_button.setObjectName("targetChange")
        self.target_menu = QMenu(self.target_button)
        self.target_menu.aboutToShow.connect(self._fill_target_menu)
        self.target_button.setMenu(self.target_menu)
        bar = QGridLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.setHorizontalSpacing(6)
        bar.setVerticalSpacing(2)
        for row, (name, label, button) in enumerate(
            (("Model", self.model_label, self.model_button), ("Target", self.target_label, self.target_button))
        ):
            caption = QLabel(f"<b>{name}</b>", right)
            bar.addWidget(caption, row, 0)
            bar.addWidget(label, row, 1)
            bar.addWidget(button, row, 2)
        bar.setColumnStretch(1, 1)
        split = QSplitter(Qt.Orientation.Vertical, right)
        split.addWidget(self.pipeline_view)
        param_box = QWidget(right)
        param_layout = QVBoxLayout(param_box)
        param_layout.setContentsMargins(0, 0, 0, 0)
        self.param_title = QLabel("Step parameters", param_box)
        self.param_title.setObjectName("paramTitle")
        param_layout.addWidget(self.param_title)
        from PySide6.QtWidgets import QScrollArea

        self.param_scroll = QScrollArea(param_box)
        self.param_scroll.setWidgetResizable(True)
        self.param_scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.param_scroll.setWidget(self.param_editor)
        param_layout.addWidget(self.param_scroll, 1)
        split.addWidget(param_box)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        split.setChildrenCollapsible(False)
        self.pipeline_view.setMinimumHeight(220)
        split.setSizes([480, 380])
        self.right_split = split
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(4, 4, 4, 4)
        right_layout.addLayout(bar)
        right_layout.addWidget(split, 1)
        self.pipeline_dock = self._dock("Pipeline", "pipelineDock", right, Qt.DockWidgetArea.RightDockWidgetArea)

        # Bottom: diff.
        from widgets.diff_view import DiffView

        self.diff_view = DiffView(self)
        self.diff_view.location_activated.connect(self.show_error_location)
        self.diff_dock = self._dock("Diff", "diffDock", self.diff_view, Qt.DockWidgetArea.BottomDockWidgetArea)

        # Bottom, tabbed with the diff: build & run, tuning progress.
        from widgets.run_panel import RunPanel
        from widgets.tuning_panel import TuningPanel

        self.run_panel = RunPanel(self)
        self.run_dock = self._dock("Build && Run", "runDock", self.run_panel, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tuning_panel = TuningPanel(self)
        self.tuning_dock = self._dock("Tuning", "tuningDock", self.tuning_panel, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.diff_dock, self.run_dock)
        self.tabifyDockWidget(self.run_dock, self.tuning_dock)
        self.diff_dock.raise_()

        # Status bar.
        self.engine_label = QLabel("Engine: stopped", self)
        self.engine_label.setObjectName("engineState")
        self.run_label = QLabel("", self)
        self.progress = QProgressBar(self)
        self.progress.setMaximumWidth(180)
        self.progress.setTextVisible(True)
        self.progress.hide()
        self.statusBar().addWidget(self.engine_label)
        self.statusBar().addWidget(self.run_label, 1)
        self.statusBar().addPermanentWidget(self.progress)
        self.resize(1500, 920)

    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
        )
        self.addDockWidget(area, dock)
        return dock

    def _icon(self, standard: QStyle.StandardPixmap, theme: str = ""):
        from PySide6.QtGui import QIcon

        icon = QIcon.fromTheme(theme) if theme else QIcon()
        path = ROOT / "resources" / "icons" / f"{theme}.svg"
        if icon.isNull() and theme and path.exists():
            icon = QIcon(str(path))
        if icon.isNull():
            icon = self.style().standardIcon(standard)
        return icon

    def _build_actions(self) -> None:
        sp = QStyle.StandardPixmap

        def action(text: str, slot, shortcut: Any = None, icon=None, tip: str = "") -> QAction:
            act = QAction(text, self)
            if shortcut is not None:
                act.setShortcut(QKeySequence(shortcut))
            if icon is not None:
                act.setIcon(icon)
            if tip:
                act.setStatusTip(tip)
                act.setToolTip(tip)
            act.triggered.connect(slot)
            self.addAction(act)
            return act

        self.act_new = action("&New Pipeline", self.new_pipeline, QKeySequence.StandardKey.New, self._icon(sp.SP_FileIcon, "document-new"))
        self.act_open = action("&Open Pipeline…", self.open_pipeline_dialog, QKeySequence.StandardKey.Open, self._icon(sp.SP_DialogOpenButton, "document-open"))
        self.act_save = action("&Save", self.save, QKeySequence.StandardKey.Save, self._icon(sp.SP_DialogSaveButton, "document-save"))
        self.act_save_as = action("Save &As…", self.save_as, QKeySequence.StandardKey.SaveAs)
        self.act_open_model = action("Open &Model…", self.open_model_dialog, "Ctrl+M", tip="Use a model file (TVMScript, nn.Module, ONNX, torch)")
        self.act_export = action("&Export Python Script…", self.export_script_dialog, "Ctrl+E", tip="Write a standalone Python script that applies this pipeline")
        self.act_quit = action("&Quit", self.close, QKeySequence.StandardKey.Quit)
        self.act_undo = self.ctrl.undo_stack.createUndoAction(self, "&Undo")
        self.act_undo.setShortcuts([QKeySequence("Ctrl+Z")])
        self.act_redo = self.ctrl.undo_stack.createRedoAction(self, "&Redo")
        self.act_redo.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        self.act_undo.setIcon(self._icon(sp.SP_ArrowBack, "edit-undo"))
        self.act_redo.setIcon(self._icon(sp.SP_ArrowForward, "edit-redo"))
        self.addAction(self.act_undo)
        self.addAction(self.act_redo)
        self.act_delete = action("&Delete Step", self.delete_selected, QKeySequence.StandardKey.Delete)
        self.act_delete.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.pipeline_view.addAction(self.act_delete)
        self.act_duplicate = self.pipeline_view.duplicate_action
        self.act_run = action("&Run Pipeline", self.run_pipeline, "F5", self._icon(sp.SP_MediaPlay, "media-playback-start"), "Run every step (F5)")
        self.act_run_to = action("Run &to Selected Step", self.run_to_selected, "Shift+F5", self._icon(sp.SP_MediaSeekForward, "media-seek-forward"), "Run the steps up to the selected one")
        self.act_stop = action("&Stop", self.stop, "Esc", self._icon(sp.SP_MediaStop, "media-playback-stop"), "Stop the running step")
        self.act_stop.setEnabled(False)
        self.act_auto = QAction("Re-run &Automatically After Edits", self, checkable=True, checked=True)
        self.act_auto.toggled.connect(lambda on: setattr(self, "auto_run", on))
        self.act_fit = action("&Fit Graph", self._fit_graph, "Ctrl+0")
        self.act_build = action("&Build && Run", self.build_and_run, "Ctrl+B", tip="Build the module, run it, time it and check it (Ctrl+B)")
        self.act_compare = action("&Compare with Baseline", self.compare_with_baseline, "Ctrl+Shift+B", tip="Latency of this pipeline vs the unoptimized model")

    def _build_menus(self) -> None:
        menu = self.menuBar()
        file_menu = menu.addMenu("&File")
        for act in (self.act_new, self.act_open):
            file_menu.addAction(act)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        file_menu.addSeparator()
        file_menu.addAction(self.act_save)
        file_menu.addAction(self.act_save_as)
        file_menu.addSeparator()
        file_menu.addAction(self.act_open_model)
        self.builtin_menu = file_menu.addMenu("Built-in &Models")
        try:
            from pipeline_model.models import BUILTIN_MODELS
        except ImportError:  # pragma: no cover
            BUILTIN_MODELS = {"mlp": "", "transformer": ""}
        for name, desc in BUILTIN_MODELS.items():
            act = self.builtin_menu.addAction(f"builtin:{name}")
            act.setToolTip(desc)
            act.triggered.connect(lambda _=False, n=name: self.set_model(f"builtin:{n}"))
        self.model_button.setMenu(self.builtin_menu)
        file_menu.addAction(self.act_export)
        file_menu.addSeparator()
        file_menu.addAction(self.act_quit)

        edit = menu.addMenu("&Edit")
        edit.addAction(self.act_undo)
        edit.addAction(self.act_redo)
        edit.addSeparator()
        edit.addAction(self.act_duplicate)
        edit.addAction(self.act_delete)

        run = menu.addMenu("&Run")
        run.addAction(self.act_run)
        run.addAction(self.act_run_to)
        run.addAction(self.act_stop)
        run.addSeparator()
        run.addAction(self.act_build)
        run.addAction(self.act_compare)
        run.addSeparator()
        run.addAction(self.act_auto)

        view = menu.addMenu("&View")
        view.addAction(self.act_fit)
        view.addSeparator()
        for dock in (self.palette_dock, self.pipeline_dock, self.diff_dock, self.run_dock, self.tuning_dock):
            view.addAction(dock.toggleViewAction())

        bar = QToolBar("Main", self)
        bar.setObjectName("mainToolbar")
        bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        for act in (self.act_new, self.act_open, self.act_save):
            bar.addAction(act)
        bar.addSeparator()
        for act in (self.act_undo, self.act_redo):
            bar.addAction(act)
        bar.addSeparator()
        for act in (self.act_run, self.act_run_to, self.act_stop):
            bar.addAction(act)
        bar.addSeparator()
        bar.addAction(self.act_build)
        self.addToolBar(bar)
        self.toolbar = bar

    def _connect(self) -> None:
        c = self.ctrl
        c.modified_changed.connect(lambda _m: self._update_title())
        c.steps_changed.connect(self._on_steps_changed)
        c.step_changed.connect(self._on_step_data_changed)
        c.document_replaced.connect(self._on_document_replaced)
        c.edited.connect(self._on_edited)
        c.select_request.connect(self._select_later)
        m = self.step_model
        m.add_requested.connect(self.add_pass)
        m.move_requested.connect(self.move_steps)
        m.toggle_requested.connect(self.toggle_step)
        v = self.pipeline_view
        v.delete_requested.connect(self.delete_steps)
        v.duplicate_requested.connect(self.duplicate_steps)
        v.current_step_changed.connect(self._on_current_step)
        v.run_to_requested.connect(self._run_to_uid)
        v.nested_selected.connect(self._on_nested_selected)
        self.palette.pass_activated.connect(self._append_pass)
        self.function_picker.activated.connect(self._on_function_picked)
        self._connect_param_editor()
        self._connect_graph_view()

    def _connect_param_editor(self) -> None:
        pe = self.param_editor
        pe.param_changed.connect(self._on_param_changed)

    def _connect_graph_view(self) -> None:
        gv = self.graph_view
        gv.node_selected.connect(self._on_node_selected)
        gv.node_activated.connect(self._on_node_activated)
        gv.graph_shown.connect(self._on_graph_shown)

    def _connect_worker(self) -> None:
        w = self.worker
        w.state_changed.connect(self._on_engine_state)
        w.catalogue_ready.connect(lambda data, _cached: self._set_catalogue(data))
        w.run_started.connect(self._on_run_started)
        w.step_started.connect(self._on_step_started)
        w.step_finished.connect(self._on_step_finished)
        w.nested_finished.connect(self._on_nested)
        w.run_event.connect(self._on_run_event)
        w.run_finished.connect(self._on_run_finished)
        w.reply_ready.connect(self._on_reply)
        w.request_failed.connect(self._on_request_failed)
        w.engine_crashed.connect(self._on_engine_crashed)
        self.run_controller.connect_worker(w)
        self.tuning_panel.stop_requested.connect(self.stop_tuning)

    # ------------------------------------------------------------------------------------------
    # settings / layout
    def _restore_layout(self) -> None:
        geometry = self.settings.value("window/geometry")
        state = self.settings.value("window/state")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        if isinstance(state, QByteArray) and not state.isEmpty():
            self.restoreState(state)
        else:
            self.resizeDocks([self.palette_dock, self.pipeline_dock], [280, 400], Qt.Orientation.Horizontal)
            self.resizeDocks([self.diff_dock], [330], Qt.Orientation.Vertical)

    def _save_layout(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.settings.sync()

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        files = app_settings_mod.recent_files(self.settings)
        if not files:
            act = self.recent_menu.addAction("(none)")
            act.setEnabled(False)
        for path in files:
            act = self.recent_menu.addAction(path)
            act.triggered.connect(lambda _=False, p=path: self.open_pipeline(p))

    # ------------------------------------------------------------------------------------------
    # catalogue
    def _set_catalogue(self, data: dict) -> None:
        from pipeline_model.catalogue import Catalogue

        try:
            self.catalogue = Catalogue.from_json(data)
        except Exception as exc:  # noqa: BLE001 - a bad cache must not stop the app
            self.banner.show_message(f"Could not read the pass catalogue: {exc}")
            return
        self.palette.set_catalogue(self.catalogue)
        self.step_model.set_title_lookup(self._title_for, self._is_composite)
        self._refresh_placeholders()
        self._show_params(self.pipeline_view.current_uid())

    def _title_for(self, pass_id: str) -> str:
        spec = self.catalogue.get(pass_id) if self.catalogue is not None else None
        return spec.title if spec is not None else pass_id

    def _is_composite(self, pass_id: str) -> bool:
        spec = self.catalogue.get(pass_id) if self.catalogue is not None else None
        if spec is not None:
            return bool(spec.composite)
        return pass_id.startswith(("pipeline.", "stage."))

    def _refresh_placeholders(self) -> None:
        """Mark steps whose pass is unknown to the catalogue (shown disabled, never run)."""
        if self.catalogue is None:
            return
        changed = False
        for step in self.ctrl.doc.steps:
            known = step.pass_id in self.catalogue
            if not known and step.placeholder is None:
                step.placeholder = f"unknown pass {step.pass_id!r}: not in this TVM's catalogue"
                changed = True
            elif known and step.placeholder is not None and step.placeholder.startswith("unknown pass"):
                step.placeholder = None
                changed = True
        if changed:
            self.step_model.refresh_data()

    # ------------------------------------------------------------------------------------------
    # files
    def open_initial(self, path: Optional[str] = None, model: Optional[str] = None) -> None:
        """Start-up document: ``path`` if given, else the tutorial MLP with the example pipeline."""
        if path:
            if not self.open_pipeline(path):
                self.new_pipeline(force=True)
        elif TUTORIAL_PIPELINE.exists():
            self.open_pipeline(str(TUTORIAL_PIPELINE), remember=False, as_template=True)
        else:
            self.new_pipeline(force=True)
        if model:
            self.set_model(model)

    def _known_ids(self) -> Optional[set[str]]:
        return set(self.catalogue.ids()) if self.catalogue is not None else None

    def new_pipeline(self, force: bool = False) -> None:
        """Start an empty pipeline on the tutorial MLP."""
        if not force and not self.maybe_save():
            return
        self.ctrl.replace_document(PipelineDocument(model="builtin:mlp", name="Untitled pipeline"))

    def open_pipeline_dialog(self) -> None:
        """File > Open."""
        if not self.maybe_save():
            return
        start = os.path.dirname(self.ctrl.doc.path) if self.ctrl.doc.path else str(ROOT / "resources" / "pipelines")
        path, _ = QFileDialog.getOpenFileName(self, "Open pipeline", start, FILE_FILTER)
        if path:
            self.open_pipeline(path)

    def open_pipeline(self, path: str, remember: bool = True, as_template: bool = False) -> bool:
        """Load ``path``; a bad file shows its error (file, JSON path, line) and changes nothing."""
        from pipeline_model.fileformat import PipelineFileError, load_pipeline

        try:
            doc = load_pipeline(path, known_pass_ids=self._known_ids())
        except PipelineFileError as exc:
            QMessageBox.critical(self, "Cannot open pipeline", str(exc))
            return False
        except OSError as exc:
            QMessageBox.critical(self, "Cannot open pipeline", f"{path}: {exc.strerror or exc}")
            return False
        if as_template:
            doc.path = None  # the bundled example is a template: "Save" asks where
        self.ctrl.replace_document(doc)
        if remember:
            app_settings_mod.add_recent_file(self.settings, path)
        self.statusBar().showMessage(f"Opened {path}", 4000)
        return True

    def save(self) -> bool:
        """File > Save (asks for a name the first time)."""
        if not self.ctrl.doc.path:
            return self.save_as()
        return self._save_to(self.ctrl.doc.path)

    def save_as(self) -> bool:
        """File > Save As."""
        start = self.ctrl.doc.path or os.path.join(os.path.expanduser("~"), _slug(self.ctrl.doc.name) + ".json")
        path, _ = QFileDialog.getSaveFileName(self, "Save pipeline", start, FILE_FILTER)
        if not path:
            return False
        if not os.path.splitext(path)[1]:
            path += ".json"
        return self._save_to(path)

    def _save_to(self, path: str) -> bool:
        from pipeline_model.fileformat import save_pipeline

        try:
            save_pipeline(self.ctrl.doc, path)
        except (OSError, ValueError) as exc:
            QMessageBox.critical(self, "Cannot save pipeline", f"{path}: {exc}")
            return False
        self.ctrl.mark_saved(path)
        app_settings_mod.add_recent_file(self.settings, path)
        self._update_title()
        self.statusBar().showMessage(f"Saved {path}", 4000)
        return True

    def maybe_save(self) -> bool:
        """Ask Save/Discard/Cancel when there are unsaved changes; False means "cancel"."""
        if not self.ctrl.modified:
            return True
        answer = QMessageBox.question(
            self,
            "Unsaved changes",
            f"The pipeline “{self.ctrl.doc.name}” has unsaved changes. Save them?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Save,
        )
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def open_model_dialog(self) -> None:
        """File > Open Model: a built-in or a model file (TVMScript, nn.Module, ONNX, torch)."""
        from widgets.model_dialog import ModelDialog

        base = self.ctrl.doc.model_path_base() or os.path.expanduser("~")
        dialog = ModelDialog(self.ctrl.doc.model, base, self)
        self.model_dialog = dialog
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return
        spec = dialog.spec()
        if spec:
            self.open_model(spec)

    def open_model(self, spec: str) -> None:
        """Load ``spec`` in the engine first; only when it loads does it become the model (undoable).

        A broken or unsupported file shows the engine's message (naming the file) and changes nothing.
        """
        if spec == self.ctrl.doc.model:
            return
        probe = PipelineDocument(model=spec, target=dict(self.ctrl.doc.target), name=self.ctrl.doc.name)
        probe.path = self.ctrl.doc.path
        trust = self._trust_for_run(explicit=True, doc=probe)  # a model .py file is code (issue 9)
        if trust is None:
            return
        self.statusBar().showMessage(f"Loading model {spec}…")

        def load(client: Any, on_event: Any) -> dict:
            result = client.run(probe, trust_custom_code=bool(trust), on_event=on_event)
            return {"error": result.error, "input_key": result.input_key}

        self.worker.request_fn("load_model", load, tag=("model", spec))

    def _on_model_probed(self, spec: str, reply: Optional[dict], failure: Optional[str]) -> None:
        error = failure or (reply or {}).get("error")
        if error:
            self.statusBar().showMessage(f"Could not load {spec}", 8000)
            self.model_error = str(error)
            QMessageBox.critical(self, "Cannot open model", f"{spec}:\n{error}" if spec not in str(error) else str(error))
            return
        self.model_error = None
        self.statusBar().showMessage(f"Model {spec}", 4000)
        self.set_model(spec)

    def build_and_run(self) -> None:
        """Run > Build & Run (Ctrl+B), in the Build & Run panel."""
        self.run_dock.show()
        self.run_dock.raise_()
        self.run_controller.build_and_run()

    def compare_with_baseline(self) -> None:
        """Run > Compare with Baseline."""
        self.run_dock.show()
        self.run_dock.raise_()
        self.run_controller.compare()

    def set_model(self, spec: str) -> None:
        """Change the model (undoable)."""
        if spec != self.ctrl.doc.model:
            self.ctrl.undo_stack.push(SetModelCommand(self.ctrl, spec))

    def export_script_dialog(self) -> None:
        """File > Export Python Script."""
        from pipeline_model.export import export_script

        start = os.path.join(os.path.dirname(self.ctrl.doc.path or os.path.expanduser("~/x")), _slug(self.ctrl.doc.name) + ".py")
        path, _ = QFileDialog.getSaveFileName(self, "Export Python script", start, "Python (*.py)")
        if not path:
            return
        try:
            text = export_script(self.ctrl.doc)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
        except Exception as exc:  # noqa: BLE001 - show any export problem plainly
            QMessageBox.critical(self, "Cannot export script", f"{path}: {exc}")
            return
        self.statusBar().showMessage(f"Exported {path}", 4000)

    def changeEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt API
        """Follow a system light/dark palette switch in the parts painted with fixed colours."""
        from PySide6.QtCore import QEvent

        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange) and hasattr(self, "details"):
            # Rich text keeps the colours it was made with (hint colour, links, warnings): redo it.
            if self._details_kind == "placeholder":
                self.show_details_placeholder()
            elif self._details_kind == "node":
                self._on_graph_shown()
            elif self._details_kind == "report":
                uid = self.pipeline_view.current_uid()
                result = self.step_model.result(uid) if uid else None
                if result is not None:
                    index = self.ctrl.doc.index_of(uid)
                    self._show_step_report(index, self.ctrl.doc.steps[index], result)
        super().changeEvent(event)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        if not self.maybe_save():
            event.ignore()
            return
        self._save_layout()
        self.run_timer.stop()
        self.worker.shutdown()
        event.accept()

    def _update_title(self) -> None:
        doc = self.ctrl.doc
        name = os.path.basename(doc.path) if doc.path else doc.name
        self.setWindowTitle(f"{name}{'*' if self.ctrl.modified else ''} — Relax Pipeline Studio")
        self.model_label.setText(doc.model)
        self.model_label.setToolTip(doc.model)
        self.target_label.setText(target_label(doc.target))
        self.target_label.setToolTip(json.dumps(doc.target, indent=1))

    # ------------------------------------------------------------------------------------------
    # edits (each one an undo command)
    def add_pass(self, pass_id: str, row: int = -1) -> Optional[str]:
        """Insert a step for ``pass_id`` at ``row`` (-1 = append); returns the new step's uid."""
        if self.catalogue is not None:
            spec = self.catalogue.get(pass_id)
            if spec is None:
                self.statusBar().showMessage(f"Unknown pass {pass_id}", 5000)
                return None
            if not spec.available:
                self.statusBar().showMessage(f"{spec.title} is unavailable: {spec.unavailable_reason}", 8000)
                return None
        step = Step(pass_id=pass_id)
        self.ctrl.undo_stack.push(AddStepCommand(self.ctrl, row, step))
        return step.uid

    def _append_pass(self, pass_id: str) -> None:
        uid = self.pipeline_view.current_uid()
        row = self.ctrl.doc.index_of(uid) + 1 if uid else -1
        self.add_pass(pass_id, row)

    def move_steps(self, uids: list[str], row: int) -> None:
        """Move ``uids`` to insertion ``row``."""
        cmd = MoveStepsCommand(self.ctrl, uids, row)
        if not cmd.isObsolete():
            self.ctrl.undo_stack.push(cmd)

    def toggle_step(self, uid: str, enabled: bool) -> None:
        """Enable/disable a step."""
        self.ctrl.undo_stack.push(ToggleEnabledCommand(self.ctrl, uid, enabled))

    def delete_steps(self, uids: list[str]) -> None:
        """Remove steps."""
        if uids:
            self.ctrl.undo_stack.push(RemoveStepsCommand(self.ctrl, uids))

    def delete_selected(self) -> None:
        """Edit > Delete."""
        self.delete_steps(self.pipeline_view.selected_uids())

    def duplicate_steps(self, uids: list[str]) -> None:
        """Duplicate steps (copies go after the last one)."""
        if uids:
            self.ctrl.undo_stack.push(DuplicateStepsCommand(self.ctrl, uids))

    def _on_param_changed(self, name: str, value: Any) -> None:
        uid = self.pipeline_view.current_uid()
        if not uid:
            return
        step = self.ctrl.doc.step(uid)
        if step.params.get(name, _MISSING) == value:
            return
        self.ctrl.undo_stack.push(SetParamCommand(self.ctrl, uid, name, value))

    def set_step_params(self, uid: str, params: dict) -> None:
        """Replace a step's parameters (undoable)."""
        self.ctrl.undo_stack.push(SetParamsCommand(self.ctrl, uid, params))

    def set_target(self, target: dict) -> None:
        """Change the pipeline's target (undoable); the Build & Run panel follows."""
        if isinstance(target, dict) and dict(target) != self.ctrl.doc.target:
            self.ctrl.undo_stack.push(SetTargetCommand(self.ctrl, dict(target)))

    def target_choices(self) -> list[tuple[str, dict]]:
        """``(label, target)`` of the targets the Build & Run panel offers (its device list)."""
        combo = self.run_panel.target_combo
        out = [(combo.itemText(i), combo.itemData(i)) for i in range(combo.count())]
        return [(text, dict(data)) for text, data in out if isinstance(data, dict)]

    def _fill_target_menu(self) -> None:
        menu = self.target_menu
        menu.clear()
        current = self.ctrl.doc.target
        choices = self.target_choices() or [("CPU: generic llvm", {"kind": "llvm"})]
        for text, target in choices:
            act = menu.addAction(text)
            act.setCheckable(True)
            act.setChecked(target == current)
            act.triggered.connect(lambda _=False, t=target: self.set_target(t))
        menu.addSeparator()
        menu.addAction("Edit as JSON…", self.run_controller.edit_target)
        menu.addAction("Show in Build && Run Panel", self.show_target_in_run_panel)

    def show_target_in_run_panel(self) -> None:
        """Raise the Build & Run panel with its target list focused."""
        self.run_dock.show()
        self.run_dock.raise_()
        self.run_panel.target_combo.setFocus()

    # ------------------------------------------------------------------------------------------
    # document notifications
    def _on_document_replaced(self) -> None:
        self._refresh_placeholders()
        self.step_model.set_document(self.ctrl.doc)
        self.input_script = self.input_key = None
        self.last_run = None
        self.last_good_script = None
        self._graph_cache.clear()
        self._update_title()
        self.banner.hide()
        if self.ctrl.doc.steps:
            self.pipeline_view.select_uids([self.ctrl.doc.steps[-1].uid])
        else:
            self._on_current_step("")

    def _on_steps_changed(self) -> None:
        self._refresh_placeholders()
        current = self.pipeline_view.current_uid()
        selected = self.pipeline_view.selected_uids()
        self.step_model.refresh()
        wanted = self._pending_select or selected
        self._pending_select = []
        live = {s.uid for s in self.ctrl.doc.steps}
        wanted = [u for u in wanted if u in live]
        self.pipeline_view.select_uids(wanted, current if current in wanted else None)

    def _select_later(self, uids: list[str]) -> None:
        self._pending_select = list(uids)
        live = {s.uid for s in self.ctrl.doc.steps}
        if all(u in live for u in uids) and self.step_model.rowCount() == len(self.ctrl.doc.steps):
            self.pipeline_view.select_uids(uids)

    def _on_step_data_changed(self, uid: str) -> None:
        self.step_model.step_changed(uid)
        if uid == self.pipeline_view.current_uid():
            self._sync_param_values(uid)

    def _on_edited(self, first_index: int) -> None:
        self._update_title()
        if hasattr(self, "run_controller"):
            self.run_controller.sync_target()
        self.worker.set_revision(self.ctrl.revision)
        self.step_model.clear_results(first_index)
        if first_index == 0:
            self.input_script = self.input_key = None
        if self.auto_run:
            kind = "param" if self.ctrl.undo_stack.count() and isinstance(
                self.ctrl.undo_stack.command(self.ctrl.undo_stack.index() - 1), (SetParamCommand, SetParamsCommand)
            ) else "structure"
            self.run_timer.start(PARAM_DEBOUNCE_MS if kind == "param" else 0)
        self._on_current_step(self.pipeline_view.current_uid(), refresh_params=False)

    # ------------------------------------------------------------------------------------------
    # running
    def _trust_listing(self, doc: Optional[PipelineDocument] = None) -> list[tuple[int, str, str]]:
        """``(step number, what, code)`` for each enabled step that would run user Python code:
        ``custom.python`` sources and pattern files of FuseOpsByPattern (read from disk); step number
        0 for a model ``.py`` file (interim until the consent dialog of issue 9)."""
        from pipeline_model import consent, safe_files

        doc = doc if doc is not None else self.ctrl.doc
        out: list[tuple[int, str, str]] = []
        model = consent.model_item(doc.model, doc.model_path_base())
        if model is not None and model.path:
            try:
                code = safe_files.read_text(model.path, "model file", 4 * 1024 * 1024)
            except OSError as exc:
                code = f"# {exc}"
            out.append((0, model.label, code))
        for index, step in enumerate(doc.steps):
            if not step.runnable:
                continue
            if step.pass_id == "custom.python":
                out.append((index + 1, "custom.python", str(step.params.get("source") or "")))
                continue
            spec = self.catalogue.get(step.pass_id) if self.catalogue is not None else None
            path = step.params.get("pattern_file")
            if step.params.get("pattern_source") == "file" and path:
                full = path if os.path.isabs(str(path)) else os.path.join(doc.model_path_base() or os.getcwd(), str(path))
                try:
                    code = safe_files.read_text(full, "pattern file", 4 * 1024 * 1024)  # never /dev/zero
                except OSError as exc:
                    code = f"# cannot read {full}: {exc.strerror or exc}"
                out.append((index + 1, f"{step.pass_id} pattern file {full}", code))
            elif spec is not None and spec.needs_trust:
                out.append((index + 1, step.pass_id, json.dumps(step.params, indent=2, default=str)))
        return out

    def _trust_for_run(self, explicit: bool = True, doc: Optional[PipelineDocument] = None) -> Optional[bool]:
        """Whether custom code may run; asks once per pipeline content (remembered). None = cancel."""
        listing = self._trust_listing(doc)
        if not listing:
            return False
        if self.trust_override is not None:
            return self.trust_override
        digest = hashlib.sha256(json.dumps(listing, default=str).encode()).hexdigest()
        if digest in app_settings_mod.trusted_hashes(self.settings):
            return True
        if digest in self._refused_hashes and not explicit:
            return False  # refused in this session: automatic re-runs do not ask again
        shown = doc if doc is not None else self.ctrl.doc
        dialog = TrustDialog(listing, shown.path or shown.name, self)
        self.trust_dialog = dialog
        if dialog.exec() == QDialog.DialogCode.Accepted:
            app_settings_mod.add_trusted_hash(self.settings, digest)
            self._refused_hashes.discard(digest)
            return True
        self._refused_hashes.add(digest)
        return False

    def run_pipeline_auto(self) -> None:
        """Debounced re-run after an edit."""
        self.run_pipeline(until=self._run_until if self._run_until is not None else None, explicit=False)

    def run_pipeline(self, checked: bool = False, until: Optional[int] = None, explicit: bool = True) -> None:  # noqa: ARG002
        """Run (F5): every step, or up to ``until``. Custom code runs only when trusted (see :class:`TrustDialog`)."""
        self.run_timer.stop()
        trust = self._trust_for_run(explicit=explicit)
        self._run_until = until
        self.worker.request_run(self.ctrl.doc, self.ctrl.revision, until=until, trust_custom_code=bool(trust))

    def run_to_selected(self) -> None:
        """Run up to the selected step."""
        uid = self.pipeline_view.current_uid()
        if uid:
            self._run_to_uid(uid)

    def _run_to_uid(self, uid: str) -> None:
        self.run_pipeline(until=self.ctrl.doc.index_of(uid))

    def stop(self) -> None:
        """Stop the running request (between passes)."""
        self.run_timer.stop()
        self.worker.cancel()
        self.statusBar().showMessage("Stopping…", 3000)

    def stop_tuning(self) -> None:
        """End the tuning in flight early (the Tuning panel's Stop): the tuning step keeps what was
        measured and the run goes on to the apply step. The main Stop cancels the whole run."""
        self.worker.stop_tuning()
        self.statusBar().showMessage("Stopping tuning; measured trials are kept and the run goes on…", 5000)

    def _on_engine_state(self, state: str, message: str) -> None:
        self._engine_state = state
        if state == "ready" and not self._devices_requested:
            self._devices_requested = True
            self.run_controller.refresh_devices()
        self.engine_label.setText(message)
        self.engine_label.setProperty("state", state)
        self.engine_label.style().unpolish(self.engine_label)
        self.engine_label.style().polish(self.engine_label)

    def _on_run_started(self, revision: int, until: Any) -> None:
        if revision != self.ctrl.revision:
            return
        self._run_started_at = time.perf_counter()
        self.act_stop.setEnabled(True)
        steps = self.ctrl.doc.steps if until is None else self.ctrl.doc.steps[: int(until) + 1]
        self.progress.setRange(0, max(1, len(steps)))
        self.progress.setValue(0)
        self.progress.setFormat("%v / %m steps")
        self.progress.show()
        self.run_label.setText("Running…")

    def _on_step_started(self, revision: int, index: int, uid: str) -> None:
        if revision != self.ctrl.revision:
            return
        self.step_model.set_running(uid)
        self.progress.setValue(index)
        title = self._title_for(self.ctrl.doc.steps[index].pass_id) if 0 <= index < len(self.ctrl.doc.steps) else uid
        if 0 <= index < len(self.ctrl.doc.steps) and self.ctrl.doc.steps[index].pass_id in TUNING_PASS_IDS:
            self.tuning_panel.start(f"step {index + 1}: {title}")
            self.tuning_dock.show()
            self.tuning_dock.raise_()
        self.run_label.setText(f"Running step {index + 1}: {title}…")

    def _on_nested(self, revision: int, index: int, nested: Any) -> None:
        pass  # nested passes arrive with the step's result; the live label is enough here

    def _on_run_event(self, revision: int, name: str, data: Any) -> None:
        if revision != self.ctrl.revision or not isinstance(data, dict):
            return
        if name == "model_loaded":
            self.input_script = data.get("input_script") or self.input_script
            self.input_key = data.get("input_key") or self.input_key
            if not self.pipeline_view.current_uid():
                self._show_input()
            return
        if name == "tuning_progress":
            done, total = data.get("done"), data.get("total")
            if isinstance(done, int) and isinstance(total, int) and total > 0:
                self.run_label.setText(f"Tuning: {done}/{total} trials")
            self.tuning_panel.update_progress(data)
            self._tuning_seen = True
        elif name == "warning":
            self.statusBar().showMessage(str(data.get("message", ""))[:300], 10000)

    def _on_step_finished(self, revision: int, result: StepResult) -> None:
        if revision != self.ctrl.revision:
            return
        self.step_model.set_result(result)
        self.progress.setValue(result.index + 1)
        if result.uid == self.pipeline_view.current_uid():
            self._on_current_step(result.uid, refresh_params=False)

    def _on_run_finished(self, revision: int, result: RunResult) -> None:
        if revision != self.ctrl.revision:
            return
        self.act_stop.setEnabled(False)
        self.progress.hide()
        self.step_model.set_running(None)
        self.last_run = result
        if self.tuning_panel.active:
            self.tuning_panel.end("Run stopped; measured trials are kept in the database" if result.cancelled else "")
        if result.input_script is not None:
            self.input_script = result.input_script
            self.input_key = result.input_key
        self.last_good_script = result.last_good_script
        for step in result.steps:
            self.step_model.set_result(step)
        ran = [s for s in result.steps if s.state in (CHANGED, UNCHANGED, FAILED)]
        engine_ms = sum(s.elapsed_ms for s in ran if not s.cached)
        parts = [f"Run: {len(ran)} step(s), {format_ms(result.total_ms)} (passes {format_ms(engine_ms)})"]
        cached = sum(1 for s in result.steps if s.cached)
        if cached:
            parts.append(f"{cached} from cache")
        if result.cancelled:
            parts.append("stopped")
        if result.failed_index is not None:
            failed = result.steps[result.failed_index] if result.failed_index < len(result.steps) else None
            parts.append(f"step {result.failed_index + 1} failed" + (f": {failed.error.splitlines()[0][:120]}" if failed and failed.error else ""))
        if result.error and result.failed_index is None:
            parts.append(result.error.splitlines()[0][:200])
            self.banner.show_message(result.error)
        self.run_label.setText(" · ".join(parts))
        self._select_failed_user_code(result)
        self._on_current_step(self.pipeline_view.current_uid(), refresh_params=False)

    def _on_engine_crashed(self, message: str) -> None:
        self.banner.show_message(message + "\nThe engine was restarted; your pipeline is unchanged.", "error")
        self.statusBar().showMessage("Engine crashed and was restarted", 8000)

    def _on_request_failed(self, kind: str, tag: Any, message: str) -> None:
        if kind == "fn:load_model" and isinstance(tag, tuple) and tag[0] == "model":
            self._on_model_probed(str(tag[1]), None, message)
            return
        if kind.startswith("fn:") and isinstance(tag, tuple) and tag and tag[0] == "run_panel":
            return  # the run panel shows it
        if kind == "graph":
            self.graph_caption.setText(f"Graph unavailable: {message.splitlines()[0][:200]}")
        elif kind == "prim_func":
            QMessageBox.warning(self, "TensorIR", message)
        else:
            self.statusBar().showMessage(f"{kind}: {message.splitlines()[0][:200]}", 8000)

    # ------------------------------------------------------------------------------------------
    # selection → params, diff, graph
    def _step_result(self, uid: str) -> Optional[StepResult]:
        return self.step_model.result(uid)

    def _before_of(self, index: int) -> tuple[Optional[str], Optional[str]]:
        """(script, snapshot key) of the module a step at ``index`` received."""
        for step in reversed(self.ctrl.doc.steps[:index]):
            res = self.step_model.result(step.uid)
            if res is not None and res.script is not None and res.state in (CHANGED, UNCHANGED, SKIPPED):
                return res.script, res.snapshot_key
            if res is None and step.runnable:
                return None, None  # an earlier step has not run (yet)
        return self.input_script, self.input_key

    def _show_params(self, uid: str) -> None:
        if not uid:
            self.param_title.setText("Step parameters")
            self.param_editor.clear()
            return
        step = self.ctrl.doc.step(uid)
        spec = self.catalogue.get(step.pass_id) if self.catalogue is not None else None
        self.param_title.setText(f"Step {self.ctrl.doc.index_of(uid) + 1} parameters")
        if spec is None:
            self.param_editor.clear()
            self.param_editor.empty_label.setText(
                step.placeholder or ("Loading the pass catalogue…" if self.catalogue is None else f"Unknown pass {step.pass_id}")
            )
            return
        self.param_editor.set_step(spec.to_json(), step.params)

    def _sync_param_values(self, uid: str) -> None:
        """Show a step's current values (after undo/redo) without rebuilding the form."""
        step = self.ctrl.doc.step(uid)
        spec = self.catalogue.get(step.pass_id) if self.catalogue is not None else None
        if spec is None:
            return
        values = {p.name: step.params.get(p.name, p.default) for p in spec.params}
        self.param_editor.set_values(values)

    def _on_current_step(self, uid: str, refresh_params: bool = True) -> None:
        if refresh_params:
            self._show_params(uid)
        if not uid:
            self._show_input()
            return
        try:
            index = self.ctrl.doc.index_of(uid)
        except ValueError:
            return
        step = self.ctrl.doc.steps[index]
        result = self.step_model.result(uid)
        before, before_key = self._before_of(index)
        if self._details_kind == "report":
            self.show_details_placeholder()  # the previous step's report; this step's follows
        title = f"Step {index + 1}: {self._title_for(step.pass_id)}"
        self._shown_pass_id = None
        self._shown_report = {}
        if result is None or result.state != FAILED:
            self._mark_source_error(uid, None)
        if result is None:
            self._diff_message(f"{title} has not run yet." if step.runnable else f"{title} is disabled (skipped).")
            self._show_graph(before_key, None, f"{title} — not run yet; showing its input")
            return
        if result.state == FAILED:
            last_good = before if before is not None else (self.last_good_script or self.input_script)
            location = self.error_location(index, result)
            self.diff_view.set_error(title, result.error or "unknown error", last_good or "",
                                     traceback=result.traceback or "", location=location)
            self._mark_source_error(uid, location)
            self._show_graph(before_key, None, f"{title} failed — showing the last good module")
            self.step_shown.emit(uid)
            return
        after = result.script
        self._shown_pass_id = step.pass_id
        self._shown_report = dict(result.report or {})
        self._show_step_report(index, step, result)
        label = "changed the module" if result.state == CHANGED else ("changed nothing" if result.state == UNCHANGED else result.state)
        self.diff_view.set_snapshots(before, after, before_title="Before " + title, after_title=f"After {title} — {label} ({format_ms(result.elapsed_ms)})")
        self._show_graph(result.snapshot_key or before_key, before_key if result.state == CHANGED else None, f"{title} — {label}")
        self.step_shown.emit(uid)

    # ---- errors in the user's own code ------------------------------------------------------
    def user_code_files(self, index: int) -> list[str]:
        """File names under which step ``index`` runs the user's own code: ``<custom step N>`` for a
        custom Python step, the pattern file (as written and resolved) for FuseOpsByPattern."""
        if not 0 <= index < len(self.ctrl.doc.steps):
            return []
        step = self.ctrl.doc.steps[index]
        if step.pass_id == "custom.python":
            return [f"<custom step {index + 1}>"]
        path = step.params.get("pattern_file")
        if step.params.get("pattern_source") == "file" and path:
            path = str(path)
            full = path if os.path.isabs(path) else os.path.join(self.ctrl.doc.model_path_base() or os.getcwd(), path)
            return [path, full]
        return []

    def error_location(self, index: int, result: StepResult) -> Optional[ErrorLocation]:
        """The line of the user's code that step ``index``'s failure points at, if any."""
        files = self.user_code_files(index)
        if not files or result.state != FAILED:
            return None
        return locate_user_error(result.error or "", result.traceback or "", files)

    def source_editor(self, uid: Optional[str] = None):  # noqa: ANN201 - CodeEditor or None
        """The code editor of the shown step's ``source`` parameter (custom step), or ``None``."""
        if uid is not None and uid != self.pipeline_view.current_uid():
            return None
        if "source" not in self.param_editor.names():
            return None
        return getattr(self.param_editor.editor("source"), "editor", None)

    def _mark_source_error(self, uid: str, location: Optional[ErrorLocation]) -> None:
        editor = self.source_editor(uid)
        if editor is None or not hasattr(editor, "mark_error_line"):
            return
        if location is not None and location.is_custom_source:
            # While the user types there the cursor stays put; otherwise scroll to the line.
            scroll = not editor.hasFocus()
            editor.mark_error_line(location.line, location.message, scroll=scroll)
            if scroll:
                self.param_scroll.ensureWidgetVisible(editor, 0, 0)
        else:
            editor.clear_error()

    def _select_failed_user_code(self, result: RunResult) -> None:
        """After a run whose failure points into the user's code: select that step (unless the user
        is typing in another step's parameters), so its source shows the marked line."""
        index = result.failed_index
        if index is None or not 0 <= index < len(result.steps) or index >= len(self.ctrl.doc.steps):
            return
        failed = result.steps[index]
        if failed.uid == self.pipeline_view.current_uid() or _has_focus_within(self.param_editor):
            return
        if self.error_location(index, failed) is not None:
            self.pipeline_view.select_uids([failed.uid])

    def show_error_location(self, location: ErrorLocation) -> None:
        """Go to the line an error points at: the custom step's source editor, or the pattern file
        (shown read-only with the line marked)."""
        if location.is_custom_source:
            editor = self.source_editor()
            if editor is None:
                return
            self.pipeline_dock.show()
            self.pipeline_dock.raise_()
            self.param_scroll.ensureWidgetVisible(editor)
            editor.setFocus()
            editor.mark_error_line(location.line, location.message)
            return
        self._show_user_file(location)

    def _show_user_file(self, location: ErrorLocation) -> None:
        from widgets.code_editor import CodeEditor

        try:
            text = Path(location.file).read_text(encoding="utf-8")
        except OSError as exc:
            QMessageBox.warning(self, "Cannot show the file", f"{location.file}: {exc.strerror or exc}")
            return
        dialog = QDialog(self)
        dialog.setWindowTitle(f"{os.path.basename(location.file)} — line {location.line}")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        caption = QLabel(f"{location.file}\nline {location.line}: {location.message}", dialog)
        caption.setWordWrap(True)
        caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        editor = CodeEditor(dialog, read_only=True)
        editor.set_text(text)
        editor.mark_error_line(location.line, location.message)
        layout = QVBoxLayout(dialog)
        layout.addWidget(caption)
        layout.addWidget(editor, 1)
        close = QPushButton("Close", dialog)
        close.clicked.connect(dialog.close)
        layout.addWidget(close, 0, Qt.AlignmentFlag.AlignRight)
        dialog.resize(760, 520)
        dialog.show()
        self.user_file_dialog = dialog
        self.user_file_editor = editor

    def _show_step_report(self, index: int, step: Step, result: StepResult) -> None:
        """The step's report (DLight rules per PrimFunc, fused groups, tuning summary) in the details pane."""
        text = step_report_html(step.pass_id, result.report or {}, self.ctrl.doc.target)
        if text:
            self.details.setHtml(f"<h3 style='margin:0'>Step {index + 1}: {html.escape(self._title_for(step.pass_id))}</h3>" + text)
            self._details_kind = "report"

    def _show_input(self) -> None:
        if self.input_script:
            self.diff_view.set_snapshots(self.input_script, self.input_script, before_title="Model input", after_title="Model input")
        else:
            self._diff_message("Run the pipeline (F5) to see what each step does.")
        self._show_graph(self.input_key, None, "Model input")

    def _on_nested_selected(self, uid: str, nested_index: int) -> None:
        result = self.step_model.result(uid)
        if result is None or not 0 <= nested_index < len(result.nested):
            return
        index = self.ctrl.doc.index_of(uid)
        before, _ = self._before_of(index)
        for n in result.nested[:nested_index]:
            if n.script is not None:
                before = n.script
        target = result.nested[nested_index]
        after = target.script if target.script is not None else before
        self.diff_view.set_snapshots(before, after, before_title=f"Before {target.name}", after_title=f"Step {index + 1} › {target.name} ({format_ms(target.elapsed_ms)})")

    def _diff_message(self, text: str) -> None:
        self.diff_view.clear()
        self.diff_view.left_title.setText(text)
        self.diff_view.right_title.setText("")

    # ---- graph -----------------------------------------------------------------------------
    def _show_graph(self, key: Optional[str], before_key: Optional[str], caption: str) -> None:
        self.graph_caption.setText(caption)
        self._shown_graph = (key, self._current_function) if key else None
        self._shown_before_key = before_key
        if not key:
            self.graph_view.clear_graph("Run the pipeline (F5) to see the model as a graph")
            return
        for k in (key, before_key):
            if k and (k, self._current_function) not in self._graph_cache:
                self.worker.request_graph(k, self._current_function, tag=(k, self._current_function))
        self._render_graph()

    def _render_graph(self) -> None:
        if not self._shown_graph:
            return
        key, function = self._shown_graph
        reply = self._graph_cache.get((key, function))
        if reply is None:
            return
        before_reply = self._graph_cache.get((self._shown_before_key, function)) if self._shown_before_key else None
        if self._shown_before_key and before_reply is None:
            return  # wait for the "before" graph to highlight changes
        data = reply.get("graph")
        self._update_function_picker(reply)
        if not data:
            self.graph_view.clear_graph("This module has no Relax function")
            self.graph_caption.setText(self.graph_caption.text() + " (no Relax function)")
            return
        changed: set[str] = set()
        before = before_reply.get("graph") if before_reply else None
        if before_reply is not None and before_reply.get("function") == reply.get("function"):
            from pipeline_model.ir_graph import changed_nodes

            changed = changed_nodes(before, data)
        if self._shown_pass_id == "relax.FuseOpsByPattern":
            # The bindings fused into composite/offloaded functions by this step: the calls the
            # step's fusion report names (by var name), and any call of a composite function.
            changed |= fused_node_ids(data) | fusion_call_node_ids(data, self._shown_report)
        self.graph_view.set_graph(data, changed)

    def _update_function_picker(self, reply: dict) -> None:
        names = [str(n) for n in reply.get("functions") or []]
        current = reply.get("function")
        self.function_picker.blockSignals(True)
        self.function_picker.clear()
        for name in names or ([str(current)] if current else []):
            self.function_picker.addItem(name)
        if current:
            self.function_picker.setCurrentText(str(current))
        self.function_picker.setEnabled(len(names) > 1)
        self.function_picker.blockSignals(False)

    def _on_function_picked(self, index: int) -> None:
        name = self.function_picker.itemText(index)
        self._current_function = name or None
        uid = self.pipeline_view.current_uid()
        self._on_current_step(uid, refresh_params=False) if uid else self._show_input()

    def _on_reply(self, kind: str, tag: Any, value: Any) -> None:
        if kind == "fn:load_model" and isinstance(tag, tuple) and tag[0] == "model":
            self._on_model_probed(str(tag[1]), value if isinstance(value, dict) else {}, None)
            return
        if kind == "graph":
            self._graph_cache[tuple(tag)] = value if isinstance(value, dict) else {"graph": None}
            if len(self._graph_cache) > 64:
                self._graph_cache.pop(next(iter(self._graph_cache)))
            self._render_graph()
        elif kind == "prim_func":
            self._show_prim_func(str(tag), str(value if not isinstance(value, dict) else value.get("text", "")))

    def _fit_graph(self) -> None:
        self.graph_view.fit_to_view()

    def _graph_node(self, node_id: str) -> Optional[dict]:
        if not self._shown_graph:
            return None
        data = (self._graph_cache.get(self._shown_graph) or {}).get("graph") or {}
        for node in data.get("nodes", []):
            if node.get("id") == node_id:
                return node
        return None

    def _on_node_selected(self, info: Any) -> None:
        node_id = str(info.get("id", "")) if isinstance(info, dict) else str(info or "")
        node = self._graph_node(node_id) if node_id else None
        if node is None:
            self.show_details_placeholder()
            return
        data = (self._graph_cache.get(self._shown_graph) or {}).get("graph") or {}
        nodes = {n["id"]: n for n in data.get("nodes", [])}
        inputs = sorted(((e.get("index", 0) or 0, e["source"]) for e in data.get("edges", []) if e.get("target") == node_id), key=lambda t: (t[0], str(t[1])))
        rows = [f"<h3 style='margin:0'>{html.escape(str(node.get('label') or node.get('name') or node_id))}</h3>"]
        rows.append(f"<p><b>{html.escape(str(node.get('kind', '')))}</b> <code>{html.escape(str(node.get('name', '')))}</code></p>")
        if node.get("op"):
            rows.append(f"<p>op: <code>{html.escape(str(node['op']))}</code></p>")
        if node.get("callee"):
            link = ""
            if node.get("callee_kind") == "prim_func":
                link = f" — <a href='primfunc:{html.escape(str(node['callee']))}'>show TensorIR</a>"
            rows.append(f"<p>callee: <code>{html.escape(str(node['callee']))}</code>{link}</p>")
        if node.get("composite"):
            rows.append(f"<p>composite: <code>{html.escape(str(node['composite']))}</code></p>")
        rows.append(f"<p>output: <code>{html.escape(str(node.get('type_text') or ''))}</code></p>")
        if inputs:
            items = "".join(
                f"<li><code>{html.escape(str(nodes.get(src, {}).get('name', src)))}</code>: <code>{html.escape(str(nodes.get(src, {}).get('type_text', '')))}</code></li>"
                for _i, src in inputs
            )
            rows.append(f"<p>inputs:</p><ul style='margin-top:0'>{items}</ul>")
        attrs = node.get("attrs") or {}
        if attrs:
            items = "".join(f"<tr><td><code>{html.escape(str(k))}</code></td><td><code>{html.escape(str(v))}</code></td></tr>" for k, v in attrs.items())
            rows.append(f"<p>attributes:</p><table>{items}</table>")
        self.details.setHtml("".join(rows))
        self._details_kind = "node"

    def show_details_placeholder(self) -> None:
        """The node details panel's hint (wrapped, in the palette's placeholder colour)."""
        color = muted_colour(QApplication.palette(), 0.45).name()  # PlaceholderText may be translucent
        self.details.setHtml(
            f"<p style='color:{color}'>Click a node to see its op, attributes and input/output types.</p>"
            f"<p style='color:{color}'>Double-click a <code>call_tir</code> node (or use its “show TensorIR” link) "
            "for the callee's TensorIR.</p>"
        )
        self._details_kind = "placeholder"

    def _on_graph_shown(self) -> None:
        """A new graph is on screen: node details must describe a node of this graph."""
        if self._details_kind == "report":
            return
        selected = self.graph_view.selected_node()
        if selected is not None and self._graph_node(selected) is not None:
            self._on_node_selected({"id": selected})
        else:
            self.show_details_placeholder()

    def _on_details_link(self, url) -> None:
        text = url.toString()
        if text.startswith("primfunc:"):
            self._request_prim_func(text[len("primfunc:"):])

    def _on_node_activated(self, info: Any) -> None:
        node_id = str(info.get("id", "")) if isinstance(info, dict) else str(info or "")
        node = self._graph_node(node_id)
        if node and node.get("callee") and node.get("callee_kind") == "prim_func":
            self._request_prim_func(str(node["callee"]))

    def _request_prim_func(self, name: str) -> None:
        if self._shown_graph:
            self.worker.request_prim_func(self._shown_graph[0], name, tag=name)

    def _show_prim_func(self, name: str, text: str) -> None:
        from widgets.code_editor import CodeEditor

        dialog = QDialog(self)
        dialog.setWindowTitle(f"TensorIR — {name}")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        editor = CodeEditor(dialog, read_only=True)
        editor.set_text(text)
        layout = QVBoxLayout(dialog)
        layout.addWidget(editor)
        close = QPushButton("Close", dialog)
        close.clicked.connect(dialog.close)
        layout.addWidget(close, 0, Qt.AlignmentFlag.AlignRight)
        dialog.resize(820, 640)
        dialog.show()
        self.prim_func_dialog = dialog


_MISSING = object()


class TrustDialog(QDialog):
    """Asks whether the custom Python code of a pipeline may run, showing that code.

    Accepted = run it (the content hash is remembered); rejected = the custom steps fail with the
    engine's "not trusted" message and none of their code runs.
    """

    def __init__(self, listing: list[tuple[int, str, str]], where: str, parent: Optional[QWidget] = None) -> None:
        from PySide6.QtWidgets import QDialogButtonBox

        from widgets.code_editor import CodeEditor

        super().__init__(parent)
        self.setWindowTitle("Run custom Python code?")
        intro = QLabel(
            f"<b>{html.escape(where)}</b> has {len(listing)} step(s) with your own Python code. Running them executes the code "
            "below in the engine process, with your permissions (it can read and write your files). "
            "Run it only if you trust where this pipeline comes from. You are asked again when the code changes.",
            self,
        )
        intro.setWordWrap(True)
        text = "\n\n".join(f"# ---- {f'step {index}: ' if index else ''}{what} ----\n{source.rstrip()}"
                             for index, what, source in listing)
        self.code = CodeEditor(self, read_only=True)
        self.code.set_text(text)
        buttons = QDialogButtonBox(self)
        self.run_button = buttons.addButton("Trust and Run", QDialogButtonBox.ButtonRole.AcceptRole)
        self.refuse_button = buttons.addButton("Don't Run", QDialogButtonBox.ButtonRole.RejectRole)
        self.refuse_button.setDefault(True)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.code, 1)
        layout.addWidget(buttons)
        self.resize(720, 480)


def fused_node_ids(graph: dict) -> set[str]:
    """Ids of the graph nodes that call a composite/offloaded function (FuseOpsByPattern's work)."""
    return {str(n["id"]) for n in graph.get("nodes", []) if n.get("composite")}


def fusion_call_node_ids(graph: dict, report: dict) -> set[str]:
    """Ids of the graph nodes bound to the calls the step's ``report["fusion"]`` names
    (``groups[].call``: var names of the calls of the new composite/offloaded functions)."""
    fusion = report.get("fusion") if isinstance(report, dict) else None
    if not isinstance(fusion, dict):
        return set()
    calls = {str(g.get("call")) for g in fusion.get("groups") or [] if isinstance(g, dict) and g.get("call")}
    return {str(n["id"]) for n in graph.get("nodes", []) if n.get("kind", "binding") == "binding" and n.get("name") in calls}


def _esc(value: Any) -> str:
    return html.escape(str(value))


def step_report_html(pass_id: str, report: dict, target: dict) -> str:
    """HTML for a step's ``StepResult.report`` ("" when there is nothing to show).

    Known sections: ``dlight`` (rule per PrimFunc, unscheduled ones; a warning on GPU targets),
    ``fusion`` (FuseOpsByPattern: which bindings went into which composite/offloaded function),
    ``fused``/``patterns`` (older lists of composite functions), ``warnings`` (plain sentences),
    ``tuning`` and ``apply_database`` (MetaSchedule). Anything else is shown as JSON.
    """
    if not report:
        return ""
    from pipeline_model.targets import is_gpu_target

    parts: list[str] = []
    rest = dict(report)
    dl = rest.pop("dlight", None)
    if isinstance(dl, dict):
        scheduled = dl.get("scheduled") or {}
        if isinstance(scheduled, list):
            scheduled = {str(e.get("name", e.get("func", "?"))): e.get("rule") for e in scheduled if isinstance(e, dict)}
        unscheduled = [str(n) for n in dl.get("unscheduled") or dl.get("none") or []]
        rows = "".join(f"<tr><td><code>{_esc(f)}</code></td><td>{_esc(r or '–')}</td></tr>" for f, r in scheduled.items())
        rows += "".join(f"<tr><td><code>{_esc(f)}</code></td><td><i>no rule applied</i></td></tr>" for f in unscheduled)
        already = [str(n) for n in dl.get("already_scheduled") or []]
        rows += "".join(f"<tr><td><code>{_esc(f)}</code></td><td><i>already scheduled</i></td></tr>" for f in already)
        rules = ", ".join(str(r) for r in dl.get("rules") or []) if isinstance(dl.get("rules"), list) else ""
        parts.append(f"<p><b>DLight</b>{' (' + _esc(rules) + ')' if rules else ''}: {len(scheduled)} PrimFunc(s) scheduled, "
                     f"{len(unscheduled)} not</p><table>{rows}</table>")
        gpu = bool(dl["gpu"]) if "gpu" in dl else is_gpu_target(target)
        warnings = [str(w) for w in dl.get("warnings") or []]
        if gpu and (warnings or unscheduled):
            items = "".join(f"<li>{_esc(w)}</li>" for w in warnings) or (
                f"<li>{_esc(', '.join(unscheduled[:8]))}: no GPU schedule; building for {_esc(target.get('kind'))} will fail</li>"
            )
            parts.append(f"<p style='color:{status_css('error')}'><b>Warning</b>: {len(unscheduled)} PrimFunc(s) have no GPU schedule "
                         f"— add rules (e.g. gpu.Fallback) or a MetaSchedule step.</p><ul>{items}</ul>")
    warnings = rest.pop("warnings", None)
    if isinstance(warnings, list) and warnings:
        items = "".join(f"<li>{_esc(w)}</li>" for w in warnings)
        parts.append(f"<p style='color:{status_css('error')}'><b>Warning</b>:</p><ul>{items}</ul>")
    fusion = rest.pop("fusion", None)
    if isinstance(fusion, dict):
        groups = [g for g in fusion.get("groups") or [] if isinstance(g, dict)]
        items = []
        for g in groups:
            what = g.get("composite") or (f"offloaded to {g.get('codegen')}" if g.get("codegen") else "")
            nodes = ", ".join(str(n) for n in g.get("nodes") or [])
            items.append(f"<li><code>{_esc(g.get('function', '?'))}</code>{' (' + _esc(what) + ')' if what else ''}: "
                         f"{_esc(nodes) or '–'} → <code>{_esc(g.get('call', ''))}</code> in {_esc(g.get('caller', ''))}</li>")
        if groups:
            parts.append(f"<p><b>Fused by pattern</b>: {len(groups)} group(s), highlighted in the graph:</p><ul>{''.join(items)}</ul>")
        else:
            parts.append("<p><b>Fused by pattern</b>: no binding matched the patterns.</p>")
    for key in ("fused", "patterns", "composites"):
        fused = rest.pop(key, None)
        if isinstance(fused, list) and fused:
            items = []
            for entry in fused:
                if isinstance(entry, dict):
                    name = entry.get("function") or entry.get("name") or "?"
                    pattern = entry.get("pattern") or entry.get("composite") or ""
                    bindings = entry.get("bindings") or entry.get("ops") or []
                    items.append(f"<li><code>{_esc(name)}</code> {_esc(pattern)}: {_esc(', '.join(map(str, bindings)))}</li>")
                else:
                    items.append(f"<li>{_esc(entry)}</li>")
            parts.append(f"<p><b>Fused by pattern</b> (highlighted in the graph):</p><ul>{''.join(items)}</ul>")
    tuning = rest.pop("tuning", None)
    if isinstance(tuning, dict):
        tasks = tuning.get("tasks") or []
        rows = "".join(
            f"<tr><td><code>{_esc(t.get('name'))}</code></td><td align='right'>{_esc(t.get('trials'))}</td>"
            f"<td align='right'>{_esc(format_best(t.get('best_us')))}</td><td>{_esc(t.get('status', ''))}</td></tr>"
            for t in tasks if isinstance(t, dict)
        )
        state = "stopped" if tuning.get("stopped") else ("done" if tuning.get("finished") else "")
        parts.append(f"<p><b>MetaSchedule</b>: {_esc(tuning.get('done'))}/{_esc(tuning.get('total'))} trials {state}; "
                     f"database <code>{_esc(tuning.get('work_dir', ''))}</code></p><table>{rows}</table>")
    applied = rest.pop("apply_database", None)
    if isinstance(applied, dict):
        ok, missing = applied.get("applied") or [], applied.get("missing") or []
        parts.append(f"<p><b>Tuned schedules applied</b> to {len(ok)} PrimFunc(s); none found for {len(missing)}"
                     + (f": {_esc(', '.join(map(str, missing[:12])))}" if missing else "") + "</p>")
    if rest:
        parts.append("<pre>" + _esc(json.dumps(rest, indent=2, default=str)[:4000]) + "</pre>")
    return "".join(parts)


def format_best(value: Any) -> str:
    """A best latency in µs for the report table."""
    try:
        return f"{float(value):.1f} µs"
    except (TypeError, ValueError):
        return "–"


def _slug(name: str) -> str:
    out = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name.strip().lower())
    return out.strip("_") or "pipeline"


def _has_focus_within(widget: QWidget) -> bool:
    focus = QApplication.focusWidget()
    while focus is not None:
        if focus is widget:
            return True
        focus = focus.parentWidget()
    return False
