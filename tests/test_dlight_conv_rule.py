"""The app's DLight rule ``app.CPUConv2d`` and weights packed once.

Scheduled convolutions compute what the unscheduled ones do over many shapes (stride, padding, dilation,
depthwise, 1x1, odd sizes, epilogues); what the rule cannot handle (grouped, symbolic shapes, channel counts
no vector width divides, GPU targets) is left alone; ``SplitLayoutRewritePreproc`` + ``LiftTransformParams``
move the weight packing into ``main_transform_params``, which :class:`PrepackedVM` (the engine's ``make_vm``,
exported scripts, ``deploy.py``) runs once; exported scripts carry the rule and run.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

tvm = pytest.importorskip("tvm")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = {"kind": "llvm", "num-cores": 2}
PACK_MARK = "meta_schedule.layout_rewrite_preproc"

#: (input NCHW, weight OIHW, stride, padding, dilation, groups, epilogue)
SHAPES = [
    ((1, 16, 12, 12), (32, 16, 3, 3), 1, 1, 1, 1, "bias_relu"),
    ((1, 16, 13, 11), (16, 16, 3, 3), 2, 1, 1, 1, "none"),  # odd sizes, stride 2
    ((1, 24, 10, 10), (24, 24, 1, 1), 1, 0, 1, 1, "residual"),  # 1x1 (24: 8-wide vectors)
    ((2, 3, 17, 17), (16, 3, 7, 7), 2, 3, 1, 1, "bias_relu"),  # stem-like, batch 2
    ((1, 32, 9, 9), (32, 1, 3, 3), 1, 1, 1, 32, "bias_relu"),  # depthwise
    ((1, 48, 11, 11), (48, 1, 5, 5), 2, 2, 1, 48, "none"),  # depthwise 5x5 stride 2
    ((1, 12, 9, 9), (20, 12, 3, 3), 1, 2, 2, 1, "batch_norm"),  # dilation 2, 20 channels (4-wide)
    ((1, 64, 2, 2), (64, 64, 3, 3), 1, 1, 1, 1, "residual"),  # tiny spatial, two channel vectors per tile
    ((1, 24, 16, 16), (40, 24, 1, 1), 1, 0, 1, 1, "batch_norm"),  # pointwise: pixels in the lanes
    ((1, 16, 4, 8), (6, 16, 1, 1), 1, 0, 1, 1, "bias_relu"),  # pointwise, 6 channels (no lane width divides)
]


def _module(shapes, *, dynamic=False):
    """One Relax function with one convolution (and its epilogue) per entry of ``shapes``, each on an input of
    its own (the inputs first, then the weights: ``num_input``), legalized and fused."""
    from tvm import relax

    bb = relax.BlockBuilder()
    x_shape = shapes[0][0]
    h = tvm.tirx.Var("h", "int64") if dynamic else x_shape[2]
    x = relax.Var("x", relax.TensorType((x_shape[0], x_shape[1], h, x_shape[3]), "float32"))
    params, outs = [x], []
    with bb.function("main"):
        with bb.dataflow():
            for i, (xs, ws, stride, pad, dil, groups, epi) in enumerate(shapes):
                data = x if i == 0 else relax.Var(f"x{i}", relax.TensorType(xs, "float32"))
                if i:
                    params.insert(i, data)
                w = relax.Var(f"w{i}", relax.TensorType(ws, "float32"))
                b = relax.Var(f"b{i}", relax.TensorType((ws[0], 1, 1), "float32"))
                params += [w, b]
                y = bb.emit(relax.op.nn.conv2d(data, w, strides=stride, padding=pad, dilation=dil, groups=groups))
                if epi == "bias_relu":
                    y = bb.emit(relax.op.nn.relu(relax.op.add(y, b)))
                elif epi == "residual":
                    y = bb.emit(relax.op.nn.relu(relax.op.add(relax.op.add(y, b), data)))
                elif epi == "batch_norm":
                    y = bb.emit(relax.op.nn.relu(relax.op.add(relax.op.multiply(y, b), relax.op.sqrt(b))))
                else:
                    y = bb.emit(relax.op.add(y, relax.op.multiply(b, relax.const(0.0, "float32"))))
                outs.append(y)
            out = bb.emit_output(relax.Tuple(outs))
        bb.emit_func_output(out, params=params)
    mod = bb.get()
    mod["main"] = mod["main"].with_attr("num_input", len(shapes))  # the inputs x, x1, ... then the weights
    passes = [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(),
              relax.transform.FuseTIR()]
    with tvm.target.Target(TARGET):
        return tvm.ir.transform.Sequential(passes)(mod)


def _schedule(mod, target=None):
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds.dlight.rules.cpu_conv2d_tvm import CPUConv2d

    with tvm.target.Target(target or TARGET):
        return dl.ApplyDefaultSchedule(CPUConv2d())(mod)


def _arrays(mod):
    from pipeline_model.scriptlib.arguments import make_arguments

    arrays, _ = make_arguments(mod, "main", None)
    return arrays


def _run(mod, arrays, lifted=False):
    from tvm import relax

    from pipeline_model.engine.build.measure import make_vm, run_function

    ex = tvm.compile(mod, target=tvm.target.Target(TARGET))
    vm = make_vm(ex, tvm.cpu(), mod) if lifted else relax.VirtualMachine(ex, tvm.cpu())
    return run_function(vm, "main", tvm.cpu(), arrays)


def _prims(mod):
    return {gv.name_hint: f for gv, f in mod.functions_items() if isinstance(f, tvm.tirx.PrimFunc)}


def test_scheduled_convolutions_match_the_unscheduled_ones_over_many_shapes():
    mod = _module(SHAPES)
    scheduled = _schedule(mod)
    convs = {n: f for n, f in _prims(scheduled).items() if "conv2d" in n}
    assert len(convs) == len(SHAPES)
    for name, func in convs.items():  # every one got the rule: packed weights, vector lanes, parallel tiles
        text = func.script()
        assert PACK_MARK in text and "T.vectorized(" in text and "T.parallel(" in text, name
        assert "if_then_else" not in text.split("T.vectorized(")[1], name  # no padding check in the hot loop
    arrays = _arrays(mod)
    got, want = _run(scheduled, arrays), _run(mod, arrays)
    assert len(got) == len(want) == len(SHAPES)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * float(np.abs(w).max()))


@pytest.mark.parametrize("case", [
    ((1, 16, 8, 8), (16, 8, 3, 3), 1, 1, 1, 2, "none"),  # grouped (not depthwise)
    ((1, 8, 8, 8), (6, 8, 3, 3), 1, 1, 1, 1, "none"),  # 6 output channels: no vector width divides them
])
def test_declines_what_it_cannot_handle(case):
    mod = _module([case])
    assert all(PACK_MARK not in f.script() for f in _prims(_schedule(mod)).values())


def test_declines_symbolic_shapes_and_gpu_targets():
    dyn = _module([SHAPES[0]], dynamic=True)
    assert all(PACK_MARK not in f.script() for f in _prims(_schedule(dyn)).values())
    static = _module([SHAPES[0]])
    gpu = _schedule(static, {"kind": "cuda", "arch": "sm_80"})
    assert all(PACK_MARK not in f.script() for f in _prims(gpu).values())


def _lifted(mod):
    from tvm import relax

    with tvm.target.Target(TARGET):
        return relax.transform.LiftTransformParams()(relax.transform.SplitLayoutRewritePreproc()(mod))


def test_packing_is_lifted_into_transform_params_and_run_once():
    from pipeline_model.scriptlib.arguments import caller_signature, make_arguments

    mod = _module(SHAPES[:3])
    lifted = _lifted(_schedule(mod))
    names = {gv.name_hint for gv, _ in lifted.functions_items()}
    assert "main_transform_params" in names
    assert any(n.endswith("_weight_prepack") for n in names) and any(n.endswith("_prepacked") for n in names)
    # The caller still gives the model's weights, by their names.
    assert [p["name"] for p in caller_signature(lifted, "main")[0]] == [v.name for v in mod["main"].params]
    arrays, described = make_arguments(lifted, "main", None)
    assert [d["name"] for d in described] == [v.name for v in mod["main"].params]
    want = _run(mod, arrays)
    got = _run(lifted, arrays, lifted=True)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * float(np.abs(w).max()))


class _CountingVM:
    """A VM stand-in that counts calls (the caching rule of PrepackedVM, without building anything)."""

    def __init__(self):
        self.calls = []

    def __getitem__(self, name):
        def call(*args):
            self.calls.append(name)
            if name.endswith("_transform_params"):
                return [f"packed({a})" for a in args[0]]
            return args
        return call

    def time_evaluator(self, name, dev, **_kw):
        return lambda *args: ("timed", name, args)


def test_prepacked_vm_transforms_the_weights_once_per_weight_set():
    from pipeline_model.scriptlib.arguments import PrepackedVM

    inner = _CountingVM()
    vm = PrepackedVM(inner, {"main": 1})
    x, w1, w2 = object(), "w1", "w2"
    assert vm["main"](x, w1, w2) == (x, "packed(w1)", "packed(w2)")
    vm["main"](x, w1, w2)
    assert vm.time_evaluator("main", None, number=1)(x, w1, w2) == ("timed", "main", (x, "packed(w1)", "packed(w2)"))
    assert inner.calls.count("main_transform_params") == 1 and inner.calls.count("main") == 2
    vm["main"](x, "w3", w2)  # other weights: transformed again
    assert inner.calls.count("main_transform_params") == 2
    assert vm["other"]("a") == ("a",)  # functions that were not lifted are the VM's own


def test_engine_make_vm_without_lifted_functions_is_the_plain_vm():
    from pipeline_model.engine.build.measure import make_vm
    from pipeline_model.scriptlib.arguments import PrepackedVM

    mod = _module([SHAPES[0]])
    ex = tvm.compile(mod, target=tvm.target.Target(TARGET))
    assert not isinstance(make_vm(ex, tvm.cpu(), mod), PrepackedVM)
    lifted = _lifted(_schedule(mod))
    assert isinstance(make_vm(tvm.compile(lifted, target=tvm.target.Target(TARGET)), tvm.cpu(), lifted), PrepackedVM)


CONV_MODEL = '''
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.b1 = torch.nn.BatchNorm2d(16)
        self.dw = torch.nn.Conv2d(16, 16, 3, 2, 1, groups=16)
        self.c2 = torch.nn.Conv2d(16, 32, 1)

    def forward(self, x):
        return self.c2(torch.relu(self.dw(torch.relu(self.b1(self.c1(x))))))

torch.manual_seed(0)
model = Net().eval()
example_inputs = (torch.randn(1, 3, 16, 16),)
'''


def test_default_pipeline_steps_are_app_steps_the_user_sees():
    from pipeline_model.fileformat import load_pipeline

    for name in ("cpu_build", "cpu_build_bound", "cpu_build_nhwc", "cpu_build_fuse_transpose", "cpu_build_dlight"):
        doc = load_pipeline(os.path.join(ROOT, "resources", "pipelines", f"{name}.json"))
        ids = [s.pass_id for s in doc.steps]
        rules = next(s.params["rules"] for s in doc.steps if s.pass_id == "dlight.ApplyDefaultSchedule")
        assert rules.index("app.CPUConv2d") < rules.index("app.CPUParallel"), name
        split = ids.index("relax.SplitLayoutRewritePreproc")
        assert ids.index("dlight.ApplyDefaultSchedule") < split < ids.index("relax.LiftTransformParams"), name
        assert "app.FoldConstants" in ids[split:], name  # folds the packing of bound weights
        if name != "cpu_build_bound":  # (there batch norm folds into the bound weights)
            assert ids.index("relax.DecomposeOpsForInference") < ids.index("relax.LegalizeOps"), name
            assert "relax.FoldConstant" not in ids[:ids.index("relax.FuseOps")], name  # seconds on batch norms
            assert "app.FoldConstants" not in ids[:ids.index("relax.FuseOps")], name


@pytest.mark.e2e
def test_exported_script_carries_the_conv_rule_and_runs_transform_params(tmp_path):
    from pipeline_model.export import export_script
    from pipeline_model.fileformat import load_pipeline

    model = tmp_path / "net.py"
    model.write_text(CONV_MODEL)
    doc = load_pipeline(os.path.join(ROOT, "resources", "pipelines", "cpu_build.json"))
    doc.model = str(model)
    source = export_script(doc, build=True)
    assert "class CPUConv2d(AppRule):" in source and "class AppRule(tvm.s_tir.dlight.ScheduleRule):" in source
    assert "CPUConv2d(), CPUParallel())" in source and "class PrepackedVM" in source
    script = tmp_path / "cpu_build.py"
    script.write_text(source)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                          cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "def main_transform_params(" in proc.stdout and "_weight_prepack" in proc.stdout
    assert "check output 0: PASS" in proc.stdout


def test_deploy_script_runs_transform_params_of_a_lifted_library(tmp_path):
    import json

    from pipeline_model.engine.build.deploy import deploy_script
    from pipeline_model.scriptlib.arguments import make_arguments

    mod = _module([SHAPES[0]])
    lifted = _lifted(_schedule(mod))
    arrays, described = make_arguments(lifted, "main", None)
    want = _run(mod, arrays)
    tvm.compile(lifted, target=tvm.target.Target(TARGET)).export_library(str(tmp_path / "model.so"))
    inputs = [d for d in described if not d.get("weight")]
    np.savez(tmp_path / "weights.npz", **{f"w{i}": a for i, a in enumerate(arrays[len(inputs):])})
    np.savez(tmp_path / "inputs.npz", **{d["name"]: a for d, a in zip(inputs, arrays)})
    meta = {"library": "model.so", "function": "main", "device": "cpu", "inputs": inputs,
            "weights": [d for d in described if d.get("weight")]}
    (tmp_path / "model.json").write_text(json.dumps(meta))
    (tmp_path / "deploy.py").write_text(deploy_script("model.so", "llvm"))
    proc = subprocess.run([sys.executable, "deploy.py", "inputs.npz"], capture_output=True, text=True, timeout=300,
                          cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = np.load(tmp_path / "outputs.npz")["arr_0"]
    np.testing.assert_allclose(got, want[0], rtol=1e-4, atol=1e-4 * float(np.abs(want[0]).max()))


def test_padding_copy_runs_on_all_cores_only_when_big():
    """Each parallel loop starts the thread pool: a small convolution's padding copy (MobileNetV3's late 7x7
    stages) stays serial, a big one (a 112x112 feature map) runs on all cores (MobileNetV3-small 0.92x)."""
    small = _schedule(_module([((1, 16, 8, 8), (16, 16, 3, 3), 1, 1, 1, 1, "none")]))
    big = _schedule(_module([((1, 16, 112, 112), (16, 16, 3, 3), 1, 1, 1, 1, "none")]))

    def pad_loop_is_parallel(mod):
        (text,) = [f.script() for n, f in _prims(mod).items() if "conv2d" in n]
        lines = text.splitlines()
        at = next(i for i, line in enumerate(lines) if 'T.sblock("pad_temp")' in line)
        return any("T.parallel(" in line for line in lines[at - 2:at])  # the pad's loop nest above its block

    assert not pad_loop_is_parallel(small) and pad_loop_is_parallel(big)


def _local_dims(func) -> int:
    """Dimensions of the convolution's accumulator buffer (``scope="local"``)."""
    line = next(ln for ln in func.script().splitlines() if 'scope="local"' in ln)
    return line.split("((", 1)[1].split("))", 1)[0].count("T.int64(")


def test_pointwise_convolutions_put_pixels_in_the_lanes():
    """A 1x1 stride-1 convolution is a matrix product over the pixels of each plane: its accumulator has one
    pixel axis (the tile's pixels are one contiguous range of the NCHW output), while a 3x3 or a strided 1x1
    (ResNet's downsample) keeps the channel-lane tile; both match the unscheduled convolution."""
    shapes = [((1, 32, 8, 16), (48, 32, 1, 1), 1, 0, 1, 1, "bias_relu"),
              ((1, 32, 8, 16), (48, 32, 1, 1), 2, 0, 1, 1, "none"),
              ((1, 32, 8, 16), (48, 32, 3, 3), 1, 1, 1, 1, "none")]
    mod = _module(shapes)
    for target in (TARGET, {"kind": "llvm", "mcpu": "skylake-avx512"}):  # 4 and 16 lanes (only scheduled)
        scheduled = _schedule(mod, target)
        dims = {n.split("_")[1]: _local_dims(f) for n, f in _prims(scheduled).items() if "conv2d" in n}
        assert dims == {"conv2d": 3, "conv2d1": 5, "conv2d2": 5}, dims  # pixel axis vs channel blocks (NCHWc)
    scheduled = _schedule(mod)
    arrays = _arrays(mod)
    for g, w in zip(_run(scheduled, arrays), _run(mod, arrays)):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * float(np.abs(w).max()))


def test_depthwise_convolutions_run_along_their_rows():
    """A depthwise convolution whose output rows are whole vectors keeps NCHW (a 4-D accumulator, no channel
    blocks, no weight packing) with pixels in the lanes; a stride-2 one reads a padding copy stored
    de-interleaved (even columns, then odd ones); a row of 14 at stride 1 is one vector of 14 lanes
    (MobileNetV3's 14 x 14 maps); an odd padded width, a row of 9 or dilation keeps the channel-lane tile. Each
    matches the unscheduled convolution."""
    shapes = [((1, 32, 16, 16), (32, 1, 3, 3), 1, 1, 1, 32, "bias_relu"),  # rows of 16
              ((1, 16, 16, 16), (16, 1, 3, 3), 2, 1, 1, 16, "none"),  # stride 2: rows of 8
              ((1, 24, 32, 32), (24, 1, 5, 5), 2, 2, 1, 24, "batch_norm"),  # 5x5 stride 2: rows of 16
              ((1, 16, 15, 15), (16, 1, 3, 3), 2, 1, 1, 16, "none"),  # padded width 17 (odd): channel lanes
              ((1, 32, 9, 9), (32, 1, 3, 3), 1, 1, 1, 32, "none"),  # rows of 9: channel lanes
              ((1, 16, 20, 20), (16, 1, 3, 3), 1, 2, 2, 16, "none"),  # dilation 2: channel lanes
              ((1, 32, 14, 14), (32, 1, 5, 5), 1, 2, 1, 32, "bias_relu")]  # rows of 14: one vector of 14
    mod = _module(shapes)
    for target in (TARGET, {"kind": "llvm", "mcpu": "skylake-avx512"}):
        scheduled = _schedule(mod, target)
        convs = {n.split("_")[1]: f for n, f in _prims(scheduled).items() if "conv2d" in n}
        dims = {n: _local_dims(f) for n, f in convs.items()}
        from pipeline_model.passkinds.dlight.rules.cpu_conv2d_tvm import CPUConv2d

        width = CPUConv2d._vector_width(tvm.target.Target(target))  # 14 is 3/4 of a vector up to one of 16
        assert dims == {"conv2d": 4, "conv2d1": 4, "conv2d2": 4, "conv2d3": 5, "conv2d4": 5, "conv2d5": 5,
                        "conv2d6": 4 if 3 * width // 4 <= 14 < width else 5}, dims
        for name in ("conv2d1", "conv2d2"):  # de-interleaved padding copy: [n, c, h, 2, w / 2]
            pad = next(ln for ln in convs[name].script().splitlines() if "pad_temp = " in ln)
            assert "T.int64(2), T.int64(" in pad, pad
        assert PACK_MARK not in convs["conv2d"].script() and PACK_MARK in convs["conv2d4"].script()
    arrays = _arrays(mod)
    for g, w in zip(_run(_schedule(mod), arrays), _run(mod, arrays)):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * float(np.abs(w).max()))


def test_pointwise_tile_shapes():
    """The tile takes the most accumulators up to ``max_accumulators`` (channels x pixel vectors), two pixel
    vectors where the pixel count allows; a pixel count the lanes do not divide keeps the channel-lane tile."""
    from pipeline_model.passkinds.dlight.rules.cpu_conv2d_tvm import CPUConv2d

    rule = CPUConv2d()

    def tile(oc, oh, ow, lanes=16, pointwise=True):
        return rule._pixel_tile({"oc": oc, "oh": oh, "ow": ow, "pointwise": pointwise}, lanes)

    assert tile(24, 56, 56) == (16, 8, 2)  # 3136 pixels = 196 vectors: 8 channels x 2 vectors
    assert tile(40, 28, 28) == (16, 10, 1)  # 784 pixels = 49 vectors (odd): 10 channels x 1 vector
    assert tile(6, 4, 8, lanes=16) == (16, 6, 2)
    assert tile(96, 14, 14) is None  # 196 pixels: not a whole number of 16-lane vectors
    assert tile(96, 56, 56, pointwise=False) is None


def test_channel_lane_tile_shapes():
    """Two channel vectors wherever the channels allow, with the most pixels for 16 accumulators (2 rows x 4
    columns before 1 x 8): one vector x 14 pixels was bound by its loads (ResNet-18's 56x56 3x3 convolution 824 ->
    741 us, 28x28 789 -> 654 us, the 7x7 stem 1344 -> 940 us, in isolation); one vector keeps up to 14 pixels."""
    from pipeline_model.passkinds.dlight.rules.cpu_conv2d_tvm import CPUConv2d

    rule = CPUConv2d()

    def tile(oc, oh, ow, lanes=16):
        return rule._tile({"oc": oc, "oh": oh, "ow": ow, "lanes": lanes})

    assert tile(64, 56, 56) == (2, 2, 4)
    assert tile(128, 28, 28) == (2, 2, 4)
    assert tile(64, 112, 112) == (2, 2, 4)
    assert tile(256, 14, 14) == (2, 1, 7)  # 7 columns, not 7 rows of one column
    assert tile(512, 7, 7) == (2, 1, 7)
    assert tile(32, 9, 9, lanes=8) == (2, 1, 3)
    assert tile(48, 56, 56) == (1, 1, 14)  # 3 vectors of 16: one vector, up to 14 pixels
    assert tile(16, 7, 7) == (1, 1, 7)


def _gate_module(feature):
    """A squeeze-excitation gate fused with its 1x1 convolution (the ONNX import fuses ``conv -> sigmoid ->
    multiply(feature map)``) on a ``feature`` map (NCHW), 16 -> C channels, legalized and fused."""
    from tvm import relax

    bb = relax.BlockBuilder()
    s = relax.Var("s", relax.TensorType((1, 16, 1, 1), "float32"))
    y = relax.Var("y", relax.TensorType(feature, "float32"))
    w = relax.Var("w", relax.TensorType((feature[1], 16, 1, 1), "float32"))
    with bb.function("main", [s, y, w]):
        with bb.dataflow():
            gate = bb.emit(relax.op.sigmoid(relax.op.nn.conv2d(s, w)))
            out = bb.emit_output(relax.op.multiply(y, gate))
        bb.emit_func_output(out)
    mod = bb.get()
    mod["main"] = mod["main"].with_attr("num_input", 2)
    passes = [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(),
              relax.transform.FuseTIR()]
    with tvm.target.Target(TARGET):
        return tvm.ir.transform.Sequential(passes)(mod)


def _loops_above(text, block):
    """The ``for`` lines of the loop nest above ``T.sblock(block)`` (the last three)."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if f'T.sblock("{block}")' in line)
    return [line for line in lines[:at] if line.strip().startswith("for ")][-3:]


@pytest.mark.parametrize("feature, parallel", [((1, 64, 32, 32), "T.parallel(T.int64(2048))"), ((1, 32, 28, 28), None)])
def test_a_gate_times_a_feature_map_after_the_convolution_runs_on_all_cores_when_big(feature, parallel):
    """The gate's multiply is bigger than the convolution's output, so it stays a stage of its own, with its
    spatial loops but the innermost fused into one parallel loop (its batch loop alone, extent 1, left it serial:
    EfficientNet-B0 `.onnx`'s 32 such kernels 1257 -> 705 us) — when it has at least ``min_parallel`` elements
    (64 x 32 x 32 here: 64 channels x 32 rows); a smaller one (MobileNetV3-small's 14 x 14 x 240 and smaller, 32 x
    28 x 28 here) stays on the calling thread, where waking a worker costs more (docs/PERFORMANCE.md "Waking the
    pool's workers"). The result matches."""
    mod = _gate_module(feature)
    scheduled = _schedule(mod)
    (text,) = [f.script() for n, f in _prims(scheduled).items() if "conv2d" in n]
    assert PACK_MARK in text  # the rule took the convolution
    loops = _loops_above(text, "T_multiply")
    if parallel:
        assert any(parallel in line for line in loops), loops
    else:
        assert not any("T.parallel(" in line for line in loops), loops
    arrays = _arrays(mod)
    for g, want in zip(_run(scheduled, arrays), _run(mod, arrays)):
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


@pytest.mark.parametrize("shape, parallel", [
    (((1, 16, 1, 1), (64, 16, 1, 1), 1, 0, 1, 1, "bias_relu"), False),  # a squeeze-excitation's: 1 K multiply-adds
    (((1, 16, 32, 32), (32, 16, 3, 3), 1, 1, 1, 1, "none"), True),  # 4.7 M
    (((1, 32, 16, 16), (32, 1, 3, 3), 1, 1, 1, 32, "none"), False),  # depthwise, 74 K (x 8: 590 K)
    (((1, 32, 32, 32), (32, 1, 3, 3), 1, 1, 1, 32, "none"), True),  # depthwise, 295 K (x 8: 2.4 M)
    (((1, 64, 4, 4), (128, 64, 1, 1), 1, 0, 1, 1, "none"), False),  # pointwise, 131 K
])
def test_a_convolution_runs_its_tiles_on_all_cores_only_when_worth_a_wake_up(shape, parallel):
    """Each parallel loop wakes the pool's workers, and waking a sleeping thread costs 33-84 us on a virtual
    machine: a convolution under ``min_parallel_macs`` multiply-adds (a depthwise one counted 8 times: it runs
    that much slower per multiply-add) runs its tiles on the calling thread (MobileNetV3-small 0.79x, EfficientNet
    -B0 0.95x with the app's pool on the 2-vCPU AMD VM; within noise with a spinning pool, whose wake-ups are
    cheap: docs/PERFORMANCE.md "Waking the pool's workers"). The result matches either way."""
    mod = _module([shape])
    scheduled = _schedule(mod)
    (func,) = [f for n, f in _prims(scheduled).items() if "conv2d" in n]
    lines = func.script().splitlines()
    at = next(i for i, line in enumerate(lines) if "conv2d_nchw_init" in line)  # the tile's nest opens above it
    start = max(i for i in range(at) if "T.sblock(" in lines[i])  # (the weight packing's or the padding's block)
    assert any("T.parallel(" in line for line in lines[start:at]) == parallel, lines
    arrays = _arrays(mod)
    for g, want in zip(_run(scheduled, arrays), _run(mod, arrays)):
        np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))
