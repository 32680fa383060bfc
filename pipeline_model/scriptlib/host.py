"""The machine that builds, as an LLVM target (``"mcpu": "native"``): the rule the engine builds every target
through, and exported scripts contain this very function (copied with :func:`pipeline_model.emit.script_source`).
Standard library at module level; TVM imported inside the function only."""

from typing import Any


def native_target(target: "Any") -> "Any":  # quoted: exported scripts hold this function without typing
    """``target`` with ``"mcpu": "native"`` replaced by this machine's CPU as LLVM names it (left out where
    LLVM knows none) and ``num-cores`` added when absent (the cores this process may use); any other target
    is returned unchanged. Imports TVM only for a native target. The engine builds every target through it
    and exported scripts contain this very function."""
    if not (isinstance(target, dict) and target.get("kind") == "llvm" and target.get("mcpu") == "native"):
        return target
    import os

    from tvm.target import codegen

    out = dict(target)
    del out["mcpu"]
    try:
        cpu = str(codegen.llvm_get_system_cpu())
        if cpu and cpu != "generic" and codegen.llvm_is_valid_cpu(cpu, ""):
            out["mcpu"] = cpu
    except Exception:  # noqa: BLE001 - host detection is best effort: generic llvm always works
        pass
    if "num-cores" not in out:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        out["num-cores"] = max(1, int(cores or 1))
    return out
