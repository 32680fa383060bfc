"""MetaSchedule measuring through a real RPC tracker and server started on loopback by the test."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("tornado")
tvm = pytest.importorskip("tvm")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def tracker():
    port = _free_port()
    env = dict(os.environ)
    procs = [subprocess.Popen([sys.executable, "-m", "tvm.exec.rpc_tracker", "--host", "127.0.0.1", "--port", str(port),
                               "--port-end", str(port + 1)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)]
    try:
        from tvm import rpc

        deadline = time.time() + 30
        while True:
            try:
                rpc.connect_tracker("127.0.0.1", port).summary()
                break
            except Exception:  # noqa: BLE001 - not up yet
                if time.time() > deadline:
                    raise
                time.sleep(0.3)
        procs.append(subprocess.Popen([sys.executable, "-m", "tvm.exec.rpc_server", "--tracker", f"127.0.0.1:{port}",
                                       "--key", "local", "--host", "127.0.0.1"], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
        deadline = time.time() + 60
        while "local" not in rpc.connect_tracker("127.0.0.1", port).summary().get("queue_info", {}):
            if time.time() > deadline:
                raise TimeoutError("rpc_server did not register with the tracker")
            time.sleep(0.5)
        yield port
    finally:
        # Each in its own process group: the group goes, with the server's session workers (popen_worker).
        for p in reversed(procs):
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(10)
            try:
                os.killpg(p.pid, signal.SIGKILL)  # children left in the group after the leader exited
            except ProcessLookupError:
                pass


def test_unreachable_tracker_message():
    from pipeline_model.passkinds.metaschedule.builder_tvm import check_rpc_tracker
    from pipeline_model.passkinds.metaschedule.config import TuningConfig, TuningConfigError

    with pytest.raises(TuningConfigError, match="cannot reach the RPC tracker at 127.0.0.1:1"):
        check_rpc_tracker(TuningConfig(runner="rpc", rpc_port=1))


@pytest.mark.slow
def test_tune_through_rpc_runner(tracker, tmp_path):
    from tvm import relax

    from pipeline_model.importers import load_tvm
    from pipeline_model.passkinds.metaschedule import builder_tvm, tasks_tvm
    from pipeline_model.passkinds.metaschedule.config import TuningConfig, TuningConfigError

    cfg = TuningConfig(runner="rpc", rpc_host="127.0.0.1", rpc_port=tracker, rpc_key="local", num_trials_per_iter=2,
                       search_population=64)
    assert builder_tvm.check_rpc_tracker(cfg) >= 1
    with pytest.raises(TuningConfigError, match="no device with key 'gpu9'"):
        builder_tvm.check_rpc_tracker(TuningConfig(runner="rpc", rpc_port=tracker, rpc_key="gpu9"))
    assert type(builder_tvm.make_runner(cfg)).__name__ == "RPCRunner"

    mod = load_tvm.load_model("builtin:mlp", None).mod
    seq = tvm.transform.Sequential([relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(),
                                    relax.transform.FuseOps(), relax.transform.FuseTIR()])
    with tvm.transform.PassContext(opt_level=3):
        mod = seq(mod)
    summary = tasks_tvm.tune_module(mod, {"kind": "llvm", "num-cores": 2}, str(tmp_path / "wd"), max_trials_global=2,
                                    runner_config=cfg, op_names=["fused_matmul_add_relu"])
    assert summary["config"]["runner"] == "rpc"
    assert summary["measured"] >= 1, summary["errors"]
