"""The app's step ``app.ChannelsLast`` and what schedules its layout: NHWC convolutions in ``app.CPUConv2d``,
NHWC pools and means in ``app.CPUParallel``.

The step converts float convolutions to NHWC / OHWI and carries the layout through Hardswish (its ``clip``
written as ``maximum``/``minimum`` first), so transposes are left only where the network enters and leaves the
layout; the scheduled NHWC kernels compute what the unscheduled ones do.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

tvm = pytest.importorskip("tvm")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = {"kind": "llvm", "num-cores": 2}
PACK_MARK = "meta_schedule.layout_rewrite_preproc"

#: (input NHWC, weight OHWI, stride, padding, groups, epilogue)
NHWC_SHAPES = [
    ((1, 12, 12, 16), (32, 3, 3, 16), 1, 1, 1, "bias_relu"),  # two channel vectors per tile
    ((1, 13, 11, 16), (16, 3, 3, 16), 2, 1, 1, "none"),  # odd sizes, stride 2
    ((1, 7, 7, 96), (72, 1, 1, 96), 1, 0, 1, "hardswish"),  # pointwise on 49 pixels, 72 channels (8 lanes)
    ((1, 17, 17, 3), (16, 7, 7, 3), 2, 3, 1, "bias_relu"),  # stem-like, 3 input channels
    ((1, 9, 9, 32), (32, 3, 3, 1), 1, 1, 32, "bias_relu"),  # depthwise
    ((1, 11, 11, 48), (48, 5, 5, 1), 2, 2, 48, "hardswish"),  # depthwise 5x5 stride 2
    ((1, 10, 10, 24), (24, 1, 1, 24), 2, 0, 1, "none"),  # 1x1 stride 2 (a ResNet downsample), 8 lanes
    ((1, 4, 4, 128), (256, 3, 3, 128), 1, 1, 1, "none"),  # 1.2 MB of weights: channel block outer
]


def _nhwc_module(shapes):
    """One Relax function with one NHWC convolution (and its epilogue) per entry of ``shapes``, legalized and
    fused (the inputs first, then the weights)."""
    from tvm import relax

    bb = relax.BlockBuilder()
    inputs = [relax.Var(f"x{i}", relax.TensorType(s[0], "float32")) for i, s in enumerate(shapes)]
    params, outs = list(inputs), []
    with bb.function("main"):
        with bb.dataflow():
            for i, (_xs, ws, stride, pad, groups, epi) in enumerate(shapes):
                w = relax.Var(f"w{i}", relax.TensorType(ws, "float32"))
                b = relax.Var(f"b{i}", relax.TensorType((ws[0],), "float32"))
                params += [w, b]
                y = bb.emit(relax.op.nn.conv2d(inputs[i], w, strides=stride, padding=pad, groups=groups,
                                               data_layout="NHWC", kernel_layout="OHWI"))
                if epi == "bias_relu":
                    y = bb.emit(relax.op.nn.relu(relax.op.add(y, b)))
                elif epi == "hardswish":
                    shifted = relax.op.add(relax.op.add(y, b), relax.const(3.0, "float32"))
                    gate = relax.op.maximum(relax.op.minimum(shifted, relax.const(6.0, "float32")),
                                            relax.const(0.0, "float32"))
                    y = bb.emit(relax.op.multiply(y, relax.op.divide(gate, relax.const(6.0, "float32"))))
                outs.append(y)
            out = bb.emit_output(relax.Tuple(outs))
        bb.emit_func_output(out, params=params)
    mod = bb.get()
    mod["main"] = mod["main"].with_attr("num_input", len(shapes))
    return _fused(mod)


def _fused(mod):
    from tvm import relax

    passes = [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(),
              relax.transform.FuseTIR()]
    with tvm.target.Target(TARGET):
        return tvm.ir.transform.Sequential(passes)(mod)


def _schedule(mod, *rules):
    from tvm.s_tir import dlight as dl

    with tvm.target.Target(TARGET):
        return dl.ApplyDefaultSchedule(*rules)(mod.clone())


def _run(mod, arrays):
    from tvm import relax

    out = relax.VirtualMachine(tvm.compile(mod, target=tvm.target.Target(TARGET)), tvm.cpu())["main"](
        *[tvm.runtime.tensor(a) for a in arrays])
    return [out.numpy()] if hasattr(out, "numpy") else [o.numpy() for o in out]


def _arrays(mod):
    from pipeline_model.scriptlib.arguments import make_arguments

    arrays, _ = make_arguments(mod, "main", None)
    return arrays


def _prims(mod):
    return {gv.name_hint: f.script() for gv, f in mod.functions_items() if isinstance(f, tvm.tirx.PrimFunc)}


def _assert_same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * float(np.abs(w).max()))


def test_nhwc_convolutions_get_the_channel_lane_tile_and_match_the_unscheduled_ones():
    """Regular, strided, pointwise, stem, depthwise and large-weight NHWC convolutions are all scheduled (weights
    packed by a block the preproc split takes, channels in vector lanes, tiles in parallel; a regular one's
    padding a copy of its own, a depthwise one's tested per unrolled tap on the input read in place) and give the
    unscheduled numbers. Before the NHWC path the rule declined every one of them."""
    from pipeline_model.passkinds.dlight.rules.cpu_conv2d_tvm import CPUConv2d

    mod = _nhwc_module(NHWC_SHAPES)
    scheduled = _schedule(mod, CPUConv2d())
    convs = {n: t for n, t in _prims(scheduled).items() if "conv2d" in n}
    assert len(convs) == len(NHWC_SHAPES)
    depthwise = [n for n in convs if "group" in convs[n]]
    assert len(depthwise) == 2
    for name, text in convs.items():
        assert PACK_MARK in text and "T.vectorized(" in text and "T.parallel(" in text, name
        update = text.split("T.vectorized(")[2]  # after the accumulator's zeroing: the reduction's lanes
        if name in depthwise:  # the input read in place, the padding tested per tap: no padded copy
            assert "pad_temp" not in text and "if_then_else" in update, name
            assert "rx in T.unroll(" in text, name  # the taps unrolled (a 5 x 5's columns only): tests folded
            assert ("ry in T.unroll(" in text) == ("T.int64(5), T.int64(5)" not in text), name
        else:  # a padded copy computed first: no test in the hot loop
            assert "if_then_else" not in update, name
    arrays = _arrays(mod)
    _assert_same(_run(scheduled, arrays), _run(mod, arrays))


def test_nhwc_weights_stream_per_pixel_tile_only_when_small():
    """Small weights: the channel blocks are the inner part of the parallel loop (the pixel tile's input stays
    while they change); weights over ``max_streamed_weights``: the channel block is the outer part."""
    from pipeline_model.passkinds.dlight.rules.cpu_conv2d_tvm import CPUConv2d

    small, big = NHWC_SHAPES[0], NHWC_SHAPES[-1]
    for case, outer_first in ((small, False), (big, True)):
        mod = _nhwc_module([case])
        rule = CPUConv2d()
        rule.min_parallel_macs = 0  # (the small one, 663 K multiply-adds, would stay on the calling thread)
        (text,) = [t for n, t in _prims(_schedule(mod, rule)).items() if "conv2d" in n]
        (fused,) = [line.split("for ", 1)[1].split(" in")[0] for line in text.splitlines()
                    if "in T.parallel(" in line and "_fused" in line]  # the tiles' loop (not the packing's)
        assert fused == ("nn_ff_0_yy_0_xx_0_fused" if outer_first else "nn_yy_0_xx_0_ff_0_fused"), (case, fused)
    # with the rule's floor (``min_parallel_macs``), the small one's tiles run on the calling thread
    (text,) = [t for n, t in _prims(_schedule(_nhwc_module([small]), CPUConv2d())).items() if "conv2d" in n]
    assert not [line for line in text.splitlines() if "in T.parallel(" in line and "_fused" in line], text


def _pool_mean_module():
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((1, 28, 28, 64), "float32"))
    s = relax.Var("s", relax.TensorType((1, 14, 14, 48), "float32"))
    with bb.function("main", [x, s]):
        with bb.dataflow():
            pooled = bb.emit(relax.op.nn.max_pool2d(x, pool_size=3, strides=2, padding=1, layout="NHWC"))
            mean = bb.emit(relax.op.mean(s, axis=[1, 2], keepdims=True))  # a squeeze-excitation's, NHWC
            out = bb.emit_output(relax.Tuple([pooled, mean]))
        bb.emit_func_output(out)
    return _fused(bb.get())


def test_nhwc_pools_and_means_put_the_channels_in_vector_lanes():
    """A max pool and a mean over H x W in NHWC: the channels (contiguous) in vector lanes with the window or
    the H x W loops outside them; before, each channel walked its window or map in scalar strided steps."""
    from pipeline_model.passkinds.dlight.rules.cpu_parallel_tvm import CPUParallel

    mod = _pool_mean_module()
    scheduled = _schedule(mod, CPUParallel())
    prims = _prims(scheduled)
    pool = next(t for n, t in prims.items() if "pool" in n)
    mean = next(t for n, t in prims.items() if "mean" in n)
    assert "T.parallel(" in pool and "T.vectorized(T.int64(16))" in pool, pool
    window = pool.split("_update")[0]
    assert window.rfind("T.grid(T.int64(3), T.int64(3))") < window.rfind("T.vectorized(T.int64(16))"), pool
    assert "T.vectorized(T.int64(16))" in mean and "_rf" not in mean, mean
    arrays = [np.random.default_rng(3).standard_normal(a.shape).astype("float32")
              for a in (np.empty((1, 28, 28, 64)), np.empty((1, 14, 14, 48)))]
    _assert_same(_run(scheduled, arrays), _run(mod, arrays))


def _hardswish_cnn():
    """A small NCHW CNN as PyTorch exports one: convolution, Hardswish (``clip``), depthwise convolution, ReLU,
    a global mean and a linear layer."""
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((1, 3, 16, 16), "float32"))
    rng = np.random.default_rng(5)

    def const(*shape):  # type: ignore[no-untyped-def]
        return relax.const(rng.standard_normal(shape).astype("float32") * 0.3)

    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(relax.op.nn.conv2d(x, const(16, 3, 3, 3), strides=2, padding=1))
            y = bb.emit(relax.op.add(y, const(1, 16, 1, 1)))
            gate = bb.emit(relax.op.clip(relax.op.add(y, relax.const(3.0, "float32")), 0, 6))
            y = bb.emit(relax.op.multiply(y, relax.op.divide(gate, relax.const(6.0, "float32"))))
            y = bb.emit(relax.op.nn.relu(relax.op.nn.conv2d(y, const(16, 1, 3, 3), padding=1, groups=16)))
            y = bb.emit(relax.op.mean(y, axis=[2, 3], keepdims=False))
            out = bb.emit_output(relax.op.matmul(y, const(16, 10)))
        bb.emit_func_output(out)
    return bb.get()


def _activation_transposes(mod):
    """``permute_dims`` calls of ``main`` on anything but a constant (the weights' are folded away)."""
    from tvm import relax

    found = []

    def visit(expr):  # type: ignore[no-untyped-def]
        if isinstance(expr, relax.Call) and getattr(expr.op, "name", "") == "relax.permute_dims" and not isinstance(
                expr.args[0], tvm.ir.Constant):
            found.append(expr)

    relax.analysis.post_order_visit(mod["main"], visit)
    return len(found)


def test_the_step_carries_nhwc_through_hardswish_and_computes_the_same():
    """``relax.ConvertLayout`` alone put two transposes around the Hardswish's ``clip``; the step leaves one
    where the network enters NHWC and one where it leaves it (before the mean's output), and the built module
    gives the NCHW module's numbers."""
    from tvm import relax

    from pipeline_model.passkinds.channels_last.script import channels_last

    mod = _hardswish_cnn()
    plain = relax.transform.ConvertLayout({"relax.nn.conv2d": ["NHWC", "OHWI"]})(mod)
    converted = channels_last()(mod)
    text = converted["main"].script()
    assert "R.clip" not in text and 'data_layout="NHWC"' in text and 'kernel_layout="OHWI"' in text
    assert _activation_transposes(converted) <= 1 < _activation_transposes(plain) - 1
    data = np.random.default_rng(9).standard_normal((1, 3, 16, 16)).astype("float32")
    _assert_same(_run(converted, [data]), _run(mod, [data]))


def _exported_se_cnn(op):
    """A convolution whose output a squeeze-excitation gate scales (``op``: multiply, add or subtract) before
    the next convolution, the gate computed as ``torch.export`` writes it: the mean reshaped to one
    dimension, a bias added, a sigmoid, reshaped back to ``(1, C, 1, 1)``."""
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((1, 8, 12, 12), "float32"))
    rng = np.random.default_rng(11)

    def const(*shape):  # type: ignore[no-untyped-def]
        return relax.const(rng.standard_normal(shape).astype("float32") * 0.3)

    with bb.function("main", [x]):
        with bb.dataflow():
            y = bb.emit(relax.op.nn.conv2d(x, const(16, 8, 3, 3), padding=1))
            s = bb.emit(relax.op.reshape(relax.op.mean(y, axis=[2, 3], keepdims=True), (16,)))
            g = bb.emit(relax.op.reshape(relax.op.sigmoid(relax.op.add(s, const(16))), (1, 16, 1, 1)))
            z = bb.emit(getattr(relax.op, op)(g, y))  # the gate first: ConvertLayout takes its layout
            out = bb.emit_output(relax.op.nn.conv2d(z, const(8, 16, 1, 1)))
        bb.emit_func_output(out)
    return bb.get()


def _feature_map_transposes(mod):
    """``permute_dims`` calls of ``main`` on a tensor of more than one pixel (an image, a feature map), not on
    a constant (a weight)."""
    from tvm import relax

    found = []

    def visit(expr):  # type: ignore[no-untyped-def]
        if isinstance(expr, relax.Call) and getattr(expr.op, "name", "") == "relax.permute_dims" and not isinstance(
                expr.args[0], tvm.ir.Constant):
            shape = [int(d) for d in expr.args[0].ty.shape]
            if len(shape) == 4 and shape[1] * shape[2] * shape[3] > max(shape[1], shape[3]):
                found.append(expr)

    relax.analysis.post_order_visit(mod["main"], visit)
    return len(found)


@pytest.mark.parametrize("op", ["multiply", "add", "subtract"])
def test_a_gate_computed_through_a_reshape_scales_the_nhwc_feature_map_itself(op):
    """``ConvertLayout`` cannot carry a layout through a reshape: a gate computed as ``torch.export`` writes it
    stays NCHW, and the feature map it scales went NHWC -> NCHW -> NHWC around the product (EfficientNet-B0
    ``.pt2``: 50 such transposes a run). The step writes the product on the NHWC map with the 16-value gate
    transposed instead: only the input's transpose is left, and the numbers are the NCHW module's."""
    from tvm import relax

    from pipeline_model.passkinds.channels_last.script import channels_last

    mod = _exported_se_cnn(op)
    plain = relax.transform.ConvertLayout({"relax.nn.conv2d": ["NHWC", "OHWI"]})(mod)
    converted = channels_last()(mod)
    assert _feature_map_transposes(plain) == 4  # the input, the map to NCHW and back, the output
    assert _feature_map_transposes(converted) == 2, converted["main"].script()  # the input and the output
    data = np.random.default_rng(3).standard_normal((1, 8, 12, 12)).astype("float32")
    _assert_same(_run(converted, [data]), _run(mod, [data]))


def test_a_module_without_a_float_convolution_comes_back_unchanged():
    from tvm import relax

    from pipeline_model.passkinds.channels_last.script import channels_last

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((2, 8), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(relax.op.clip(x, 0, 6))  # a ReLU6 with no convolution around it
        bb.emit_func_output(out)
    mod = bb.get()
    assert channels_last()(mod).same_as(mod)


def test_the_kind_is_in_the_catalogue_and_the_cpu_pipelines_and_exported_scripts_carry_its_code():
    from pipeline_model import emit
    from pipeline_model.export import export_script
    from pipeline_model.fileformat import load_pipeline
    from pipeline_model.passkinds.catalogue_tvm import catalogue
    from pipeline_model.passkinds.registry import kind_for

    kind = kind_for("app.ChannelsLast")
    assert kind is not None and kind.name == "channels_last"
    expr = kind.recipe("app.ChannelsLast", {})
    assert isinstance(expr, emit.ScriptCall) and expr.attr == "channels_last"
    source = emit.script_source("pipeline_model.passkinds.channels_last.script", "channels_last")
    assert source.startswith("def channels_last(") and "pipeline_model" not in source
    spec = catalogue().get("app.ChannelsLast")
    assert spec is not None and spec.kind == "channels_last" and spec.available
    assert spec.category == "Layout & precision"
    for name in ("cpu_build", "cpu_build_bound", "cpu_tuned_app", "cpu_build_fuse_transpose", "cpu_build_dlight"):
        path = os.path.join(ROOT, "resources", "pipelines", f"{name}.json")
        ids = [s.pass_id for s in load_pipeline(path).steps]
        assert ids.index("app.ChannelsLast") < ids.index("relax.LegalizeOps"), name
        if "app.FoldBatchNorm" in ids:  # it folds into NCHW weights
            assert ids.index("app.FoldBatchNorm") < ids.index("app.ChannelsLast"), name
        with open(path, encoding="utf-8") as handle:
            assert "app.ChannelsLast" in [s["pass"] for s in json.load(handle)["steps"]]
    script = export_script(load_pipeline(os.path.join(ROOT, "resources", "pipelines", "cpu_build.json")))
    assert "def channels_last(" in script and "channels_last()" in script


def test_the_input_transpose_runs_its_rows_in_parallel_without_index_divisions():
    """The network's input entering NHWC (a transpose whose innermost axis, 3 channels, makes no vector): its
    rows are the parallel loop, columns and channels plain loops; fused whole, every element divided and took
    remainders to find its indices (3x the time on a 224 x 224 image)."""
    from tvm import relax

    from pipeline_model.passkinds.dlight.rules.cpu_parallel_tvm import CPUParallel

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((1, 3, 160, 160), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            out = bb.emit_output(relax.op.permute_dims(x, [0, 2, 3, 1]))
        bb.emit_func_output(out)
    mod = _fused(bb.get())
    scheduled = _schedule(mod, CPUParallel())
    (text,) = _prims(scheduled).values()
    assert "T.parallel(T.int64(160))" in text and "//" not in text and "%" not in text, text
    data = np.random.default_rng(4).standard_normal((1, 3, 160, 160)).astype("float32")
    np.testing.assert_array_equal(_run(scheduled, [data])[0], data.transpose(0, 2, 3, 1))


def _conv_net(groups: int, up: bool):
    """x -> conv (16 -> 16, ``groups``) -> ReLU, then a 2x transposed convolution when ``up``."""
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((1, 16, 8, 8), "float32"))
    rng = np.random.default_rng(2)
    with bb.function("main", [x]):
        with bb.dataflow():
            w = relax.const(rng.standard_normal((16, 16 // groups, 3, 3)).astype("float32"))
            y = bb.emit(relax.op.nn.relu(relax.op.nn.conv2d(x, w, padding=1, groups=groups)))
            if up:
                wt = relax.const(rng.standard_normal((16, 8, 2, 2)).astype("float32"))
                y = bb.emit(relax.op.nn.conv2d_transpose(y, wt, strides=2))
            out = bb.emit_output(y)
        bb.emit_func_output(out)
    return bb.get()


def test_a_network_with_a_convolution_the_schedule_does_not_take_stays_nchw_and_up_convolutions_stay_nchw():
    """A grouped (not depthwise) convolution runs the generic schedule in either layout: converted, it only
    gained transposes (a small mixed network 1.2x slower), so such a module comes back as it was. A transposed
    convolution stays NCHW inside a converted network (TVM legalizes it in NCHW only: converted with the rest, the
    build failed, "CodeGenVM cannot emit this Relax operator"), and the module builds and computes the same."""
    from tvm import relax

    from pipeline_model.passkinds.channels_last.script import channels_last

    grouped = _conv_net(groups=4, up=False)
    assert channels_last()(grouped).same_as(grouped)
    mod = _conv_net(groups=1, up=True)
    converted = channels_last()(mod)
    text = converted["main"].script()
    assert 'data_layout="NHWC"' in text and "R.nn.conv2d_transpose" in text
    (up,) = [line for line in text.splitlines() if "R.nn.conv2d_transpose(" in line]
    assert 'data_layout="NCHW"' in up and 'kernel_layout="IOHW"' in up, up
    data = np.random.default_rng(6).standard_normal((1, 16, 8, 8)).astype("float32")
    legalized = relax.transform.LegalizeOps()(converted)
    _assert_same(_run(legalized, [data]), _run(mod, [data]))
