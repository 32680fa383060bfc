"""Build and run: build_run/compare/export_library through the shared engine, the GPU refusal, CUDA
code generation without a GPU, inputs from .npz, the CLI build options."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from pipeline_model import build_api
from pipeline_model.cli import build_options
from pipeline_model.document import PipelineDocument, Step
from pipeline_model.engine.client import EngineError
from pipeline_model.fileformat import load_pipeline

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPU_PIPELINE = os.path.join(ROOT, "resources", "pipelines", "cpu_build.json")
DLIGHT_PIPELINE = os.path.join(ROOT, "resources", "pipelines", "dlight_cuda.json")
FAST = build_api.BenchSettings(warmup=1, number=3, repeat=2)


def _has_gpu() -> bool:
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20)
        return out.returncode == 0 and "GPU" in out.stdout
    except (OSError, subprocess.TimeoutExpired):
        return False


gpu = pytest.mark.skipif(not _has_gpu(), reason="needs a CUDA GPU")


def test_build_run_mlp_cpu_check_passes(engine):
    doc = load_pipeline(CPU_PIPELINE)
    events = []
    result = build_api.build_run(engine, doc, bench=FAST, on_event=lambda n, d: events.append(n))
    assert result.function == "forward" and result.target["kind"] == "llvm"
    assert result.check is not None and result.check.passed and result.ok
    assert result.check.max_abs is not None and result.check.max_abs < 1e-4
    assert result.outputs[0].shape == [1, 10] and result.outputs[0].nan == 0
    assert result.outputs[0].std and result.outputs[0].std > 0
    assert result.latency is not None and result.latency.median_us > 0
    assert len(result.latency.runs_us) == 2
    # Warm-up goes on for warmup_ms (100 ms by default) after the warm-up runs: the figures are steady state.
    assert result.latency.warmup >= 1 and result.latency.warmup_ms >= 100.0
    assert "build_progress" in events
    assert result.weights == "random" and all(a["source"].startswith("random") for a in result.arguments)


def test_gpu_build_refuses_unscheduled_module(engine):
    """Target cuda without DLight: refused before compiling, naming the PrimFuncs and the fix."""
    doc = PipelineDocument(model="builtin:mlp", target={"kind": "cuda", "arch": "sm_80"},
                           steps=[Step("relax.LegalizeOps")])
    with pytest.raises(EngineError) as info:
        build_api.build_run(engine, doc, check=None)
    message = info.value.message
    assert "no GPU thread binding" in message and "DLight" in message
    assert "matmul" in message


def test_dlight_pipeline_compiles_cuda_without_gpu():
    """The bundled DLight tutorial pipeline's module compiles to CUDA source on a machine without a GPU."""
    from pipeline_model.engine.build import measure, requests
    from pipeline_model.engine.client import EngineClient
    from pipeline_model.engine.worker import HANDLERS, WorkerContext

    doc = load_pipeline(DLIGHT_PIPELINE)
    ctx = WorkerContext()
    reply = HANDLERS["run"](EngineClient.run_args(doc), ctx)
    mod = ctx.cache.get(requests.final_key(reply))
    assert measure.unscheduled_prim_funcs(mod) == []
    ex = measure.build_module(mod, doc.target)
    sources = []

    def collect(m):
        for sub in m.imports:
            try:
                sources.append(sub.inspect_source())
            except Exception:  # noqa: BLE001 - modules without source
                pass
            collect(sub)

    collect(ex.mod)
    assert any("__global__" in s for s in sources), "expected CUDA kernels in the built library"


def test_inputs_from_npz(engine, tmp_path):
    doc = load_pipeline(CPU_PIPELINE)
    x = np.full((1, 784), 0.5, dtype="float32")
    path = tmp_path / "inputs.npz"
    np.savez(path, x=x)
    from_file = build_api.build_run(engine, doc, inputs=build_api.InputSpec(path=str(path)))
    random = build_api.build_run(engine, doc)
    assert from_file.arguments[0]["source"] == "file" and from_file.check.passed
    assert from_file.outputs[0].mean != pytest.approx(random.outputs[0].mean)
    bad = tmp_path / "bad.npz"
    np.savez(bad, a=x, b=x)
    with pytest.raises(EngineError, match="holds a, b"):
        build_api.build_run(engine, doc, inputs=build_api.InputSpec(path=str(bad)))


def test_export_library_deploy_runs_in_fresh_interpreter(engine, tmp_path):
    doc = load_pipeline(CPU_PIPELINE)
    out_dir = tmp_path / "exports" / "mlp"  # created with its missing parent
    exported = build_api.export_library(engine, doc, str(out_dir))
    assert os.path.isfile(exported.library) and os.path.isfile(exported.deploy_script)
    proc = subprocess.run([sys.executable, exported.deploy_script], capture_output=True, text=True,
                          timeout=300, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "output 0: shape=[1, 10]" in proc.stdout
    # The deploy script's default inputs are the build's seeded inputs: same outputs as build_run.
    ran = build_api.build_run(engine, doc, check=None)
    deployed = np.load(out_dir / "outputs.npz")["arr_0"]
    assert float(deployed.mean()) == pytest.approx(ran.outputs[0].mean, rel=1e-5)
    # deploy.py imports nothing planted next to it, and never writes through a link planted at outputs.npz
    (out_dir / "numpy.py").write_text("raise SystemExit('planted numpy.py imported')\n")
    (out_dir / "secrets.py").write_text("raise SystemExit('planted secrets.py imported')\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("the user's file")
    os.remove(out_dir / "outputs.npz")
    os.symlink(outside, out_dir / "outputs.npz")
    proc = subprocess.run([sys.executable, exported.deploy_script], capture_output=True, text=True,
                          timeout=300, cwd=str(tmp_path))
    assert proc.returncode == 1 and "not written" in proc.stderr and "outputs.npz" in proc.stderr, proc.stderr
    assert outside.read_text() == "the user's file" and os.path.islink(out_dir / "outputs.npz")


def test_export_library_writes_nothing_through_a_link(engine, tmp_path):
    """The export folder's files are written with safe_write (a temporary file renamed over the name): a symlink
    planted at one of them, or a symlinked folder, is refused before the build and nothing is written."""
    doc = load_pipeline(CPU_PIPELINE)
    outside = tmp_path / "outside.py"
    outside.write_text("# the user's script\n")
    out_dir = tmp_path / "export"
    out_dir.mkdir()
    os.symlink(outside, out_dir / "deploy.py")
    with pytest.raises(EngineError, match="deploy.py: is a symbolic link"):
        build_api.export_library(engine, doc, str(out_dir))
    assert outside.read_text() == "# the user's script\n" and sorted(os.listdir(out_dir)) == ["deploy.py"]
    linked = tmp_path / "linked"
    os.symlink(out_dir, linked)
    with pytest.raises(EngineError, match="linked: is a symbolic link"):
        build_api.export_library(engine, doc, str(linked))
    with pytest.raises(EngineError, match="nothing is written under /dev"):
        build_api.export_library(engine, doc, "/dev/rps-export-test/lib")
    assert not os.path.exists("/dev/rps-export-test")


def test_compare_baseline_and_pipeline(engine):
    doc = load_pipeline(CPU_PIPELINE)
    a = build_api.module_request(doc, baseline=True)
    b = build_api.module_request(doc)
    result = build_api.compare(engine, a, b, bench=FAST)
    assert result.a.latency.median_us > 0 and result.b.latency.median_us > 0
    assert result.speedup == pytest.approx(result.a.latency.median_us / result.b.latency.median_us)
    assert result.check is not None and result.check.passed


def test_baseline_builds_are_plain_tvm_compile(tmp_path, monkeypatch):
    """``build_run``, ``profile`` and ``export_library`` with ``baseline`` build the model as loaded the way plain
    ``tvm.compile(mod, target)`` does (one LLVM module; the bench's "TVM default" column and its build time), not
    with the app's build (its PrimFuncs compiled on every core, ``scriptlib.building.compile_module``)."""
    import tvm

    from pipeline_model.engine.build import measure
    from pipeline_model.engine.client import EngineClient
    from pipeline_model.engine.worker import HANDLERS, WorkerContext

    calls: list[str] = []
    real_compile, real_app = tvm.compile, measure.compile_module
    monkeypatch.setattr(tvm, "compile", lambda *a, **k: calls.append("tvm.compile") or real_compile(*a, **k))
    monkeypatch.setattr(measure, "compile_module", lambda *a, **k: calls.append("app") or real_app(*a, **k))
    doc = load_pipeline(CPU_PIPELINE)
    ctx = WorkerContext()
    base = {"run": EngineClient.run_args(doc), "baseline": True, "inputs": build_api.InputSpec().to_json(),
            "bench": None, "check": None}
    HANDLERS["build_run"](dict(base), ctx)
    assert calls == ["tvm.compile"]
    HANDLERS["profile"]({**base, "profile": {"warmup": 1, "repeat": 1}}, ctx)
    HANDLERS["export_library"]({**base, "out_dir": str(tmp_path / "lib")}, ctx)
    assert calls == ["tvm.compile"] * 3 and (tmp_path / "lib" / "model.so").is_file()
    HANDLERS["build_run"]({**base, "baseline": False}, ctx)  # the pipeline's module: the app's build
    assert calls[3] == "app"  # (which falls back to tvm.compile for a module of a few PrimFuncs, like this MLP)


def test_devices_and_target_validation(engine):
    from pipeline_model import targets

    devices = targets.list_devices(engine)
    assert devices[0].kind == "cpu" and devices[0].target["kind"] == "llvm"
    assert devices[0].target["num-cores"] >= 1
    ok = targets.validate_target(engine, devices[0].target)
    assert ok["ok"] and "cpu" in ok["keys"]
    bad = targets.validate_target(engine, {"kind": "llvm", "bogus-option": 1})
    assert not bad["ok"] and "bogus-option" in bad["error"]
    with pytest.raises(ValueError, match="line 1"):
        targets.parse_target_json('{"kind": ')


def test_compare_outputs_fails_beyond_tolerance():
    from pipeline_model.scriptlib.outputs import compare_outputs

    ref = [np.array([1.0, 2.0, 0.0], dtype="float32")]
    good = compare_outputs([ref[0] + 1e-6], ref, rtol=1e-4, atol=1e-4)
    bad = compare_outputs([ref[0] + np.array([0, 0.01, 0], dtype="float32")], ref, rtol=1e-4, atol=1e-4)
    assert good["passed"] and not bad["passed"]
    assert bad["max_abs"] == pytest.approx(0.01, rel=1e-3) and bad["max_rel"] == pytest.approx(0.005, rel=1e-3)
    nan = compare_outputs([np.array([np.nan, 2.0, 0.0], dtype="float32")], ref, rtol=1e-4, atol=1e-4)
    assert not nan["passed"]


def _cli_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", action="store_true")
    build_options.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_cli_run_build_json(engine, capsys):
    doc = load_pipeline(CPU_PIPELINE)
    run = engine.run(doc)
    assert run.ok
    code = build_options.run_build(_cli_args("--build", "--bench", "--json"), engine, doc, run)
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["build"]["check"]["passed"] and report["build"]["latency"]["median_us"] > 0


def test_cli_run_build_text_and_exit_codes(engine, capsys, tmp_path, monkeypatch):
    doc = load_pipeline(CPU_PIPELINE)
    run = engine.run(doc)
    assert build_options.run_build(_cli_args("--build"), engine, doc, run) == 0
    out = capsys.readouterr().out
    assert "check: PASS" in out and "output 0: float32[1, 10]" in out
    # bad input: a missing inputs file -> 2
    assert build_options.run_build(_cli_args("--build", "--inputs", str(tmp_path / "x.npz")), engine, doc, run) == 2
    # a failed check -> 1
    real = build_api.build_run

    def failing(*args, **kwargs):
        result = real(*args, **kwargs)
        result.check.passed = False
        return result

    monkeypatch.setattr(build_api, "build_run", failing)
    assert build_options.run_build(_cli_args("--build"), engine, doc, run) == 1
    assert "check: FAIL" in capsys.readouterr().out


@gpu
def test_dlight_pipeline_runs_on_gpu_and_matches_cpu(engine):
    doc = load_pipeline(DLIGHT_PIPELINE)
    result = build_api.build_run(engine, doc, bench=FAST)
    assert result.device.startswith("cuda") and result.check.passed


def test_warm_up_runs_at_least_the_count_and_the_time():
    from pipeline_model.scriptlib.outputs import warm_up

    calls: list[str] = []
    done, spent = warm_up(lambda: calls.append("call"), lambda: calls.append("sync"), runs=3, seconds=0.0)
    assert done == 3 and calls.count("call") == 3 and calls[-1] == "sync"
    done, spent = warm_up(lambda: None, lambda: None, runs=1, seconds=0.02)
    assert done >= 1 and spent >= 0.02  # stops only once the time has passed (the clock is read after sync)
    done, _ = warm_up(lambda: None, lambda: None, runs=0, seconds=60.0, max_runs=5)
    assert done == 5
