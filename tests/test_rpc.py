"""Devices over RPC: a real tracker and two servers on loopback (tests/rpc_farm.py), listed by
``main.py devices --tracker``, running a Build & Run there, and MetaSchedule measuring on both at once."""

from __future__ import annotations

import argparse
import io
import json

import pytest

pytest.importorskip("tornado")
tvm = pytest.importorskip("tvm")

from pipeline_model.cli import build_options  # noqa: E402
from pipeline_model.cli.build_options import print_build_result  # noqa: E402
from tests.rpc_farm import local_farm  # noqa: E402
from tests.tuning_fixtures import QUICK_SEARCH  # noqa: E402


@pytest.fixture(scope="module")
def farm():
    with local_farm(servers=2) as running:
        yield running


def _devices_cli(tracker: str, capsys, as_json: bool = False) -> tuple[int, str, str]:
    from pipeline_model.cli import devices_cmd

    code = devices_cmd.main(argparse.Namespace(tracker=tracker, json=as_json))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_unreachable_tracker_says_so_in_one_line(capsys):
    from pipeline_model.passkinds.metaschedule.builder_tvm import check_rpc_tracker
    from pipeline_model.passkinds.metaschedule.config import TuningConfig, TuningConfigError

    with pytest.raises(TuningConfigError, match="cannot reach the RPC tracker at 127.0.0.1:1"):
        check_rpc_tracker(TuningConfig(runner="rpc", rpc_port=1))
    code, out, err = _devices_cli("127.0.0.1:1", capsys)
    assert code == 1 and out == "" and err.count("\n") == 1 and "cannot reach the RPC tracker at 127.0.0.1:1" in err
    code, _, err = _devices_cli("no-port", capsys)
    assert code == 1 and "expected HOST:PORT" in err


def test_devices_command_lists_the_trackers_devices(farm, capsys):
    code, out, _ = _devices_cli(farm.address, capsys)
    assert code == 0 and "local  2/2 free" in out, out
    code, out, _ = _devices_cli(farm.address, capsys, as_json=True)
    reply = json.loads(out)
    assert reply["error"] == "" and [d["key"] for d in reply["devices"]] == ["local"]
    assert len(reply["devices"][0]["servers"]) == 2 and reply["devices"][0]["total"] == 2


def test_farm_runner_is_made_from_the_steps_options():
    """The engine and an exported script make the same farm runner (no tracker is asked until a round)."""
    from pipeline_model.passkinds.metaschedule import builder_tvm, script_measure
    from pipeline_model.passkinds.metaschedule.config import TuningConfig

    config = TuningConfig(runner="rpc", rpc_port=1, number=3, repeat=2, min_repeat_ms=5)
    for runner in (builder_tvm.make_runner(config), script_measure.tuning_runner(config.to_json())):
        assert type(runner).__name__ == "FarmRunner" and runner.device_stats == {}
        script_measure.close_tuning_tools(None, runner)


def test_build_run_on_an_rpc_device(farm, capsys):
    """The app's CPU pipeline (weights prepacked by LiftTransformParams) built here, run, timed and profiled on a
    server of the farm, checked against the local reference; compared with the baseline on one and the same server; a key
    the tracker lacks is one clear line."""
    from pipeline_model import build_api
    from pipeline_model.engine.client import EngineClient
    from pipeline_model.engine.errors import EngineError
    from pipeline_model.fileformat import load_pipeline
    from pipeline_model.resources import bundled_pipeline

    doc = load_pipeline(str(bundled_pipeline("builtin:cpu_build")))
    remote = {"tracker": farm.address, "key": "local"}
    client = EngineClient()
    try:
        result = _cli_build_run(client, doc, capsys, "--bench", "--profile", "--tracker", farm.address,
                                "--rpc-key", "local")
        assert result.device.startswith("rpc local 127.0.0.1:"), result.device
        assert result.device.split()[2] in farm_servers(farm)
        assert result.check is not None and result.check.passed, result.check
        assert result.latency is not None and len(result.latency.runs_us) == 20
        _assert_remote_profile(result)
        printed = io.StringIO()
        print_build_result(result, printed)
        assert "profile: 2 kernels, " in printed.getvalue() and "each timed by itself on the RPC device" in printed.getvalue()
        assert build_options.run_build(_cli_args("--tracker", farm.address), client, doc, None) == 2
        assert "--tracker and --rpc-key go together" in capsys.readouterr().err
        quick = build_api.BenchSettings(repeat=2, warmup_ms=0, min_repeat_ms=0)
        compared = build_api.compare(client, build_api.module_request(doc, baseline=True, remote=remote),
                                     build_api.module_request(doc, remote=remote), bench=quick)
        assert compared.a.device == compared.b.device and compared.b.device.startswith("rpc local ")  # one board
        assert compared.check is not None and compared.check.passed
        from pipeline_model.cli import devices_cmd  # without --tracker: this machine's devices, from the engine

        assert devices_cmd.main(argparse.Namespace(tracker=None, json=False), client=client) == 0
        assert capsys.readouterr().out.startswith("cpu 0: ")
        with pytest.raises(EngineError, match="has no device with key 'gpu9'"):
            build_api.build_run(client, doc, remote={"tracker": farm.address, "key": "gpu9"}, bench=None, check=None)
    finally:
        client.close()


def _cli_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", action="store_true")
    build_options.add_arguments(parser)
    return parser.parse_args(list(argv))


def _cli_build_run(client, doc, capsys, *argv: str):
    """``main.py run PIPELINE --json ARGV``'s build, as a :class:`BuildRunResult`."""
    from pipeline_model.build_api import BuildRunResult

    out: dict = {}
    code = build_options.run_build(_cli_args("--json", *argv), client, doc, None, out=out)
    assert code == 0 and "build" in out, (out.get("build_error"), capsys.readouterr().err)
    return BuildRunResult.from_json(out["build"])


def _assert_remote_profile(result) -> None:
    """The profile measured on the RPC device: a row per kernel of the build, each timed there (positive), whose
    sum sits within the whole run timed there and the Build & Run latency (ratios of figures measured on one
    device, no wall-clock bound)."""
    from pipeline_model.build_api import PROFILE_KERNELS

    prof = result.profile
    assert prof is not None and result.profile_note == "", result.profile_note
    assert prof.method == PROFILE_KERNELS and prof.skipped == [] and prof.repeat == 5
    names = [e.name for e in prof.entries]
    # cpu_build fuses the MLP into its two matmuls (the bias and ReLU fused into the first, its weight read
    # through a packed copy): one call of each
    assert sorted(names) == ["fused_matmul_add_relu_prepacked", "matmul1"], names
    assert all(e.kind == "prim_func" and e.calls == 1 and len(e.totals_us) == 5 for e in prof.entries)
    assert all(t > 0 for e in prof.entries for t in e.totals_us)
    assert prof.total_us == pytest.approx(sum(e.total_us for e in prof.entries))
    assert sum(e.share for e in prof.entries) == pytest.approx(1.0)
    assert all(prof.nodes.get(n) for n in names), prof.nodes  # each kernel is a node of the graph
    # the kernels alone take part of a whole run (the VM's calls between them add to it): same unit and order of
    # magnitude. Compared by their fastest repeats (what load slows down least) and within a factor of 100 (a busy
    # machine swings microsecond timings by several times; a unit slip is a factor of 1,000 or more)
    assert prof.run_us > 0 and len(prof.runs_us) == 5
    kernels = sum(min(e.totals_us) for e in prof.entries)
    for whole in (min(prof.runs_us), min(result.latency.runs_us)):
        assert whole / 100 < kernels < 100 * whole, (kernels, prof.runs_us, result.latency.runs_us)


def farm_servers(farm) -> list[str]:
    from pipeline_model.scriptlib.rpc import tracker_devices

    return tracker_devices("127.0.0.1", farm.port)["local"]["servers"]


@pytest.mark.slow
def test_tuning_measures_on_both_servers_and_survives_a_dropped_device(farm, tmp_path):
    """``runner = rpc`` measures on both servers at once; a device that is gone (registered, nothing listening)
    costs a re-queue, not a failed candidate; the summary says how many devices served."""
    from tvm import relax

    from pipeline_model.importers import load_tvm
    from pipeline_model.passkinds.metaschedule import tasks_tvm
    from pipeline_model.passkinds.metaschedule.config import TuningConfig

    servers = farm_servers(farm)
    farm.add_ghost()
    cfg = TuningConfig(runner="rpc", rpc_host="127.0.0.1", rpc_port=farm.port, rpc_key="local",
                       num_trials_per_iter=4, search_population=64, user_database=False,
                       # bounds a busy CI machine cannot reach (they end a stuck run, never decide a result)
                       builder_timeout_s=600.0, runner_timeout_s=600.0, rpc_session_timeout_s=600)
    mod = load_tvm.load_model("builtin:mlp", None).mod
    seq = tvm.transform.Sequential([relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(),
                                    relax.transform.FuseOps(), relax.transform.FuseTIR()])
    with tvm.transform.PassContext(opt_level=3):
        mod = seq(mod)
    summary = tasks_tvm.tune_module(mod, {"kind": "llvm", "num-cores": 2}, str(tmp_path / "wd"), max_trials_global=8,
                                    runner_config=cfg, op_names=["fused_matmul_add_relu"],
                                    cost_model=QUICK_SEARCH["cost_model"])
    devices = summary["devices"]
    assert summary["errors"] == [] and summary["measured"] == summary["done"] >= 4, summary
    assert all(devices.get(s, {}).get("measured", 0) >= 1 for s in servers), devices  # both served
    assert summary["devices_served"] == 2
    ghost = [d for d in devices if d not in servers]
    assert ghost and devices[ghost[0]]["requeued"] >= 1 and devices[ghost[0]]["measured"] == 0, devices


def test_remote_profile_kernel_shapes_come_from_the_calls_with_the_inputs_dims():
    """What an RPC device's profile times: VM lowering keeps only the rank of a symbolic shape, so the kernels'
    argument shapes come from the module's ``call_tir`` calls with ``n`` bound from the run's input; a dim read
    from data (``match_cast``) leaves its kernel untimed, said by name."""
    import numpy as np
    from tvm.script import relax as R
    from tvm.script import tirx as T

    from pipeline_model.engine.build.measure import build_lowered_module
    from pipeline_model.engine.build.remote_profile import kernel_signatures

    @tvm.script.ir_module
    class Mod:
        @R.function
        def main(x: R.Tensor(("n", 4), "float32"), w: R.Tensor((4, 4), "float32"), k: R.Tensor(("m",), "int64")):
            n, p = T.int64(), T.int64()
            with R.dataflow():
                y = R.add(R.matmul(x, w), R.matmul(x, w))
                z = R.reshape(y, R.shape([n * 2, 2]))
                u = R.unique(k)  # a length known only from the data
                v = R.match_cast(u, R.Tensor((p,), "int64"))
                q = R.add(v, v)
                R.output(z, q)
            return z, q

    _ex, _fp, lowered = build_lowered_module(Mod, {"kind": "llvm"})
    arrays = [np.zeros((3, 4), "float32"), np.zeros((4, 4), "float32"), np.zeros((5,), "int64")]
    plans, calls, skipped = kernel_signatures(Mod, lowered, "main", arrays)
    assert calls["matmul"] == 2 and plans["matmul"] == [((((3, 4), "float32"), ((4, 4), "float32"),
                                                          ((3, 4), "float32")), 2.0)]
    assert plans["reshape"] == [((((3, 4), "float32"), ((6, 2), "float32")), 1.0)]
    assert "add1" in skipped and "add1" not in plans, (plans, skipped)  # the add of the match_cast's p
