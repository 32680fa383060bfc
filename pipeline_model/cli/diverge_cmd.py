"""``python main.py diverge PIPELINE [--step K]``: where values diverge across one step.

Every intermediate value of the entry function (and of the functions and fused PrimFuncs it calls) is
captured through the VM instrument in the module before step K and in the module after it (both built
unchanged as ``bisect`` builds them, same inputs and weights), matched by their place in the dataflow (not by
name: keys are unique, ``lv``, ``lv#2``), and compared
(:mod:`pipeline_model.engine.debugging.diverge_tvm`). Without ``--step`` the step is the culprit that
``bisect`` names (the bisection runs first). Prints one row per value (name, shape, max |diff|/max |ref|,
what it calls, ok / DIVERGES / no counterpart; values inside a call indented under it) with the first diverging
node marked ``>`` and the first diverging value inside it ``*``, and a ``likelier culprit`` line when the
first diverging value depends on one with no counterpart before the step; ``--json`` prints the reply.
Exit codes: 0 no node diverges, 1 a node diverges (or the engine failed), 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from pipeline_model.cli.common import add_check_options, add_model_options, engine_failure, fail
from pipeline_model.cli.bisect_cmd import bisect_request, load_document
from pipeline_model.debugging.bisect import request_bisect

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def add_parser(subparsers: "argparse._SubParsersAction") -> None:
    """Register the ``diverge`` sub-command."""
    p = subparsers.add_parser("diverge", help="per-node errors of the values before and after one step",
                              description="Compare every intermediate value of the entry function before and "
                                          "after one step (default: the step bisect names).")
    p.add_argument("pipeline", metavar="PIPELINE", help="pipeline file (.json)")
    p.add_argument("--step", metavar="K", type=int, help="1-based step (default: the culprit bisect names)")
    add_model_options(p)
    add_check_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--trust", "--trust-custom-code", dest="trust", action="store_true",
                   help="allow custom Python code in the pipeline (and a model .py file) to run")
    p.add_argument("--timeout", metavar="S", type=float, default=600.0,
                   help="kill the engine when it shows no progress for S seconds (default 600)")


def table(reply: dict[str, Any]) -> list[str]:
    """Text rows of a ``diverge`` reply (values inside a call indented under it; ``>`` the first diverging node,
    ``*`` the first diverging value inside it)."""
    lines = [f"step {reply['step']} ({reply['pass_id']}), function {reply['function']}: "
             f"{len(reply['nodes'])} value(s) after the step"]
    for node in reply["nodes"]:
        mark = ">" if node.get("first") else "*" if node.get("first_inside") else " "
        ratio = node.get("max_abs_over_ref")
        err = f"{ratio:.3g}" if isinstance(ratio, (int, float)) else "-"
        status = {"diverges": "DIVERGES", "no counterpart": str(node.get("note") or "no counterpart")}.get(
            node["status"], node["status"])
        key = str(node.get("key") or node["name"])
        label = key.rsplit("/", 1)[-1]  # the key: unique where names repeat (lv, lv#2)
        name = "  " * key.count("/") + label
        lines.append(f"{mark} {name:<20} {node.get('callee', ''):<28} {str(node['shape']):<18} {err:<10} "
                     f"{status}")
    if reply.get("only_before"):
        lines.append("only before the step: " + ", ".join(reply["only_before"]))
    first = reply.get("first_divergent")
    inside = reply.get("first_inside")
    lines.append((f"first diverging node: {first}" + (f" (inside it: {inside})" if inside else "")) if first
                 else "no node diverges beyond the tolerance")
    culprit = reply.get("likelier_culprit")
    if first and isinstance(culprit, dict):
        lines.append(f"likelier culprit: {culprit.get('key')} - {culprit.get('reason')}")
    return lines


def main(args: argparse.Namespace, client: Any = None) -> int:
    """Compare the values across the step; returns the exit code."""
    from pipeline_model.engine.client import ConsentRequired, EngineClient, EngineError

    args.check_against = "tvm"
    doc, problem = load_document(args)
    if doc is None:
        return fail(problem or "bad input", args.json, EXIT_BAD_INPUT)
    if args.step is not None and not 1 <= args.step <= len(doc.steps):
        return fail(f"--step {args.step}: the pipeline has steps 1..{len(doc.steps)}", args.json, EXIT_BAD_INPUT)
    own = client is None
    if client is None:
        client = EngineClient(step_timeout_s=args.timeout)
    try:
        request = bisect_request(doc, args)
        step = args.step
        try:
            if step is None:
                found = request_bisect(client, request)
                if found.get("culprit_step") is None:
                    return fail(found.get("message") or "bisect named no step: give --step", args.json, EXIT_FAILED)
                step = int(found["culprit_step"])
            reply = client.request("diverge", dict(request, step_index=step - 1))
        except ConsentRequired as exc:  # code that would run without --trust: bad input, as the README says
            return fail(f"diverge refused: {exc.message}", args.json, EXIT_BAD_INPUT)
        except EngineError as exc:
            return fail(f"diverge failed: {engine_failure(exc.message)[0]}", args.json, EXIT_FAILED)
    finally:
        if own:
            client.close()
    code = EXIT_FAILED if reply.get("first_divergent") else EXIT_OK
    if args.json:
        print(json.dumps(dict(reply, exit_code=code, pipeline=os.path.abspath(args.pipeline)), indent=2))
    else:
        for line in table(reply):
            print(line)
    return code
