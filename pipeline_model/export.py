"""Export a pipeline as one standalone Python script using plain TVM 0.27 calls (TVM-free).

The script loads the model (code from :func:`pipeline_model.models.emit_model_loader`), builds each
enabled step with the same construction the engine uses (:func:`pipeline_model.passkinds.registry.recipe_for`, by
the step's pass kind),
applies the steps one by one inside ``with TARGET, tvm.transform.PassContext(...)`` (the
pipeline's ``opt_level``/``config``/``disabled_pass``, default opt level 3) in ``apply_steps`` and prints
the final module. That is the whole plain script (a pipeline of stock TVM passes, exported with ``plain`` and
without ``build``: read like TVM's tutorial). The full script goes on below :data:`MARKER` with the code it needs
beyond plain TVM: the steps' own (the app's passes and rules, custom steps), writing the module
(``--save-script`` / ``--save-json``) and, with ``--build`` (or when exported with ``build=True``), compiling with
``tvm.compile`` (its PrimFuncs on every core: :mod:`pipeline_model.scriptlib.building`) and running ``main`` on
seeded inputs, timed and checked.

Safety: every user-provided value (names, parameters, paths) reaches the script through ``repr()`` of
a checked JSON-plain value; pass ids must consist of letters, digits, ``_`` and ``.``. The only user
text embedded as code is a custom step's source, verbatim, inside its own function.
"""

from __future__ import annotations

import os
from typing import Any, Optional

from pipeline_model import emit, runtime_threads, scriptlib, targets
from pipeline_model.catalogue import Catalogue
from pipeline_model.document import PipelineDocument


class ExportError(ValueError):
    """The pipeline cannot be exported; the message names the step and the problem."""


#: The first lines of every script: nothing is imported from the folder it lies in or is run from (the code of
#: :mod:`pipeline_model.scriptlib.sys_path`), before any import a planted ``numpy.py`` or ``tvm.py`` could answer.
_GUARD = '''import os
import sys


{sys_path}


if __name__ == "__main__":
    drop_script_folders(__file__)  # a numpy.py or tvm.py planted next to this script is not imported
'''

#: The head of a script of stock TVM passes (:func:`_is_plain`): the model, the passes, the result; nothing else.
_PLAIN_HEADER = '''#!/usr/bin/env python3
"""TVM {tvm_hint} script exported by Relax Pipeline Studio: loads the model, applies the pipeline's passes in order and
prints the final module (--quiet: not). The full export (--build, --full) also saves, builds, runs and checks it."""

{guard}
import argparse
import tvm
'''

#: The end of a script of stock TVM passes.
_PLAIN_MAIN = '''

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description={name!r})
    parser.add_argument("--quiet", action="store_true", help="do not print the final module")
    args = parser.parse_args()
    final = apply_steps(mod)
    if not args.quiet:
        print(final.script())
'''

#: Where the pipeline ends in a full script: what follows is the app's code the script needs beyond plain TVM.
MARKER = (
    "# " + "=" * 98 + "\n"
    "# The pipeline ends here. Below: the code this script needs beyond plain TVM (the app's own passes and rules,\n"
    "# building, timing, checking, writing files safely): the same code as the app runs, not needed to read the above.\n"
    "# " + "=" * 98 + "\n"
)


_HEADER = '''#!/usr/bin/env python3
"""Standalone TVM {tvm_hint} script exported by Relax Pipeline Studio.

It loads the model, applies the pipeline's enabled steps one by one (``apply_steps``) and prints the final
module. Options: --save-script FILE (TVMScript), --save-json FILE (tvm.ir.save_json), --build (compile with
tvm.compile, run the entry function on seeded inputs, print its latency and check it against the model
built by tvm.compile's default pipeline), --quiet (do not print the module), --force (replace existing files).
The code these need beyond plain TVM (the app's passes and rules, measuring, checking) is below the marker
after ``apply_steps``.
"""

{guard}
import argparse
import time

{runtime_threads}

import numpy as np
import tvm
from tvm import relax
'''

#: What the script runs after its steps: the engine's own code for which function runs, its arguments and the
#: check (:mod:`pipeline_model.scriptlib`, copied), then :func:`build_and_run` and ``main``.
_RUN = '''

def check_outputs(got, ref, tolerance, against="tvm.compile default, llvm"):
    """The app's check (``compare_outputs``: |diff| <= atol * max|ref| + rtol * |ref|) at ``tolerance`` (the app's
    default for the module's lowest float precision, or one quantization step of a quantized model's output:
    ``default_tolerance``) against the reference ``against`` names, printed; returns pass/fail."""
    result = compare_outputs(got, ref, tolerance["rtol"], tolerance["atol"], tolerance.get("scale", "output"))
    if tolerance.get("quant_step"):  # a quantized model: one quantization step of the output
        print(f"check: int8 model: tolerance = 1 quantization step ({tolerance['quant_step']:.3g}, "
              + ("the output's range / 255)" if tolerance["step_from"] == "range"
                 else "the scale of the last DequantizeLinear)"))
    else:
        print(f"check: rtol {tolerance['rtol']:g}, atol {tolerance['atol']:g} ({tolerance['dtype']}, "
              "the module's lowest precision)")
    if result.get("error"):
        print(f"check: FAIL  {result['error']}")
    for out in result["outputs"]:
        if "error" in out:
            print(f"check output {out['index']}: FAIL  {out['error']}")
            continue
        print(f"check output {out['index']}: {'PASS' if out['passed'] else 'FAIL'}  max |diff| {out['max_abs']:.3g}, "
              f"max |diff|/max |ref| {out['max_abs_over_ref']:.3g} (max |ref| {out['max_ref']:.3g}) "
              f"vs {against}")
    for warning in result["warnings"]:
        print(f"  warning: {warning}")
    return bool(result["passed"])


def build_and_run(final, original, number=10, repeat=5):
    """Compile ``final`` for TARGET, run its entry on seeded inputs, print latency and the numerical check
    against ``original`` built by ``tvm.compile``'s default pipeline on the CPU (a quantized model evaluated in
    float64: ``check_reference``). Returns True when it passes."""
    entry = entry_function(original)
    ex = compile_module(final, TARGET)  # tvm.compile, its PrimFuncs compiled on every core (as the app builds)
    dev = tvm.cpu(0) if TARGET.kind.name in ("llvm", "c") else tvm.device(TARGET.kind.name, 0)
    vm = prepacked_vm(relax.VirtualMachine(ex, dev), final)  # runs <entry>_transform_params once, if lifted
    arrays, described = make_arguments(original, entry, params)
    for arg in described:
        if not arg.get("weight") and np.dtype(arg["dtype"]).kind in "iu":
            print(f"input {arg['name']}: {arg['dtype']}{arg['shape']} drawn from [0, {arg.get('range', [0, 2])[1]})")
    # A module whose weights were bound as constants (weights.BindAsConstants) takes only its inputs.
    final_arrays = arguments_by_name(final, entry, {a["name"]: v for a, v in zip(described, arrays)}, arrays)
    got = flatten_outputs(vm[entry](*[tvm.runtime.tensor(a, dev) for a in final_arrays]))
    for i, arr in enumerate(got):
        print(f"output {i}: shape={list(arr.shape)} dtype={arr.dtype}")
    # Warm up for 100 ms first, as the app does: the runtime's threads and the CPU clock settle.
    latency = benchmark(vm, entry, dev, final_arrays, {"number": number, "repeat": repeat})
    print(f"latency: median {latency['median_us']:.1f} us per run (min {latency['min_us']:.1f}, "
          f"max {latency['max_us']:.1f}; {repeat} x {number} runs after {latency['warmup']} warm-up runs)")
    reference, label = check_reference(original)
    ref_vm = relax.VirtualMachine(tvm.compile(reference, target="llvm"), tvm.cpu(0))
    ref = flatten_outputs(ref_vm[entry](*[tvm.runtime.tensor(a, tvm.cpu(0)) for a in arrays]))
    return check_outputs(got, ref, default_tolerance(final, original, params, got),
                         label or "tvm.compile default, llvm")


def main(argv=None):
    parser = argparse.ArgumentParser(description=PIPELINE_NAME)
    parser.add_argument("--save-script", metavar="FILE", help="write the final module as TVMScript")
    parser.add_argument("--save-json", metavar="FILE", help="write the final module with tvm.ir.save_json")
    parser.add_argument("--build", action="store_true", default=BUILD, help="compile, run, time and check the model")
    parser.add_argument("--quiet", action="store_true", help="do not print the final module")
    parser.add_argument("--force", action="store_true", help="replace existing --save-script/--save-json files")
    args = parser.parse_args(argv)
    for path in (args.save_script, args.save_json):  # refused before the steps run, not after
        if path and output_problem(path, args.force):
            parser.error("not written: " + output_problem(path, args.force))
    final = apply_steps(mod)
    try:  # never through a symlink, into a device or a folder: a temporary file of its own, renamed over the name
        if args.save_script:
            write_output(args.save_script, final.script(show_meta=True).encode("utf-8"), args.force)
        if args.save_json:
            write_output(args.save_json, tvm.ir.save_json(final).encode("utf-8"), args.force)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    if not args.quiet:
        print(final.script())
    if args.build:
        return 0 if build_and_run(final, mod) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

#: The end of every exported script (appended after ``apply_steps``).
_MAIN = "\n\n" + scriptlib.script_source(("functions", "arguments", "outputs", "quant_reference", "building",
                                                 "files")) + _RUN


def _step_label(index: int, pass_id: str) -> str:
    return f"step {index + 1} ({pass_id})"


def export_script(
    doc: PipelineDocument,
    *,
    build: bool = False,
    catalogue: Optional[Catalogue] = None,
    work_dir: Optional[str] = None,
    plain: bool = False,
) -> str:
    """Return the Python source of a standalone script applying ``doc``'s enabled steps.

    With ``catalogue`` (e.g. ``Catalogue.from_json(EngineClient().catalogue())``) step parameters are
    validated and completed with defaults exactly as the engine does; without it they are used as
    written. Raises :class:`ExportError` naming the step for anything that cannot be exported.

    With ``plain`` (what the app's Export and ``main.py export`` ask for), a pipeline of stock TVM passes on a
    fixed target exported without ``build`` gives the plain script (:func:`_is_plain`): the model, the passes
    as TVM calls in order and the printed result, like TVM's tutorials. Otherwise the script is full: the same
    beginning (model, ``apply_steps``), then the :data:`MARKER` and below it the code it needs beyond plain TVM —
    the steps' own code (the app's passes and rules, custom steps) and :mod:`pipeline_model.scriptlib`
    (``--build``: compile, run, time and check; ``--save-script``/``--save-json``: safe writing).

    ``work_dir`` is the script's ``WORK_DIR``, the tuning folder of MetaSchedule steps without their
    own ``work_dir``; by default the app's (:func:`pipeline_model.work_dirs.document_work_dir`:
    ``<pipeline stem>.tuning`` next to the pipeline file), so the script reuses what the app tuned.
    What a step adds to the script comes from its pass kind
    (:meth:`~pipeline_model.passkinds.base.PassKind.export_step`): e.g. a MetaSchedule tuning step is
    preceded by ``install_meta_schedule_cpu(...)`` (copied into the script from :mod:`pipeline_model.passkinds.metaschedule.script`),
    a custom step's source goes verbatim into its own function.
    """
    from pipeline_model.work_dirs import document_work_dir

    if work_dir is None:
        work_dir = document_work_dir(doc)
    base_dir = doc.model_path_base()
    target, pass_context, name = _checked_settings(doc)
    pieces = _StepPieces()
    for index, step in enumerate(doc.steps):
        if step.runnable:
            pieces.add(index, step, catalogue, target)
    try:
        from pipeline_model.models import emit_model_loader
    except ImportError as exc:  # pragma: no cover - depends on the engine engineer's module
        raise ExportError(f"model loader emitter unavailable: {exc}") from None
    try:
        loader = emit_model_loader(doc.model, base_dir)
    except Exception as exc:  # noqa: BLE001 - bad model spec: report it
        raise ExportError(f"model {doc.model!r}: {exc}") from None

    plain = plain and _is_plain(pieces, build)
    out = _head(pieces, plain, target, name)
    used = "\n".join(pieces.body(plain))  # the constants a plain script needs: those its steps name
    if not plain or "BASE_DIR" in used:
        out.append(f"BASE_DIR = {emit.check_literal(base_dir)!r}\n")
    if not plain or "WORK_DIR" in used:
        out.append(f"WORK_DIR = os.path.abspath({emit.check_literal(work_dir)!r})\n")
    if not plain:
        out.append(f"PASS_CONTEXT = {pass_context!r}\n")
        out.append(f"BUILD = {bool(build)!r}\n")
    out.append("\n" + loader.rstrip("\n") + "\n\n\n")
    out.append("def apply_steps(mod):\n")
    out.append('    """The pipeline: its enabled steps in order, with their parameters; returns the final module."""\n')
    out.append(f"    with TARGET, tvm.transform.PassContext({_context_arguments(pass_context, plain)}):\n")
    out.extend(line + "\n" for line in pieces.body(plain) or ["        pass"])
    out.append("    return mod\n")
    if not plain or targets.is_native(target):
        out.append("\n\n" + MARKER)
    if targets.is_native(target):  # this machine's CPU, found where the script runs (the engine's code)
        out.append("\n" + emit.script_source("pipeline_model.scriptlib.host", "native_target").rstrip("\n") + "\n\n\n")
        out.append(f"TARGET = tvm.target.Target(native_target({target!r}))\n")
    if plain:
        out.append(_PLAIN_MAIN.format(name=name))
    else:
        if pieces.helpers:
            out.append("\n\nimport inspect\n\n\n")
            out.append("\n\n".join(h.rstrip("\n") + "\n" for h in pieces.helpers))
        out.extend("\n\n" + func for func in pieces.functions)
        out.append(_MAIN)
    source = "".join(out)
    try:
        compile(source, "<exported script>", "exec")
    except SyntaxError as exc:
        raise ExportError(f"the exported script does not compile (line {exc.lineno}: {exc.msg})") from None
    return source


def _head(pieces: "_StepPieces", plain: bool, target: Any, name: str) -> list[str]:
    """The script up to its constants: the header (plain or full), the steps' imports, ``PIPELINE_NAME`` (full) and
    ``TARGET``, or, for this machine's CPU, a comment saying what it is (set below the marker, by the app's
    ``native_target``, before anything runs)."""
    guard = _GUARD.format(sys_path=scriptlib.module_source("sys_path", imports=False).rstrip("\n"))
    if plain:
        out = [_PLAIN_HEADER.format(tvm_hint="0.27", guard=guard)]
    else:
        out = [_HEADER.format(tvm_hint="0.27", guard=guard, runtime_threads="\n".join(runtime_threads.script_lines()))]
    out.extend(f"import {module}\n" for module in pieces.imports if module not in ("tvm", "tvm.relax"))
    out.append("\n")
    if not plain:
        out.append(f"PIPELINE_NAME = {name!r}\n")
    if targets.is_native(target):
        out.append(f"# TARGET: {emit.comment_safe(repr(target))}, \"native\" being this machine's CPU (below the marker)\n")
    else:
        out.append(f"TARGET = tvm.target.Target({target!r})\n")
    return out


def _context_arguments(pass_context: dict[str, Any], plain: bool) -> str:
    """The arguments of the script's ``tvm.transform.PassContext(...)``: ``**PASS_CONTEXT`` (the full script), or
    (``plain``) the settings written out, ``opt_level`` always, ``config``/``disabled_pass`` when set (keys are
    :meth:`~pipeline_model.pass_context.PassContextSettings.to_json`'s own names, values checked literals)."""
    if not plain:
        return "**PASS_CONTEXT"
    return ", ".join(f"{key}={pass_context[key]!r}" for key in ("opt_level", "config", "disabled_pass")
                     if key in pass_context and (key == "opt_level" or pass_context[key]))


def _checked_settings(doc: PipelineDocument) -> tuple[Any, Any, str]:
    """``(target, pass_context, name)`` of ``doc`` as JSON-plain values (what the script writes with ``repr()``);
    :class:`ExportError` names the setting that is not."""
    try:
        target = emit.check_literal(dict(doc.target), "target")
    except emit.EmitError as exc:
        raise ExportError(f"pipeline target: {exc}") from None
    from pipeline_model.pass_context import PassContextError

    try:  # the pipeline's PassContext settings, written via repr() of checked JSON-plain values
        pass_context = emit.check_literal(doc.pass_context_settings().to_json(), "pass_context")
    except (PassContextError, emit.EmitError) as exc:
        raise ExportError(str(exc)) from None
    try:
        name = emit.check_literal(str(doc.name), "name")
    except emit.EmitError as exc:  # pragma: no cover - str is always plain
        raise ExportError(str(exc)) from None
    return target, pass_context, name


def _is_plain(pieces: "_StepPieces", build: bool) -> bool:
    """Whether the script can be the plain one: not exported with ``build`` and every step a stock TVM call (no
    code of the app's: no helper, no function of its own)."""
    return not build and not pieces.helpers and not pieces.functions


class _StepPieces:
    """What the enabled steps add to a script, gathered step by step: imports and helpers (once each, in
    order), top-level functions (custom steps) and each step's lines of ``apply_steps``."""

    def __init__(self) -> None:
        self.imports: list[str] = []
        self.helpers: list[str] = []
        self.functions: list[str] = []
        self.steps: list[tuple[int, str, list[str]]] = []

    def body(self, plain: bool = False) -> list[str]:
        """The lines of ``apply_steps`` inside its ``with``: each step under a comment naming it, or (``plain``)
        a step that is one pass ``mod = <pass>(mod)  # step N`` on one line, as TVM's tutorials write it."""
        lines: list[str] = []
        for index, pass_id, step_lines in self.steps:
            if plain and len(step_lines) == 1 and step_lines[0].startswith("pass_ = "):
                lines.append(f"        mod = {step_lines[0][len('pass_ = '):]}(mod)  # step {index + 1}")
                continue
            lines.append(f"        # step {index + 1}: {pass_id}")
            lines.extend(f"        {line}" for line in step_lines)
            lines.append("        mod = pass_(mod)")
        return lines

    def add(self, index: int, step: Any, catalogue: Any, target: Any = None) -> None:
        """Add step ``index`` (validated against ``catalogue`` when given, defaults on ``target``);
        :class:`ExportError` names the step."""
        from pipeline_model.passkinds.registry import kind_for, recipe_for

        pass_id = step.pass_id
        if not emit.SAFE_PASS_ID.match(pass_id or ""):
            raise ExportError(f"{_step_label(index, repr(pass_id))}: pass id has characters other than "
                              "letters, digits, '_' and '.'")
        label = _step_label(index, pass_id)
        params = _checked_params(pass_id, dict(step.params or {}), catalogue, label, target)
        try:
            expr = recipe_for(pass_id, params, step_number=index + 1)
            kind = kind_for(pass_id)
            if kind is None:  # pragma: no cover - recipe_for already refused it
                raise emit.EmitError(f"no construction known for pass {pass_id!r}")
            piece = kind.export_step(pass_id, params, expr, index=index, label=label)
        except emit.EmitError as exc:
            message = str(exc)
            raise ExportError(message if message.startswith(label) else f"{label}: {message}") from None
        self.helpers.extend(h for h in piece.helpers if h not in self.helpers)
        for module in piece.imports:
            if module not in self.imports:
                self.imports.append(module)
        self.functions.extend(piece.functions)
        self.steps.append((index, pass_id, list(piece.lines)))


def _checked_params(pass_id: str, params: dict[str, Any], catalogue: Any, label: str,
                    target: Any = None) -> dict[str, Any]:
    """``params`` validated and completed by ``catalogue`` with its defaults on ``target`` (as the engine does),
    or as written without one."""
    if catalogue is None:
        return params
    spec = catalogue.get(pass_id)
    if spec is None:
        raise ExportError(f"{label}: unknown pass")
    if not spec.available:
        raise ExportError(f"{label}: not available: {spec.unavailable_reason}")
    params, errors = catalogue.validate_params(pass_id, params, target)
    if errors:
        raise ExportError(f"{label}: " + "; ".join(errors))
    return params


def default_output_path(doc: PipelineDocument) -> str:
    """``<pipeline file stem>.py`` next to the pipeline file, or ``pipeline.py`` for an unsaved one."""
    if doc.path:
        stem, _ = os.path.splitext(doc.path)
        return stem + "_export.py"
    return "pipeline_export.py"
