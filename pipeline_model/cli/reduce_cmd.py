"""``python main.py reduce REPRO_DIR -o OUT_DIR``: shrink a reproducer's module while it still fails the same way.

Delta-debugging (:mod:`pipeline_model.debugging.reduce`) over the engine's candidate reductions (drop
unreachable functions and unused PrimFuncs, cut a function after a binding and return it, turn the values
used from earlier bindings into new parameters, drop unused parameters, shrink a static dimension
everywhere; :mod:`pipeline_model.engine.debugging.reduce_tvm`). Each
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
import os
import sys
from typing import Any, Optional

from pipeline_model.debugging import reproducer
from pipeline_model.debugging.reduce import Module, Reducer

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


def _fail(message: str, as_json: bool, code: int) -> int:
    if as_json:
        print(json.dumps({"ok": False, "error": message, "exit_code": code}, indent=2))
    else:
        print(f"error: {message}", file=sys.stderr)
    return code


class EngineSide:
    """The engine calls of a reduction; re-sends the module after an engine restart (its cache is gone)."""

    def __init__(self, client: Any, folder: str, spec: reproducer.ReproSpec, trust: bool) -> None:
        self.client, self.folder, self.spec = client, folder, spec
        self.consent = {"run": {"trust_all": bool(trust)}}
        self.pid: Optional[int] = None

    def _module_args(self, module: Module) -> dict[str, Any]:
        args: dict[str, Any] = {"key": module.key, "function": self.spec.function}
        if self.client.pid != self.pid:
            args["module_json"] = module.json
        return args

    def _call(self, cmd: str, args: dict[str, Any]) -> dict[str, Any]:
        reply = self.client.request(cmd, {**args, **self.consent})
        self.pid = self.client.pid
        return reply

    def prepare(self) -> Module:
        """The reproducer's module."""
        reply = self._call("reduce_prepare", {"folder": self.folder})
        return Module(str(reply["key"]), str(reply["module_json"]), int(reply["bindings"]), int(reply["elements"]))

    def candidates(self, module: Module) -> list[dict[str, Any]]:
        """The engine's candidate reductions of ``module``."""
        return list(self._call("reduce_candidates", self._module_args(module))["candidates"])

    def apply(self, module: Module, candidate: dict[str, Any]) -> Optional[Module]:
        """``module`` reduced by ``candidate`` (``None``: not possible)."""
        reply = self._call("reduce_apply", {**self._module_args(module), "candidate": candidate})
        if not reply.get("key"):
            return None
        return Module(str(reply["key"]), str(reply["module_json"]), int(reply["bindings"]), int(reply["elements"]))

    def check(self, module: Module) -> bool:
        """Does ``module`` still fail as expected? A crash or hang of the engine counts as what it is."""
        from pipeline_model.engine.client import EngineCrashed

        try:
            return bool(self._call("reduce_check", {**self._module_args(module), "folder": self.folder})["interesting"])
        except EngineCrashed as exc:
            self.pid = None
            if getattr(exc, "timed_out", False):
                return self.spec.kind == reproducer.KIND_HANG
            code = getattr(exc, "exit_code", None)
            return (self.spec.kind == reproducer.KIND_CRASH and code is not None
                    and -int(code) == int(self.spec.expected.get("signal", 11)))

    def write(self, module: Module, out_dir: str, original: int, checks: int) -> dict[str, Any]:
        """Write the reduced reproducer."""
        return self._call("reduce_write", {**self._module_args(module), "folder": self.folder, "out_dir": out_dir,
                                           "original": original, "checks": checks})


def main(args: argparse.Namespace, client: Any = None) -> int:
    """Reduce the reproducer; returns the exit code."""
    from pipeline_model.cli import reproducer_io
    from pipeline_model.engine.client import EngineClient, EngineError

    folder = os.path.abspath(args.folder)
    try:
        spec = reproducer.read_spec(folder)
    except (OSError, ValueError, SyntaxError) as exc:
        return _fail(f"{args.folder}: not a reproducer folder ({exc})", args.json, EXIT_BAD_INPUT)
    problem = reproducer_io.check_folder(args.output)
    if problem:
        return _fail(problem, args.json, EXIT_BAD_INPUT)
    if not args.trust:
        return _fail("reducing runs the reproducer's repro.py (its code): run with --trust", args.json, EXIT_BAD_INPUT)
    timeout = args.timeout or float(spec.expected.get("timeout") or 120.0)
    own = client is None
    if client is None:
        client = EngineClient(step_timeout_s=timeout)
    side = EngineSide(client, folder, spec, args.trust)

    def progress(message: str, best: Module, stats: Any) -> None:
        if not args.json:
            print(f"  [{stats.checks} check(s)] {message}", file=sys.stderr, flush=True)

    try:
        try:
            start = side.prepare()
            if not side.check(start):
                return _fail("the reproducer does not reproduce its failure: nothing to reduce", args.json, EXIT_FAILED)
            reducer = Reducer(side.candidates, side.apply, side.check, max_checks=args.max_checks,
                              on_progress=progress)
            best = reducer.run(start)
            written = side.write(best, os.path.abspath(args.output), start.bindings, reducer.stats.checks)
        except EngineError as exc:
            return _fail(f"reduce failed: {exc.message}", args.json, EXIT_FAILED)
    finally:
        if own:
            client.close()
    out = {"ok": True, "exit_code": EXIT_OK, "folder": written["folder"], "bindings_before": start.bindings,
           "bindings_after": best.bindings, "checks": reducer.stats.checks, "accepted": reducer.stats.accepted,
           "stopped": reducer.stats.stopped, "seconds": round(reducer.stats.seconds, 3)}
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"reduced {start.bindings} -> {best.bindings} binding(s) in {reducer.stats.checks} check(s) "
              f"({reducer.stats.stopped}); written to {written['folder']} (python repro.py)")
    return EXIT_OK
