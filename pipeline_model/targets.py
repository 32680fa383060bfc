"""Build targets and local devices, TVM-free side.

The engine detects devices (command ``devices``, see :mod:`pipeline_model.engine.handlers_devices`):
the CPU always, and CUDA, Vulkan, OpenCL, ROCm and Metal when ``tvm.<kind>(0).exist``. For each it
suggests a target dict: for the CPU ``{"kind": "llvm", "mcpu": <host cpu>, "num-cores": N}`` (host
features through ``-mcpu``; ``num-cores`` is what MetaSchedule needs), for CUDA the compute
capability as ``arch``. Targets are JSON objects (TVM 0.27 no longer parses ``"llvm -mcpu=..."``
strings); :func:`validate_target` asks the engine to construct ``tvm.target.Target(...)`` from one.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

#: Device kinds the engine probes, in display order (TVM device constructor names).
DEVICE_KINDS = ("cpu", "cuda", "vulkan", "opencl", "rocm", "metal")

#: Target kinds that run on a GPU (their PrimFuncs need thread bindings).
GPU_TARGET_KINDS = frozenset({"cuda", "vulkan", "opencl", "rocm", "metal", "webgpu"})

#: Which device runs the code built for a target kind.
TARGET_DEVICE = {"llvm": "cpu", "c": "cpu", "cuda": "cuda", "nvptx": "cuda", "vulkan": "vulkan",
                 "opencl": "opencl", "rocm": "rocm", "metal": "metal"}


@dataclass
class DeviceInfo:
    """A local device the engine found, with the target suggested for it."""

    kind: str
    index: int
    name: str
    target: dict[str, Any]
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """Short label for menus, e.g. ``cpu 0: znver4, 16 cores``."""
        return f"{self.kind} {self.index}: {self.name}"

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "DeviceInfo":
        """Inverse of :meth:`to_json`."""
        return cls(**data)


def is_gpu_target(target: dict[str, Any]) -> bool:
    """True when ``target`` (a dict) compiles for a GPU."""
    return str(target.get("kind", "")) in GPU_TARGET_KINDS


def device_kind_for(target: dict[str, Any]) -> str:
    """The device kind (``cpu``, ``cuda`` ...) that runs code built for ``target``."""
    kind = str(target.get("kind", ""))
    if kind not in TARGET_DEVICE:
        raise ValueError(f"no local device runs target kind {kind!r}")
    return TARGET_DEVICE[kind]


def parse_target_json(text: str) -> dict[str, Any]:
    """Parse the advanced target editor's text: a JSON object with a ``kind``.

    Raises ``ValueError`` with the line/column of a JSON syntax error. Whether TVM accepts the
    options is checked by :func:`validate_target` (needs the engine).
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"target JSON, line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    if not isinstance(value, dict):
        raise ValueError("target JSON must be an object such as {\"kind\": \"llvm\"}")
    if not isinstance(value.get("kind"), str) or not value["kind"]:
        raise ValueError("target JSON needs a \"kind\" (llvm, cuda, vulkan, opencl, rocm, metal ...)")
    return value


def list_devices(client: Any) -> list[DeviceInfo]:
    """Local devices found by the engine (CPU first); ``client`` is an ``EngineClient``."""
    reply = client.request("devices", {})
    return [DeviceInfo.from_json(d) for d in reply["devices"]]


def validate_target(client: Any, target: dict[str, Any]) -> dict[str, Any]:
    """Ask the engine to build ``tvm.target.Target(target)``.

    Returns ``{"ok": True, "target": <TVM's canonical dict>, "keys": [...]}`` or
    ``{"ok": False, "error": <TVM's message>}``.
    """
    return client.request("validate_target", {"target": target})
