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
    """Add ``--reproducer DIR`` (and ``--force``, which lets it replace the files of an earlier reproducer)."""
    parser.add_argument("--reproducer", metavar="DIR",
                        help="when a step fails, save a reproducer folder (repro.py, README.md, data) into DIR")
    add_force(parser)


def add_force(parser: argparse.ArgumentParser) -> None:
    """Add ``--force``: replace files of the same names in an output folder (refused without it)."""
    if "--force" not in parser._option_string_actions:
        parser.add_argument("--force", action="store_true",
                            help="replace existing files of the same names in the output folder "
                                 "(without it an existing file is never replaced)")


def check_folder(folder: str, what: str = "--reproducer", force: bool = False) -> Optional[str]:
    """An error message (one line, naming ``what``) when ``folder`` cannot receive a reproducer — a link, a FIFO,
    a device or, without ``force``, an existing file at one of its names — else ``None``. Checked before the run,
    so nothing is written when it is refused."""
    from pipeline_model.safe_write import OutputPathError, check_new_files

    if not os.path.lexists(folder) and not os.path.isdir(os.path.dirname(os.path.abspath(folder))):
        return f"{what} {folder}: its parent folder does not exist"
    try:
        check_new_files(folder, reproducer.FOLDER_FILES, what, overwrite=force)
    except OutputPathError as exc:
        return str(exc)
    return None


def _request(doc: PipelineDocument, args: argparse.Namespace, index: int, kind: str, folder: str,
             error: str = "", traceback: str = "", run_after: bool = False) -> dict[str, Any]:
    from pipeline_model.engine.client import EngineClient

    inputs = getattr(args, "inputs", None)
    rtol, atol = (getattr(args, name, None) for name in ("rtol", "atol"))  # None: run --build's engine default
    return reproducer.save_request(
        EngineClient.run_args(doc, trust_custom_code=bool(getattr(args, "trust", False))), index, kind, folder,
        error=error, traceback=traceback, timeout_s=reproducer.hang_seconds(error) or getattr(args, "timeout", None),
        rtol=1e-4 if rtol is None else float(rtol), atol=1e-4 if atol is None else float(atol),
        inputs={"path": os.path.abspath(inputs)} if inputs else None, run_after=run_after,
        overwrite=bool(getattr(args, "force", False)))


def save_for_run(client: Any, doc: PipelineDocument, result: Any, args: argparse.Namespace) -> str:
    """Save a reproducer of the failed step of a run result; the folder. ``EngineError`` when it fails."""
    step = result.steps[result.failed_index]
    error = step.error or ""
    kind = reproducer.failure_kind(error)
    request = _request(doc, args, int(result.failed_index), kind, args.reproducer, error, step.traceback or "")
    return str(client.request("save_reproducer", request)["folder"])


def save_for_report(client: Any, doc: PipelineDocument, report: Any, args: argparse.Namespace, folder: str) -> str:
    """Save a reproducer of a bisection's culprit (a numerics or build failure, or the step that failed), or with
    no culprit step, of TVM's default pipeline failing on the model as loaded (:data:`reproducer.NO_STEP`)."""
    kind, error, run_after = reproducer.report_kind(report)
    index = reproducer.NO_STEP if report.culprit_step is None else int(report.culprit_step) - 1
    request = _request(doc, args, index, kind, folder, error, run_after=run_after)
    return str(client.request("save_reproducer", request)["folder"])


def save_after_run(client: Any, doc: PipelineDocument, result: Any, args: argparse.Namespace,
                   out: dict[str, Any]) -> None:
    """``run --reproducer``: save one when a step failed (the folder, or why not, goes to ``out`` / stderr)."""
    import sys

    from pipeline_model.engine.client import EngineError

    from pipeline_model.consent import REFUSAL_PREFIX

    folder = getattr(args, "reproducer", None)
    if not folder or result.failed_index is None:
        return
    if (result.steps[result.failed_index].error or "").startswith(REFUSAL_PREFIX):
        print("warning: no reproducer: the step was refused for lack of consent (nothing ran); run with --trust",
              file=sys.stderr)
        out["reproducer_error"] = "the step was refused for lack of consent"
        return
    problem = check_folder(folder, force=bool(getattr(args, "force", False)))
    try:
        if problem:
            raise ValueError(problem)
        out["reproducer"] = save_for_run(client, doc, result, args)
        if not args.json:
            print(f"reproducer written to {out['reproducer']} (python repro.py)", file=sys.stderr)
    except (ValueError, EngineError) as exc:
        out["reproducer_error"] = str(exc)
        print(f"warning: no reproducer: {exc}", file=sys.stderr)
