"""``FileController``: the document's files — new, open, save, recent files, dropped files, model
files, script export, the unsaved-changes question and the window title text.

Every path that replaces the document (New, Open, Open Recent, a dropped file, Compare's "Use this
one", restoring a recovery copy) goes through :meth:`FileController.replace_document`, which asks
about unsaved changes first."""

from __future__ import annotations

import html
import json
import os
from typing import Any, Callable, Optional

from PySide6.QtCore import QCoreApplication, QObject, Signal
from PySide6.QtWidgets import QDialog, QFileDialog, QMenu, QMessageBox

from app.i18n import UNTITLED, document_name, tr
from app import settings as app_settings_mod
from app.context import AppContext
from pipeline_model.document import PipelineDocument, target_label
from pipeline_model.resources import resource_path
from widgets.doc_text import own_html
from widgets.export_texts import export_failed_html

TUTORIAL_PIPELINE = resource_path("pipelines", "fusion_walkthrough.json")


class FileController(QObject):
    """File actions of the main window; ``set_model`` is the editor's (undoable) model change."""

    #: The title/model/target texts may have changed (saved under a new name ...).
    title_changed = Signal()

    def __init__(self, ctx: AppContext, set_model: Callable[[str], None]) -> None:
        super().__init__(ctx)
        self.ctx = ctx
        self.set_model = set_model
        self.model_error: Optional[str] = None
        self.model_dialog: Any = None

    def _parent(self) -> Any:
        return self.ctx.dialog_parent

    def builtin_models_menu(self, menu: QMenu) -> QMenu:
        """``menu`` (File ▸ Built-in Models), filled with one action per built-in model when it is first
        opened (the models' module is not needed before); returns it."""

        def fill() -> None:
            from pipeline_model.models import BUILTIN_MODELS

            menu.aboutToShow.disconnect(fill)
            for name, desc in BUILTIN_MODELS.items():
                act = menu.addAction(f"builtin:{name}")
                act.setToolTip("<p>" + own_html(QCoreApplication.translate("models", desc)) + "</p>")
                act.triggered.connect(lambda _=False, n=name: self.set_model(f"builtin:{n}"))

        menu.aboutToShow.connect(fill)
        return menu

    # ---- pipelines ------------------------------------------------------------------------------
    def open_initial(self, path: Optional[str] = None, model: Optional[str] = None) -> None:
        """Start-up document: ``path`` if given, else the pipeline file open when the app was last closed,
        else (a first start) the tutorial MLP with the example pipeline."""
        last = None if path else app_settings_mod.last_document(self.ctx.settings)
        if path:
            if not self.open_pipeline(path, ask=False):
                self.new_pipeline(force=True)
        elif last is not None and self.open_pipeline(last, ask=False):
            pass
        elif TUTORIAL_PIPELINE.exists():
            self.open_pipeline(str(TUTORIAL_PIPELINE), remember=False, as_template=True, ask=False)
        else:
            self.new_pipeline(force=True)
        if model:
            self.set_model(model)

    def replace_document(self, doc: PipelineDocument, ask: bool = True, modified: bool = False) -> bool:
        """Show ``doc`` instead of the open document — the one way every path replaces it: asks about
        unsaved changes first (unless ``ask`` is false); ``modified``: the new document starts modified
        (a restored recovery copy). False when the user cancelled."""
        if ask and not self.maybe_save():
            return False
        self.ctx.document.replace_document(doc, modified=modified)
        return True

    def new_pipeline(self, force: bool = False) -> None:
        """Start an empty pipeline on the tutorial MLP."""
        self.replace_document(PipelineDocument(model="builtin:mlp", name=UNTITLED), ask=not force)

    def open_pipeline_dialog(self) -> None:
        """File > Open."""
        if not self.maybe_save():
            return
        start = os.path.dirname(self.ctx.doc.path) if self.ctx.doc.path else str(resource_path("pipelines"))
        path, _ = QFileDialog.getOpenFileName(self._parent(), tr("Open pipeline"), start, tr("Pipeline files (*.json *.rps.json);;All files (*)"))
        if path:
            self.open_pipeline(path, ask=False)  # asked above, before the file dialog

    def open_pipeline(self, path: str, remember: bool = True, as_template: bool = False, ask: bool = True) -> bool:
        """Load ``path`` and show it, asking about unsaved changes first (unless ``ask`` is false); a bad
        file shows its error (file, JSON path, line) and changes nothing (no question then)."""
        from pipeline_model.fileformat import PipelineFileError, load_pipeline

        try:
            doc = load_pipeline(path, known_pass_ids=self.ctx.catalogue.known_ids())
        except PipelineFileError as exc:
            QMessageBox.critical(self._parent(), tr("Cannot open pipeline"), str(exc))
            return False
        except OSError as exc:
            QMessageBox.critical(self._parent(), tr("Cannot open pipeline"), f"{path}: {exc.strerror or exc}")
            return False
        if as_template:
            doc.path = None  # the bundled example is a template: "Save" asks where
        if not self.replace_document(doc, ask=ask):
            return False
        if remember:
            app_settings_mod.add_recent_file(self.ctx.settings, path)
        self.ctx.status(tr("Opened {0}").format(path), 4000)
        return True

    def save(self) -> bool:
        """File > Save (asks for a name the first time)."""
        if not self.ctx.doc.path:
            return self.save_as()
        return self._save_to(self.ctx.doc.path)

    def save_as(self) -> bool:
        """File > Save As."""
        start = self.ctx.doc.path or os.path.join(os.path.expanduser("~"), _slug(document_name(self.ctx.doc)) + ".json")
        path, _ = QFileDialog.getSaveFileName(self._parent(), tr("Save pipeline"), start, tr("Pipeline files (*.json *.rps.json);;All files (*)"))
        if not path:
            return False
        if not os.path.splitext(path)[1]:
            path += ".json"
            # The dialog asked about the name without ".json" only: a file of the name written is asked about here.
            from app.output_folder import ask_overwrite

            if os.path.lexists(path) and ask_overwrite(self._parent(), os.path.dirname(path),
                                                       [os.path.basename(path)]) is None:
                return False
        return self._save_to(path)

    def _save_to(self, path: str) -> bool:
        from pipeline_model.fileformat import save_pipeline

        doc = self.ctx.doc
        old_name = doc.name
        doc.name = document_name(PipelineDocument(path=path))  # the document's name follows its file
        try:
            save_pipeline(doc, path)
        except (OSError, ValueError) as exc:
            doc.name = old_name
            text = str(exc) if path in str(exc) else f"{path}: {exc}"  # one line naming the file
            QMessageBox.critical(self._parent(), tr("Cannot save pipeline"), text)
            return False
        self.ctx.document.mark_saved(path)
        self.ctx.consent.remember_own(self.ctx.doc)
        app_settings_mod.add_recent_file(self.ctx.settings, path)
        self.title_changed.emit()
        self.ctx.status(tr("Saved {0}").format(path), 4000)
        return True

    def maybe_save(self) -> bool:
        """Ask Save/Discard/Cancel when there are unsaved changes; False means "cancel"."""
        if not self.ctx.document.modified:
            return True
        buttons = QMessageBox.StandardButton
        answer = QMessageBox.question(
            self._parent(), tr("Unsaved changes"),
            tr("The pipeline “{0}” has unsaved changes. Save them?").format(document_name(self.ctx.doc)),
            buttons.Save | buttons.Discard | buttons.Cancel, buttons.Save,
        )
        if answer == buttons.Save:
            return self.save()
        return answer == buttons.Discard

    def fill_recent_menu(self, menu: QMenu) -> None:
        """File > Open Recent."""
        menu.clear()
        files = app_settings_mod.recent_files(self.ctx.settings)
        if not files:
            menu.addAction(tr("(none)")).setEnabled(False)
        for path in files:  # open_pipeline asks about unsaved changes first
            menu.addAction(path).triggered.connect(lambda _=False, p=path: self.open_pipeline(p))

    @staticmethod
    def dropped_pipeline(mime: Any) -> Optional[str]:
        """The local pipeline file (``.json``) a drag carries, or ``None``."""
        if mime is None or not mime.hasUrls():
            return None
        for url in mime.urls():
            path = url.toLocalFile()
            if path and path.lower().endswith(".json") and os.path.isfile(path):
                return path
        return None

    def open_dropped(self, mime: Any) -> bool:
        """A file dropped on the window: opened like File ▸ Open (unsaved changes asked first)."""
        path = self.dropped_pipeline(mime)
        return bool(path) and self.open_pipeline(str(path))

    def title(self) -> str:
        """The window title: file name, ``*`` when modified."""
        doc = self.ctx.doc
        name = os.path.basename(doc.path) if doc.path else document_name(doc)
        return f"{name}{'*' if self.ctx.document.modified else ''} — Relax Pipeline Studio"

    def model_and_target_texts(self) -> tuple[str, str, str]:
        """``(model, target label, target JSON tooltip)`` for the pipeline dock's rows (the JSON as code)."""
        doc = self.ctx.doc
        return doc.model, target_label(doc.target), "<pre>" + html.escape(json.dumps(doc.target, indent=1), quote=False) + "</pre>"

    # ---- models and exports ----------------------------------------------------------------------
    def open_model_dialog(self) -> None:
        """File > Open Model: a built-in or a model file (TVMScript, nn.Module, ONNX, torch)."""
        from widgets.model_dialog import ModelDialog

        base = self.ctx.doc.model_path_base() or os.path.expanduser("~")
        dialog = ModelDialog(self.ctx.doc.model, base, self._parent())
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
        doc = self.ctx.doc
        if spec == doc.model:
            return
        probe = PipelineDocument(model=spec, target=dict(doc.target), name=doc.name)
        probe.path = doc.path
        # A model .py file is code: asked about before anything of it runs (issue 9).
        items = self.ctx.consent.items(probe)
        missing = self.ctx.consent.missing(items)
        if missing and not self.ctx.consent.ask(missing, probe):
            from pipeline_model import consent

            self.model_error = consent.refusal_message(missing)
            self.ctx.status(tr("Model not opened: its code was not trusted"), 8000)
            QMessageBox.warning(self._parent(), tr("Model not opened"),
                                tr("Nothing ran: {0}").format(self.model_error))
            return
        self.ctx.consent.allow(items)  # the engine client's consent now covers the model
        self.ctx.status(tr("Loading model {0}…").format(spec))

        def load(client: Any, on_event: Any) -> dict:
            result = client.run(probe, on_event=on_event, scripts=False)
            return {"error": result.error, "input_key": result.input_key}

        request = self.ctx.engine.submit_fn("load_model", load)
        request.finished.connect(lambda reply: self._on_model_probed(spec, reply if isinstance(reply, dict) else {}, None))
        request.failed.connect(lambda message: self._on_model_probed(spec, None, message))

    def _on_model_probed(self, spec: str, reply: Optional[dict], failure: Optional[str]) -> None:
        error = failure or (reply or {}).get("error")
        if error:
            self.ctx.status(tr("Could not load {0}").format(spec), 8000)
            self.model_error = str(error)
            QMessageBox.critical(self._parent(), tr("Cannot open model"), f"{spec}:\n{error}" if spec not in str(error) else str(error))
            return
        self.model_error = None
        self.ctx.status(tr("Model {0}").format(spec), 4000)
        self.set_model(spec)

    def export_script_dialog(self) -> None:
        """File > Export Python Script."""
        from pipeline_model.export import export_script

        doc = self.ctx.doc
        catalogue = self.ctx.catalogue.catalogue  # the defaults the form shows and the engine runs with
        if catalogue is None:
            QMessageBox.information(self._parent(), tr("Export Python script"),
                                    tr("The pass catalogue is still loading; export when it is there."))
            return
        start = os.path.join(os.path.dirname(doc.path or os.path.expanduser("~/x")), _slug(document_name(doc)) + ".py")
        # Two kinds: the plain script (stock TVM passes: the model, the passes, the printed module, like TVM's
        # tutorial) or the full one, which also builds, runs, times, checks and saves (its code below a marker).
        plain_kind, full_kind = tr("Python (*.py)"), tr("Python with --build, --save-script, --save-json (*.py)")
        path, kind = QFileDialog.getSaveFileName(self._parent(), tr("Export Python script"), start,
                                                 f"{plain_kind};;{full_kind}")
        if not path:
            return
        try:
            from pipeline_model import safe_write

            source = export_script(doc, catalogue=catalogue, plain=kind != full_kind)
            safe_write.write_text(path, source, "script")  # never through a link, FIFO or device
        except Exception as exc:  # noqa: BLE001 - show any export problem plainly
            # The exporter's sentences (a refused path too) in the interface's language, names and TVM's words as code.
            QMessageBox.critical(self._parent(), tr("Cannot export script"), export_failed_html(path, str(exc)))
            return
        self.ctx.status(tr("Exported {0}").format(path), 4000)


def _slug(name: str) -> str:
    out = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name.strip().lower())
    return out.strip("_") or "pipeline"
