"""Engine commands that find what breaks a model (issue 21): ``bisect``, ``save_reproducer`` and the
``reduce_*`` commands of ``main.py reduce`` (:mod:`pipeline_model.engine.debugging.reduce_tvm`), ``diverge``.

``bisect`` args: ``run`` (the ``run`` request arguments of the pipeline, ``EngineClient.run_args(doc)``),
``inputs`` (``{"seed"}`` or ``{"path"}``), ``check`` (``{"rtol", "atol"}``), ``check_against`` (``tvm`` or
``framework``), ``function``. Reply: :class:`pipeline_model.debugging.bisect.BisectReport` as JSON. Events:
``bisect_progress`` (``message``, ``builds``, ``budget``, ``tested``, ``step``) and ``build_progress``.
Stoppable between two builds (cancel): the reply then has ``cancelled`` and what was found so far.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline_model.engine.handler_registry import handler

if TYPE_CHECKING:  # the worker imports this module; only type checkers import it back
    from pipeline_model.engine.context import WorkerContext


@handler("bisect")
def handle_bisect(args: dict, ctx: "WorkerContext") -> dict:
    """Find the first step after which the pipeline's module is wrong (see the module docstring)."""
    from pipeline_model.engine.debugging.bisect_tvm import Bisection

    return Bisection(args, ctx).run()


@handler("save_reproducer")
def handle_save_reproducer(args: dict, ctx: "WorkerContext") -> dict:
    """Write a reproducer folder for a failing step (:mod:`pipeline_model.debugging.reproducer`).

    args: ``run`` (run arguments), ``step_index`` (0-based, the failing step), ``kind`` (``exception``,
    ``crash``, ``hang``, ``numeric``, ``build``), ``error``, ``traceback``, ``timeout_s`` (hang), ``check``,
    ``inputs``, ``function`` (numeric/build), ``run_after`` (a crash when the module after the step is built and run),
    ``out_dir`` (absolute; written with ``safe_write``).
    The failing step itself is not run. Reply: ``folder``, ``files``, ``kind``, ``bindings``, ``note``.
    """
    from pipeline_model.engine.debugging.reproducer_tvm import save

    return save(args, ctx)


def _trusted(ctx: "WorkerContext", folder: str) -> None:
    """A reproducer's ``repro.py`` is code: run it only with consent to all code (``--trust``) or to its content
    (the app asks about it: :func:`pipeline_model.consent.reproducer_item`)."""
    from pipeline_model import consent

    missing = ctx.missing_consent([consent.reproducer_item(folder)])
    if missing:
        from pipeline_model.engine.context import ConsentError

        raise ConsentError("reducing runs the reproducer's repro.py (custom code): run with --trust or consent in "
                           "the app", missing)


@handler("reduce_prepare")
def handle_reduce_prepare(args: dict, ctx: "WorkerContext") -> dict:
    """Load a reproducer folder's module: ``{key, module_json, bindings, kind, function}``."""
    from pipeline_model.debugging.reproducer import read_spec
    from pipeline_model.engine.debugging import reduce_tvm

    folder = str(args["folder"])
    spec = read_spec(folder)
    return dict(reduce_tvm.put(reduce_tvm.load_folder_module(folder), ctx), kind=spec.kind, function=spec.function)


@handler("reduce_candidates")
def handle_reduce_candidates(args: dict, ctx: "WorkerContext") -> dict:
    """Candidate reductions of the module ``key`` (``module_json`` when not cached): ``{candidates}``."""
    from pipeline_model.engine.debugging import reduce_tvm

    mod, _key = reduce_tvm.module_of(args, ctx)
    return {"candidates": reduce_tvm.candidates(mod, str(args.get("function") or "main"))}


@handler("reduce_apply")
def handle_reduce_apply(args: dict, ctx: "WorkerContext") -> dict:
    """Apply one candidate: ``{key, module_json, bindings}`` or ``{"key": None}`` when it cannot be made."""
    from pipeline_model.engine.debugging import reduce_tvm

    mod, _key = reduce_tvm.module_of(args, ctx)
    new = reduce_tvm.apply_candidate(mod, dict(args["candidate"]), str(args.get("function") or "main"))
    return {"key": None} if new is None else reduce_tvm.put(new, ctx)


@handler("reduce_check")
def handle_reduce_check(args: dict, ctx: "WorkerContext") -> dict:
    """Does the module ``key`` still fail as the reproducer ``folder`` expects? ``{interesting, seen}``."""
    from pipeline_model.engine.debugging import reduce_tvm

    _trusted(ctx, str(args["folder"]))
    mod, _key = reduce_tvm.module_of(args, ctx)
    return reduce_tvm.check(str(args["folder"]), mod)


@handler("reduce_write")
def handle_reduce_write(args: dict, ctx: "WorkerContext") -> dict:
    """Write the reduced reproducer into ``out_dir``: ``{folder, files, bindings}``."""
    from pipeline_model.engine.debugging import reduce_tvm

    mod, _key = reduce_tvm.module_of(args, ctx)
    return reduce_tvm.write(str(args["folder"]), str(args["out_dir"]), mod, int(args.get("original") or 0),
                            int(args.get("checks") or 0), overwrite=bool(args.get("overwrite")))


@handler("diverge")
def handle_diverge(args: dict, ctx: "WorkerContext") -> dict:
    """Where values diverge across step ``step_index`` (0-based): per value the VM made (bindings of the entry
    function, values inside the calls it makes), the error of its value after the step against its value
    before (:mod:`pipeline_model.engine.debugging.diverge_tvm`).

    args: like ``bisect`` plus ``step_index`` (and ``via``: instrument / expose). Reply: ``step``, ``pass_id``,
    ``function``, ``via``, ``first_divergent``, ``first_inside``, ``nodes`` (``name``, ``key``, ``callee``,
    ``node_id``, ``shape``, ``dtype``, ``status`` ok / diverges / no counterpart, ``max_abs``,
    ``max_abs_over_ref``, ``via``, ``first``, ``first_inside``, ``parent``, ``counterpart``), ``only_before``,
    ``not_captured``, ``unmatched_calls``.
    """
    from pipeline_model.engine.debugging.diverge_tvm import diverge

    return diverge(args, ctx)
