"""Engine half of reproducers: collect the module before a failing step, the step's exported construction,
the arguments and the facts of the TVM build, and write the folder (:mod:`pipeline_model.debugging.reproducer`).

The steps before the failing one run again through the ``run`` command (cached: usually free); the failing
step itself never runs here (it may crash or hang the engine)."""

from __future__ import annotations

import io
import platform
from dataclasses import asdict
from typing import Any, Optional

import numpy as np

from pipeline_model.debugging import reproducer
from pipeline_model.engine.debugging.bisect_tvm import Tester
from pipeline_model.engine.handler_registry import HANDLERS

# Functions of the build handlers (issue 17 moves them to engine/build/; keep these imports together).
# The build functions these checks reuse (engine/build and the scriptlib rules exported scripts share).
from pipeline_model.engine.build.errors import error_text
from pipeline_model.scriptlib.arguments import TRANSFORM_SUFFIX, caller_signature
from pipeline_model.scriptlib.functions import BuildError, relax_function_names

_DONE_STATES = ("changed", "unchanged", "skipped")


def module_after(run_args: dict[str, Any], until: int, ctx: Any) -> Any:
    """The module after the steps ``0..until`` (``-1``: the model as loaded), from a cached run."""
    if until < 0:
        return ctx.load_model(str(run_args.get("model") or ""), run_args.get("base_dir")).mod
    run = HANDLERS.get("run")
    if run is None:
        raise BuildError("this engine has no run command")
    reply = run(dict(run_args, until=until, scripts=False), ctx)
    if reply.get("error"):
        raise BuildError(f"the pipeline run failed: {reply['error']}")
    if reply.get("failed_index") is not None:
        raise BuildError(f"step {int(reply['failed_index']) + 1} failed before the step of the reproducer")
    key = reply.get("input_key")
    for step in (reply.get("steps") or [])[: until + 1]:
        if step.get("state") in _DONE_STATES and step.get("snapshot_key"):
            key = step["snapshot_key"]
    mod = ctx.cache.get(str(key))
    if mod is None:
        raise BuildError("the module before the failing step is not in the engine's cache; run again")
    return mod


def binding_count(mod: Any) -> int:
    """Bindings in the module's Relax functions."""
    import tvm

    total = 0
    for _gv, func in mod.functions_items():
        if isinstance(func, tvm.relax.Function) and isinstance(func.body, tvm.relax.SeqExpr):
            total += sum(len(block.bindings) for block in func.body.blocks)
    return total


def module_texts(mod: Any) -> tuple[str, Optional[str], str]:
    """``(TVMScript, save_json text or None, note)``: the JSON only when the text does not parse back to
    the same module (after ``dataflow_lower``, or constants TVMScript cannot carry)."""
    import tvm

    text = mod.script(show_meta=True)
    try:
        back = tvm.script.from_source(text)
        tvm.ir.assert_structural_equal(back, mod)
        return text, None, ""
    except Exception as exc:  # noqa: BLE001 - any parse or equality failure: keep the JSON too
        note = ("The TVMScript in repro.py does not parse back to the same module "
                f"({reproducer.scrub_paths(error_text(exc).splitlines()[0])}); repro.py loads module.json instead.")
        return text, tvm.ir.save_json(mod), note


def export_piece(pass_id: str, params: dict[str, Any], index: int, ctx: Any,
                 target: Optional[dict[str, Any]] = None) -> dict[str, list[str]]:
    """The failing step as an exported script builds it (its pass kind's ``export_step``; its defaults on
    ``target``, as the run took them)."""
    from pipeline_model import emit
    from pipeline_model.passkinds.registry import kind_for, recipe_for

    try:
        checked, errors = ctx.catalogue().validate_params(pass_id, params, target)
        params = params if errors else checked
    except Exception:  # noqa: BLE001 - an unknown pass: the kind below says so
        pass
    kind = kind_for(pass_id)
    if kind is None:
        raise BuildError(f"no construction known for pass {pass_id!r}")
    label = f"step {index + 1} ({pass_id})"
    try:
        expr = recipe_for(pass_id, params, step_number=index + 1)
        piece = kind.export_step(pass_id, params, expr, index=index, label=label)
    except emit.EmitError as exc:
        raise BuildError(f"{label}: {exc}") from None
    return {k: list(v) for k, v in asdict(piece).items()}


def argument_file(args: dict[str, Any], ctx: Any, before: Any, after: Optional[Any]) -> tuple[bytes, str, str]:
    """``(inputs.npz bytes, entry function, words on where the values come from)``: the arguments of the
    module before (and after) the step by name, made as the build check makes them. The weights of a function
    lifted by ``relax.LiftTransformParams`` are the ones its ``<f>_transform_params`` takes (the model's, not
    packed; ``repro.py`` runs that function as every build does), named as
    :func:`~pipeline_model.scriptlib.arguments.caller_signature` names them."""
    tester = Tester(args, ctx)
    values: dict[str, np.ndarray] = {}
    sources: dict[str, str] = {}
    func_name, lifted = "main", False
    for mod in (before, after):
        if mod is None:
            continue
        func_name, arrays, _ref, described = tester.arguments(mod)
        ptypes, _n_in = caller_signature(mod, func_name)
        lifted = lifted or func_name + TRANSFORM_SUFFIX in relax_function_names(mod)
        for param, a, d in zip(ptypes, arrays, described):
            values.setdefault(str(param["name"]), a)
            sources.setdefault(str(param["name"]), str(d.get("source") or ""))
    buffer = io.BytesIO()
    np.savez(buffer, **values)  # type: ignore[arg-type]
    return buffer.getvalue(), func_name, reproducer.inputs_note(sources, lifted)


def save(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Write the reproducer folder ``args["out_dir"]``; see :func:`pipeline_model.engine.handlers_debug`."""
    import tvm

    run_args = dict(args.get("run") or {})
    index = int(args["step_index"])
    steps = list(run_args.get("steps") or [])
    if not reproducer.NO_STEP <= index < len(steps):
        raise BuildError(f"step {index + 1}: the pipeline has steps 1..{len(steps)}")
    kind = str(args.get("kind") or reproducer.KIND_EXCEPTION)
    step = steps[index] if index >= 0 else {}  # NO_STEP: the model as loaded, TVM's default pipeline
    pass_id, params = str(step.get("pass") or ""), dict(step.get("params") or {})
    before = module_after(run_args, index - 1, ctx)
    text, json_text, note = module_texts(before)
    check = dict(args.get("check") or {})
    extra: dict[str, Any] = {}
    function = str(args.get("function") or "main")
    run_after = bool(args.get("run_after"))
    if kind in (reproducer.KIND_NUMERIC, reproducer.KIND_BUILD) or run_after:
        after = module_after(run_args, index, ctx) if kind == reproducer.KIND_NUMERIC else None
        extra["inputs.npz"], function, inputs_note = argument_file(args, ctx, before, after)
        note = " ".join(n for n in (note, inputs_note) if n)
    if json_text is not None:
        extra["module.json"] = json_text
    if index < 0:
        note = " ".join(n for n in ("No pipeline step: repro.py builds the model as loaded with tvm.compile's "
                                    "default pipeline and runs it, and that fails (a TVM bug).", note) if n)
    error = str(args.get("error") or "")
    expected = reproducer.expected_for(
        kind, error, str(args.get("traceback") or ""), timeout_s=args.get("timeout_s"),
        signal_number=reproducer.crash_signal(error) if kind == reproducer.KIND_CRASH else None,
        rtol=float(1e-4 if check.get("rtol") is None else check["rtol"]),
        atol=float(1e-4 if check.get("atol") is None else check["atol"]), function=function)
    if run_after:
        expected["run_after"] = True
    spec_target = dict(run_args.get("target") or {"kind": "llvm"})
    spec = reproducer.ReproSpec(
        kind=kind, expected=expected, target=spec_target,
        pass_context=_pass_context(run_args), module_text=text, step_index=index, pass_id=pass_id, params=params,
        function=function, error=reproducer.scrub_paths(error), tvm_version=str(tvm.__version__),
        build_flags={str(k): str(v) for k, v in dict(tvm.support.libinfo()).items()},
        python_version=platform.python_version(), pieces=[export_piece(pass_id, params, index, ctx, spec_target)] if index >= 0 else [],
        has_module_json=json_text is not None, has_inputs="inputs.npz" in extra, bindings=binding_count(before),
        note=note)
    folder = str(args["out_dir"])
    names = reproducer.write_folder(folder, reproducer.spec_files(spec, extra), overwrite=bool(args.get("overwrite")))
    return {"folder": folder, "files": names, "kind": kind, "bindings": spec.bindings, "note": note}


def _pass_context(run_args: dict[str, Any]) -> dict[str, Any]:
    """The pipeline's PassContext keyword arguments (as exported scripts write ``PASS_CONTEXT``)."""
    from pipeline_model.pass_context import PassContextSettings

    return PassContextSettings.from_json(run_args.get("pass_context") or {}).to_json()
