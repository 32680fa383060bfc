"""``python main.py run PIPELINE``: run a pipeline file headless in the engine process.

Prints one line per step (index, title and pass id, changed/unchanged/failed/skipped, milliseconds),
one line per MetaSchedule tuning round (``tuning 12/64 trials; <task> <trials> (<best> us), ...``, from
the engine's ``tuning_progress`` events) and the engine's warnings,
optionally writes the IR after every step (``--emit-ir DIR``: ``00_input.py``, ``01_<pass>.py``, ...,
``final.py``; an existing file there is replaced only when this command wrote it and nobody changed it since, as
listed in the folder's ``.rps-files.json``, or with ``--force``) or one JSON document (``--json``). Exit codes: 0 ok, 1 a step failed (the message names
it; also a custom step or pattern file without ``--trust``), 2 bad input (missing or bad pipeline/model
file, a model ``.py`` file without ``--trust``, bad target, unknown model, bad option, an enabled step whose
pass id is unknown — disable it to run the others). Before the run it prints the absolute paths the run
reads and writes (:func:`resolved_paths`).
Build options (``--build``, ``--bench`` ...) come from :mod:`pipeline_model.cli.build_options`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from typing import Any, Optional

from pipeline_model.cli import reproducer_io
from pipeline_model.cli.common import add_model_options, apply_model_options, fail
from pipeline_model.consent import Consent
from pipeline_model.document import PipelineDocument, target_label
from pipeline_model.resources import pipeline_argument
from pipeline_model.engine.results import CANCELLED, FAILED, NOT_RUN, SKIPPED, RunResult, StepResult

EXIT_OK, EXIT_STEP_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def _build_options() -> Any:
    """The build options module, or ``None`` while it does not exist."""
    try:
        from pipeline_model.cli import build_options
    except ModuleNotFoundError as exc:
        if exc.name != "pipeline_model.cli.build_options":
            raise
        return None
    return build_options


def add_parser(subparsers: "argparse._SubParsersAction") -> None:
    """Register the ``run`` sub-command."""
    p = subparsers.add_parser(
        "run",
        help="run a pipeline file on its model (headless)",
        description="Run the steps of a pipeline file in the engine process and report each step.",
    )
    p.add_argument("pipeline", metavar="PIPELINE", type=pipeline_argument,
                   help="pipeline file (.json) or bundled pipeline (builtin:NAME, e.g. builtin:cpu_build)")
    add_model_options(p, "model instead of the file's: builtin:mlp, builtin:transformer or a path")
    p.add_argument("--until", metavar="N", type=int, help="run steps 1..N only (steps are numbered from 1, as in the output and the IR file names)")
    p.add_argument("--emit-ir", metavar="DIR", help="write the TVMScript before/after every step into DIR")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of lines")
    p.add_argument("--trust", "--trust-custom-code", dest="trust", action="store_true",
                   help="consent to the code the pipeline brings: model .py files, custom.python steps and "
                        "pattern files (without it they do not run and nothing runs)")
    p.add_argument("--timeout", metavar="S", type=float, default=600.0,
                   help="kill a step that runs longer than S seconds (default 600)")
    options = _build_options()
    if options is not None:
        options.add_arguments(p)
    reproducer_io.add_argument(p)


def ir_file_name(position: int, pass_id: str) -> str:
    """``01_relax.FuseOps.py`` style name for the IR after the step at 1-based ``position``."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", pass_id).strip("._") or "step"
    return f"{position:02d}_{safe}.py"


def emit_ir(result: RunResult, directory: str, overwrite: bool = False) -> list[str]:
    """Write ``00_input.py``, ``NN_<pass>.py`` for each step with a script, and ``final.py`` into ``directory``
    (created if missing) by :func:`pipeline_model.safe_write.write_own_files`: every name is checked before the
    first byte is written; a symlink, FIFO or device at a name is refused; an existing file is replaced only when
    this command wrote it there earlier and nobody changed it since (the folder's ``.rps-files.json``), or with
    ``overwrite`` (``--force``). Raises :class:`~pipeline_model.safe_write.OutputPathError`."""
    from pipeline_model import safe_write

    contents: dict[str, bytes] = {}

    def add(name: str, text: str) -> None:
        contents[name] = (text if text.endswith("\n") else text + "\n").encode("utf-8")

    if result.input_script is not None:
        add("00_input.py", result.input_script)
    for step in result.steps:
        if step.script is not None and step.state not in (FAILED, NOT_RUN, CANCELLED):
            add(ir_file_name(step.index + 1, step.pass_id), step.script)
    final = result.final_script
    if final is not None:
        add("final.py", final)
    return safe_write.write_own_files(directory, contents, "--emit-ir", overwrite=overwrite)


def emit_ir_names(doc: PipelineDocument, until: Optional[int]) -> list[str]:
    """Every name :func:`emit_ir` may write for ``doc`` run up to the 1-based step ``until`` (checked before the
    run, so a user's file there stops it before anything runs)."""
    steps = doc.steps[:until] if until is not None else doc.steps
    return ["00_input.py", *(ir_file_name(i + 1, step.pass_id) for i, step in enumerate(steps)), "final.py"]


def step_line(step: StepResult) -> str:
    """One human line for a step."""
    label = step.title if step.title and step.title != step.pass_id else ""
    name = f"{label} [{step.pass_id}]" if label else step.pass_id
    state = step.state
    timing = f"{step.elapsed_ms:8.1f} ms" if step.state not in (SKIPPED, NOT_RUN) else " " * 11
    extra = " (cached)" if step.cached else ""
    if step.state == SKIPPED and step.error:
        extra += f" ({step.error})"
    return f"{step.index + 1:3d}  {state:<9} {timing}  {name}{extra}"


def progress_line(data: dict[str, Any]) -> str:
    """One CLI line for a ``tuning_progress`` event: ``     step 5: tuning 8/16 trials; ...``."""
    from pipeline_model.passkinds.metaschedule.config import TuningProgress, format_progress_line

    fields = {k: v for k, v in data.items() if k in TuningProgress.__dataclass_fields__}
    line = format_progress_line(fields)
    index = data.get("index")
    return f"     step {int(index) + 1}: {line}" if isinstance(index, int) else f"     {line}"


class ProgressLines:
    """The CLI's tuning progress lines: one per ``tuning_progress`` event, except that a time-budgeted step's look-up
    phase (one event per PrimFunc looked up in the databases, no trials yet) gets one line per step."""

    def __init__(self) -> None:
        self._looked_up: set[Any] = set()

    def line(self, data: dict[str, Any]) -> Optional[str]:
        """The line to print for ``data``, or ``None`` for a repeated look-up event."""
        if data.get("phase") == "lookup":
            if data.get("index") in self._looked_up:
                return None
            self._looked_up.add(data.get("index"))
        return progress_line(data)


def _step_summary(step: StepResult) -> dict[str, Any]:
    return {
        "index": step.index, "uid": step.uid, "pass": step.pass_id, "title": step.title, "state": step.state,
        "elapsed_ms": round(step.elapsed_ms, 3), "cached": step.cached, "error": step.error,
        "nested": [{"name": n.name, "depth": n.depth, "changed": n.changed, "elapsed_ms": round(n.elapsed_ms, 3)}
                   for n in step.nested],
    }


def _prepare(args: argparse.Namespace, out: dict[str, Any]) -> tuple[Optional[PipelineDocument], Optional[str]]:
    """Load the file and apply the overrides; returns (doc, None) or (None, error message)."""
    from pipeline_model.fileformat import PipelineFileError, load_pipeline

    try:
        doc = load_pipeline(args.pipeline)
    except PipelineFileError as exc:
        return None, str(exc)
    problem = apply_model_options(doc, args)
    if problem:
        return None, problem
    if args.until is not None and not 1 <= args.until <= len(doc.steps):
        return None, f"--until {args.until}: the pipeline has steps 1..{len(doc.steps)}"
    if args.timeout is not None and args.timeout <= 0:
        return None, "--timeout must be > 0 seconds"
    if args.emit_ir:  # refused before the run: a link, a FIFO, a file of the user's at a name (no --force)
        from pipeline_model.safe_write import OutputPathError, check_own_files

        try:
            check_own_files(args.emit_ir, emit_ir_names(doc, args.until), "--emit-ir",
                            overwrite=bool(getattr(args, "force", False)))
        except OutputPathError as exc:
            return None, str(exc)
    if getattr(args, "export_lib", None):  # refused before the run, not after the build (created with its parents)
        from pipeline_model.safe_files import special_root
        from pipeline_model.safe_write import OutputPathError, check_output_folder

        from pipeline_model.build_api import EXPORT_FILES
        from pipeline_model.safe_write import check_new_files

        try:
            if os.path.lexists(args.export_lib):
                check_output_folder(args.export_lib, "--export-lib")
                check_new_files(args.export_lib, EXPORT_FILES, "--export-lib", overwrite=bool(args.force))
            elif special_root(os.path.abspath(args.export_lib)) is not None:
                return None, f"--export-lib {args.export_lib}: nothing is written under /proc, /sys or /dev"
        except OutputPathError as exc:
            return None, str(exc)
    if getattr(args, "inputs", None):  # said before the run (a FIFO, a device, a folder: said as such)
        from pipeline_model.safe_files import input_problem

        problem = input_problem(args.inputs, "--inputs")
        if problem:
            return None, problem
    if getattr(args, "reproducer", None):  # refused before the run: a link, a FIFO, an existing file (no --force)
        problem = reproducer_io.check_folder(args.reproducer, force=bool(args.force))
        if problem:
            return None, problem
    out.update({"pipeline": os.path.abspath(args.pipeline), "name": doc.name, "model": doc.model, "target": doc.target})
    return doc, None


def main(args: argparse.Namespace, client: Any = None) -> int:
    """Run the pipeline; returns the exit code (0 ok, 1 a step failed, 2 bad input).

    ``client``: an existing :class:`EngineClient` to use (left open); by default a new engine is
    started and closed.
    """
    from pipeline_model.engine.client import EngineClient

    as_json = bool(args.json)
    out: dict[str, Any] = {}
    doc, problem = _prepare(args, out)
    if doc is None:
        return fail(problem or "bad input", as_json, EXIT_BAD_INPUT, out)

    own_client = client is None
    if client is None:
        client = EngineClient(step_timeout_s=args.timeout)
    # --trust is the client's consent for this command: every request it makes (the run, the build,
    # the profile, the library export) carries it.
    try:
        with client.consented(Consent(trust_all=bool(args.trust))):
            return _run(args, client, doc, out)
    finally:
        if own_client:
            client.close()


def _run(args: argparse.Namespace, client: Any, doc: PipelineDocument, out: dict[str, Any]) -> int:
    """Run ``doc`` on ``client`` and report (the body of :func:`main`)."""
    from pipeline_model.engine.client import EngineError

    as_json = bool(args.json)
    try:
        known = set(_catalogue_ids(client.catalogue()))
    except EngineError as exc:
        return fail(f"the engine could not start: {exc.message}", as_json, EXIT_STEP_FAILED, out)
    if known:
        from pipeline_model.fileformat import load_pipeline

        fresh = load_pipeline(args.pipeline, known_pass_ids=known)
        for step, checked in zip(doc.steps, fresh.steps):
            step.placeholder = checked.placeholder
        unknown = unknown_step_errors(doc, None if args.until is None else args.until)
        if unknown:
            return fail("; ".join(unknown), as_json, EXIT_BAD_INPUT, out)
    if not as_json:
        print(f"pipeline {doc.name!r}: model {doc.model}, target {target_label(doc.target)}, "
              f"{len(doc.steps)} step(s)")
        for line in resolved_paths(doc):
            print(f"     {line}")

    progress = ProgressLines()

    def on_event(name: str, data: dict) -> None:
        if as_json:
            return
        if name == "step_finished":
            step = StepResult.from_json(data["step"])
            print(step_line(step), flush=True)
            if step.state == FAILED and step.error:
                print("     " + step.error.replace("\n", "\n     "), flush=True)
            tuning = (step.report or {}).get("tuning") if step.state != FAILED else None
            if isinstance(tuning, dict) and tuning.get("message"):
                print(f"     {tuning['message']}", flush=True)
        elif name == "tuning_progress":
            line = progress.line(data)
            if line is not None:
                print(line, flush=True)
        elif name == "warning" and data.get("message"):
            print(f"     warning: {data['message']}", flush=True)

    try:
        # The engine prints each step's TVMScript only for --emit-ir (the summary needs no text).
        result = client.run(doc, until=None if args.until is None else args.until - 1, on_event=on_event,
                            step_timeout_s=args.timeout, scripts=bool(args.emit_ir))
    except EngineError as exc:
        return fail(f"the engine failed: {exc.message}", as_json, EXIT_STEP_FAILED, out)

    try:
        written = emit_ir(result, args.emit_ir, bool(getattr(args, "force", False))) if args.emit_ir else []
    except ValueError as exc:  # safe_write.OutputPathError: the folder changed during the run
        return fail(str(exc), as_json, EXIT_BAD_INPUT, out)
    reproducer_io.save_after_run(client, doc, result, args, out)
    out.update({
        "ok": result.ok, "error": result.error, "failed_index": result.failed_index,
        "total_ms": round(result.total_ms, 3), "steps": [_step_summary(s) for s in result.steps],
    })
    if written:
        out["emit_ir"] = written
    if result.error:
        crashed = "engine crashed" in result.error
        code = EXIT_STEP_FAILED if crashed else EXIT_BAD_INPUT
        return fail(result.error, as_json, code, out)
    if result.failed_index is not None:
        failed = result.steps[result.failed_index]
        message = failed.error or f"step {failed.index + 1} ({failed.pass_id}) failed"
        if not message.startswith("step ") and f"step {failed.index + 1}" not in message:
            message = f"step {failed.index + 1} ({failed.pass_id}) failed: {message}"
        from pipeline_model.consent import REFUSAL_PREFIX

        refused = (failed.error or "").startswith(REFUSAL_PREFIX)  # code without --trust: bad input (README)
        return fail(message, as_json, EXIT_BAD_INPUT if refused else EXIT_STEP_FAILED, out)
    if result.cancelled:
        return fail("the run was cancelled", as_json, EXIT_STEP_FAILED, out)
    if not as_json:
        ran = sum(1 for s in result.steps if s.state not in (NOT_RUN, SKIPPED))
        print(f"ok: {ran} step(s) ran in {result.total_ms:.0f} ms"
              + (f"; IR written to {args.emit_ir}" if written else ""))

    options = _build_options()
    code = EXIT_OK
    if options is not None and options.wants_build(args):
        code = int(options.run_build(args, client, doc, result, out if as_json else None))
    if as_json:
        out["exit_code"] = code
        print(json.dumps(out, indent=2))
    return code


def unknown_step_errors(doc: PipelineDocument, until: Optional[int] = None) -> list[str]:
    """One message per enabled step (1-based positions up to ``until``) whose pass id is unknown, e.g.
    ``step 3: unknown pass id 'relax.FuseOp' (misspelt, or from another TVM build; disable the step to run the
    others)``; a pass of no installed plug-in says so (:func:`~pipeline_model.passkinds.registry.unknown_pass_reason`)."""
    from pipeline_model.passkinds.registry import unknown_pass_reason

    out = []
    for i, step in enumerate(doc.steps):
        if until is not None and i >= until:
            break
        if step.enabled and step.placeholder:
            out.append(f"{doc.path or doc.name}: step {i + 1}: unknown pass id {step.pass_id!r} "
                       f"({unknown_pass_reason(step.pass_id)}; disable the step to run the others)")
    return out


def resolved_paths(doc: PipelineDocument) -> list[str]:
    """Lines naming the absolute paths a run of ``doc`` reads or writes (model file, tuning work dir,
    pattern files), so a pipeline file from someone else cannot point somewhere unseen."""
    from pipeline_model import consent, models
    from pipeline_model.passkinds import kind_for
    from pipeline_model.passkinds.metaschedule.config import resolve_work_dir
    from pipeline_model.work_dirs import document_work_dir

    lines = []
    base = doc.model_path_base()
    if not str(doc.model).startswith("builtin:"):
        try:
            lines.append(f"model file: {models.resolve_model(doc.model, base).path}")
        except models.ModelLoadError:
            pass
    default = document_work_dir(doc)
    for i, step in enumerate(doc.steps):
        kind = kind_for(step.pass_id) if step.runnable else None
        if kind is not None and kind.runs_tuning(step.pass_id):
            try:
                where = resolve_work_dir(str(step.params.get("work_dir") or ""), default, base)
            except ValueError:
                continue
            lines.append(f"step {i + 1} ({step.pass_id}) tunes in: {where}")
    for item in consent.step_items([dict(s.to_dict(), placeholder=s.placeholder) for s in doc.steps], base):
        if item.path:
            lines.append(f"{item.label}: {item.path}")
    return lines


def _catalogue_ids(data: dict) -> list[str]:
    """Pass ids of a catalogue JSON."""
    from pipeline_model.catalogue import Catalogue

    return list(Catalogue.from_json(data).ids())
