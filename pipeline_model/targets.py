"""Build targets and local devices, TVM-free side.

The engine detects devices (command ``devices``, see :mod:`pipeline_model.engine.handlers_devices`):
the CPU always, and CUDA, Vulkan, OpenCL, ROCm and Metal when ``tvm.<kind>(0).exist``. For each it
suggests a target dict: for the CPU ``{"kind": "llvm", "mcpu": <host cpu>, "num-cores": N}`` (host
features through ``-mcpu``; ``num-cores`` is what MetaSchedule needs), for CUDA the compute
capability as ``arch``. Targets are JSON objects (TVM 0.27 no longer parses ``"llvm -mcpu=..."``
strings); :func:`validate_target` asks the engine to construct ``tvm.target.Target(...)`` from one.

The target picker offers :func:`target_presets`: the host CPU (``-mcpu`` detected by the engine), plain
``llvm``, CUDA for each architecture of :data:`CUDA_ARCHS`, ROCm, Vulkan, Metal and OpenCL. The engine's
``devices`` reply says for each preset whether this TVM build can compile for it (its code generator
``target.build.<kind>`` is compiled in and TVM accepts the target) and whether this machine can run it (a
device of that kind exists): :class:`TargetSupport`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

#: Device kinds the engine probes, in display order (TVM device constructor names).
DEVICE_KINDS = ("cpu", "cuda", "vulkan", "opencl", "rocm", "metal")

#: Target kinds that run on a GPU (their PrimFuncs need thread bindings).
GPU_TARGET_KINDS = frozenset({"cuda", "vulkan", "opencl", "rocm", "metal", "webgpu"})

#: ``"mcpu": "native"`` in an llvm target means this machine's CPU (LLVM's word, as in ``clang -march=native``):
#: :func:`pipeline_model.scriptlib.host.native_target` replaces it by the CPU LLVM detects (AVX-512 where the host has it) and adds
#: ``num-cores``. The bundled CPU pipelines use it, so they build for the machine they run on; TVM itself
#: would treat ``native`` as ``generic`` (with a warning), so the app and exported scripts expand it first.
NATIVE_MCPU = "native"

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


def is_native(target: Any) -> bool:
    """True when ``target`` is an llvm target dict for this machine's CPU (``"mcpu": "native"``)."""
    return isinstance(target, dict) and target.get("kind") == "llvm" and target.get("mcpu") == NATIVE_MCPU


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


#: CUDA architectures offered by the picker (Maxwell to Hopper).
CUDA_ARCHS = ("sm_50", "sm_52", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90")
#: ROCm GPUs offered by the picker (``mcpu``).
ROCM_ARCHS = ("gfx908", "gfx90a", "gfx942", "gfx1100")
#: Names of the GPU families in the picker.
GPU_FAMILY_NAMES = {"cuda": "CUDA", "rocm": "ROCm", "vulkan": "Vulkan", "metal": "Metal", "opencl": "OpenCL"}


@dataclass
class TargetPreset:
    """One entry of the target picker: ``group`` (``cpu``, ``cuda``, ``rocm`` …), a short ``label`` and the
    ``target`` dict."""

    group: str
    label: str
    target: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)


def target_presets(host: Optional[dict[str, Any]] = None) -> list[TargetPreset]:
    """The picker's targets: the host CPU (``host``: the engine's :func:`host_cpu_target` answer, when known),
    generic ``llvm``, CUDA per architecture, ROCm per GPU, Vulkan, Metal, OpenCL."""
    out = []
    if host:
        mcpu = host.get("mcpu") or "generic"
        cores = f", {host['num-cores']} cores" if host.get("num-cores") else ""
        out.append(TargetPreset("cpu", f"CPU: this machine (llvm -mcpu={mcpu}{cores})", dict(host)))
    # the bundled CPU pipelines' target: whatever machine builds it (expanded by native_target), LLVM at -O2
    # (the app's schedules vectorize and unroll themselves; -O3 built 7-15 % slower for no faster code)
    out.append(TargetPreset("cpu", "CPU: the machine that builds (llvm -mcpu=native -O2)",
                            {"kind": "llvm", "mcpu": NATIVE_MCPU, "opt-level": 2}))
    out.append(TargetPreset("cpu", "CPU: generic llvm", {"kind": "llvm"}))
    out += [TargetPreset("cuda", f"CUDA {arch}", {"kind": "cuda", "arch": arch}) for arch in CUDA_ARCHS]
    out += [TargetPreset("rocm", f"ROCm {arch}", {"kind": "rocm", "mcpu": arch}) for arch in ROCM_ARCHS]
    out += [TargetPreset(kind, GPU_FAMILY_NAMES[kind], {"kind": kind}) for kind in ("vulkan", "metal", "opencl")]
    return out


@dataclass
class TargetSupport:
    """Whether this TVM build can compile for ``target`` (``compile``) and this machine can run it (``run``),
    with the reasons in words (``compile_note``, ``run_note``)."""

    target: dict[str, Any]
    compile: bool
    run: bool
    compile_note: str = ""
    run_note: str = ""
    group: str = ""
    label: str = ""

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "TargetSupport":
        """From the engine's reply."""
        return cls(target=dict(data.get("target") or {}), compile=bool(data.get("compile")),
                   run=bool(data.get("run")), compile_note=str(data.get("compile_note") or ""),
                   run_note=str(data.get("run_note") or ""), group=str(data.get("group") or ""),
                   label=str(data.get("label") or ""))

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)


def codegen_kind(target: dict[str, Any]) -> str:
    """The code generator a target needs (``target.build.<kind>``): the target kind itself."""
    return str(target.get("kind", ""))


def list_devices(client: Any) -> list[DeviceInfo]:
    """Local devices found by the engine (CPU first); ``client`` is an ``EngineClient``."""
    reply = client.request("devices", {})
    return [DeviceInfo.from_json(d) for d in reply["devices"]]


def target_support(client: Any) -> tuple[list[DeviceInfo], list[TargetSupport]]:
    """The engine's devices and, for each of :func:`target_presets` (the host CPU first), whether this TVM
    build compiles for it and this machine runs it."""
    reply = client.request("devices", {"presets": True})
    devices = [DeviceInfo.from_json(d) for d in reply["devices"]]
    return devices, [TargetSupport.from_json(s) for s in reply.get("presets") or []]


def validate_target(client: Any, target: dict[str, Any]) -> dict[str, Any]:
    """Ask the engine to build ``tvm.target.Target(target)``.

    Returns ``{"ok": True, "target": <TVM's canonical dict>, "keys": [...]}`` or
    ``{"ok": False, "error": <TVM's message>}``.
    """
    return client.request("validate_target", {"target": target})


def parse_tracker(text: str) -> tuple[str, int]:
    """``(host, port)`` of an RPC tracker address ``HOST:PORT``; ``ValueError`` with a one-line reason."""
    value = str(text or "").strip()
    host, sep, port = value.rpartition(":")
    if not sep or not host.strip() or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"RPC tracker address {value!r}: expected HOST:PORT, e.g. 127.0.0.1:9190")
    return host.strip().strip("[]"), int(port)


def remote_spec(tracker: str, key: str) -> dict[str, Any]:
    """The ``remote`` argument of ``build_run``/``compare`` for device key ``key`` behind ``tracker``
    (``HOST:PORT``, checked by :func:`parse_tracker`)."""
    parse_tracker(tracker)
    if not str(key or "").strip():
        raise ValueError("an RPC device needs its key (the rpc_server's --key)")
    return {"tracker": str(tracker).strip(), "key": str(key).strip()}


def remote_label(remote: dict[str, Any]) -> str:
    """Short label of an RPC device, e.g. ``rpc local @ 127.0.0.1:9190``."""
    return f"rpc {remote.get('key')} @ {remote.get('tracker')}"


def rpc_device_listing(tracker: str, timeout_s: float = 5.0) -> dict[str, Any]:
    """What the RPC tracker ``tracker`` (``HOST:PORT``) has: ``{"tracker", "devices": [{"key", "total", "free",
    "pending", "servers"}] (by key), "error"}``; ``error`` says in one line why there is no answer (a bad address,
    nothing listening, not a tracker), within ``timeout_s`` (TVM-free: the engine's ``rpc_devices`` and
    ``main.py devices`` call it)."""
    from pipeline_model.scriptlib.rpc import tracker_devices

    reply: dict[str, Any] = {"tracker": str(tracker or "").strip(), "devices": [], "error": ""}
    try:
        host, port = parse_tracker(tracker)
        found = tracker_devices(host, port, timeout_s)
    except ValueError as exc:
        reply["error"] = str(exc)
    except OSError as exc:
        reply["error"] = (f"cannot reach the RPC tracker at {reply['tracker']} ({exc or type(exc).__name__}); "
                          "start one with 'python -m tvm.exec.rpc_tracker --port PORT'")
    else:
        reply["devices"] = [{"key": key, **info} for key, info in sorted(found.items())]
    return reply


def list_rpc_devices(client: Any, tracker: str) -> dict[str, Any]:
    """The devices the RPC tracker ``tracker`` (``HOST:PORT``) has, asked by the engine (command ``rpc_devices``):
    ``{"tracker", "devices": [{"key", "total", "free", "pending", "servers"}], "error"}`` (``error``: why the
    tracker did not answer, in one line; the list is empty then)."""
    return client.request("rpc_devices", {"tracker": tracker})
