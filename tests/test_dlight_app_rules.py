"""The app's own DLight rule ``app.CPUParallel``: every block's spatial loops on all cores, same results,
left alone on GPU targets, unknown app rules refused, and exported scripts that carry the rule's class."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

from pipeline_model import emit
from pipeline_model.passkinds.dlight import DLightKind, app_rule_source

tvm = pytest.importorskip("tvm")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _legalized_mlp():
    from tvm import relax
    from tvm.script import relax as R

    @tvm.script.ir_module
    class Mod:
        @R.function
        def main(x: R.Tensor((1, 512), "float32"), w: R.Tensor((512, 256), "float32"), b: R.Tensor((256,), "float32")):
            with R.dataflow():
                y = R.nn.relu(R.add(R.matmul(x, w), b))
                z = R.sum(y, axis=[1])
                R.output(z)
            return z

    passes = [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(),
              relax.transform.FuseTIR()]
    return tvm.ir.transform.Sequential(passes)(Mod)


def _schedule(mod, target):
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds.dlight.script_tvm import CPUParallel

    with tvm.target.Target(target):
        return dl.ApplyDefaultSchedule(CPUParallel())(mod)


def _run(mod, arrays):
    from tvm import relax

    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    return vm["main"](*[tvm.runtime.tensor(a) for a in arrays]).numpy()


def test_big_blocks_get_a_parallel_loop_small_ones_stay_serial_and_results_match():
    from pipeline_model.passkinds.dlight.script_tvm import CPUParallel

    mod = _legalized_mlp()
    scheduled = _schedule(mod, {"kind": "llvm", "num-cores": 2})
    prims = {gv.name_hint: f for gv, f in scheduled.functions_items() if isinstance(f, tvm.tirx.PrimFunc)}
    big = [n for n in prims if "matmul" in n]  # 1 x 512 x 256 = 131,072 iterations
    small = [n for n in prims if n.startswith("sum")]  # 256 iterations: thread start-up would cost more
    assert big and small and 512 * 256 >= CPUParallel.min_work > 256
    for name in big:
        text = prims[name].script()
        assert "T.parallel(" in text and "is_scheduled" in text, name  # DLight marks what a rule scheduled
    for name in small:
        assert "T.parallel(" not in prims[name].script(), name
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype("float32") for s in ((1, 512), (512, 256), (256,))]
    np.testing.assert_allclose(_run(scheduled, arrays), _run(mod, arrays), rtol=1e-4, atol=1e-4)


def test_left_alone_on_a_gpu_target():
    mod = _legalized_mlp()
    scheduled = _schedule(mod, {"kind": "cuda", "arch": "sm_80"})
    assert all("T.parallel(" not in f.script() for _, f in scheduled.functions_items()
               if isinstance(f, tvm.tirx.PrimFunc))


@pytest.mark.parametrize("rule", ["app.tvm", "app._dl", "app.Unknown", "app.CPUParallel()"])
def test_unknown_app_rules_are_refused(rule):
    with pytest.raises(emit.EmitError):
        DLightKind().recipe("dlight.ApplyDefaultSchedule", {"rules": [rule]})


def test_exported_script_carries_the_rule_class_and_runs(tmp_path):
    from pipeline_model.export import export_script
    from pipeline_model.fileformat import load_pipeline

    doc = load_pipeline(os.path.join(ROOT, "resources", "pipelines", "cpu_build.json"))
    source = export_script(doc, build=True)
    assert "class CPUParallel(tvm.s_tir.dlight.ScheduleRule):" in source
    # The DLight step with its rules (app.CPUConv2d and others before app.CPUParallel in cpu_build.json).
    assert re.search(r"tvm\.s_tir\.dlight\.ApplyDefaultSchedule\((\w+\(\), )*CPUParallel\(\)\)", source)
    assert "pipeline_model" not in source
    script = tmp_path / "cpu_build.py"
    script.write_text(source)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "T.parallel(" in proc.stdout and "check output 0: PASS" in proc.stdout


def test_rule_source_is_read_without_tvm():
    code = ("import sys; from pipeline_model.passkinds.dlight import app_rule_source; "
            "src = app_rule_source('CPUParallel'); print(src.splitlines()[0]); print('tvm' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    first, loaded = out.stdout.split("\n")[:2]
    assert first.startswith("class CPUParallel(tvm.s_tir.dlight.ScheduleRule):") and loaded == "False"
    assert app_rule_source("CPUParallel").startswith("class CPUParallel(")
    with pytest.raises(emit.EmitError):
        app_rule_source("NotThere")
