"""``--reproducer DIR`` of ``main.py run`` and ``main.py bisect``: ask the engine to save a reproducer folder.

The folder (:mod:`pipeline_model.debugging.reproducer`) is checked here before anything runs
(:func:`check_folder`) and written by the engine's ``save_reproducer`` command.
"""

from __future__ import annotations

import argparse
import os
from typing import Any, Optional

from pipeline_model.debugging import reproducer
from pipeline_model.document import PipelineDocument


def add_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--reproducer DIR``."""
    parser.add_argument("--reproducer", metavar="DIR",
                        help="when a step fails, save a reproducer folder (repro.py, README.md, data) into DIR")


def check_folder(folder: str) -> Optional[str]:
    """An error message when ``folder`` cannot receive a reproducer, else ``None``."""
    from pipeline_model.safe_write import OutputPathError, check_output_folder

    if os.path.exists(folder):
        try:
            check_output_folder(folder, "--reproducer")
        except OutputPathError as exc:
            return str(exc)
    elif not os.path.isdir(os.path.dirname(os.path.abspath(folder))):
        return f"--reproducer {folder}: its parent folder does not exist"
    return None


def _request(doc: PipelineDocument, args: argparse.Namespace, index: int, kind: str, folder: str,
             error: str = "", traceback: str = "", run_after: bool = False) -> dict[str, Any]:
    from pipeline_model.engine.client import EngineClient

    inputs = getattr(args, "inputs", None)
    return reproducer.save_request(
        EngineClient.run_args(doc, trust_custom_code=bool(getattr(args, "trust", False))), index, kind, folder,
        error=error, traceback=traceback, timeout_s=reproducer.hang_seconds(error) or getattr(args, "timeout", None),
        rtol=float(getattr(args, "rtol", 1e-4)), atol=float(getattr(args, "atol", 1e-4)),
        inputs={"path": os.path.abspath(inputs)} if inputs else None, run_after=run_after)


def save_for_run(client: Any, doc: PipelineDocument, result: Any, args: argparse.Namespace) -> str:
    """Save a reproducer of the failed step of a run result; the folder. ``EngineError`` when it fails."""
    step = result.steps[result.failed_index]
    error = step.error or ""
    kind = reproducer.failure_kind(error)
    request = _request(doc, args, int(result.failed_index), kind, args.reproducer, error, step.traceback or "")
    return str(client.request("save_reproducer", request)["folder"])


def save_for_report(client: Any, doc: PipelineDocument, report: Any, args: argparse.Namespace, folder: str) -> str:
    """Save a reproducer of a bisection's culprit (a numerics or build failure, or the step that failed)."""
    kind, error, run_after = reproducer.report_kind(report)
    request = _request(doc, args, int(report.culprit_step) - 1, kind, folder, error, run_after=run_after)
    return str(client.request("save_reproducer", request)["folder"])


def save_after_run(client: Any, doc: PipelineDocument, result: Any, args: argparse.Namespace,
                   out: dict[str, Any]) -> None:
    """``run --reproducer``: save one when a step failed (the folder, or why not, goes to ``out`` / stderr)."""
    import sys

    from pipeline_model.engine.client import EngineError

    folder = getattr(args, "reproducer", None)
    if not folder or result.failed_index is None:
        return
    problem = check_folder(folder)
    try:
        if problem:
            raise ValueError(problem)
        out["reproducer"] = save_for_run(client, doc, result, args)
        if not args.json:
            print(f"reproducer written to {out['reproducer']} (python repro.py)", file=sys.stderr)
    except (ValueError, EngineError) as exc:
        out["reproducer_error"] = str(exc)
        print(f"warning: no reproducer: {exc}", file=sys.stderr)
