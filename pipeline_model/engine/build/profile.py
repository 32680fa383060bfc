"""Profiles of built modules: the store by snapshot key (command ``profile_get``), the graph nodes calling
each callee, and :func:`profile_module` (the stored profile of a snapshot, or one measured now), which
targeted MetaSchedule tuning uses (:mod:`pipeline_model.passkinds.metaschedule.focus`)."""

from __future__ import annotations

from typing import Any, Callable, Optional

from pipeline_model.engine.build.devices import device_for
from pipeline_model.engine.build.measure import DEFAULT_PROFILE, build_module, make_vm, profile_vm, run_function
from pipeline_model.scriptlib.arguments import make_arguments
from pipeline_model.scriptlib.functions import BuildError, entry_function

#: Profiles of built modules by snapshot key (the module that was built), newest last.
PROFILES: "dict[str, dict[str, Any]]" = {}
_PROFILES_KEPT = 32


def callee_nodes(mod: Any, func_name: str, names: list[str]) -> dict[str, list[str]]:
    """Graph node ids (of :func:`pipeline_model.engine.graph_extract_tvm.extract_graph_json` for ``func_name``) calling each name."""
    from pipeline_model.engine import graph_extract_tvm

    try:
        graph = graph_extract_tvm.extract_graph_json(mod, func_name)
    except Exception:  # noqa: BLE001 - a module the graph extractor cannot walk: no mapping, the table stays
        return {}
    wanted = set(names)
    out: dict[str, list[str]] = {}
    for node in graph["nodes"]:
        callee = node.get("callee")
        if callee in wanted:
            out.setdefault(str(callee), []).append(str(node["id"]))
    return out


def keep_profile(key: str, profile: dict[str, Any]) -> None:
    """Keep ``profile`` under ``key`` (the newest :data:`_PROFILES_KEPT`)."""
    PROFILES.pop(key, None)
    PROFILES[key] = profile
    while len(PROFILES) > _PROFILES_KEPT:
        PROFILES.pop(next(iter(PROFILES)))


def profile_module(mod: Any, target: dict[str, Any], key: Optional[str] = None,
                   settings: Optional[dict[str, Any]] = None) -> tuple[dict[str, Any], str]:
    """The profile of snapshot ``key`` kept by this engine, else ``mod`` built, run on seeded random
    inputs (integer ids within their tables) and profiled now with :func:`profile_vm` (kept under
    ``key``). Returns ``(profile, "stored" | "measured")``; raises :class:`BuildError` when it cannot
    be built or run. Used by targeted tuning (:mod:`pipeline_model.passkinds.metaschedule.focus`)."""
    if key and PROFILES.get(str(key)):
        return PROFILES[str(key)], "stored"
    func_name = entry_function(mod)
    arrays, _described = make_arguments(mod, func_name, None)
    ex = build_module(mod, target)
    dev = device_for(target)
    vm = make_vm(ex, dev, mod)
    run_function(vm, func_name, dev, arrays)
    prof = profile_vm(vm, func_name, dev, arrays, settings or DEFAULT_PROFILE, mod)
    prof.update({"key": key, "label": "tuning step input", "function": func_name, "target": target})
    if key:
        keep_profile(str(key), prof)
    return prof, "measured"


def time_variants(mods: list[Any], target: dict[str, Any], cancelled: Optional[Callable[[], bool]] = None
                  ) -> list[dict[str, Any]]:
    """Variants of one model built and timed in place, in rotating rounds on the same seeded inputs
    (:func:`pipeline_model.passkinds.metaschedule.keep.time_in_place`, the code exported scripts run): per variant
    ``{"wall_us", "funcs": {callee: [µs per run]}}``, each variant as a deployed build runs it (its weights
    prepared once: :func:`~pipeline_model.passkinds.metaschedule.keep.steady_state`). The apply step's
    ``keep_wins`` compares the default and the tuned schedules with it. Raises :class:`BuildError` when a variant cannot be built or run, or ("cancelled")
    when ``cancelled()`` turns true before a build or the timing."""
    import tvm

    from pipeline_model.passkinds.metaschedule.keep import steady_state, time_vms

    func_name = entry_function(mods[0])
    arrays, _described = make_arguments(mods[0], func_name, None)
    dev = device_for(target)
    vms = []
    for m in mods:
        if cancelled is not None and cancelled():
            raise BuildError("cancelled")
        steady = steady_state(m)  # weights packed once, outside the timing, as the built model runs
        vms.append(make_vm(build_module(steady, target), dev, steady))
        run_function(vms[-1], func_name, dev, arrays)
    if cancelled is not None and cancelled():
        raise BuildError("cancelled")
    return list(time_vms(vms, func_name, [tvm.runtime.tensor(a, dev) for a in arrays], dev))
