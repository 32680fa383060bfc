"""The MetaSchedule kind's engine commands: ``tune`` (MetaSchedule on a cached or freshly loaded module); discovered like
every handler module (:func:`pipeline_model.engine.handler_registry.discover_handler_modules`).

Importing this module (the worker does it at start, see :func:`pipeline_model.engine.handler_registry.load_handlers`) also installs the
global-function overrides of :mod:`pipeline_model.passkinds.metaschedule.overrides_tvm` (``install_overrides``),
so MetaSchedule run inside other passes (e.g. ``pipeline.static_shape_tuning``) uses the CPU-working
builder/runner. Tuning *steps* are built by their pass kind (:mod:`pipeline_model.passkinds.metaschedule`),
which installs the overrides too.

``tune`` arguments::

    {"key": snapshot key in the module cache}            # or
    {"model": spec, "base_dir": str | None, "lower": true}  # LegalizeOps+AnnotateTIROpPattern+FuseOps+FuseTIR
    "target": {...}, "work_dir": str | None, "pipeline_path": str | None,
    "params": {TuningConfig fields: max_trials_global, max_trials_per_task, num_trials_per_iter,
               cost_model, runner, rpc_host, rpc_port, rpc_key, retune, op_names ...},
    "apply": bool (default true: also apply the database and cache the tuned module)

Events: ``tuning_progress`` ``{done, total, tasks: [{name, trials, best_us, ...}], work_dir, ...}``.
Reply: the tuning summary plus ``tuned_key`` (cache key of the tuned module) and ``apply_database``.
Cancelling the request (or ``stop_tuning``) stops tuning within seconds; what was measured stays in
the database and is applied.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from pipeline_model.engine.handler_registry import handler

if TYPE_CHECKING:  # the worker imports this module; only type checkers import it back
    from pipeline_model.engine.context import WorkerContext


def _install_overrides() -> None:
    from pipeline_model.passkinds.metaschedule.overrides_tvm import install_overrides

    install_overrides()


_install_overrides()


def _check_records_consent(ctx: "WorkerContext", work_dir: str) -> None:
    """Tuning records the user's own tuning did not write are code: tuning in their folder needs consent
    (:func:`pipeline_model.consent.tuning_items`); a database file that cannot be read safely is refused."""
    from pipeline_model import consent
    from pipeline_model.engine.context import ConsentError
    from pipeline_model.passkinds.metaschedule.config import TUNE_IRMOD

    items = consent.tuning_items([{"pass": TUNE_IRMOD, "params": {}}], work_dir, None)
    missing = [i for i in items if not i.sha256] or ctx.missing_consent(items)
    if missing:
        raise ConsentError(consent.refusal_message(missing), missing)


@handler("tune")
def handle_tune(args: dict, ctx: WorkerContext) -> dict:
    """Tune a module with MetaSchedule (see the module docstring for arguments and events)."""
    import tvm
    from tvm import relax

    from pipeline_model.document import resolve_target
    from pipeline_model.passkinds.metaschedule.builder_tvm import check_rpc_tracker
    from pipeline_model.passkinds.metaschedule.config import TuningConfig, resolve_work_dir
    from pipeline_model.work_dirs import run_work_dir
    from pipeline_model.passkinds.metaschedule.tasks_tvm import apply_database, tune_module

    from pipeline_model.scriptlib.host import native_target

    target = native_target(resolve_target(args.get("target") or {"kind": "llvm"}))  # "mcpu": "native": this CPU
    config = TuningConfig.from_params(dict(args.get("params") or {}), where="tune")
    default = run_work_dir({**args, "target": target})  # where tuning writes: the rule runs use too
    work_dir = resolve_work_dir(config.work_dir, default, args.get("base_dir"))
    _check_records_consent(ctx, work_dir)  # before anything loads
    key = args.get("key")
    if key:
        mod = ctx.cache.get(str(key))
        if mod is None:
            raise KeyError(f"snapshot {key!r} is not in the engine's cache (evicted or from an earlier engine); run again")
        source = str(key)
    elif args.get("model"):
        loaded = ctx.load_model(str(args["model"]), args.get("base_dir"))
        mod = loaded.mod
        source = loaded.key
        if args.get("lower", True):
            seq = tvm.transform.Sequential([
                relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(),
                relax.transform.FuseOps(), relax.transform.FuseTIR(),
            ])
            with tvm.target.Target(target), tvm.transform.PassContext(opt_level=3):
                mod = seq(mod)
    else:
        raise ValueError("tune needs 'key' (a cached snapshot) or 'model'")
    if config.runner == "rpc":
        check_rpc_tracker(config)

    def on_progress(progress: Any) -> None:
        ctx.emit("tuning_progress", progress.to_json())

    summary = tune_module(
        mod, target, work_dir, config.max_trials_global, config.max_trials_per_task, config.cost_model,
        runner_config=config, on_progress=on_progress,
        should_stop=lambda: ctx.cancelled() or ctx.stop_tuning_requested(),
        op_names=config.op_names or None,
    )
    if args.get("apply", True):
        tuned, info = apply_database(mod, target, work_dir)
        digest = hashlib.sha256(json.dumps([source, target, work_dir, summary["done"]], default=str).encode())
        tuned_key = "tuned-" + digest.hexdigest()[:24]
        ctx.cache.put(tuned_key, tuned)
        summary["tuned_key"] = tuned_key
        summary["apply_database"] = info
    return summary
