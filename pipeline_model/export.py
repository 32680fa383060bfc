"""Export a pipeline as one standalone Python script using plain TVM 0.27 calls (TVM-free).

The script loads the model (code from :func:`pipeline_model.models.emit_model_loader`), builds each
enabled step with the same construction the engine uses (:func:`pipeline_model.emit.recipe_for`),
applies the steps one by one inside ``with TARGET, tvm.transform.PassContext(opt_level=3)``, prints
the final module (or writes it with ``--save-script`` / ``--save-json``) and, with ``--build`` (or when
exported with ``build=True``), compiles with ``tvm.compile`` and runs ``main`` on random inputs.

Safety: every user-provided value (names, parameters, paths) reaches the script through ``repr()`` of
a checked JSON-plain value; pass ids must consist of letters, digits, ``_`` and ``.``. The only user
text embedded as code is a custom step's source, verbatim, inside its own function.
"""

from __future__ import annotations

import os
from typing import Any, Optional

from pipeline_model import emit
from pipeline_model.catalogue import Catalogue
from pipeline_model.document import PipelineDocument


class ExportError(ValueError):
    """The pipeline cannot be exported; the message names the step and the problem."""


_HEADER = '''#!/usr/bin/env python3
"""Standalone TVM {tvm_hint} script exported by Relax Pipeline Studio.

It loads the model, applies the pipeline's enabled steps one by one and prints the final module.
Options: --save-script FILE (TVMScript), --save-json FILE (tvm.ir.save_json), --build (compile with
tvm.compile and run "main" once on random inputs), --quiet (do not print the module).
"""

import argparse
import os
import sys

import numpy as np
import tvm
from tvm import relax
'''

_MAIN = '''

def entry_function(module):
    """``main`` if the module has it, else its first Relax function (``forward`` for nn.Module models)."""
    names = [gv.name_hint for gv, func in module.functions.items() if isinstance(func, relax.Function)]
    return "main" if "main" in names else sorted(names)[0]


def build_and_run(final, original):
    """Compile ``final`` for TARGET and run its entry once on random inputs (weights from ``params``)."""
    entry = entry_function(original)
    ex = tvm.compile(final, target=TARGET)
    dev = tvm.cpu(0) if TARGET.kind.name in ("llvm", "c") else tvm.device(TARGET.kind.name, 0)
    vm = relax.VirtualMachine(ex, dev)
    rng = np.random.default_rng(0)
    inputs = []
    for var in original[entry].params:
        info = var.ty
        if params and var.name in params:
            value = np.asarray(params[var.name])
        else:
            shape = [int(d) for d in info.shape]
            value = rng.standard_normal(shape).astype(str(info.dtype))
        inputs.append(tvm.runtime.tensor(value, dev))
    out = vm[entry](*inputs)
    print(f"ran {entry}:", out.numpy().shape if hasattr(out, "numpy") else out, file=sys.stderr)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=PIPELINE_NAME)
    parser.add_argument("--save-script", metavar="FILE", help="write the final module as TVMScript")
    parser.add_argument("--save-json", metavar="FILE", help="write the final module with tvm.ir.save_json")
    parser.add_argument("--build", action="store_true", default=BUILD, help="compile and run main once")
    parser.add_argument("--quiet", action="store_true", help="do not print the final module")
    args = parser.parse_args(argv)
    final = apply_steps(mod)
    if args.save_script:
        with open(args.save_script, "w", encoding="utf-8") as fh:
            fh.write(final.script(show_meta=True))
    if args.save_json:
        with open(args.save_json, "w", encoding="utf-8") as fh:
            fh.write(tvm.ir.save_json(final))
    if not args.quiet:
        print(final.script())
    if args.build:
        build_and_run(final, mod)
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''


def _step_label(index: int, pass_id: str) -> str:
    return f"step {index + 1} ({pass_id})"


def export_script(
    doc: PipelineDocument,
    *,
    build: bool = False,
    catalogue: Optional[Catalogue] = None,
    work_dir: Optional[str] = None,
) -> str:
    """Return the Python source of a standalone script applying ``doc``'s enabled steps.

    With ``catalogue`` (e.g. ``Catalogue.from_json(EngineClient().catalogue())``) step parameters are
    validated and completed with defaults exactly as the engine does; without it they are used as
    written. Raises :class:`ExportError` naming the step for anything that cannot be exported.

    ``work_dir`` is the script's ``WORK_DIR``, the tuning folder of MetaSchedule steps without their
    own ``work_dir``; by default the app's (:func:`pipeline_model.tuning.document_work_dir`:
    ``<pipeline stem>.tuning`` next to the pipeline file), so the script reuses what the app tuned.
    A tuning step is preceded by ``install_meta_schedule_cpu(...)`` (copied into the script from
    :mod:`pipeline_model.emit`): the builder/runner set-up with which TVM's own tuning passes measure
    real candidates on a CPU, configured with the step's options.
    """
    from pipeline_model.tuning import TUNING_PASS_IDS, TuningConfig, TuningConfigError, document_work_dir

    if work_dir is None:
        work_dir = document_work_dir(doc)
    base_dir = doc.model_path_base()
    try:
        target = emit.check_literal(dict(doc.target), "target")
    except emit.EmitError as exc:
        raise ExportError(f"pipeline target: {exc}") from None
    try:
        name = emit.check_literal(str(doc.name), "name")
    except emit.EmitError as exc:  # pragma: no cover - str is always plain
        raise ExportError(str(exc)) from None

    imports: list[str] = []
    helpers: list[str] = []
    custom_funcs: list[str] = []
    body: list[str] = []
    for index, step in enumerate(doc.steps):
        if not step.runnable:
            continue
        pass_id = step.pass_id
        if not emit.SAFE_PASS_ID.match(pass_id or ""):
            raise ExportError(f"{_step_label(index, repr(pass_id))}: pass id has characters other than "
                              "letters, digits, '_' and '.'")
        label = _step_label(index, pass_id)
        params = dict(step.params or {})
        if catalogue is not None:
            spec = catalogue.get(pass_id)
            if spec is None:
                raise ExportError(f"{label}: unknown pass")
            if not spec.available:
                raise ExportError(f"{label}: not available: {spec.unavailable_reason}")
            params, errors = catalogue.validate_params(pass_id, params)
            if errors:
                raise ExportError(f"{label}: " + "; ".join(errors))
        try:
            expr = emit.recipe_for(pass_id, params, step_number=index + 1)
        except emit.EmitError as exc:
            raise ExportError(f"{label}: {exc}") from None
        body.append(f"        # step {index + 1}: {pass_id}")
        if isinstance(expr, emit.CustomCode):
            try:
                emit.check_custom_source(expr.source, expr.label)
            except SyntaxError as exc:
                raise ExportError(f"{label}: syntax error at line {exc.lineno}: {exc.msg}") from None
            func = f"custom_step_{index + 1}"
            custom_funcs.append(emit.render_custom_function(func, expr.source, expr.label))
            if emit.helper_source(emit.pick_custom_pass) not in helpers:
                helpers.append(emit.helper_source(emit.pick_custom_pass))
            body.append(f"        pass_ = {func}()")
        else:
            if _uses_pattern_file(expr) and emit.helper_source(emit.load_pattern_file) not in helpers:
                helpers.append(emit.helper_source(emit.load_pattern_file))
            if pass_id in TUNING_PASS_IDS:
                try:
                    options = TuningConfig.from_params(params, where=label).to_json()
                except TuningConfigError as exc:
                    raise ExportError(str(exc)) from None
                for key in ("max_trials_global", "max_trials_per_task", "op_names", "work_dir"):
                    options.pop(key, None)  # the pass's own arguments
                for helper in emit.META_SCHEDULE_HELPERS:
                    if emit.helper_source(helper) not in helpers:
                        helpers.append(emit.helper_source(helper))
                wd = params.get("work_dir")
                wd_src = emit.render(emit.Lit(emit.check_literal(wd)) if wd else emit.Ref("work_dir"))
                body.append(f"        install_meta_schedule_cpu({wd_src}, {emit.check_literal(options, 'options')!r})")
            for module in emit.imports_of(expr):
                if module not in imports:
                    imports.append(module)
            try:
                body.append(f"        pass_ = {emit.render(expr)}")
            except emit.EmitError as exc:
                raise ExportError(f"{label}: {exc}") from None
        body.append("        mod = pass_(mod)")

    try:
        from pipeline_model.models import emit_model_loader
    except ImportError as exc:  # pragma: no cover - depends on the engine engineer's module
        raise ExportError(f"model loader emitter unavailable: {exc}") from None
    try:
        loader = emit_model_loader(doc.model, base_dir)
    except Exception as exc:  # noqa: BLE001 - bad model spec: report it
        raise ExportError(f"model {doc.model!r}: {exc}") from None

    out: list[str] = [_HEADER.format(tvm_hint="0.27")]
    for module in imports:
        if module not in ("tvm", "tvm.relax"):
            out.append(f"import {module}\n")
    out.append("\n")
    out.append(f"PIPELINE_NAME = {name!r}\n")
    out.append(f"TARGET = tvm.target.Target({target!r})\n")
    out.append(f"BASE_DIR = {emit.check_literal(base_dir)!r}\n")
    out.append(f"WORK_DIR = os.path.abspath({emit.check_literal(work_dir)!r})\n")
    out.append(f"BUILD = {bool(build)!r}\n\n")
    out.append(loader.rstrip("\n") + "\n\n")
    if helpers:
        out.append("\n# ---- helpers (same code as the engine's) ----\n")
        out.append("import inspect\n\n\n")
        out.append("\n\n".join(h.rstrip("\n") + "\n" for h in helpers))
    for func in custom_funcs:
        out.append("\n\n" + func)
    out.append("\n\ndef apply_steps(mod):\n")
    out.append('    """Apply the enabled steps one by one and return the final module."""\n')
    out.append("    with TARGET, tvm.transform.PassContext(opt_level=3):\n")
    out.extend(line + "\n" for line in body)
    out.append("        pass\n")
    out.append("    return mod\n")
    out.append(_MAIN)
    source = "".join(out)
    try:
        compile(source, "<exported script>", "exec")
    except SyntaxError as exc:
        raise ExportError(f"the exported script does not compile (line {exc.lineno}: {exc.msg})") from None
    return source


def _uses_pattern_file(expr: Any) -> bool:
    if isinstance(expr, emit.PatternFile):
        return True
    if isinstance(expr, emit.Call):
        return any(_uses_pattern_file(a) for a in expr.args) or any(_uses_pattern_file(v) for _, v in expr.kwargs)
    if isinstance(expr, emit.ListOf):
        return any(_uses_pattern_file(a) for a in expr.items)
    return False


def default_output_path(doc: PipelineDocument) -> str:
    """``<pipeline file stem>.py`` next to the pipeline file, or ``pipeline.py`` for an unsaved one."""
    if doc.path:
        stem, _ = os.path.splitext(doc.path)
        return stem + "_export.py"
    return "pipeline_export.py"
