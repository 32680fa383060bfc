"""Undo commands: every edit is undoable, merging of parameter edits, clean state = not modified."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from app.document_controller import DocumentController  # noqa: E402
from app.undo_commands import (  # noqa: E402
    AddStepCommand,
    DuplicateStepsCommand,
    MoveStepsCommand,
    RemoveStepsCommand,
    SetModelCommand,
    SetParamCommand,
    SetTargetCommand,
    ToggleEnabledCommand,
    moved_order,
)
from pipeline_model.document import PipelineDocument, Step  # noqa: E402


@pytest.fixture
def ctrl(qapp):
    c = DocumentController()
    c.replace_document(PipelineDocument(steps=[Step("relax.LegalizeOps", uid="a"), Step("relax.FuseOps", uid="b"), Step("relax.FuseTIR", uid="c")]))
    return c


def order(c: DocumentController) -> list[str]:
    return [s.uid for s in c.doc.steps]


def test_moved_order():
    assert moved_order(["a", "b", "c", "d"], ["a"], 3) == ["b", "c", "a", "d"]
    assert moved_order(["a", "b", "c", "d"], ["d"], 0) == ["d", "a", "b", "c"]
    assert moved_order(["a", "b", "c", "d"], ["b", "c"], 4) == ["a", "d", "b", "c"]
    assert moved_order(["a", "b", "c", "d"], ["c"], 2) == ["a", "b", "c", "d"]


def test_add_remove_undo_redo(ctrl):
    edits = []
    ctrl.edited.connect(edits.append)
    assert not ctrl.modified
    ctrl.undo_stack.push(AddStepCommand(ctrl, 1, Step("relax.FoldConstant", uid="n")))
    assert order(ctrl) == ["a", "n", "b", "c"] and ctrl.modified and edits[-1] == 1
    ctrl.undo_stack.push(RemoveStepsCommand(ctrl, ["a", "c"]))
    assert order(ctrl) == ["n", "b"]
    ctrl.undo_stack.undo()
    assert order(ctrl) == ["a", "n", "b", "c"]
    ctrl.undo_stack.undo()
    assert order(ctrl) == ["a", "b", "c"] and not ctrl.modified
    ctrl.undo_stack.redo()
    ctrl.undo_stack.redo()
    assert order(ctrl) == ["n", "b"]


def test_move_toggle_duplicate(ctrl):
    ctrl.undo_stack.push(MoveStepsCommand(ctrl, ["c"], 0))
    assert order(ctrl) == ["c", "a", "b"]
    ctrl.undo_stack.push(ToggleEnabledCommand(ctrl, "a", False))
    assert ctrl.doc.step("a").enabled is False
    ctrl.undo_stack.push(DuplicateStepsCommand(ctrl, ["a"]))
    assert len(ctrl.doc.steps) == 4 and ctrl.doc.steps[2].pass_id == "relax.LegalizeOps" and ctrl.doc.steps[2].uid != "a"
    for _ in range(3):
        ctrl.undo_stack.undo()
    assert order(ctrl) == ["a", "b", "c"] and ctrl.doc.step("a").enabled is True and not ctrl.modified


def test_set_param_merges_and_restores_absence(ctrl):
    stack = ctrl.undo_stack
    stack.push(SetParamCommand(ctrl, "b", "fuse_opt_level", 1))
    stack.push(SetParamCommand(ctrl, "b", "fuse_opt_level", 2))
    stack.push(SetParamCommand(ctrl, "b", "fuse_opt_level", 3))
    assert stack.count() == 1  # merged into one entry
    assert ctrl.doc.step("b").params == {"fuse_opt_level": 3}
    stack.push(SetParamCommand(ctrl, "a", "enable_warning", True))
    assert stack.count() == 2  # another step/param does not merge
    stack.undo()
    stack.undo()
    assert ctrl.doc.step("b").params == {}  # the param was absent before: absent again
    assert not ctrl.modified


def test_model_target_revision(ctrl):
    rev = ctrl.revision
    edits = []
    ctrl.edited.connect(edits.append)
    ctrl.undo_stack.push(SetModelCommand(ctrl, "builtin:transformer"))
    ctrl.undo_stack.push(SetTargetCommand(ctrl, {"kind": "cuda", "arch": "sm_80"}))
    assert ctrl.doc.model == "builtin:transformer" and ctrl.doc.target["kind"] == "cuda"
    assert edits == [0, 0] and ctrl.revision == rev + 2
    ctrl.undo_stack.undo()
    ctrl.undo_stack.undo()
    assert ctrl.doc.model == "builtin:mlp" and ctrl.doc.target == {"kind": "llvm"}
