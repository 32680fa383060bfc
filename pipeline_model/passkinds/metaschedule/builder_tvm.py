"""MetaSchedule's builder and runner in the engine, and the target they tune for (engine side, imports TVM).

What it fixes on TVM 0.27 (see ``../shared/TVM_NOTES.md``), through the helpers of
:mod:`pipeline_model.passkinds.metaschedule.script` that exported scripts contain too:

* the target gets ``"num-cores"`` (MetaSchedule refuses an llvm target without it) and only the CPU
  tensor intrinsics are loaded (:func:`tuning_target`);
* the builder's ``f_build`` is the stock ``default_build`` *without* ``import tvm.s_tir.tensor_intrin``
  (that import takes ~37 s in every fresh builder worker, so every stock candidate hits the 30 s
  timeout); the builder keeps one pool of build workers across rounds and polls the session's stop flag, so
  Stop ends a build round within a fraction of a second (:mod:`.script_measure`, which scripts contain too);
* the runner measures with ``EvaluatorConfig(number=10, repeat=1, min_repeat_ms=20)``, locally or on every
  device an RPC tracker has for the key (:mod:`.script_farm`); :func:`check_rpc_tracker` says plainly when
  the tracker or the device is missing.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from tvm.s_tir import meta_schedule as ms
from tvm.target import Target

from pipeline_model.passkinds.metaschedule.config import TuningConfig
from pipeline_model.passkinds.metaschedule.script import TuningConfigError, load_tensor_intrinsics, meta_schedule_target
from pipeline_model.scriptlib.rpc import tracker_devices
from pipeline_model.passkinds.metaschedule.script_measure import (
    TuningStopped,
    meta_schedule_f_build,
    tuning_builder,
    tuning_cores,
    tuning_runner,
)

__all__ = ["TuningStopped", "check_rpc_tracker", "make_builder", "make_runner", "make_stock_builder", "tuning_target"]

StopFn = Callable[[], bool]


def tuning_target(target: Any) -> Target:
    """A ``Target`` fit for MetaSchedule (:func:`~pipeline_model.passkinds.metaschedule.script.meta_schedule_target`:
    llvm targets get ``num-cores``) with the tensor intrinsics it needs registered
    (:func:`~pipeline_model.passkinds.metaschedule.script.load_tensor_intrinsics`: only the CPU ones for
    a CPU target, since the ``cuda`` part alone takes about a minute)."""
    target = meta_schedule_target(target)
    load_tensor_intrinsics(target)
    return target


def make_builder(config: TuningConfig, should_stop: Optional[StopFn] = None) -> Any:
    """The engine's builder for ``config``: :func:`~pipeline_model.passkinds.metaschedule.script_measure.tuning_builder`
    (one pool of build workers kept across rounds) polling ``should_stop``, as exported scripts make it."""
    return tuning_builder(config.to_json(), should_stop)


def make_stock_builder(config: TuningConfig) -> ms.builder.LocalBuilder:
    """TVM's own ``LocalBuilder`` (a fresh worker pool per round) with the same fast ``f_build`` and options,
    for comparisons (``bench/bench_tuning.py``)."""
    workers = int(config.builder_workers) or tuning_cores()
    return ms.builder.LocalBuilder(f_build=meta_schedule_f_build(), max_workers=workers,
                                   timeout_sec=float(config.builder_timeout_s))


def make_runner(config: TuningConfig, should_stop: Optional[StopFn] = None) -> ms.runner.Runner:
    """``LocalRunner``, or for ``runner = rpc`` the device farm runner, for ``config``
    (:func:`~pipeline_model.passkinds.metaschedule.script_measure.tuning_runner`, as exported scripts make it;
    the farm ends a round's unmeasured candidates once ``should_stop()``)."""
    return tuning_runner(config.to_json(), should_stop)


def check_rpc_tracker(config: TuningConfig, timeout_s: float = 5.0) -> int:
    """Number of devices with ``config.rpc_key`` on the tracker; raises ``TuningConfigError`` with a plain
    message when the tracker cannot be reached or has no such device."""
    try:
        devices = tracker_devices(config.rpc_host, int(config.rpc_port), timeout_s)
    except Exception as exc:  # noqa: BLE001 - any connection failure gets the same plain message
        raise TuningConfigError(
            f"cannot reach the RPC tracker at {config.rpc_host}:{config.rpc_port} ({exc}); start it with "
            "'python -m tvm.exec.rpc_tracker' or choose runner = local"
        ) from None
    info = devices.get(config.rpc_key, {})
    count = max(int(info.get("total", 0)), int(info.get("free", 0)) + int(info.get("pending", 0)))
    if count == 0:
        raise TuningConfigError(
            f"the RPC tracker at {config.rpc_host}:{config.rpc_port} has no device with key "
            f"'{config.rpc_key}'; start one with 'python -m tvm.exec.rpc_server --tracker "
            f"{config.rpc_host}:{config.rpc_port} --key {config.rpc_key}'"
        )
    return count
