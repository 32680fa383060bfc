"""``python main.py bisect PIPELINE``: find the step after which the model's result is wrong.

Runs the pipeline in the engine, builds the module after the tested steps (a not-yet-lowered module is
completed with ``tvm.compile``'s default pipeline, as the reference is), runs it on the same inputs and
weights as the reference, and bisects to the first step after which the result is wrong or the build or
run fails (:mod:`pipeline_model.engine.handlers_debug`). Prints one line per tested module and the culprit;
``--json`` prints the report (``culprit_step`` 1-based, ``culprit_pass_id``, ``builds``, ``tested``, ``ok``).
``--reproducer DIR`` saves a reproducer folder for the culprit (:mod:`pipeline_model.cli.reproducer_io`): for a
numerics failure ``repro.py`` builds the module before and after the culprit step and compares their outputs; with
no step to blame because TVM's default pipeline fails on the model as loaded, it builds and runs that module.
When TVM's own default pipeline fails on the model too, the report says so in one line (a TVM bug) and names the
reference the numbers were checked against instead.
Exit codes: 0 the pipeline is correct, 1 a culprit was found (or the bisection failed), 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Optional

from pipeline_model.cli.common import (add_check_options, add_model_options, apply_model_options, engine_failure,
                                        fail)
from pipeline_model.document import PipelineDocument, target_label

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def add_parser(subparsers: "argparse._SubParsersAction") -> None:
    """Register the ``bisect`` sub-command."""
    p = subparsers.add_parser(
        "bisect", help="find the step after which the model's result is wrong (or the build fails)",
        description="Bisect a pipeline to the first step after which the built module's result differs from "
                    "the reference, or its build or run fails.")
    p.add_argument("pipeline", metavar="PIPELINE", help="pipeline file (.json)")
    add_model_options(p)
    add_check_options(p, run_check_default=True)
    p.add_argument("--check-against", choices=("tvm", "framework"), default="tvm",
                   help="reference: the model as loaded built by tvm.compile (default) or its framework")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--trust", "--trust-custom-code", dest="trust", action="store_true",
                   help="allow custom Python code in the pipeline (and a model .py file) to run")
    p.add_argument("--timeout", metavar="S", type=float, default=600.0,
                   help="kill the engine when it shows no progress for S seconds (default 600)")
    p.add_argument("--reproducer", metavar="DIR", help="save a reproducer of the culprit (or of TVM's default pipeline failing on the model) into DIR")
    p.add_argument("--force", action="store_true",
                   help="let --reproducer replace existing files of the same names (never without it)")


def load_document(args: argparse.Namespace) -> tuple[Optional[PipelineDocument], Optional[str]]:
    """The pipeline file with ``--model``/``--shape``/``--target`` applied, or ``(None, error message)``."""
    from pipeline_model.fileformat import PipelineFileError, load_pipeline

    try:
        doc = load_pipeline(args.pipeline)
    except (PipelineFileError, OSError) as exc:
        return None, str(exc)
    problem = apply_model_options(doc, args)
    if problem:
        return None, problem
    if getattr(args, "inputs", None):
        from pipeline_model.safe_files import input_problem

        problem = input_problem(args.inputs, "--inputs")  # missing, or a FIFO/device/folder: said as such
        if problem:
            return None, problem
    if not getattr(args, "timeout", 1.0) > 0:  # also NaN
        return None, "--timeout must be > 0 seconds"
    if not getattr(args, "trust", False):  # code that would run without --trust is bad input (exit 2), said first
        from pipeline_model import consent
        from pipeline_model.engine.client import EngineClient

        run = EngineClient.run_args(doc)
        missing = consent.code_items(str(run.get("model") or ""), run.get("base_dir"), run.get("steps") or [])
        if missing:
            return None, " ".join(line.strip() for line in consent.refusal_message(missing).splitlines())
    return doc, None


def bisect_request(doc: PipelineDocument, args: argparse.Namespace) -> dict[str, Any]:
    """The engine's ``bisect`` request arguments."""
    from pipeline_model.engine.client import EngineClient

    run = EngineClient.run_args(doc, trust_custom_code=bool(args.trust))
    run["name"] = doc.name
    request: dict[str, Any] = {"run": run, "check": {"rtol": args.rtol, "atol": args.atol},
                               "check_against": args.check_against}
    request["inputs"] = {"path": os.path.abspath(args.inputs)} if args.inputs else {"seed": 0}
    return request


def main(args: argparse.Namespace, client: Any = None) -> int:
    """Bisect the pipeline; returns the exit code (0 correct, 1 culprit found or failure, 2 bad input)."""
    from pipeline_model.debugging.bisect import BisectReport, request_bisect, tvm_bug_line
    from pipeline_model.engine.client import ConsentRequired, EngineClient, EngineError

    doc, problem = load_document(args)
    if doc is None:
        return fail(problem or "bad input", args.json, EXIT_BAD_INPUT)
    if (args.rtol is not None and args.rtol < 0) or (args.atol is not None and args.atol < 0):
        return fail("--rtol and --atol must be >= 0", args.json, EXIT_BAD_INPUT)
    if args.reproducer:
        from pipeline_model.cli import reproducer_io

        problem = reproducer_io.check_folder(args.reproducer, force=bool(getattr(args, "force", False)))
        if problem:
            return fail(problem, args.json, EXIT_BAD_INPUT)
    own = client is None
    if client is None:
        client = EngineClient(step_timeout_s=args.timeout)

    def progress(name: str, data: dict) -> None:
        if not args.json and name == "bisect_progress":
            print(f"  [{data.get('builds', 0)} build(s)] {data.get('message', '')}", file=sys.stderr, flush=True)

    try:
        if not args.json:
            print(f"bisect {doc.name!r}: model {doc.model}, target {target_label(doc.target)}, "
                  f"{sum(1 for s in doc.steps if s.enabled)} enabled step(s)")
        try:
            reply = request_bisect(client, bisect_request(doc, args), on_event=progress)
        except ConsentRequired as exc:  # code that would run without --trust: bad input, as the README says
            return fail(f"bisect refused: {exc.message}", args.json, EXIT_BAD_INPUT)
        except EngineError as exc:
            message, code = engine_failure(exc.message)
            return fail(f"bisect failed: {message}", args.json, code)
        report = BisectReport.from_json(reply)
        written: Optional[str] = None
        savable = report.culprit_step is not None or report.default_pipeline_fails in ("build", "run", "crash")
        if args.reproducer and not report.ok and savable:
            from pipeline_model.cli import reproducer_io

            try:
                written = reproducer_io.save_for_report(client, doc, report, args, args.reproducer)
            except (ValueError, EngineError) as exc:
                return fail(f"--reproducer: {exc}", args.json, EXIT_FAILED)
        code = EXIT_OK if report.ok else EXIT_FAILED
        if args.json:
            out = report.to_json()
            out.update({"exit_code": code, "pipeline": os.path.abspath(args.pipeline), "model": doc.model})
            if written:
                out["reproducer"] = written
            if report.default_pipeline_fails:
                out["tvm_bug"] = tvm_bug_line(report.default_pipeline_fails, written)
            print(json.dumps(out, indent=2))
        else:
            for line in report.lines(written):
                print(line)
            if written:
                print(f"reproducer written to {written}")
        return code
    finally:
        if own:
            client.close()
