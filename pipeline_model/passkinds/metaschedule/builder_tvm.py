"""MetaSchedule's builder and runner in the engine, and the target they tune for (engine side, imports TVM).

What it fixes on TVM 0.27 (see ``../shared/TVM_NOTES.md``), through the helpers of
:mod:`pipeline_model.passkinds.metaschedule.script` that exported scripts contain too:

* the target gets ``"num-cores"`` (MetaSchedule refuses an llvm target without it) and only the CPU
  tensor intrinsics are loaded (:func:`tuning_target`);
* the builder's ``f_build`` is the stock ``default_build`` *without* ``import tvm.s_tir.tensor_intrin``
  (that import takes ~37 s in every fresh builder worker, so every stock candidate hits the 30 s
  timeout); the engine's builder (:class:`StoppableLocalBuilder`) also polls a stop flag so Stop ends
  a build round within a fraction of a second;
* the runner measures with ``EvaluatorConfig(number=10, repeat=1, min_repeat_ms=20)``, locally or
  through an RPC tracker (``ms.runner.RPCRunner``); :func:`check_rpc_tracker` says plainly when the
  tracker or the device is missing.
"""

from __future__ import annotations

import concurrent.futures
from collections import deque
from typing import Any, Callable, Optional

from tvm.ir.utils import derived_object
from tvm.s_tir import meta_schedule as ms
from tvm.s_tir.meta_schedule.builder import BuilderInput, BuilderResult, PyBuilder
from tvm.target import Target

from pipeline_model.passkinds.metaschedule.config import TuningConfig
from pipeline_model.passkinds.metaschedule.script import (
    TuningConfigError,
    load_tensor_intrinsics,
    meta_schedule_f_build,
    meta_schedule_target,
    tuning_builder,
    tuning_runner,
)

StopFn = Callable[[], bool]


class TuningStopped(Exception):
    """Raised inside MetaSchedule to end tuning early; caught by the engine half, never escapes it."""


def tuning_target(target: Any) -> Target:
    """A ``Target`` fit for MetaSchedule (:func:`~pipeline_model.passkinds.metaschedule.script.meta_schedule_target`:
    llvm targets get ``num-cores``) with the tensor intrinsics it needs registered
    (:func:`~pipeline_model.passkinds.metaschedule.script.load_tensor_intrinsics`: only the CPU ones for
    a CPU target, since the ``cuda`` part alone takes about a minute)."""
    target = meta_schedule_target(target)
    load_tensor_intrinsics(target)
    return target


@derived_object
class StoppableLocalBuilder(PyBuilder):
    """``LocalBuilder`` with the fast ``f_build`` that also polls a stop flag.

    Candidates go to a pool of ``max_workers`` processes (one fresh pool per round, like the stock
    builder); at most ``max_workers`` are in flight, so when ``should_stop()`` turns true the workers
    are killed and :class:`TuningStopped` ends the round within a fraction of a second.
    """

    def __init__(self, max_workers: int, timeout_sec: float, should_stop: Optional[StopFn] = None):
        super().__init__()
        self.max_workers = max(1, int(max_workers))
        self.timeout_sec = float(timeout_sec)
        self.should_stop = should_stop or (lambda: False)
        self.f_build = meta_schedule_f_build()

    def build(self, build_inputs: list[BuilderInput]) -> list[BuilderResult]:
        # _worker_func is TVM's own worker entry (importable in the worker); f_build goes by value.
        from tvm.s_tir.meta_schedule.builder.local_builder import _serialize_params, _worker_func
        from tvm.support.popen_pool import PopenPoolExecutor

        if self.should_stop():
            raise TuningStopped("stopped before building")
        pool = PopenPoolExecutor(max_workers=self.max_workers, timeout=self.timeout_sec)
        results: list[Optional[BuilderResult]] = [None] * len(build_inputs)
        pending = deque(range(len(build_inputs)))
        running: dict[concurrent.futures.Future, int] = {}
        stopped = False
        try:
            while pending or running:
                while pending and len(running) < self.max_workers:
                    i = pending.popleft()
                    inp = build_inputs[i]
                    fut = pool.submit(
                        _worker_func, self.f_build, None, inp.mod, inp.target, _serialize_params(inp.params)
                    )
                    running[fut] = i
                done, _ = concurrent.futures.wait(
                    list(running), timeout=0.2, return_when=concurrent.futures.FIRST_COMPLETED
                )
                for fut in done:
                    i = running.pop(fut)
                    exc = fut.exception()
                    if exc is None:
                        results[i] = BuilderResult(fut.result(), None)
                    elif isinstance(exc, TimeoutError):
                        results[i] = BuilderResult(
                            None, f"LocalBuilder: Timeout, killed after {self.timeout_sec} seconds"
                        )
                    else:
                        results[i] = BuilderResult(None, "LocalBuilder: An exception occurred\n" + str(exc))
                if self.should_stop():
                    stopped = True
                    break
        finally:
            pool.shutdown(wait=not stopped)
        if stopped:
            raise TuningStopped("stopped while building")
        return [r for r in results if r is not None]


def make_builder(config: TuningConfig, should_stop: Optional[StopFn] = None) -> StoppableLocalBuilder:
    """The engine's builder for ``config``
    (:func:`~pipeline_model.passkinds.metaschedule.script.tuning_builder` with :class:`StoppableLocalBuilder`)."""
    return tuning_builder(config.to_json(),
                          stoppable=lambda workers, timeout: StoppableLocalBuilder(workers, timeout, should_stop))


def make_stock_builder(config: TuningConfig) -> ms.builder.LocalBuilder:
    """TVM's own ``LocalBuilder`` with the same fast ``f_build``, as exported scripts build it (for comparisons)."""
    return tuning_builder(config.to_json())


def make_runner(config: TuningConfig) -> ms.runner.Runner:
    """``LocalRunner`` or ``RPCRunner`` for ``config``
    (:func:`~pipeline_model.passkinds.metaschedule.script.tuning_runner`, as exported scripts make it)."""
    return tuning_runner(config.to_json())


def check_rpc_tracker(config: TuningConfig, timeout_s: float = 5.0) -> int:
    """Number of free servers with ``config.rpc_key`` on the tracker; raises ``TuningConfigError``
    with a plain message when the tracker cannot be reached or has no such device."""
    import socket

    from tvm import rpc

    try:
        # TVM's connect_tracker retries for 60 s; a plain connection attempt answers within timeout_s.
        socket.create_connection((config.rpc_host, int(config.rpc_port)), timeout=timeout_s).close()
        tracker = rpc.connect_tracker(config.rpc_host, int(config.rpc_port))
        summary = tracker.summary()
    except Exception as exc:  # noqa: BLE001 - any connection failure gets the same plain message
        raise TuningConfigError(
            f"cannot reach the RPC tracker at {config.rpc_host}:{config.rpc_port} ({exc}); start it with "
            "'python -m tvm.exec.rpc_tracker' or choose runner = local"
        ) from None
    count = 0
    for item in summary.get("queue_info", {}).items():
        key, info = item
        if key == config.rpc_key:
            count = int(info.get("free", 0)) + int(info.get("pending", 0))
    servers = [s for s in summary.get("server_info", []) if str(s.get("key", "")).split(":")[-1] == config.rpc_key]
    if count == 0 and not servers:
        raise TuningConfigError(
            f"the RPC tracker at {config.rpc_host}:{config.rpc_port} has no device with key "
            f"'{config.rpc_key}'; start one with 'python -m tvm.exec.rpc_server --tracker "
            f"{config.rpc_host}:{config.rpc_port} --key {config.rpc_key}'"
        )
    return max(count, len(servers))


