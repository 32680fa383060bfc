"""``PipelineEditor``: edit actions, selection and step parameters (every edit an undo command).

Drives the pipeline list, its step model, the palette and the parameter form of the
:class:`app.panels.PipelinePanel`; gets everything else from the :class:`app.context.AppContext`.
"""

from __future__ import annotations

from typing import Any, Optional

from PySide6.QtCore import QObject

from app.i18n import tr
from app.context import AppContext
from app.panels import PipelinePanel
from app.undo_commands import (
    AddStepCommand, DuplicateStepsCommand, MoveStepsCommand, RemoveStepsCommand, SetModelCommand, SetParamCommand,
    SetParamsCommand, ToggleEnabledCommand,
)
from pipeline_model.document import Step
from pipeline_model.passkinds.registry import unknown_pass_reason
from widgets.pass_notes import unknown_pass_html
from widgets.pass_palette import PassPalette
from widgets.step_model import QtPipelineModel

_MISSING = object()



class PipelineEditor(QObject):
    """Edits of the pipeline (add, move, toggle, delete, duplicate, parameters, model) and the selection."""

    def __init__(self, ctx: AppContext, panel: PipelinePanel, step_model: QtPipelineModel, palette: PassPalette) -> None:
        super().__init__(ctx)
        self.ctx = ctx
        self.panel = panel
        self.view = panel.pipeline_view
        self.step_model = step_model
        self.palette = palette
        self._pending_select: list[str] = []
        doc = ctx.document
        doc.steps_changed.connect(self._on_steps_changed)
        doc.step_changed.connect(self._on_step_data_changed)
        doc.select_request.connect(self._select_later)
        step_model.add_requested.connect(self.add_pass)
        step_model.move_requested.connect(self.move_steps)
        step_model.toggle_requested.connect(self.toggle_step)
        self.view.delete_requested.connect(self.delete_steps)
        self.view.duplicate_requested.connect(self.duplicate_steps)
        self.view.current_step_changed.connect(self.show_params)
        palette.pass_activated.connect(self.append_pass)
        panel.param_editor.param_changed.connect(self._on_param_changed)
        ctx.catalogue.changed.connect(self._on_catalogue_changed)
        doc.target_changed.connect(lambda: self.show_params(self.view.current_uid()))  # target defaults

    # ---- edits (each one an undo command) ----------------------------------------------------
    def add_pass(self, pass_id: str, row: int = -1) -> Optional[str]:
        """Insert a step for ``pass_id`` at ``row`` (-1 = append); returns the new step's uid."""
        if self.ctx.catalogue.catalogue is not None:
            spec = self.ctx.catalogue.get(pass_id)
            if spec is None:
                self.ctx.status(tr("Unknown pass {0}").format(pass_id), 5000)
                return None
            if not spec.available:
                self.ctx.status(tr("{0} is unavailable: {1}").format(spec.title, spec.unavailable_reason), 8000)
                return None
        step = Step(pass_id=pass_id, params=self._model_defaults(pass_id))
        self.ctx.undo_stack.push(AddStepCommand(self.ctx.document, row, step))
        return step.uid

    def _model_defaults(self, pass_id: str) -> dict:
        """Parameters whose default depends on the model: a function-name parameter (Gradient's ``func_name``)
        whose default the model lacks gets the model's function that runs (``main``, ``forward``, the first)."""
        from pipeline_model.catalogue import FUNCTION_KIND, preferred_function

        spec = self.ctx.catalogue.get(pass_id) if self.ctx.catalogue.catalogue is not None else None
        names = self.panel.param_editor.function_names()
        out: dict = {}
        for p in getattr(spec, "params", None) or []:
            if p.kind == FUNCTION_KIND and names:
                value = preferred_function(names, p.default)
                if value != p.default:
                    out[p.name] = value
        return out

    def append_pass(self, pass_id: str) -> None:
        """Insert ``pass_id`` after the selected step (the palette's double-click)."""
        uid = self.view.current_uid()
        self.add_pass(pass_id, self.ctx.doc.index_of(uid) + 1 if uid else -1)

    def move_steps(self, uids: list[str], row: int) -> None:
        """Move ``uids`` to insertion ``row``."""
        cmd = MoveStepsCommand(self.ctx.document, uids, row)
        if not cmd.isObsolete():
            self.ctx.undo_stack.push(cmd)

    def toggle_step(self, uid: str, enabled: bool) -> None:
        """Enable/disable a step."""
        self.ctx.undo_stack.push(ToggleEnabledCommand(self.ctx.document, uid, enabled))

    def delete_steps(self, uids: list[str]) -> None:
        """Remove steps."""
        if uids:
            self.ctx.undo_stack.push(RemoveStepsCommand(self.ctx.document, uids))

    def delete_selected(self) -> None:
        """Edit > Delete."""
        self.delete_steps(self.view.selected_uids())

    def duplicate_steps(self, uids: list[str]) -> None:
        """Duplicate steps (copies go after the last one)."""
        if uids:
            self.ctx.undo_stack.push(DuplicateStepsCommand(self.ctx.document, uids))

    def set_step_params(self, uid: str, params: dict) -> None:
        """Replace a step's parameters (undoable)."""
        self.ctx.undo_stack.push(SetParamsCommand(self.ctx.document, uid, params))

    def set_model(self, spec: str) -> None:
        """Change the model (undoable)."""
        if spec != self.ctx.doc.model:
            self.ctx.undo_stack.push(SetModelCommand(self.ctx.document, spec))

    def _on_param_changed(self, name: str, value: Any) -> None:
        uid = self.view.current_uid()
        if not uid:
            return
        if self.ctx.doc.step(uid).params.get(name, _MISSING) == value:
            return
        before = self._step_code(uid)
        self.ctx.undo_stack.push(SetParamCommand(self.ctx.document, uid, name, value))
        if before or self._step_code(uid):
            # Code typed in the app's editor is the user's own: no consent question for each keystroke.
            self.ctx.consent.own_edit(uid, before, self._step_code(uid))

    def _step_code(self, uid: str) -> list:
        """The code items (:class:`pipeline_model.consent.CodeItem`) step ``uid`` would run."""
        from pipeline_model import consent

        doc = self.ctx.doc
        step = doc.step(uid)
        item = step.to_dict()
        item["placeholder"] = step.placeholder
        return consent.step_items([item], doc.model_path_base())

    # ---- catalogue, placeholders, parameters ---------------------------------------------------
    def _on_catalogue_changed(self) -> None:
        cat = self.ctx.catalogue
        self.palette.set_catalogue(cat.catalogue)
        self.step_model.set_title_lookup(cat.title_for, cat.is_composite)
        self.refresh_placeholders()
        self.show_params(self.view.current_uid())

    def refresh_placeholders(self) -> None:
        """Mark steps whose pass is unknown to the catalogue (shown disabled, never run)."""
        if self.ctx.catalogue.catalogue is None:
            return
        changed = False
        for step in self.ctx.doc.steps:
            known = step.pass_id in self.ctx.catalogue.catalogue
            if not known and step.placeholder is None:
                step.placeholder = f"unknown pass {step.pass_id!r}: {unknown_pass_reason(step.pass_id)}"
                changed = True
            elif known and step.placeholder is not None and step.placeholder.startswith("unknown pass"):
                step.placeholder = None
                changed = True
        if changed:
            self.step_model.refresh_data()

    def show_params(self, uid: str) -> None:
        """Show the parameter form of step ``uid`` (empty when none)."""
        editor = self.panel.param_editor
        if not uid:
            self.panel.param_title.setText(tr("Step parameters"))
            editor.clear()
            return
        step = self.ctx.doc.step(uid)
        spec = self.ctx.catalogue.get(step.pass_id)
        self.panel.param_title.setText(tr("Step {0} parameters").format(self.ctx.doc.index_of(uid) + 1))
        if spec is None:
            editor.clear()
            loading = self.ctx.catalogue.catalogue is None
            editor.empty_label.setText(
                unknown_pass_html(step.placeholder) if step.placeholder else
                (tr("Loading the pass catalogue…") if loading else tr("Unknown pass {0}").format(step.pass_id)))
            return
        editor.set_step(spec.for_target(self.ctx.doc.target).to_json(), step.params)  # the catalogue's defaults

    def _sync_param_values(self, uid: str) -> None:
        """Show a step's current values (after undo/redo) without rebuilding the form."""
        step = self.ctx.doc.step(uid)
        spec = self.ctx.catalogue.get(step.pass_id)
        if spec is not None:
            target = self.ctx.doc.target
            self.panel.param_editor.set_values({p.name: step.params.get(p.name, p.default_for(target)) for p in spec.params})

    # ---- document notifications ---------------------------------------------------------------
    def on_document_replaced(self) -> None:
        """A new document: placeholders, rows, select its last step."""
        self.refresh_placeholders()
        self.step_model.set_document(self.ctx.doc)
        if self.ctx.doc.steps:
            self.view.select_uids([self.ctx.doc.steps[-1].uid])
        else:
            self.show_params("")

    def _on_steps_changed(self) -> None:
        self.refresh_placeholders()
        current = self.view.current_uid()
        selected = self.view.selected_uids()
        self.step_model.refresh()
        wanted = self._pending_select or selected
        self._pending_select = []
        live = {s.uid for s in self.ctx.doc.steps}
        wanted = [u for u in wanted if u in live]
        self.view.select_uids(wanted, current if current in wanted else None)

    def _select_later(self, uids: list[str]) -> None:
        self._pending_select = list(uids)
        live = {s.uid for s in self.ctx.doc.steps}
        if all(u in live for u in uids) and self.step_model.rowCount() == len(self.ctx.doc.steps):
            self.view.select_uids(uids)

    def _on_step_data_changed(self, uid: str) -> None:
        self.step_model.step_changed(uid)
        if uid == self.view.current_uid():
            self._sync_param_values(uid)
