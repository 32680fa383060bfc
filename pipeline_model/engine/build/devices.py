"""Targets and local devices of the engine: ``tvm.target.Target`` from a target dict, the host CPU target,
the device a target runs on, and the devices this machine has (imports TVM inside the functions)."""

from __future__ import annotations

import functools
from typing import Any

from pipeline_model import targets as targets_mod
from pipeline_model.scriptlib.host import native_target
from pipeline_model.scriptlib.functions import BuildError, first_line
from pipeline_model.scriptlib.threads import usable_cores

def tvm_target(target: dict[str, Any]) -> Any:
    """``tvm.target.Target`` from a target dict; ``BuildError`` with TVM's reason when invalid."""
    import tvm

    try:
        return tvm.target.Target(native_target(dict(target)))  # "mcpu": "native": this machine
    except Exception as exc:  # noqa: BLE001 - TVM raises ValueError/TVMError
        raise BuildError(f"invalid target {target!r}: {first_line(exc)}") from None


def host_cpu_target() -> dict[str, Any]:
    """The CPU target for this machine: ``{"kind": "llvm", "mcpu": <host>, "num-cores": N}``."""
    from tvm.target import codegen

    target: dict[str, Any] = {"kind": "llvm", "num-cores": usable_cores()}
    try:
        cpu = str(codegen.llvm_get_system_cpu())
        if cpu and cpu != "generic" and codegen.llvm_is_valid_cpu(cpu, ""):
            target["mcpu"] = cpu
    except Exception:  # noqa: BLE001 - host detection is best effort; plain llvm always works
        pass
    return target


def device_for(target: dict[str, Any], index: int = 0) -> Any:
    """The TVM device that runs code built for ``target``; ``BuildError`` when this machine has none."""
    import tvm

    kind = targets_mod.device_kind_for(target)
    dev = getattr(tvm, kind)(index)
    if not dev.exist:
        raise BuildError(
            f"no {kind} device {index} on this machine: the module was built for {target.get('kind')}, "
            f"but it can only run where such a device exists (detected devices: "
            f"{', '.join(d['kind'] for d in detect_devices())})"
        )
    return dev


def detect_devices() -> list[dict[str, Any]]:
    """Local devices: the CPU always, and each GPU kind whose device 0 exists."""
    import tvm

    cpu_target = host_cpu_target()
    devices = [targets_mod.DeviceInfo(
        kind="cpu", index=0,
        name=f"{cpu_target.get('mcpu', 'generic')}, {cpu_target['num-cores']} cores",
        target=cpu_target).to_json()]
    for kind in targets_mod.DEVICE_KINDS[1:]:
        try:
            dev = getattr(tvm, kind)(0)
            exists = bool(dev.exist)
        except Exception:  # noqa: BLE001 - a runtime without this backend
            exists = False
        if not exists:
            continue
        details: dict[str, Any] = {}
        for attr in ("device_name", "compute_version", "max_threads_per_block", "warp_size", "total_global_memory"):
            try:
                value = getattr(dev, attr)
                details[attr] = value if isinstance(value, (int, float, str)) or value is None else str(value)
            except Exception:  # noqa: BLE001 - not every backend reports everything
                pass
        target: dict[str, Any] = {"kind": kind}
        if kind == "cuda" and details.get("compute_version"):
            target["arch"] = "sm_" + str(details["compute_version"]).replace(".", "")
        devices.append(targets_mod.DeviceInfo(kind=kind, index=0, name=str(details.get("device_name") or kind),
                                              target=target, details=details).to_json())
    return devices


def _device_arch(kind: str) -> str:
    """The architecture of this machine's device 0 of ``kind`` (``sm_90``), or ""."""
    import tvm

    try:
        dev = getattr(tvm, kind)(0)
        if kind == "cuda" and dev.exist and dev.compute_version:
            return "sm_" + str(dev.compute_version).replace(".", "")
    except Exception:  # noqa: BLE001 - a runtime without this backend
        pass
    return ""


@functools.lru_cache(maxsize=None)
def toolchain_problem(kind: str) -> str:
    """What building for target kind ``kind`` needs on this machine besides TVM's code generator, and lacks ("" when
    nothing is missing), found by TVM's own look-ups once per engine: ROCm needs its device libraries
    (``tvm.support.rocm.callback_rocm_bitcode_path``: ``ROCM_PATH``, ``hipcc`` or ``/opt/rocm``) and ``ld.lld``."""
    if kind == "rocm":
        from tvm.support import rocm

        try:
            rocm.callback_rocm_bitcode_path()
        except Exception as exc:  # noqa: BLE001 - TVM raises RuntimeError("Cannot find ROCm path") and the like
            return f"ROCm's device libraries are not on this machine ({first_line(exc)}): install ROCm or set ROCM_PATH"
        if not rocm.find_lld(required=False):
            return "ld.lld (the linker ROCm builds need) is not on this machine"
    return ""


def target_support(target: dict[str, Any]) -> dict[str, Any]:
    """Whether this TVM build compiles for ``target`` (its code generator ``target.build.<kind>`` is compiled in,
    TVM accepts the target and the toolchain it calls is here: :func:`toolchain_problem`) and whether this machine runs it (a device of its kind exists; for CUDA, of the
    same architecture), with the reasons: ``{target, compile, run, compile_note, run_note}``."""
    import tvm

    kind = targets_mod.codegen_kind(target)
    compile_ok = tvm.get_global_func(f"target.build.{kind}", True) is not None
    compile_note = "" if compile_ok else f"this TVM build has no {kind} code generator (target.build.{kind})"
    if compile_ok:
        try:
            tvm_target(target)
        except BuildError as exc:
            compile_ok, compile_note = False, str(exc)
    if compile_ok and toolchain_problem(kind):  # the code generator is there, what it calls is not
        compile_ok, compile_note = False, toolchain_problem(kind)
    run_ok, run_note = False, ""
    try:
        device = targets_mod.device_kind_for(target)
        run_ok = bool(getattr(tvm, device)(0).exist)
        run_note = "" if run_ok else f"no {device} device on this machine"
    except Exception:  # noqa: BLE001 - a runtime without this backend
        run_note = f"this TVM runtime cannot reach a {kind} device"
    arch = _device_arch("cuda") if kind == "cuda" and run_ok else ""
    if arch and target.get("arch") and target["arch"] != arch:
        run_ok, run_note = False, f"this machine's GPU is {arch}"
    return {"target": dict(target), "compile": compile_ok, "run": run_ok, "compile_note": compile_note,
            "run_note": run_note}


def preset_support() -> list[dict[str, Any]]:
    """Every preset of the target picker (the host CPU first): its ``group`` and ``label`` with
    :func:`target_support`."""
    return [{**p.to_json(), **target_support(p.target)} for p in targets_mod.target_presets(host_cpu_target())]


def target_label(target: dict[str, Any]) -> str:
    """Short label of a target dict (``llvm znver4``)."""
    from pipeline_model.document import target_label as label

    return label(target)
