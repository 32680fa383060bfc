"""The live pipeline document, its undo stack and its revision counter.

``DocumentController`` owns the one ``PipelineDocument`` the window edits. Undo commands (see
:mod:`app.undo_commands`) call its primitive mutators, which bump ``revision`` and emit
``edited(first_affected_index)``; nothing else changes the document. "Modified" is
``not undo_stack.isClean()``. This controller is the one owner of the document's signals: every panel
listens here (``ctx.document``), none re-emits them.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Optional

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoStack

from pipeline_model.document import PipelineDocument, Step


class DocumentController(QObject):
    """Holds the document; primitive edits used by undo commands.

    Signals:
      - ``edited(first_index)``: steps at ``first_index`` and later must re-run (0: everything).
      - ``steps_changed()``: the step list changed (insert/remove/move) - views refresh rows.
      - ``step_changed(uid)``: one step's data changed (params, enabled).
      - ``document_replaced()``: a new document was loaded/created (New / Open): every panel describing
        the old one clears.
      - ``model_changed()``: same document, another model or target: results describing the old one
        (builds, comparisons, tuning) clear; step results re-run through ``edited`` (emitted just
        before it).
      - ``modified_changed(bool)``.
      - ``pass_context_changed()``: the PassContext settings changed (edit, undo, redo).
      - ``target_changed()``: the target changed (steps' defaults may depend on it: the catalogue's
        ``target_defaults``).
    """

    edited = Signal(int)
    steps_changed = Signal()
    step_changed = Signal(str)
    document_replaced = Signal()
    model_changed = Signal()
    modified_changed = Signal(bool)
    select_request = Signal(list)
    pass_context_changed = Signal()
    target_changed = Signal()

    def __init__(self, parent: Optional[QObject] = None) -> None:
        super().__init__(parent)
        self.doc = PipelineDocument()
        self.undo_stack = QUndoStack(self)
        self.undo_stack.cleanChanged.connect(self._on_clean_changed)
        self.revision = 0
        self._subject = self._subject_of_doc()

    def _subject_of_doc(self) -> tuple[str, str]:
        """What results describe besides the steps: the model spec and the target (as text)."""
        return str(self.doc.model), json.dumps(self.doc.target, sort_keys=True, default=str)

    def _on_clean_changed(self, clean: bool) -> None:
        self.modified_changed.emit(not clean)

    # ---- whole document --------------------------------------------------------------------
    @property
    def modified(self) -> bool:
        """True when there are edits since the last save/load."""
        return not self.undo_stack.isClean()

    def replace_document(self, doc: PipelineDocument, modified: bool = False) -> None:
        """Show ``doc``; clears the undo stack (a new file is clean; ``modified``: it starts modified,
        e.g. a restored recovery copy, until saved)."""
        self.doc = doc
        self.undo_stack.clear()
        self.undo_stack.setClean()
        if modified:
            self.undo_stack.resetClean()
        self.revision += 1
        self._subject = self._subject_of_doc()
        self.document_replaced.emit()
        self.edited.emit(0)

    def mark_saved(self, path: str) -> None:
        """The document was written to ``path``: it is clean now."""
        self.doc.path = path
        self.undo_stack.setClean()

    # ---- primitives (used by undo commands only) -------------------------------------------
    def _bump(self, first_index: int) -> None:
        self.revision += 1
        subject = self._subject_of_doc()
        if subject != self._subject:
            self._subject = subject
            self.model_changed.emit()
        self.edited.emit(max(0, first_index))

    def insert_steps(self, row: int, steps: list[Step]) -> None:
        """Insert ``steps`` at ``row``."""
        row = max(0, min(row, len(self.doc.steps)))
        self.doc.steps[row:row] = steps
        self.steps_changed.emit()
        self.select_request.emit([s.uid for s in steps])
        self._bump(row)

    def remove_steps(self, uids: list[str]) -> list[tuple[int, Step]]:
        """Remove the steps ``uids``; returns ``(index, step)`` pairs in ascending index order."""
        removed = [(i, s) for i, s in enumerate(self.doc.steps) if s.uid in set(uids)]
        keep = set(uids)
        self.doc.steps = [s for s in self.doc.steps if s.uid not in keep]
        self.steps_changed.emit()
        if removed:
            self._bump(removed[0][0])
        return removed

    def restore_steps(self, removed: list[tuple[int, Step]]) -> None:
        """Undo of :meth:`remove_steps`: put steps back at their indices."""
        for index, step in removed:
            self.doc.steps.insert(index, step)
        self.steps_changed.emit()
        self.select_request.emit([s.uid for _, s in removed])
        if removed:
            self._bump(removed[0][0])

    def set_order(self, uids: list[str]) -> None:
        """Reorder the steps to ``uids`` (a permutation of the current uids)."""
        by_uid = {s.uid: s for s in self.doc.steps}
        old = [s.uid for s in self.doc.steps]
        if sorted(old) != sorted(uids):
            raise ValueError("set_order needs a permutation of the step uids")
        first = next((i for i, (a, b) in enumerate(zip(old, uids)) if a != b), len(old))
        self.doc.steps = [by_uid[u] for u in uids]
        self.steps_changed.emit()
        if first < len(old):
            self._bump(first)

    def set_enabled(self, uid: str, enabled: bool) -> None:
        """Enable or disable step ``uid``."""
        index = self.doc.index_of(uid)
        self.doc.steps[index].enabled = enabled
        self.step_changed.emit(uid)
        self._bump(index)

    def set_param(self, uid: str, name: str, value: Any) -> None:
        """Set one parameter of step ``uid`` (``_UNSET`` removes it)."""
        index = self.doc.index_of(uid)
        params = self.doc.steps[index].params
        if value is _UNSET:
            params.pop(name, None)
        else:
            params[name] = copy.deepcopy(value)
        self.step_changed.emit(uid)
        self._bump(index)

    def set_params(self, uid: str, params: dict[str, Any]) -> None:
        """Replace all parameters of step ``uid``."""
        index = self.doc.index_of(uid)
        self.doc.steps[index].params = copy.deepcopy(params)
        self.step_changed.emit(uid)
        self._bump(index)

    def set_model(self, model: str) -> None:
        """Change the model spec (everything re-runs)."""
        self.doc.model = model
        self._bump(0)

    def set_target(self, target: dict[str, Any]) -> None:
        """Change the target (everything re-runs)."""
        self.doc.target = copy.deepcopy(target)
        self.target_changed.emit()  # a step's defaults may depend on it (the parameter form shows them)
        self._bump(0)

    def set_pass_context(self, settings: dict[str, Any]) -> None:
        """Replace the PassContext settings (``pass_context`` JSON; empty: defaults). Every step runs inside
        that context, so everything re-runs."""
        self.doc.pass_context = copy.deepcopy(settings)
        self.pass_context_changed.emit()
        self._bump(0)


class _Unset:
    def __repr__(self) -> str:
        return "<unset>"


#: Marker for "parameter not present" (a removed/defaulted parameter).
_UNSET: Any = _Unset()
UNSET = _UNSET
