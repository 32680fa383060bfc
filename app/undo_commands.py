"""Undo commands for every edit of the pipeline document.

Each command works through :class:`app.document_controller.DocumentController` primitives and
stores what it needs to undo by step uid (never by a Python reference that a later edit could
change). Consecutive edits of the same parameter of the same step merge into one undo entry.
"""

from __future__ import annotations

import copy
from typing import Any

from PySide6.QtGui import QUndoCommand

from app.document_controller import UNSET, DocumentController
from app.i18n import tr
from pipeline_model.document import Step

# Command ids for mergeWith.
SET_PARAM_ID = 1001


class AddStepCommand(QUndoCommand):
    """Insert a new step (or several) at ``row``."""

    def __init__(self, ctrl: DocumentController, row: int, steps: list[Step] | Step, text: str = "") -> None:
        steps = [steps] if isinstance(steps, Step) else list(steps)
        super().__init__(text or tr("Add {0}").format(steps[0].pass_id) + (f" (+{len(steps) - 1})" if len(steps) > 1 else ""))
        self.ctrl = ctrl
        self.row = max(0, min(row, len(ctrl.doc.steps))) if row >= 0 else len(ctrl.doc.steps)
        self.steps = steps

    def redo(self) -> None:
        self.ctrl.insert_steps(self.row, self.steps)

    def undo(self) -> None:
        self.ctrl.remove_steps([s.uid for s in self.steps])


class RemoveStepsCommand(QUndoCommand):
    """Remove the steps ``uids``."""

    def __init__(self, ctrl: DocumentController, uids: list[str]) -> None:
        super().__init__(tr("Delete {0} step(s)").format(len(uids)))
        self.ctrl = ctrl
        self.uids = list(uids)
        self.removed: list[tuple[int, Step]] = []

    def redo(self) -> None:
        self.removed = self.ctrl.remove_steps(self.uids)

    def undo(self) -> None:
        self.ctrl.restore_steps(self.removed)


def moved_order(order: list[str], uids: list[str], row: int) -> list[str]:
    """The uid order after moving ``uids`` (kept in their current relative order) to insertion ``row``.

    ``row`` is an insertion point in ``order`` before the move (0 = first, len = last).
    """
    moving = [u for u in order if u in set(uids)]
    before = sum(1 for u in order[: max(0, row)] if u in set(uids))
    rest = [u for u in order if u not in set(uids)]
    at = max(0, min(len(rest), row - before))
    return rest[:at] + moving + rest[at:]


class MoveStepsCommand(QUndoCommand):
    """Move steps to insertion ``row`` (drag to reorder)."""

    def __init__(self, ctrl: DocumentController, uids: list[str], row: int) -> None:
        super().__init__(tr("Move {0} step(s)").format(len(uids)))
        self.ctrl = ctrl
        self.before = [s.uid for s in ctrl.doc.steps]
        self.after = moved_order(self.before, uids, row)
        self.uids = list(uids)
        if self.after == self.before:
            self.setObsolete(True)

    def redo(self) -> None:
        self.ctrl.set_order(self.after)
        self.ctrl.select_request.emit(self.uids)

    def undo(self) -> None:
        self.ctrl.set_order(self.before)
        self.ctrl.select_request.emit(self.uids)


class ToggleEnabledCommand(QUndoCommand):
    """Enable or disable one step."""

    def __init__(self, ctrl: DocumentController, uid: str, enabled: bool) -> None:
        super().__init__((tr("Enable {0}") if enabled else tr("Disable {0}")).format(ctrl.doc.step(uid).pass_id))
        self.ctrl = ctrl
        self.uid = uid
        self.enabled = enabled
        self.old = ctrl.doc.step(uid).enabled

    def redo(self) -> None:
        self.ctrl.set_enabled(self.uid, self.enabled)

    def undo(self) -> None:
        self.ctrl.set_enabled(self.uid, self.old)


class DuplicateStepsCommand(QUndoCommand):
    """Duplicate steps: each copy (new uid) goes right after the last selected step."""

    def __init__(self, ctrl: DocumentController, uids: list[str]) -> None:
        super().__init__(tr("Duplicate {0} step(s)").format(len(uids)))
        self.ctrl = ctrl
        order = [s.uid for s in ctrl.doc.steps]
        chosen = [u for u in order if u in set(uids)]
        self.copies = [ctrl.doc.step(u).clone(new_id=True) for u in chosen]
        self.row = max(order.index(u) for u in chosen) + 1 if chosen else len(order)

    def redo(self) -> None:
        self.ctrl.insert_steps(self.row, self.copies)

    def undo(self) -> None:
        self.ctrl.remove_steps([s.uid for s in self.copies])


class SetParamCommand(QUndoCommand):
    """Set one parameter; consecutive edits of the same parameter merge."""

    def __init__(self, ctrl: DocumentController, uid: str, name: str, value: Any) -> None:
        super().__init__(tr("Set {0}").format(name))
        self.ctrl = ctrl
        self.uid = uid
        self.name = name
        params = ctrl.doc.step(uid).params
        self.old = copy.deepcopy(params[name]) if name in params else UNSET
        self.new = copy.deepcopy(value)

    def id(self) -> int:  # noqa: A003 - Qt API
        return SET_PARAM_ID

    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 - Qt API
        if not isinstance(other, SetParamCommand) or other.uid != self.uid or other.name != self.name:
            return False
        self.new = copy.deepcopy(other.new)
        if self.new == self.old:
            self.setObsolete(True)
        return True

    def redo(self) -> None:
        self.ctrl.set_param(self.uid, self.name, self.new)

    def undo(self) -> None:
        self.ctrl.set_param(self.uid, self.name, self.old)


class SetParamsCommand(QUndoCommand):
    """Replace all parameters of a step (e.g. "reset to defaults")."""

    def __init__(self, ctrl: DocumentController, uid: str, params: dict[str, Any], text: str = "") -> None:
        super().__init__(text or tr("Set parameters"))
        self.ctrl = ctrl
        self.uid = uid
        self.old = copy.deepcopy(ctrl.doc.step(uid).params)
        self.new = copy.deepcopy(params)

    def redo(self) -> None:
        self.ctrl.set_params(self.uid, self.new)

    def undo(self) -> None:
        self.ctrl.set_params(self.uid, self.old)


class SetModelCommand(QUndoCommand):
    """Change the model spec of the pipeline."""

    def __init__(self, ctrl: DocumentController, model: str) -> None:
        super().__init__(tr("Set model {0}").format(model))
        self.ctrl = ctrl
        self.old = ctrl.doc.model
        self.new = model

    def redo(self) -> None:
        self.ctrl.set_model(self.new)

    def undo(self) -> None:
        self.ctrl.set_model(self.old)


class SetTargetCommand(QUndoCommand):
    """Change the compilation target."""

    def __init__(self, ctrl: DocumentController, target: dict[str, Any]) -> None:
        super().__init__(tr("Set target {0}").format(target.get("kind", "?")))
        self.ctrl = ctrl
        self.old = copy.deepcopy(ctrl.doc.target)
        self.new = copy.deepcopy(target)

    def redo(self) -> None:
        self.ctrl.set_target(self.new)

    def undo(self) -> None:
        self.ctrl.set_target(self.old)


class SetPassContextCommand(QUndoCommand):
    """Replace the pipeline's PassContext settings (``pass_context`` JSON; the defaults are stored as ``{}``)."""

    def __init__(self, ctrl: DocumentController, settings: dict[str, Any]) -> None:
        super().__init__(tr("Set PassContext"))
        self.ctrl = ctrl
        self.old = copy.deepcopy(ctrl.doc.pass_context or {})
        self.new = normalized_pass_context(settings)

    def redo(self) -> None:
        self.ctrl.set_pass_context(self.new)

    def undo(self) -> None:
        self.ctrl.set_pass_context(self.old)


def normalized_pass_context(settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` as the document keeps them: ``{}`` for the defaults, else the full JSON (bad settings
    are kept as they are; the run names the problem)."""
    from pipeline_model.pass_context import PassContextError, PassContextSettings

    try:
        parsed = PassContextSettings.from_json(settings or None)
    except PassContextError:
        return copy.deepcopy(settings)
    return {} if parsed.is_default else parsed.to_json()
