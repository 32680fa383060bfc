"""Engine commands ``profile`` (build and time every call of a module) and ``profile_get`` (the profiles this
engine keeps per snapshot)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline_model.engine.build.measure import DEFAULT_PROFILE
from pipeline_model.engine.build.profile import PROFILES
from pipeline_model.engine.handler_registry import handler
from pipeline_model.engine.handlers_build import handle_build_run
from pipeline_model.scriptlib.functions import BuildError

if TYPE_CHECKING:  # the worker imports this module; only type checkers import it back
    from pipeline_model.engine.context import WorkerContext


@handler("profile")
def handle_profile(args: dict, ctx: WorkerContext) -> dict:
    """Build and profile a module without timing or checking it: ``build_run`` with ``profile`` on.

    args: like ``build_run`` (``profile`` defaults to :data:`DEFAULT_PROFILE`). Reply: the profile
    (``entries``, ``total_us``, ``run_us``, ``nodes``, ``key``, ...).
    """
    req = dict(args)
    req.setdefault("profile", dict(DEFAULT_PROFILE))
    if req["profile"] is None:
        req["profile"] = dict(DEFAULT_PROFILE)
    req["bench"], req["check"] = None, None
    result = handle_build_run(req, ctx)
    if result["profile"] is None and result.get("profile_note"):  # profiling on the RPC device failed
        raise BuildError(result["profile_note"])
    return result["profile"]


@handler("profile_get")
def handle_profile_get(args: dict, ctx: WorkerContext) -> dict:
    """The profiles kept by this engine: ``{"keys": [...]}``, or ``{"profile": ...}`` for ``key`` (null if none)."""
    key = args.get("key")
    if key:
        return {"profile": PROFILES.get(str(key))}
    return {"keys": list(PROFILES)}
