"""A build request of the engine: progress events, cancellation, the check settings and the module to
build (a snapshot of a run, the final module of running the document's pipeline, or the model as loaded)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from pipeline_model.engine.handler_registry import HANDLERS
from pipeline_model.scriptlib.functions import BuildError

if TYPE_CHECKING:  # the worker imports the handlers; only type checkers import it here
    from pipeline_model.engine.context import WorkerContext

#: The numerical check's default tolerances.
DEFAULT_CHECK = {"rtol": 1e-4, "atol": 1e-4}


def progress(ctx: WorkerContext, phase: str, message: str) -> None:
    """Send a ``build_progress`` event (``phase``, ``message``) to the client."""
    ctx.emit("build_progress", {"phase": phase, "message": message})


def check_cancel(ctx: WorkerContext) -> None:
    """Raise ``BuildError("cancelled")`` when the client cancelled the request."""
    if ctx.cancelled():
        raise BuildError("cancelled")


def check_settings(args: dict[str, Any], mod: Any = None, loaded: Any = None,
                   outputs: Any = None) -> Optional[dict[str, Any]]:
    """``{"rtol", "atol", "scale", "against"}`` of a request's ``check`` / ``check_against``; None: no check.

    A tolerance the request leaves out (or null) is the default for the lowest-precision float dtype of the
    built module ``mod`` (:func:`pipeline_model.scriptlib.outputs.default_tolerance`: 1e-4 for float32, 1e-2
    for float16 …; float32's without ``mod``); the settings then say so: ``tolerance_dtype``, the dtype chosen.
    A quantized model (``loaded``: the ``LoadedModel``, its module and weights; ``outputs``: the built module's)
    gets one quantization step of its output, absolute (``tolerance_dtype`` ``"int8"``, ``quant_step``).
    """
    check = args.get("check", {})
    if check is None:
        return None
    out: dict[str, Any] = {"scale": str(check.get("scale", "output")),
                           "against": str(args.get("check_against") or check.get("against") or "tvm")}
    given = {name: check.get(name) for name in ("rtol", "atol")}
    if any(value is None for value in given.values()):
        from pipeline_model.scriptlib.outputs import default_tolerance

        default = (default_tolerance(mod, getattr(loaded, "mod", None), getattr(loaded, "params", None), outputs)
                   if mod is not None else {**DEFAULT_CHECK, "dtype": "float32"})
        out["tolerance_dtype"] = default["dtype"]
        if default.get("quant_step"):
            out.update(scale=default["scale"], quant_step=default["quant_step"], step_from=default["step_from"])
        given = {name: default[name] if value is None else value for name, value in given.items()}
    out.update({name: float(value) for name, value in given.items()})
    return out


def _document(args: dict[str, Any]) -> Any:
    from pipeline_model.document import PipelineDocument

    data = args.get("document")
    if not isinstance(data, dict):
        raise BuildError("build request without a document")
    return PipelineDocument.from_dict(data)


def final_key(run_reply: dict[str, Any]) -> str:
    """The snapshot key of the final module of a ``run`` reply; ``BuildError`` saying why there is none."""
    if run_reply.get("error"):
        raise BuildError(f"the pipeline run failed: {run_reply['error']}")
    if run_reply.get("failed_index") is not None:
        steps = run_reply.get("steps") or []
        idx = run_reply["failed_index"]
        step = steps[idx] if 0 <= idx < len(steps) else {}
        raise BuildError(f"the pipeline failed at step {idx + 1} ({step.get('pass_id', '?')}): {step.get('error')}")
    if run_reply.get("cancelled"):
        raise BuildError("cancelled")
    for step in reversed(run_reply.get("steps") or []):
        if step.get("snapshot_key"):
            return str(step["snapshot_key"])
    if run_reply.get("input_key"):
        return str(run_reply["input_key"])
    raise BuildError("the pipeline run produced no module")


@dataclass(frozen=True)
class ResolvedModule:
    """The module a build request names, resolved: ``mod`` (to build), ``loaded`` (the ``LoadedModel``),
    ``target``, ``label``, ``key`` (snapshot key) and ``baseline`` — the model as loaded, to be built as plain
    ``tvm.compile`` builds it. The build functions take ``baseline`` from here
    (:func:`pipeline_model.engine.build.measure.build_resolved`, ``measure_resolved``), so no handler has to pass
    it on by hand (three of them once forgot to, and the bench's "TVM default" was built by the app's build)."""

    mod: Any
    loaded: Any
    target: dict[str, Any]
    label: str
    key: str
    baseline: bool
    remote: Optional[dict[str, Any]] = None  # run on this RPC device (pipeline_model.engine.build.remote)


def resolve_module(args: dict[str, Any], ctx: WorkerContext) -> ResolvedModule:
    """The :class:`ResolvedModule` of a build request.

    ``args``: ``document`` (pipeline document dict) with ``base_dir`` and ``trust_custom_code``, or
    ``run`` (the ``run`` request arguments, ``EngineClient.run_args(doc)``); optional ``key`` (a snapshot
    key; default: run the pipeline and take the final module); ``baseline`` (build the model as loaded
    instead); ``target`` (overrides the document's); ``remote`` (run on an RPC device); ``rerun_missing`` (run the pipeline again when ``key`` is not
    in the cache: a request sent again to a restarted engine).
    """
    run_args = args.get("run")
    if not isinstance(run_args, dict):
        from pipeline_model.engine.client import EngineClient

        doc = _document(args)
        run_args = EngineClient.run_args(doc, trust_custom_code=bool(args.get("trust_custom_code")))
        run_args["base_dir"] = args.get("base_dir", run_args.get("base_dir"))
        name = doc.name
    else:
        run_args = dict(run_args)
        name = str(run_args.get("name") or "pipeline")
    if args.get("target"):
        run_args["target"] = dict(args["target"])
    target = dict(run_args.get("target") or {"kind": "llvm"})
    remote = dict(args["remote"]) if isinstance(args.get("remote"), dict) else None
    model = str(run_args.get("model") or "")
    progress(ctx, "loading", f"loading model {model}")
    loaded = ctx.load_model(model, run_args.get("base_dir"))
    if args.get("baseline"):
        return ResolvedModule(loaded.mod, loaded, target, "baseline (model as loaded)", f"baseline:{loaded.key}", True,
                              remote)
    key = args.get("key")
    if not key or (args.get("rerun_missing") and ctx.cache.get(str(key)) is None):
        # No key: the final module. A key the engine lost (it restarted): the run caches every step's module under
        # the same deterministic key again.
        run = HANDLERS.get("run")
        if run is None:
            raise BuildError("this engine has no run command")
        run_args["until"] = None
        run_args["scripts"] = False  # a build needs the final module, not every step's TVMScript
        progress(ctx, "pipeline", f"running the pipeline ({len(run_args.get('steps') or [])} steps)")
        reply = run(run_args, ctx)
        key = key or final_key(reply)
    mod = ctx.cache.get(str(key))
    if mod is None:
        raise BuildError(f"module {key!r} is not in the engine's cache (evicted or from an earlier engine); run again")
    return ResolvedModule(mod, loaded, target, f"pipeline {name!r}" if name != "pipeline" else "pipeline", str(key),
                          False, remote)
