"""``python main.py reduce REPRO_DIR -o OUT_DIR``: shrink a reproducer's module while it still fails the same way.

Delta-debugging (:func:`pipeline_model.debugging.reduce.reduce_folder`, shared with the GUI) over the engine's candidate reductions (drop
unreachable functions and unused PrimFuncs, drop a function nothing calls, cut a function after a binding
and return it, turn the values used from earlier bindings into new parameters, turn one value into a new
parameter (its producers die), leave a binding out for its argument, drop unused parameters, shrink a static
dimension everywhere; :mod:`pipeline_model.engine.debugging.reduce_tvm`). Each
candidate is checked in the engine by the reproducer's own check (same exception type and first line, the
same signal, no end within the timeout, or error above the tolerance); a crash or hang of a candidate ends
that engine (the client's watchdog restarts it) and counts as what it is. Ctrl+C keeps the best module so
far. The result is another reproducer folder. Running ``repro.py`` is running its code: ``--trust``.
Exit codes: 0 a reduced reproducer was written, 1 the reproducer does not reproduce / the engine failed,
2 bad input.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any

from pipeline_model.cli.common import fail
from pipeline_model.consent import Consent
from pipeline_model.debugging import reproducer
from pipeline_model.debugging.reduce import Module, NotReproduced, reduce_folder

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def add_parser(subparsers: "argparse._SubParsersAction") -> None:
    """Register the ``reduce`` sub-command."""
    p = subparsers.add_parser("reduce", help="shrink a reproducer's module while it still fails the same way",
                              description="Delta-debug the module of a reproducer folder (run --reproducer, "
                                          "bisect --reproducer) and write a smaller reproducer.")
    p.add_argument("folder", metavar="REPRO_DIR", help="reproducer folder (repro.py, repro.json)")
    p.add_argument("-o", "--output", metavar="OUT_DIR", required=True, help="folder for the reduced reproducer")
    p.add_argument("--trust", "--trust-custom-code", dest="trust", action="store_true",
                   help="consent to running the reproducer's code (required)")
    p.add_argument("--timeout", metavar="S", type=float, default=None,
                   help="seconds a candidate may take (default: the reproducer's hang timeout, else 120)")
    p.add_argument("--max-checks", metavar="N", type=int, default=400, help="stop after N checks (default 400)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--force", action="store_true",
                   help="replace existing reproducer files in OUT_DIR (without it an existing file is never replaced)")


def main(args: argparse.Namespace, client: Any = None) -> int:
    """Reduce the reproducer; returns the exit code."""
    from pipeline_model.cli import reproducer_io
    from pipeline_model.engine.client import EngineClient, EngineError

    folder = os.path.abspath(args.folder)
    if args.max_checks < 1:
        return fail(f"--max-checks {args.max_checks}: give at least 1", args.json, EXIT_BAD_INPUT)
    if args.timeout is not None and not (math.isfinite(args.timeout) and args.timeout > 0):
        return fail(f"--timeout {args.timeout}: give a number of seconds > 0", args.json, EXIT_BAD_INPUT)
    try:  # read safely (regular files under a cap, validated JSON) before anything is trusted
        reproducer.read_spec(folder)
    except reproducer.ReproducerFolderError as exc:
        return fail(str(exc), args.json, EXIT_BAD_INPUT)
    except (OSError, ValueError) as exc:
        return fail(f"{args.folder}: not a reproducer folder ({str(exc).splitlines()[0] if str(exc) else exc})",
                     args.json, EXIT_BAD_INPUT)
    if os.path.lexists(args.output) and os.path.realpath(args.output) == os.path.realpath(folder):
        return fail(f"-o {args.output}: is the reproducer being reduced; name a folder of its own", args.json,
                     EXIT_BAD_INPUT)
    problem = reproducer_io.check_folder(args.output, "-o", force=args.force)
    if problem:
        return fail(problem, args.json, EXIT_BAD_INPUT)
    if not args.trust:
        return fail("reducing runs the reproducer's repro.py (its code): run with --trust", args.json, EXIT_BAD_INPUT)
    own = client is None
    if client is None:
        client = EngineClient()  # its default limits; each check runs under --timeout

    def progress(message: str, best: Module, stats: Any) -> None:
        if not args.json:
            print(f"  [{stats.checks} check(s)] {message}", file=sys.stderr, flush=True)

    try:
        with client.consented(Consent.everything()):  # --trust
            outcome = reduce_folder(client, folder, os.path.abspath(args.output), max_checks=args.max_checks,
                                    timeout_s=args.timeout, on_progress=progress, overwrite=args.force)
    except NotReproduced as exc:
        return fail(str(exc), args.json, EXIT_FAILED)
    except EngineError as exc:
        return fail(f"reduce failed: {exc.message}", args.json, EXIT_FAILED)
    finally:
        if own:
            client.close()
    out = {"ok": True, "exit_code": EXIT_OK, **outcome.to_json()}
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"reduced {outcome.start.bindings} -> {outcome.best.bindings} binding(s) in {outcome.stats.checks} "
              f"check(s) ({outcome.stats.stopped}); written to {outcome.folder} (python repro.py)")
    return EXIT_OK
