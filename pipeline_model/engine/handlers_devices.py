"""Engine commands ``devices`` (the local devices and the target suggested for each), ``rpc_devices`` (the
devices an RPC tracker has, per key) and ``validate_target`` (TVM's canonical form of a target, or its error)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pipeline_model.engine.build.devices import detect_devices, preset_support, tvm_target
from pipeline_model.targets import rpc_device_listing
from pipeline_model.engine.handler_registry import handler
from pipeline_model.scriptlib.functions import BuildError

if TYPE_CHECKING:  # the worker imports this module; only type checkers import it back
    from pipeline_model.engine.context import WorkerContext


@handler("devices")
def handle_devices(args: dict, ctx: WorkerContext) -> dict:
    """Local devices and the suggested target of each (CPU first); with ``presets``, also whether each target
    of the picker compiles and runs here (:func:`pipeline_model.engine.build.devices.preset_support`)."""
    reply: dict[str, Any] = {"devices": detect_devices()}
    if args.get("presets"):
        reply["presets"] = preset_support()
    return reply


@handler("rpc_devices")
def handle_rpc_devices(args: dict, ctx: WorkerContext) -> dict:
    """The devices of the RPC tracker ``tracker`` (``HOST:PORT``), per key, or why it did not answer
    (:func:`pipeline_model.targets.rpc_device_listing`: a 5-s socket timeout)."""
    return rpc_device_listing(str(args.get("tracker") or ""))


def _jsonable(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): _jsonable(v) for k, v in value.items()}
    try:
        return [_jsonable(v) for v in value]
    except TypeError:
        return str(value)


@handler("validate_target")
def handle_validate_target(args: dict, ctx: WorkerContext) -> dict:
    """Construct ``tvm.target.Target`` from ``target``: TVM's canonical form, or its error message."""
    target = args.get("target")
    if not isinstance(target, dict):
        return {"ok": False, "error": "the target must be a JSON object with a \"kind\""}
    try:
        tgt = tvm_target(target)
    except BuildError as exc:
        return {"ok": False, "error": str(exc)}
    canonical = {str(k): _jsonable(v) for k, v in dict(tgt.export()).items()}
    return {"ok": True, "target": canonical, "keys": [str(k) for k in tgt.keys]}
