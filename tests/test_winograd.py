"""The app's step ``app.Winograd`` and its schedule in ``app.CPUConv2d``.

The step turns 3 x 3 stride-1 NHWC convolutions into Winograd F(2 x 2, 3 x 3) (a weight transform call and one
out-elementwise-fusable call whose bias, residual add and activation still fuse); ``app.CPUConv2d`` schedules the
fused function per block of output tiles. The results equal the direct convolution's up to rounding.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

tvm = pytest.importorskip("tvm")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = {"kind": "llvm", "num-cores": 2}

#: (input NHWC, output channels, stride, padding, residual): converted when stride and padding are 1, the map
#: is even with at least 32 tiles and the channels are multiples of 8 from 16.
CASES = [
    ((1, 16, 16, 32), 32, 1, 1, True),  # a ResNet block's second convolution: bias, residual add, ReLU
    ((1, 12, 16, 24), 40, 1, 1, False),  # 8-lane channels on AVX-512 (gcd 8), 48 tiles
    ((1, 24, 32, 16), 16, 1, 1, True),  # 48 tiles of 4 x 4: F(4 x 4, 3 x 3)
    ((1, 16, 16, 32), 32, 2, 1, False),  # stride 2: direct
    ((1, 15, 15, 32), 32, 1, 1, False),  # odd map: direct
    ((1, 8, 8, 32), 32, 1, 1, False),  # 16 tiles: direct (the weights would cost more than the products save)
    ((1, 16, 16, 12), 32, 1, 1, False),  # 12 input channels: direct
    ((1, 16, 16, 32), 32, 1, 0, False),  # no padding: direct
]
CONVERTED = [0, 1, 2]


def _module(cases):
    """One Relax function, per case an NHWC convolution with constant OHWI weights + bias (+ residual) + ReLU."""
    from tvm import relax

    rng = np.random.default_rng(5)
    bb = relax.BlockBuilder()
    inputs = [relax.Var(f"x{i}", relax.TensorType(c[0], "float32")) for i, c in enumerate(cases)]
    outs = []
    with bb.function("main", inputs):
        with bb.dataflow():
            for x, (shape, out_c, stride, pad, residual) in zip(inputs, cases):
                w = relax.const((rng.standard_normal((out_c, 3, 3, shape[3])) * 0.2).astype("float32"))
                b = relax.const(rng.standard_normal((out_c,)).astype("float32"))
                y = relax.op.add(relax.op.nn.conv2d(x, w, strides=stride, padding=pad, data_layout="NHWC",
                                                    kernel_layout="OHWI"), b)
                if residual:
                    y = relax.op.add(y, x)
                outs.append(bb.emit(relax.op.nn.relu(y)))
            out = bb.emit_output(relax.Tuple(outs))
        bb.emit_func_output(out)
    return bb.get()


def _lowered(mod, rules):
    """``mod`` legalized, fused and scheduled with the DLight ``rules``."""
    from tvm import relax
    from tvm.s_tir import dlight as dl

    passes = [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(),
              relax.transform.FuseTIR(), dl.ApplyDefaultSchedule(*rules)]
    with tvm.target.Target(TARGET):
        return tvm.ir.transform.Sequential(passes)(mod)


def _run(mod, arrays):
    from tvm import relax

    out = relax.VirtualMachine(tvm.compile(mod, target=tvm.target.Target(TARGET)), tvm.cpu())["main"](
        *[tvm.runtime.tensor(a) for a in arrays])
    return [out.numpy()] if hasattr(out, "numpy") else [o.numpy() for o in out]


def _inputs(cases):
    rng = np.random.default_rng(6)
    return [rng.standard_normal(c[0]).astype("float32") for c in cases]


def _assert_close(got, want):
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5 * float(np.abs(w).max()))


def test_the_step_converts_only_the_convolutions_it_is_made_for():
    from pipeline_model.passkinds.winograd.script import winograd

    mod = _module(CASES)
    converted = winograd()(mod)
    text = converted["main"].script()
    assert text.count("R.nn.conv2d(") == len(CASES) - len(CONVERTED)
    calls = [ln for ln in text.splitlines() if "R.call_tir(" in ln]
    assert len([c for c in calls if "_weight," in c]) == len(CONVERTED)
    assert any("winograd2_conv2d_16x16x32x32," in c for c in calls)  # 16 tiles of 4 x 4: too few for F(4 x 4)
    assert any("winograd2_conv2d_12x16x24x40," in c for c in calls)
    assert any("winograd4_conv2d_24x32x16x16," in c for c in calls)
    prims = {gv.name_hint: f for gv, f in converted.functions_items() if isinstance(f, tvm.tirx.PrimFunc)}
    assert int(prims["winograd2_conv2d_16x16x32x32"].attrs["op_pattern"]) == 4  # fuses its epilogue, as conv2d
    assert int(prims["winograd2_conv2d_16x16x32x32_weight"].attrs["op_pattern"]) == 8  # never fused: lifted
    assert "T.int64(6), T.int64(6), T.int64(16), T.int64(16)" in prims["winograd4_conv2d_24x32x16x16_weight"].script()
    no_conv = _module([CASES[3]])  # stride 2
    assert winograd()(no_conv).same_as(no_conv)


def test_cpu_conv2d_schedules_it_per_tile_block_with_the_epilogue_and_it_matches_the_direct_convolution():
    """The fused function (transforms, products, bias, residual, ReLU) gets the tile-block schedule: parallel
    tasks, the 16 tile positions unrolled, the products in a register tile, one stage left for the padding;
    the results are the direct convolution's (scheduled by the same rule) up to rounding."""
    from pipeline_model.passkinds.dlight.rules.cpu_conv2d_tvm import CPUConv2d
    from pipeline_model.passkinds.winograd.script import winograd

    cases = [CASES[i] for i in CONVERTED]
    mod = _module(cases)
    lowered = _lowered(winograd()(mod), [CPUConv2d()])
    fused = {gv.name_hint: f.script() for gv, f in lowered.functions_items()
             if isinstance(f, tvm.tirx.PrimFunc) and gv.name_hint.startswith("fused_winograd")}
    assert len(fused) == 3 and all("add" in n and "relu" in n for n in fused)
    for name, text in fused.items():
        assert '"tirx.is_scheduled": True' in text, name
        assert "winograd_product_local" in text and text.count("T.parallel(") == 2, name  # tasks; the padding
        assert "T.unroll(T.int64(4))" in text or "T.unroll(T.int64(6))" in text, name  # tile positions
        assert "T.vectorized(" in text, name
        assert "T.sblock(\"T_add" not in text and "T.sblock(\"compute" not in text, name  # epilogue inlined
    arrays = _inputs(cases)
    _assert_close(_run(lowered, arrays), _run(_lowered(mod, [CPUConv2d()]), arrays))


GENERIC_RUN = """
import sys
import numpy as np
sys.path.insert(0, {root!r})
from tests.test_winograd import _inputs, _lowered, _module, _run
from pipeline_model.passkinds.dlight.rules.cpu_parallel_tvm import CPUParallel
from pipeline_model.passkinds.winograd.script import winograd
cases = [((1, 56, 56, 64), 64, 1, 1, False)]  # ResNet-18's first block's: bias and ReLU
got = _run(_lowered(winograd()(_module(cases)), [CPUParallel()]), _inputs(cases))[0]
want = _run(_lowered(_module(cases), [CPUParallel()]), _inputs(cases))[0]
print("max diff", float(np.abs(got - want).max()), "max", float(np.abs(want).max()))
"""


def test_a_generic_schedule_of_it_runs_and_computes_the_same():
    """Scheduled by ``app.CPUParallel`` alone (a rule list without ``app.CPUConv2d``): the padding inlined into
    the input transform, its guarded reads in vector lanes, the tile positions chosen at run time. The first,
    one-pass form of the transforms chose its 16 positions with ``Select`` (which evaluates every branch): built
    this way it killed the process (SIGSEGV, ResNet-18's 56 x 56 x 64 layer; with ``if_then_else``, or the input
    transform's lanes a plain loop, it ran). The step chooses with ``if_then_else`` (and now transforms in two
    passes, which did not crash with ``Select`` either). Run in a child process, so a crash fails the test, not
    the run."""
    proc = subprocess.run([sys.executable, "-c", GENERIC_RUN.format(root=ROOT)], capture_output=True, text=True,
                          timeout=600, cwd=ROOT)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    diff, biggest = (float(v) for v in proc.stdout.split()[2::2])
    assert diff <= 1e-5 * biggest


def test_the_kind_is_in_the_catalogue_and_the_cpu_pipelines_and_exported_scripts_carry_its_code():
    from pipeline_model import emit
    from pipeline_model.fileformat import load_pipeline
    from pipeline_model.passkinds.catalogue_tvm import catalogue
    from pipeline_model.passkinds.registry import kind_for

    kind = kind_for("app.Winograd")
    assert kind is not None and kind.name == "winograd"
    expr = kind.recipe("app.Winograd", {})
    assert isinstance(expr, emit.ScriptCall) and expr.attr == "winograd"
    source = emit.script_source("pipeline_model.passkinds.winograd.script", "winograd")
    assert source.startswith("def winograd(") and "pipeline_model" not in source
    spec = catalogue().get("app.Winograd")
    assert spec is not None and spec.kind == "winograd" and spec.available
    for name in ("cpu_build", "cpu_build_bound", "cpu_tuned_app", "cpu_build_fuse_transpose"):
        path = os.path.join(ROOT, "resources", "pipelines", f"{name}.json")
        ids = [s.pass_id for s in load_pipeline(path).steps]
        assert ids.index("app.ChannelsLast") + 1 == ids.index("app.Winograd") < ids.index("relax.LegalizeOps"), name
        rules = [s.params["rules"] for s in load_pipeline(path).steps if s.pass_id == "dlight.ApplyDefaultSchedule"]
        assert all(r[:r.index("app.CPUConv2d")] in ([], ["app.CPUInt8", "app.CPUMatmul"], ["app.CPUMatmul"])
                   for r in rules if r), name  # no rule of TVM's takes it first
    with open(os.path.join(ROOT, "resources", "pipelines", "cpu_build_dlight.json"), encoding="utf-8") as handle:
        # TVM's cpu.Reduction, ahead of app.CPUConv2d there, took the function: 2.2 s a ResNet-18 run
        assert "app.Winograd" not in [s["pass"] for s in json.load(handle)["steps"]]


BLOCK_MODEL = '''
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.c1 = torch.nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.b1 = torch.nn.BatchNorm2d(16)
        self.c2 = torch.nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.b2 = torch.nn.BatchNorm2d(16)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        return torch.relu(self.b2(self.c2(torch.relu(self.b1(self.c1(x))))) + x)

torch.manual_seed(0)
model = Net().eval()
example_inputs = (torch.randn(1, 3, 16, 16),)
'''


def test_an_exported_cpu_build_runs_a_resnet_block_through_winograd(tmp_path):
    """A torch ResNet basic block (batch norms folded, residual add) exported with the default pipeline: the
    script holds the step's code and the rule's, its two 3 x 3 16 -> 16 convolutions become Winograd functions
    with their epilogues, and its output passes the check against the model as loaded."""
    from pipeline_model.export import export_script
    from pipeline_model.fileformat import load_pipeline

    model = tmp_path / "net.py"
    model.write_text(BLOCK_MODEL)
    doc = load_pipeline(os.path.join(ROOT, "resources", "pipelines", "cpu_build.json"))
    doc.model = str(model)
    source = export_script(doc, build=True)
    assert "def winograd(" in source and "def _schedule_winograd(" in source
    script = tmp_path / "cpu_build.py"
    script.write_text(source)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600,
                          cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("def fused_winograd2_conv2d_16x16x16x16_") == 2, proc.stdout[-3000:]
    assert "check output 0: PASS" in proc.stdout


def _fused_winograd_module():
    """The fused PrimFunc (transforms, products, bias, ReLU) of one small Winograd convolution, as a module."""
    from tvm import relax

    mod = winograd_script()(_module([CASES[0]]))
    with tvm.target.Target(TARGET):
        mod = tvm.ir.transform.Sequential([relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(),
                                           relax.transform.FuseOps(), relax.transform.FuseTIR()])(mod)
    (func,) = [f for g, f in mod.functions_items() if g.name_hint.startswith("fused_winograd")]
    return tvm.IRModule({"main": func.with_attr("global_symbol", "main")})


def winograd_script():  # type: ignore[no-untyped-def]
    from pipeline_model.passkinds.winograd.script import winograd

    return winograd()


def test_tuning_leaves_it_to_its_default_schedule_where_metaschedule_makes_no_search_space(tmp_path, capsys,
                                                                                           monkeypatch):
    """TVM 0.27's post-order-apply rules fail on the function outright ("TensorRegion pattern match failed" in
    a reverse_compute_at), and that one function failed the whole tuning step (both ResNet-18 files, the tuned
    bench). The engine and exported scripts now ask :func:`search_space_problem` after a failure and leave such a
    function to its default schedule; a plain convolution still gets a search space."""
    from pipeline_model.passkinds.metaschedule import script
    from pipeline_model.passkinds.metaschedule.config import script_options
    from pipeline_model.passkinds.metaschedule.script import install_meta_schedule_cpu, search_space_problem

    monkeypatch.setattr(script, "register_tuning_functions", lambda *_fns: None)  # TVM's globals stay TVM's

    mod = _fused_winograd_module()
    target = tvm.target.Target({"kind": "llvm", "num-cores": 2})
    problem = search_space_problem(mod, target)
    assert problem is not None and "TensorRegion" in problem
    plain = _lowered(_module([CASES[0]]), [])
    (direct,) = [f for g, f in plain.functions_items() if "conv2d" in g.name_hint]
    assert search_space_problem(tvm.IRModule({"main": direct.with_attr("global_symbol", "main")}), target) is None
    # The exported script's tune_tir (what MetaScheduleTuneTIR calls per PrimFunc): a line, the module back.
    options = script_options({"max_trials_global": 4, "num_trials_per_iter": 4, "cost_model": "random"})
    work = tmp_path / "work"
    work.mkdir()
    tune_tir = install_meta_schedule_cpu(str(work), options)
    assert tune_tir(mod, target, str(work), 4).same_as(mod)
    assert "not tuned: main: MetaSchedule has no search space for it (" in capsys.readouterr().out


def test_the_engine_names_the_tasks_without_a_search_space_and_skips_only_those():
    """The engine's side (after a failed ``tune_tasks``): the Winograd task is named, warned about and marked
    skipped; the direct convolution's task is not."""
    from types import SimpleNamespace

    from pipeline_model.passkinds.metaschedule.tasks_tvm import _spaceless

    target = tvm.target.Target({"kind": "llvm", "num-cores": 2})
    plain = _lowered(_module([CASES[0]]), [])
    (direct,) = [f for g, f in plain.functions_items() if "conv2d" in g.name_hint]
    tasks: dict = {}
    session = SimpleNamespace(space="post-order-apply", warnings=[],
                              progress=SimpleNamespace(task=lambda n: tasks.setdefault(n, SimpleNamespace())))
    session.warn = session.warnings.append
    todo = [("winograd_task", _fused_winograd_module(), 1.0, "k1"),
            ("direct_task", tvm.IRModule({"main": direct.with_attr("global_symbol", "main")}), 1.0, "k2")]
    assert _spaceless(session, todo, target) == {"winograd_task"}
    assert len(session.warnings) == 1 and session.warnings[0].startswith("winograd_task: not tuned, MetaSchedule")
    assert (tasks["winograd_task"].status, tasks["winograd_task"].source) == ("skipped", "no search space")
    assert "direct_task" not in tasks
