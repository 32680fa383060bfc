"""``RunController``: drives the run panel (Build & Run, Compare, Export library, targets) through the engine.

All engine work goes through the window's :class:`app.engine_worker.QtEngineWorker` (``request_fn``
with the typed wrappers of :mod:`pipeline_model.build_api` and :mod:`pipeline_model.targets`), so the
GUI never blocks. Target changes are undo commands (``SetTargetCommand``). The module built is the
final one or the one after the selected step: the request carries the document (cut after that step)
and the engine re-uses its step cache to get the module.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Optional

from PySide6.QtCore import QObject, Signal

from app.undo_commands import SetTargetCommand
from pipeline_model import build_api
from pipeline_model import targets as targets_mod
from pipeline_model.document import PipelineDocument
from widgets.run_panel import MODULE_SELECTED, RunPanel
from widgets.target_editor import TargetEditorDialog

_TAG = "run_panel"


class RunController(QObject):
    """Connects a :class:`widgets.run_panel.RunPanel` to the engine worker and the document."""

    #: ``(kind, reply dict)`` after a build_run / compare / export_library answer (tests, screenshots).
    finished = Signal(str, object)
    #: ``(kind, message)`` when a request failed.
    failed = Signal(str, str)

    def __init__(self, window: Any, panel: RunPanel) -> None:
        super().__init__(window)
        self.window = window
        self.panel = panel
        self.devices: list[dict[str, Any]] = []
        self.target_dialog: Optional[TargetEditorDialog] = None
        self._seq = itertools.count(1)
        self._active: Optional[tuple[str, int]] = None
        panel.build_requested.connect(self.build_and_run)
        panel.compare_requested.connect(self.compare)
        panel.export_requested.connect(self.export_library)
        panel.stop_requested.connect(self.stop)
        panel.target_chosen.connect(self.set_target)
        panel.advanced_target_requested.connect(self.edit_target)
        panel.refresh_devices_requested.connect(self.refresh_devices)
        panel.show_target(window.ctrl.doc.target)

    def connect_worker(self, worker: Any) -> None:
        """Listen to the worker's replies (call once the window's worker exists)."""
        worker.reply_ready.connect(self._on_reply)
        worker.request_failed.connect(self._on_failed)
        worker.call_event.connect(self._on_event)

    @property
    def worker(self) -> Any:
        return self.window.worker

    @property
    def busy(self) -> bool:
        """True while a build/compare/export request is in flight."""
        return self._active is not None

    # ---- targets --------------------------------------------------------------------------
    def refresh_devices(self) -> None:
        """Ask the engine which devices exist (CPU always; GPUs when present)."""
        self.worker.request_fn("devices", lambda client, _ev: [d.to_json() for d in targets_mod.list_devices(client)], tag=(_TAG, 0))

    def sync_target(self) -> None:
        """The document's target changed (undo, file load): show it."""
        self.panel.show_target(self.window.ctrl.doc.target)

    def set_target(self, target: dict[str, Any]) -> None:
        """Change the pipeline's target (undoable)."""
        if dict(target) != self.window.ctrl.doc.target:
            self.window.ctrl.undo_stack.push(SetTargetCommand(self.window.ctrl, dict(target)))

    def edit_target(self) -> TargetEditorDialog:
        """Open the advanced JSON target editor (non-modal); an accepted target becomes an undo command."""
        dialog = TargetEditorDialog(self.window.ctrl.doc.target, self.window)
        dialog.validate_requested.connect(self._validate_for_dialog)
        dialog.accepted.connect(lambda: self.set_target(dialog.target))
        self.target_dialog = dialog
        dialog.show()
        return dialog

    def _validate_for_dialog(self, target: dict[str, Any]) -> None:
        self.worker.request_fn("validate_target", lambda client, _ev: targets_mod.validate_target(client, target), tag=(_TAG, -1))

    # ---- requests -------------------------------------------------------------------------
    def _module_doc(self) -> Optional[PipelineDocument]:
        doc = self.window.ctrl.doc.clone()
        if self.panel.module_choice() == MODULE_SELECTED:
            uid = self.window.pipeline_view.current_uid()
            if uid:
                doc.steps = doc.steps[: self.window.ctrl.doc.index_of(uid) + 1]
        return doc

    def _start(self, kind: str, message: str, fn: Callable[[Any, Callable[[str, dict], None]], Any]) -> bool:
        if self._active is not None:
            self.panel.show_progress("The engine is still busy with the previous request (Stop to end it).")
            return False
        trust = self.window._trust_for_run()
        if trust is None:
            return False
        self._active = (kind, next(self._seq))
        self.panel.set_busy(True, message)

        def call(client: Any, on_event: Callable[[str, dict], None]) -> Any:
            return fn(client, on_event, bool(trust))

        self.worker.request_fn(kind, call, tag=(_TAG, self._active[1]))
        return True

    def _settings(self) -> Optional[tuple[build_api.InputSpec, build_api.BenchSettings, tuple[float, float]]]:
        try:
            rtol, atol = self.panel.tolerances()
        except ValueError as exc:
            self.panel.show_error(str(exc))
            return None
        inputs = self.panel.inputs()
        spec = build_api.InputSpec(path=inputs.get("path"), seed=int(inputs.get("seed", 0)))
        bench = build_api.BenchSettings(**self.panel.bench())
        return spec, bench, (rtol, atol)

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
        doc, spec, bench, tol = prepared

        def fn(client: Any, on_event: Callable, trust: bool) -> dict:
            return build_api.build_run(client, doc, inputs=spec, bench=bench, check=tol, trust_custom_code=trust, on_event=on_event).to_json()

        return self._start("build_run", f"Building {len(doc.steps)} step(s) for {targets_mod.is_gpu_target(doc.target) and 'GPU' or 'CPU'}…", fn)

    def compare(self) -> bool:
        """Compare with baseline: the model as loaded (default pipeline) vs this pipeline, same inputs."""
        prepared = self._prepare()
        if prepared is None:
            return False
        doc, spec, bench, tol = prepared

        def fn(client: Any, on_event: Callable, trust: bool) -> dict:
            a = build_api.module_request(doc, baseline=True, trust_custom_code=trust)
            b = build_api.module_request(doc, trust_custom_code=trust)
            return build_api.compare(client, a, b, inputs=spec, bench=bench, check=tol, on_event=on_event).to_json()

        return self._start("compare", "Building and timing the baseline and the pipeline…", fn)

    def export_library(self, folder: str) -> bool:
        """Export the built library and ``deploy.py`` into ``folder``."""
        doc = self._module_doc()
        if doc is None:
            return False

        def fn(client: Any, on_event: Callable, trust: bool) -> dict:
            result = build_api.export_library(client, doc, folder, trust_custom_code=trust, on_event=on_event)
            return dict(vars(result))

        return self._start("export_library", f"Building and exporting into {folder}…", fn)

    def stop(self) -> None:
        """Stop the in-flight build request."""
        if self._active is not None:
            self.worker.cancel_request()
            self.panel.show_progress("Stopping…")

    # ---- replies --------------------------------------------------------------------------
    def _mine(self, kind: str, tag: Any) -> bool:
        return kind.startswith("fn:") and isinstance(tag, tuple) and len(tag) == 2 and tag[0] == _TAG

    def _on_event(self, kind: str, tag: Any, name: str, data: Any) -> None:
        if self._mine(kind, tag) and name == "build_progress" and isinstance(data, dict):
            self.panel.show_progress(str(data.get("message") or data.get("phase") or ""))

    def _on_reply(self, kind: str, tag: Any, value: Any) -> None:
        if not self._mine(kind, tag):
            return
        name = kind[3:]
        if name == "devices":
            self.devices = list(value or [])
            self.panel.set_devices(self.devices, self.window.ctrl.doc.target)
            return
        if name == "validate_target":
            if self.target_dialog is not None:
                self.target_dialog.set_validation(dict(value or {}))
            return
        if self._active is None or tag[1] != self._active[1]:
            return
        self._active = None
        if name == "build_run":
            self.panel.show_build_result(value)
        elif name == "compare":
            self.panel.show_compare_result(value)
        elif name == "export_library":
            self.panel.show_export_result(value)
        self.finished.emit(name, value)

    def _on_failed(self, kind: str, tag: Any, message: str) -> None:
        if not self._mine(kind, tag):
            return
        name = kind[3:]
        if name == "validate_target":
            if self.target_dialog is not None:
                self.target_dialog.set_validation({"ok": False, "error": message})
            return
        if name == "devices":
            self.panel.show_progress(f"Device detection failed: {message.splitlines()[0] if message else ''}")
            return
        if self._active is not None and tag[1] == self._active[1]:
            self._active = None
            self.panel.show_error(_plain(message))
            self.failed.emit(name, message)


def _plain(message: str) -> str:
    """The engine's message without a Python error class prefix (``BuildError: refusing ...``)."""
    text = message.strip()
    for prefix in ("BuildError: ", "EngineError: "):
        if text.startswith(prefix):
            return text[len(prefix):]
    return text
