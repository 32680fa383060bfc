"""The app's step ``app.FoldConstants``: the module ``relax.FoldConstant`` gives, with every constant ``R.call_tir``
computed by one build (counted: ``tvm.compile`` once), plain ``FoldConstant`` when that build fails; the step
is in the catalogue, the default CPU pipelines use it and exported scripts hold its code."""

from __future__ import annotations

import os

import numpy as np
import pytest

from pipeline_model import emit
from pipeline_model.passkinds.registry import kind_for

tvm = pytest.importorskip("tvm")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPU_BUILD = os.path.join(ROOT, "resources", "pipelines", "cpu_build.json")
FOLD_IDS = ("relax.FoldConstant", "app.FoldConstants")


def _fold(mod):
    from pipeline_model.passkinds.fold_constants.script import fold_constants

    return fold_constants()(mod)


@pytest.fixture
def compiles(monkeypatch):
    """The modules ``tvm.compile`` built successfully while the test ran (the step's one batched build)."""
    built = []
    real = tvm.compile

    def spy(mod, *args, **kwargs):
        result = real(mod, *args, **kwargs)
        built.append(mod)
        return result

    monkeypatch.setattr(tvm, "compile", spy)
    return built


def _same_as_fold_constant(mod, compiles, builds):
    from tvm import relax

    want = relax.transform.FoldConstant()(mod)  # (TVM's builds each PrimFunc with tir.build, not tvm.compile)
    compiles.clear()
    got = _fold(mod)
    assert len(compiles) == builds, compiles
    tvm.ir.assert_structural_equal(got, want)
    return got


def _chained_constants():
    """Constant call_tirs after LegalizeOps: a chain (add -> multiply -> take), a value used by two functions'
    worth of code (``main`` and ``helper``), one call on a parameter (not foldable), one in a non-dataflow
    block, and a dynamic shape (not foldable)."""
    from tvm import relax

    bb = relax.BlockBuilder()
    c = relax.const(np.arange(6, dtype="float32").reshape(2, 3))
    idx = relax.const(np.array([2, 0], dtype="int64"))
    x = relax.Var("x", relax.TensorType((2, 3), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            a = bb.emit(relax.op.add(c, c))
            m = bb.emit(relax.op.multiply(a, relax.const(0.5, "float32")))
            t = bb.emit(relax.op.take(m, idx, axis=1))
            y = bb.emit(relax.op.add(x, m))  # x is a parameter: stays
            out = bb.emit_output(relax.op.concat([relax.op.sum(y, axis=[1], keepdims=True), t], axis=1))
        bb.emit_func_output(out)
    n = tvm.tirx.Var("n", "int64")
    z = relax.Var("z", relax.TensorType((n,), "float32"))
    with bb.function("helper", [z]):
        e = bb.emit(relax.op.exp(relax.const(np.array([0.0, 1.0, 2.0], dtype="float32"))))  # non-dataflow
        r = bb.emit(relax.op.add(z, relax.op.sum(e)))  # dynamic shape: stays
        bb.emit_func_output(relax.Tuple([r, relax.op.negative(e)]))
    return relax.transform.LegalizeOps()(bb.get())


def test_chained_constant_calls_fold_like_fold_constant_with_one_build(compiles):
    mod = _chained_constants()
    folded = _same_as_fold_constant(mod, compiles, builds=1)
    main_calls = folded["main"].script().count("R.call_tir(")
    assert main_calls == 3 and _chained_constants()["main"].script().count("R.call_tir(") == 6  # add, sum, concat left
    (built,) = compiles
    fold_fn = next(f for gv, f in built.functions_items() if gv.name_hint == "fold_constants")
    assert fold_fn.script().count("R.call_tir(") == 6  # main: add, multiply, take; helper: exp, sum, negative
    assert "R.exp" not in folded["helper"].script() and "R.call_tir(" in folded["helper"].script()


def test_nothing_to_fold_is_the_module_as_it_came(compiles):
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((4,), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(relax.op.multiply(x, x))
        bb.emit_func_output(out)
    mod = relax.transform.LegalizeOps()(bb.get())
    folded = _same_as_fold_constant(mod, compiles, builds=0)
    tvm.ir.assert_structural_equal(folded, mod)


def test_a_failed_batched_build_falls_back_to_fold_constant(monkeypatch):
    from tvm import relax

    mod = _chained_constants()

    def broken(*_args, **_kwargs):
        raise RuntimeError("no build here")

    monkeypatch.setattr(tvm, "compile", broken)
    tvm.ir.assert_structural_equal(_fold(mod), relax.transform.FoldConstant()(mod))


def _before_folding(mod):
    """``mod`` after the steps of cpu_build.json before its constant folding (LiftTransformParams last)."""
    from pipeline_model.fileformat import load_pipeline
    from pipeline_model.passkinds.catalogue_tvm import make_pass
    from pipeline_model.passkinds.context import PassBuildContext

    doc = load_pipeline(CPU_BUILD)
    steps = doc.steps[:[s.pass_id for s in doc.steps].index("app.FoldConstants")]
    assert steps[-1].pass_id == "relax.LiftTransformParams"
    target = tvm.target.Target({"kind": "llvm"})
    with target, tvm.transform.PassContext(opt_level=3):
        for step in steps:
            mod = make_pass(step.pass_id, step.params, PassBuildContext(target=target))(mod)
    return mod


@pytest.mark.parametrize("name", ["builtin:mlp", "builtin:transformer"])
def test_builtin_models_after_the_cpu_build_steps(name, compiles):
    from pipeline_model.importers.load_tvm import load_model

    mod = _before_folding(load_model(name).mod)
    _same_as_fold_constant(mod, compiles, builds=0)  # their weights are parameters: nothing constant to run


def _shape_computation_onnx(path):
    """An ONNX graph computing from its input's shape like Hugging Face exports do: Shape -> Gather -> Where on
    constants, cast and broadcast into a product with the input."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    inits = [numpy_helper.from_array(np.array([1], np.int64), "one"),
             numpy_helper.from_array(np.array([True, False]), "cond"),
             numpy_helper.from_array(np.array([4, 4], np.int64), "alt"),
             numpy_helper.from_array(np.array([0, 1], np.int64), "perm")]
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "perm"], ["g"], axis=0),
             helper.make_node("Where", ["cond", "g", "alt"], ["w"]),
             helper.make_node("Cast", ["w"], ["wf"], to=TensorProto.FLOAT),
             helper.make_node("Unsqueeze", ["wf", "one"], ["u"]),
             helper.make_node("Mul", ["x", "u"], ["y"])]
    graph = helper.make_graph(nodes, "shapes", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return str(path)


def test_an_onnx_shape_computation_folds_in_one_build(tmp_path, compiles):
    from pipeline_model.importers.load_tvm import load_model

    mod = _before_folding(load_model(_shape_computation_onnx(tmp_path / "shapes.onnx")).mod)
    assert mod["main"].script().count("R.call_tir(") == 4  # shape_to_tensor, the index, take; the product
    folded = _same_as_fold_constant(mod, compiles, builds=1)
    assert folded["main"].script().count("R.call_tir(") == 1  # only the product with x is left


def test_the_step_is_a_kind_of_its_own_with_script_code():
    kind = kind_for("app.FoldConstants")
    assert kind is not None and kind.name == "fold_constants"
    expr = kind.recipe("app.FoldConstants", {})
    assert isinstance(expr, emit.ScriptCall) and expr.attr == "fold_constants"
    source = emit.script_source("pipeline_model.passkinds.fold_constants.script", "fold_constants")
    assert source.startswith("def fold_constants(") and "pipeline_model" not in source


def test_the_engine_catalogue_has_the_step():
    from pipeline_model.passkinds.catalogue_tvm import catalogue

    spec = catalogue().get("app.FoldConstants")
    assert spec is not None and spec.kind == "fold_constants" and spec.available


def test_default_cpu_pipelines_fold_with_the_step_and_export_its_code():
    from pipeline_model.export import export_script
    from pipeline_model.fileformat import load_pipeline

    for name in ("cpu_build", "cpu_build_bound", "cpu_build_nhwc", "cpu_build_fuse_transpose", "cpu_build_dlight"):
        doc = load_pipeline(os.path.join(ROOT, "resources", "pipelines", f"{name}.json"))
        ids = [s.pass_id for s in doc.steps]
        lift = ids.index("relax.LiftTransformParams")
        assert ids[lift + 1] == "app.FoldConstants" and "relax.FoldConstant" not in ids[lift:], name
    assert "app.FoldConstants" in load_pipeline(CPU_BUILD).description
    source = export_script(load_pipeline(CPU_BUILD))
    assert "def fold_constants(" in source and "fold_constants()" in source
