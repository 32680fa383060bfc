"""``RunController``: drives the run panel (Build & Run, Compare, Export library, targets) through the engine.

All engine work goes through the context's :class:`app.engine_worker.QtEngineWorker` (``submit_fn``
with the typed wrappers of :mod:`pipeline_model.build_api` and :mod:`pipeline_model.targets`), so the
GUI never blocks; each request is one handle whose ``finished``/``failed`` answer only it. Target changes are undo commands (``SetTargetCommand``). The module built is the
final one or the one after the selected step: the request carries the document (cut after that step)
and the engine re-uses its step cache to get the module.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMenu

from app import settings as app_settings
from app.i18n import tr
from app.context import AppContext
from app.engine_worker import EngineRequest
from app.output_folder import ask_overwrite
from app.undo_commands import SetTargetCommand
from pipeline_model import build_api
from pipeline_model import targets as targets_mod
from pipeline_model.document import PipelineDocument
from widgets.run_panel import MODULE_SELECTED, RunPanel
from widgets.target_editor import TargetEditorDialog




class RunController(QObject):
    """Connects a :class:`widgets.run_panel.RunPanel` to the engine and the document (through the context)."""

    #: ``(kind, reply dict)`` after a build_run / compare / export_library answer (tests, screenshots).
    finished = Signal(str, object)
    #: ``(kind, message)`` when a request failed.
    failed = Signal(str, str)

    def __init__(self, ctx: AppContext, panel: RunPanel, current_uid: Callable[[], str]) -> None:
        super().__init__(ctx)
        self.ctx = ctx
        self.panel = panel
        self._current_uid = current_uid
        self.devices: list[dict[str, Any]] = []
        self.target_dialog: Optional[TargetEditorDialog] = None
        self.request: Optional[EngineRequest] = None
        panel.build_requested.connect(self.build_and_run)
        panel.compare_requested.connect(self.compare)
        panel.export_requested.connect(self.export_library)
        panel.stop_requested.connect(self.stop)
        panel.target_chosen.connect(self.set_target)
        panel.advanced_target_requested.connect(self.edit_target)
        panel.refresh_devices_requested.connect(self.refresh_devices)
        panel.show_target(ctx.doc.target)
        ctx.document.document_replaced.connect(lambda: self.clear_results(tr("New document: Build & Run to see its results.")))
        ctx.document.model_changed.connect(lambda: self.clear_results(tr("The model or target changed: Build & Run again to see its results.")))

    def clear_results(self, message: str = "") -> None:
        """Results of another document/model/target: stop the request, clear the panel and its chart."""
        if self.request is not None:
            request, self.request = self.request, None  # its answer is dropped (see _on_finished)
            request.cancel()
        self.panel.clear_results(message)

    @property
    def busy(self) -> bool:
        """True while a build/compare/export request is in flight."""
        return self.request is not None

    # ---- targets --------------------------------------------------------------------------
    def refresh_devices(self) -> None:
        """Ask the engine which devices exist (CPU always; GPUs when present) and what it can compile and run
        of the target picker's presets."""
        tracker = app_settings.rpc_tracker(self.ctx.settings)

        def fn(client: Any, _ev: Any) -> dict:
            devices, support = targets_mod.target_support(client)
            rpc = targets_mod.list_rpc_devices(client, tracker) if tracker else None  # asked by the engine
            return {"devices": [d.to_json() for d in devices], "presets": [s.to_json() for s in support], "rpc": rpc}

        request = self.ctx.engine.submit_fn("devices", fn)
        request.finished.connect(self._on_devices)
        request.failed.connect(lambda message: self.panel.show_progress(
            tr("Device detection failed: {0}").format(message.splitlines()[0] if message else "")))

    def _on_devices(self, value: Any) -> None:
        reply = value if isinstance(value, dict) else {"devices": list(value or [])}
        self.devices = list(reply.get("devices") or [])
        self.panel.set_devices(self.devices, self.ctx.doc.target, list(reply.get("presets") or []), reply.get("rpc"))

    def sync_target(self) -> None:
        """The document's target changed (undo, file load): show it."""
        self.panel.show_target(self.ctx.doc.target)

    def set_target(self, target: dict[str, Any]) -> None:
        """Change the pipeline's target (undoable)."""
        if isinstance(target, dict) and dict(target) != self.ctx.doc.target:
            self.ctx.undo_stack.push(SetTargetCommand(self.ctx.document, dict(target)))

    def edit_target(self) -> TargetEditorDialog:
        """Open the advanced JSON target editor (non-modal); an accepted target becomes an undo command."""
        dialog = TargetEditorDialog(self.ctx.doc.target, self.ctx.dialog_parent)
        dialog.validate_requested.connect(self._validate_for_dialog)
        dialog.accepted.connect(lambda: self.set_target(dialog.target))
        self.target_dialog = dialog
        dialog.show()
        return dialog

    def _validate_for_dialog(self, target: dict[str, Any]) -> None:
        request = self.ctx.engine.submit_fn("validate_target", lambda client, _ev: targets_mod.validate_target(client, target))
        dialog = self.target_dialog
        if dialog is not None:
            request.finished.connect(lambda value: dialog.set_validation(dict(value or {})))
            request.failed.connect(lambda message: dialog.set_validation({"ok": False, "error": message}))

    def target_choices(self) -> list[tuple[str, dict]]:
        """``(label, target)`` of the targets the Build & Run panel offers (its device list)."""
        combo = self.panel.target_combo
        out = [(combo.itemText(i), combo.itemData(i)) for i in range(combo.count())]
        return [(text, dict(data)) for text, data in out if isinstance(data, dict)]

    def fill_target_menu(self, menu: QMenu, show_panel: Callable[[], None]) -> None:
        """The pipeline dock's "Change…" menu: the panel's targets (its group headers as disabled entries),
        the JSON editor, the panel."""
        menu.clear()
        current = self.ctx.doc.target
        combo = self.panel.target_combo
        entries = [(combo.itemText(i), combo.itemData(i)) for i in range(combo.count()) if combo.remote_at(i) is None]
        for text, target in entries if self.target_choices() else [(tr("CPU: generic llvm"), {"kind": "llvm"})]:
            if not isinstance(target, dict):
                menu.addAction(text).setEnabled(False)
                continue
            act = menu.addAction(text)
            act.setCheckable(True)
            act.setChecked(target == current)
            act.triggered.connect(lambda _=False, t=target: self.set_target(t))
        menu.addSeparator()
        menu.addAction(tr("Edit as JSON…"), self.edit_target)
        menu.addAction(tr("Show in Build && Run Panel"), show_panel)

    # ---- requests -------------------------------------------------------------------------
    def _module_doc(self) -> Optional[PipelineDocument]:
        doc = self.ctx.doc.clone()
        if self.panel.module_choice() == MODULE_SELECTED:
            uid = self._current_uid()
            if uid:
                doc.steps = doc.steps[: self.ctx.doc.index_of(uid) + 1]
        return doc

    def _start(self, kind: str, message: str, fn: Callable[[Any, Callable[[str, dict], None]], Any]) -> bool:
        if self.request is not None:
            self.panel.show_progress(tr("The engine is still busy with the previous request (Stop to end it)."))
            return False
        self.ctx.consent.for_run()  # asks; the engine client carries the consent
        self.panel.set_busy(True, message)
        request = self.ctx.engine.submit_fn(kind, fn)
        self.request = request
        request.event.connect(self._on_event)
        request.finished.connect(lambda value: self._on_finished(request, kind, value))
        request.failed.connect(lambda message: self._on_failed(request, kind, message))
        return True

    def _settings(self, typed: bool = False) -> Optional[tuple[build_api.InputSpec, build_api.BenchSettings, Any]]:
        try:
            rtol, atol = self.panel.check_tolerances() if typed else self.panel.tolerances()
        except ValueError as exc:
            self.panel.show_error(str(exc), from_engine=False)  # the panel's own (translated) words
            return None
        inputs = self.panel.inputs()
        spec = build_api.InputSpec(path=inputs.get("path"), seed=int(inputs.get("seed", 0)))
        bench = build_api.BenchSettings(**self.panel.bench())
        return spec, bench, (rtol, atol)

    def run_settings(self, typed: bool = False) -> Optional[tuple[build_api.InputSpec, build_api.BenchSettings, Any]]:
        """The panel's inputs, timing and tolerances (``None`` when not valid; the panel says why). ``typed``: a
        tolerance field left empty is ``None`` (the engine then judges as Build & Run does, by the model's
        precision), not float32's 1e-4."""
        return self._settings(typed)

    def _prepare(self) -> Optional[tuple[Any, Any, Any, tuple[float, float]]]:
        """(module document, inputs, bench settings, tolerances), or None when the panel's settings
        or the module are not usable (the panel already says why)."""
        settings = self._settings()
        doc = self._module_doc()
        if settings is None or doc is None:
            return None
        return (doc, *settings)

    def build_and_run(self) -> bool:
        """Build & Run (Ctrl+B): build the chosen module, run it, time it, check it."""
        prepared = self._prepare()
        if prepared is None:
            return False
        doc, spec, bench, _tol = prepared
        tol = self.panel.check_tolerances()  # an empty field: the engine's default for the module's precision

        profile = build_api.ProfileSettings() if self.panel.profile_wanted() else None

        remote = self.panel.remote

        def fn(client: Any, on_event: Callable) -> dict:
            return build_api.build_run(client, doc, inputs=spec, bench=bench, check=tol,
                                       on_event=on_event, profile=profile, remote=remote).to_json()

        device = tr("GPU") if targets_mod.is_gpu_target(doc.target) else tr("CPU")
        if remote is not None:
            device = targets_mod.remote_label(remote)
        return self._start("build_run", tr("Building {0} step(s) for {1}…").format(len(doc.steps), device), fn)

    def compare(self) -> bool:
        """Compare with baseline: the model as loaded (default pipeline) vs this pipeline, same inputs."""
        prepared = self._prepare()
        if prepared is None:
            return False
        doc, spec, bench, tol = prepared

        remote = self.panel.remote

        def fn(client: Any, on_event: Callable) -> dict:
            a = build_api.module_request(doc, baseline=True, remote=remote)
            b = build_api.module_request(doc, remote=remote)
            return build_api.compare(client, a, b, inputs=spec, bench=bench, check=tol, on_event=on_event).to_json()

        return self._start("compare", tr("Building and timing the baseline and the pipeline…"), fn)

    def export_library(self, folder: str) -> bool:
        """Export the built library and ``deploy.py`` into ``folder``."""
        doc = self._module_doc()
        if doc is None:
            return False
        overwrite = ask_overwrite(self.ctx.dialog_parent, folder, build_api.EXPORT_FILES)  # never replaced unasked
        if overwrite is None:
            return False

        def fn(client: Any, on_event: Callable) -> dict:
            result = build_api.export_library(client, doc, folder, on_event=on_event, overwrite=overwrite)
            return dict(vars(result))

        return self._start("export_library", tr("Building and exporting into {0}…").format(folder), fn)

    def stop(self) -> None:
        """Stop the in-flight build request."""
        if self.request is not None:
            self.request.cancel()
            self.panel.show_progress(tr("Stopping…"))

    # ---- answers --------------------------------------------------------------------------
    def _on_event(self, name: str, data: Any) -> None:
        if name == "build_progress" and isinstance(data, dict):
            self.panel.show_progress(str(data.get("message") or data.get("phase") or ""))

    def _on_finished(self, request: EngineRequest, kind: str, value: Any) -> None:
        if request is not self.request:
            return
        self.request = None
        if kind == "build_run":
            self.panel.show_build_result(value)
        elif kind == "compare":
            self.panel.show_compare_result(value)
        elif kind == "export_library":
            self.panel.show_export_result(value)
        self.finished.emit(kind, value)

    def _on_failed(self, request: EngineRequest, kind: str, message: str) -> None:
        if request is not self.request:
            return
        self.request = None
        self.panel.show_error(_plain(message))
        self.failed.emit(kind, message)


def _plain(message: str) -> str:
    """The engine's message without a Python error class prefix (``BuildError: refusing ...``)."""
    text = message.strip()
    for prefix in ("BuildError: ", "EngineError: "):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text
