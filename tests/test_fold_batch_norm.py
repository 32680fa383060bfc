"""The app's step ``app.FoldBatchNorm``: inference batch norms folded into convolution weights (or per-channel
factors), computed once instead of a square root and a division per element of the feature map."""

from __future__ import annotations

import os

import numpy as np
import pytest

from pipeline_model import emit
from pipeline_model.passkinds.registry import kind_for

tvm = pytest.importorskip("tvm")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPELINES = ("cpu_build", "cpu_tuned_app", "cpu_build_nhwc", "cpu_build_fuse_transpose", "cpu_build_dlight")


def _fold(mod):
    from pipeline_model.passkinds.fold_batch_norm.script import fold_batch_norm

    return fold_batch_norm()(mod)


def _module(conv_read_twice=False, center=True, scale=True, groups=1):
    """conv2d -> batch norm -> SiLU, then a second batch norm of that (not after a convolution)."""
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((1, 16, 8, 8), "float32"))
    w = relax.Var("w", relax.TensorType((16, 16 // groups, 3, 3), "float32"))
    stats = [relax.Var(n, relax.TensorType((16,), "float32")) for n in ("gamma", "beta", "mean", "var")]
    with bb.function("main", [x, w, *stats]):
        with bb.dataflow():
            y = bb.emit(relax.op.nn.conv2d(x, w, padding=1, groups=groups))
            bn = bb.emit(relax.op.nn.batch_norm(y, *stats, axis=1, epsilon=1e-3, center=center, scale=scale,
                                                 training=False))
            z = bb.emit(relax.TupleGetItem(bn, 0))
            z = bb.emit(relax.op.multiply(z, relax.op.sigmoid(z)))
            bn2 = bb.emit(relax.op.nn.batch_norm(z, *stats, axis=-3, training=False))
            out = bb.emit(relax.TupleGetItem(bn2, 0))
            if conv_read_twice:
                out = bb.emit(relax.op.add(out, y))
            out = bb.emit_output(out)
        bb.emit_func_output(out)
    mod = bb.get()
    mod["main"] = mod["main"].with_attr("num_input", 1)
    return mod


def _arrays(groups=1, seed=0):
    rng = np.random.default_rng(seed)
    return ([rng.standard_normal((1, 16, 8, 8)).astype("float32"),
             rng.standard_normal((16, 16 // groups, 3, 3)).astype("float32")]
            + [rng.standard_normal(16).astype("float32") for _ in range(3)]
            + [(rng.random(16) + 0.1).astype("float32")])


def _run(mod, arrays):
    from tvm import relax

    mod = relax.transform.DecomposeOpsForInference()(mod)
    mod = relax.transform.LegalizeOps()(mod)
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    return vm["main"](*[tvm.runtime.tensor(a) for a in arrays]).numpy()


def _calls(mod, op):
    return [line for line in mod["main"].script().splitlines() if f"R.{op}(" in line]


@pytest.mark.parametrize("center,scale,groups", [(True, True, 1), (False, True, 1), (True, False, 1),
                                                 (True, True, 16)])
def test_batch_norm_of_a_convolution_folds_into_its_weights(center, scale, groups):
    mod = _module(center=center, scale=scale, groups=groups)
    folded = _fold(mod)
    assert not _calls(folded, "nn.batch_norm")
    assert len(_calls(folded, "nn.conv2d")) == 1
    script = folded["main"].script()
    assert "fold_batch_norm, (w, gamma, beta, mean, var)" in script, script
    assert "batch_norm_factors, (gamma, beta, mean, var)" in script, script  # the second norm
    assert not _calls(folded, "sqrt") and not _calls(folded, "divide"), script  # none on a feature map
    arrays = _arrays(groups)
    ref, got = _run(mod, arrays), _run(folded, arrays)
    assert np.abs(got - ref).max() <= 1e-5 * np.abs(ref).max()


def test_a_convolution_read_elsewhere_keeps_its_weights_and_is_computed_once():
    mod = _module(conv_read_twice=True)
    folded = _fold(mod)
    assert not _calls(folded, "nn.batch_norm")
    convs = _calls(folded, "nn.conv2d")
    assert len(convs) == 1 and "(x, w," in convs[0]
    assert "fold_batch_norm" not in folded["main"].script()
    arrays = _arrays()
    ref, got = _run(mod, arrays), _run(folded, arrays)
    assert np.abs(got - ref).max() <= 1e-5 * np.abs(ref).max()


def test_norms_of_one_shape_share_one_function():
    """Two norms of the same shapes and attributes (a residual network has many) use one PrimFunc."""
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((1, 8, 4, 4), "float32"))
    ws = [relax.Var(f"w{i}", relax.TensorType((8, 8, 1, 1), "float32")) for i in range(2)]
    stats = [relax.Var(n, relax.TensorType((8,), "float32")) for n in ("gamma", "beta", "mean", "var")]
    with bb.function("main", [x, *ws, *stats]):
        with bb.dataflow():
            y = x
            for w in ws:
                y = bb.emit(relax.op.nn.conv2d(y, w))
                y = bb.emit(relax.TupleGetItem(bb.emit(relax.op.nn.batch_norm(y, *stats, axis=1, training=False)), 0))
            out = bb.emit_output(y)
        bb.emit_func_output(out)
    folded = _fold(bb.get())
    prims = [gv.name_hint for gv, f in folded.functions_items() if isinstance(f, tvm.tirx.PrimFunc)]
    assert prims == ["fold_batch_norm"], prims
    assert bool(folded["fold_batch_norm"].attrs["tirx.is_scheduled"])  # DLight leaves the run-once function be
    assert folded["main"].script().count("fold_batch_norm, (") == 2


def test_training_norms_and_modules_without_norms_are_left_alone():
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((2, 4), "float32"))
    stats = [relax.Var(n, relax.TensorType((4,), "float32")) for n in ("gamma", "beta", "mean", "var")]
    with bb.function("main", [x, *stats]):
        with bb.dataflow():
            bn = bb.emit(relax.op.nn.batch_norm(x, *stats, axis=1, training=True))
            out = bb.emit_output(relax.TupleGetItem(bn, 0))
        bb.emit_func_output(out)
    mod = bb.get()
    assert _fold(mod).same_as(mod)


def test_the_cpu_pipeline_computes_the_factors_once_in_transform_params():
    """Through cpu_build's steps: main's fused convolution reads folded weights from main_transform_params, and
    no square root is left in main; the result matches the unfolded module."""
    from tvm import relax

    from pipeline_model.fileformat import load_pipeline
    from pipeline_model.passkinds.catalogue_tvm import make_pass
    from pipeline_model.passkinds.context import PassBuildContext

    doc = load_pipeline(os.path.join(ROOT, "resources", "pipelines", "cpu_build.json"))
    mod = _module()
    ctx = PassBuildContext(target={"kind": "llvm"})
    with tvm.target.Target("llvm"), tvm.transform.PassContext(opt_level=3):
        for step in doc.steps:
            if step.enabled:
                mod = make_pass(step.pass_id, step.params, ctx)(mod)
    assert "main_transform_params" in [gv.name_hint for gv in mod.get_global_vars()]
    main_calls = [gv.name_hint for gv in mod.get_global_vars()
                  if gv.name_hint in mod["main"].script() and isinstance(mod[gv], tvm.tirx.PrimFunc)]
    assert main_calls and not any("sqrt" in name or "batch_norm" in name for name in main_calls), main_calls
    assert "fold_batch_norm" in mod["main_transform_params"].script()
    from pipeline_model.scriptlib.arguments import make_arguments, prepacked_vm

    vm = prepacked_vm(relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu()), mod)
    arrays = _arrays()
    weights = dict(zip(("w", "gamma", "beta", "mean", "var"), arrays[1:]))
    args, _ = make_arguments(mod, "main", weights)
    args[0] = arrays[0]
    got = vm["main"](*[tvm.runtime.tensor(a) for a in args]).numpy()
    ref = _run(_module(), arrays)
    assert np.abs(got - ref).max() <= 1e-5 * np.abs(ref).max()


def test_kind_is_in_the_catalogue_pipelines_and_exported_scripts():
    from pipeline_model.export import export_script
    from pipeline_model.fileformat import load_pipeline
    from pipeline_model.passkinds.catalogue_tvm import catalogue

    kind = kind_for("app.FoldBatchNorm")
    assert kind is not None and kind.name == "fold_batch_norm"
    expr = kind.recipe("app.FoldBatchNorm", {})
    assert isinstance(expr, emit.ScriptCall) and expr.attr == "fold_batch_norm"
    source = emit.script_source("pipeline_model.passkinds.fold_batch_norm.script", "fold_batch_norm")
    assert source.startswith("def fold_batch_norm(") and "pipeline_model" not in source
    spec = catalogue().get("app.FoldBatchNorm")
    assert spec is not None and spec.kind == "fold_batch_norm" and spec.available
    for name in PIPELINES:
        doc = load_pipeline(os.path.join(ROOT, "resources", "pipelines", f"{name}.json"))
        ids = [s.pass_id for s in doc.steps]
        between = ids[ids.index("app.FoldBatchNorm") + 1:ids.index("relax.DecomposeOpsForInference")]
        assert set(between) <= {"app.ChannelsLast", "app.Winograd", "relax.FastMathTransform"}, name  # no norm added
    script = export_script(load_pipeline(os.path.join(ROOT, "resources", "pipelines", "cpu_build.json")))
    assert "def fold_batch_norm(" in script and "fold_batch_norm()" in script


def test_an_exported_script_carries_the_pass_with_its_parts():
    """The pass is split into top-level parts (``_bn_*``): an exported script holds each once, before the pass,
    and the script's copy alone folds a module exactly as the engine's module does."""
    sources = emit.script_sources("pipeline_model.passkinds.fold_batch_norm.script", "fold_batch_norm")
    names = [source.split("(", 1)[0].removeprefix("def ") for source in sources]
    assert names[-1] == "fold_batch_norm" and len(set(names)) == len(names), names
    assert {"_bn_fold_module", "_bn_conv_reads", "_bn_rewrite", "_bn_factors"} <= set(names), names
    namespace: dict = {}
    exec(compile("\n\n".join(sources), "<exported>", "exec"), namespace)  # noqa: S102 - the app's own code
    mod = _module(conv_read_twice=False)
    tvm.ir.assert_structural_equal(namespace["fold_batch_norm"]()(mod), _fold(mod))
