"""Open Model… through the UI with the real engine (TVMScript, ONNX with a symbolic dim, corrupt file:
``e2e``), Export Python Script… and the Open Recent menu (on the TVM-free fake engine)."""

from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QDialog, QFileDialog, QMessageBox  # noqa: E402

from tests.conftest import PIPELINES_DIR, qt_wait  # noqa: E402
from widgets.model_dialog import ModelDialog  # noqa: E402

TVMSCRIPT = '''\
from tvm.script import ir as I
from tvm.script import relax as R


@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 8), "float32"), w: R.Tensor((8, 4), "float32")) -> R.Tensor((2, 4), "float32"):
        with R.dataflow():
            y = R.matmul(x, w)
            z = R.nn.relu(y)
            R.output(z)
        return z
'''


def _onnx_with_dim_param(path: str) -> None:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weight = numpy_helper.from_array(np.random.default_rng(0).standard_normal((16, 4)).astype("float32"), "weight")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "weight"], ["y"]), helper.make_node("Relu", ["y"], ["out"])],
        "symbolic_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", 4])],
        initializer=[weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def _empty(window):
    window.ctrl.undo_stack.setClean()
    window.files.new_pipeline(force=True)
    qt_wait(lambda: window.step_model.rowCount() == 0, 1000)
    return window


@pytest.fixture
def empty(studio):
    """The real-engine window with an empty pipeline."""
    return _empty(studio)


@pytest.fixture
def fake_empty(fake_studio):
    """The fake-engine window with an empty pipeline."""
    return _empty(fake_studio)


def _open_through_dialog(win, monkeypatch, choose) -> None:
    def fake_exec(dialog: ModelDialog) -> int:
        choose(dialog)
        return int(QDialog.DialogCode.Accepted)

    monkeypatch.setattr(ModelDialog, "exec", fake_exec)
    win.act_open_model.trigger()


def _input_graph(win, timeout_ms: int = 120_000) -> dict:
    assert qt_wait(lambda: win.inspector.input_key is not None and (win.inspector.input_key, None) in win.graphs.graph_cache, timeout_ms), "no input graph"
    return win.graphs.graph_cache[(win.inspector.input_key, None)]["graph"]


def test_dialog_lists_builtins(qtbot):
    from pipeline_model.models import BUILTIN_MODELS

    dialog = ModelDialog("builtin:mlp")
    qtbot.addWidget(dialog)
    names = [dialog.list.item(i).data(256) for i in range(dialog.list.count())]
    assert names == [f"builtin:{n}" for n in BUILTIN_MODELS]
    assert dialog.spec() == "builtin:mlp"
    assert dialog.select_builtin("transformer") and dialog.spec() == "builtin:transformer"
    dialog.path.setText("/tmp/x.onnx")
    assert dialog.spec() == "/tmp/x.onnx"


@pytest.mark.e2e
def test_open_tvmscript_file_sets_model_undoably_and_reruns(empty, tmp_path, monkeypatch):
    path = tmp_path / "tiny_module.py"
    path.write_text(TVMSCRIPT)
    _open_through_dialog(empty, monkeypatch, lambda d: d.path.setText(str(path)))
    assert qt_wait(lambda: empty.ctrl.doc.model == str(path), 60_000), empty.files.model_error
    assert empty.ctrl.undo_stack.undoText() == f"Set model {path}"
    graph = _input_graph(empty)
    ops = {n.get("op") for n in graph["nodes"]}
    assert "relax.matmul" in ops and "relax.nn.relu" in ops
    empty.ctrl.undo_stack.undo()
    assert empty.ctrl.doc.model == "builtin:mlp"


@pytest.mark.e2e
def test_open_onnx_with_symbolic_dim_shows_its_name(empty, tmp_path, monkeypatch):
    path = tmp_path / "sym.onnx"
    _onnx_with_dim_param(str(path))
    _open_through_dialog(empty, monkeypatch, lambda d: d.path.setText(str(path)))
    assert qt_wait(lambda: empty.ctrl.doc.model == str(path), 120_000), empty.files.model_error
    graph = _input_graph(empty)
    params = [n for n in graph["nodes"] if n.get("kind") == "param"]
    assert params, graph["nodes"][:3]
    assert any("batch" in str(n.get("type_text")) for n in params), [n.get("type_text") for n in params]


@pytest.mark.e2e
def test_corrupt_model_file_is_named_and_document_kept(empty, tmp_path, monkeypatch):
    empty.files.open_pipeline(os.path.join(PIPELINES_DIR, "fusion_walkthrough.json"), remember=False, as_template=True)
    steps_before = [s.to_dict() for s in empty.ctrl.doc.steps]
    undo_before = empty.ctrl.undo_stack.count()
    path = tmp_path / "broken.onnx"
    path.write_bytes(b"\x08\x01this is not a protobuf\xff\xfe")
    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "critical", staticmethod(lambda _p, _t, text, *a, **k: shown.append(text)))
    _open_through_dialog(empty, monkeypatch, lambda d: d.path.setText(str(path)))
    assert qt_wait(lambda: bool(shown), 60_000)
    assert "broken.onnx" in shown[0]
    assert empty.ctrl.doc.model == "builtin:mlp"
    assert [s.to_dict() for s in empty.ctrl.doc.steps] == steps_before
    assert empty.ctrl.undo_stack.count() == undo_before and not empty.ctrl.modified


def test_export_python_script_through_menu(fake_empty, tmp_path, monkeypatch):
    empty = fake_empty
    empty.files.open_pipeline(os.path.join(PIPELINES_DIR, "fusion_walkthrough.json"), remember=False, as_template=True)
    out = tmp_path / "pipeline_script.py"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(out), "Python (*.py)")))
    empty.act_export.trigger()
    text = out.read_text()
    compile(text, str(out), "exec")
    for step in empty.ctrl.doc.steps:
        assert step.pass_id.split(".", 1)[1] in text
    # Stock TVM passes: the plain script (issue 33); the dialog's second kind gives the full one.
    from pipeline_model.export import MARKER

    assert len(text.splitlines()) <= 80 and MARKER not in text and "--save-json" not in text
    full = tmp_path / "full_script.py"
    kinds: list = []

    def save_as_full(_parent, _title, _start, filters):
        kinds.extend(filters.split(";;"))
        return str(full), kinds[1]

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(save_as_full))
    empty.act_export.trigger()
    assert len(kinds) == 2 and "--build" in kinds[1]
    text = full.read_text()
    assert text.count(MARKER) == 1 and text.index("def apply_steps(") < text.index(MARKER) < text.index('add_argument("--save-json"')


def test_recent_menu_reopens_a_saved_pipeline(fake_empty, tmp_path, monkeypatch):
    empty = fake_empty
    empty.files.open_pipeline(os.path.join(PIPELINES_DIR, "fusion_walkthrough.json"), remember=False, as_template=True)
    saved = tmp_path / "mine.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(saved), "")))
    assert empty.files.save_as()
    names = [s.pass_id for s in empty.ctrl.doc.steps]
    empty.files.new_pipeline(force=True)
    assert not empty.ctrl.doc.steps
    empty.recent_menu.aboutToShow.emit()
    actions = [a for a in empty.recent_menu.actions() if a.text() == str(saved)]
    assert actions, [a.text() for a in empty.recent_menu.actions()]
    assert empty.recent_menu.actions()[0].text() == str(saved)
    actions[0].trigger()
    assert empty.ctrl.doc.path == str(saved)
    assert [s.pass_id for s in empty.ctrl.doc.steps] == names


def test_dialog_pinned_dimensions_set_the_model_undoably(fake_empty, qtbot, tmp_path, monkeypatch):
    """Issue 34: the dialog's Pinned dimensions field pins symbolic dims (the spec's |dims: part), undoably;
    a bad entry keeps the dialog open with the problem shown."""
    dialog = ModelDialog("/m/gpt2.onnx|dims:seq=8,batch=1")
    qtbot.addWidget(dialog)
    assert dialog.path.text() == "/m/gpt2.onnx" and dialog.dims.text() == "seq=8 batch=1"
    dialog.dims.setText("seq")
    dialog.accept()
    assert dialog.result() != int(QDialog.DialogCode.Accepted) and "'seq' is not NAME=DIM" in dialog.dims_error.text()
    path = tmp_path / "dyn.onnx"
    path.write_bytes(b"")

    def choose(d: ModelDialog) -> None:
        d.path.setText(str(path))
        d.dims.setText("seq=16")

    _open_through_dialog(fake_empty, monkeypatch, choose)
    assert qt_wait(lambda: fake_empty.ctrl.doc.model == f"{path}|dims:seq=16", 20_000), fake_empty.files.model_error
    from pipeline_model.fileformat import dumps_pipeline

    saved = json.loads(dumps_pipeline(fake_empty.ctrl.doc))
    assert saved["model"] == str(path) and saved["model_dims"] == {"seq": 16}
    fake_empty.ctrl.undo_stack.undo()
    assert fake_empty.ctrl.doc.model == "builtin:mlp"
