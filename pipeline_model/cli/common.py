"""What the sub-commands that run a pipeline share (``run``, ``bisect``, ``diverge``, ``compare``, ``reduce``): the
options naming the model, target, inputs and tolerances; ``--model``/``--shape``/``--target`` applied to a loaded
document; an engine failure's words and exit code; and how a failure is told (a line on stderr, or one JSON
document)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Optional

from pipeline_model.cli import shape_arg
from pipeline_model.document import PipelineDocument, resolve_target

#: The exit code of bad input (every sub-command's 2).
EXIT_BAD_INPUT = 2


def add_model_options(p: argparse.ArgumentParser, model_help: str = "model instead of the file's",
                      target_help: str = "target instead of the file's: cpu, cuda or a JSON object") -> None:
    """``--model SPEC``, the repeatable ``--shape NAME=DIM`` and ``--target T``."""
    p.add_argument("--model", metavar="SPEC", help=model_help)
    shape_arg.add_argument(p)
    p.add_argument("--target", metavar="T", help=target_help)


def add_check_options(p: argparse.ArgumentParser, run_check_default: bool = False) -> None:
    """``--inputs FILE`` and the check's tolerances ``--rtol``/``--atol`` (default 1e-4; with
    ``run_check_default`` none: the engine then judges as ``run --build`` does, by the model's precision)."""
    p.add_argument("--inputs", metavar="FILE", help=".npy/.npz inputs (default: seeded random inputs)")
    if run_check_default:
        p.add_argument("--rtol", type=float, default=None, help="relative tolerance of the check (default: as "
                       "run --build's check: 1e-4 for float32, looser for float16; an int8 model is judged at one "
                       "quantization step of its output)")
        p.add_argument("--atol", type=float, default=None, help="absolute tolerance of the check, times max |ref| "
                       "(default: as --rtol)")
        return
    p.add_argument("--rtol", type=float, default=1e-4, help="relative tolerance of the check (default 1e-4)")
    p.add_argument("--atol", type=float, default=1e-4,
                   help="absolute tolerance of the check, times max |ref| (default 1e-4)")


def apply_model_options(doc: PipelineDocument, args: argparse.Namespace) -> Optional[str]:
    """Apply ``--model`` (a path made absolute), ``--shape`` and ``--target`` to ``doc`` and check that its model
    resolves; the one-line error message (naming the option, or the pipeline file's model) or ``None``."""
    from pipeline_model import models

    option = getattr(args, "model", None)
    if option:
        doc.model = option if option.startswith("builtin:") else os.path.abspath(option)
    try:
        doc.model = shape_arg.apply(doc.model, getattr(args, "shape", None))
    except shape_arg.DimsError as exc:
        return str(exc)
    try:
        models.resolve_model(doc.model, doc.model_path_base())
    except models.ModelLoadError as exc:
        return f"--model: {exc}" if option else f"{args.pipeline}: model: {exc}"
    if getattr(args, "target", None):
        try:
            doc.target = resolve_target(args.target)
        except ValueError as exc:
            return f"--target: {exc}"
    return None


def engine_failure(message: str) -> tuple[str, int]:
    """The words of an engine error of a build request (its ``BuildError:`` prefix left out) and the exit code:
    2 (bad input) when the inputs file is at fault, else 1."""
    message = message.split(": ", 1)[1] if message.startswith("BuildError: ") else message
    return message, EXIT_BAD_INPUT if message.startswith(("inputs file", "input ")) else 1


def fail(message: str, as_json: bool, code: int, out: Optional[dict[str, Any]] = None, said: str = "") -> int:
    """Tell a failure and return ``code``: with ``as_json`` one JSON document (``out`` updated with ``ok``,
    ``error``, ``exit_code``), else ``error: <said><message>`` on stderr."""
    if as_json:
        out = {} if out is None else out
        out.update({"ok": False, "error": message, "exit_code": code})
        print(json.dumps(out, indent=2))
    else:
        print(f"error: {said}{message}", file=sys.stderr)
    return code
