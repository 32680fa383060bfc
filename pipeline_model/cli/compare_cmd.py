"""``python main.py compare A.json B.json [...] --model SPEC [--target T] [--json]``: compare pipelines.

Runs every pipeline file on the same model (``--model``, default: the first file's model) and target
(``--target``, default: the first file's) in one engine, builds each final module, runs it on the same
seeded inputs (or ``--inputs``), times them in turn, and prints one row per pipeline: build time, latency
median and spread (interquartile range and min..max of the repeats), each pipeline after the first against
the first (faster / slower with a 95 % interval, "no significant difference (±x %)" when the spread covers
the difference, "same build" when both compile to the same module), the numerical check against the model
as loaded, and the fastest only when it is significantly faster than every other; then a summary of the
final-IR diff of every pair (functions added/removed/changed, lines). ``--json`` gives every row after the
first ``significant`` and ``vs_first`` (ratio, interval ``low``..``high``, verdict).
Exit codes: 0 every pipeline built and passed its check, 1 a build or check failed, 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Optional

from pipeline_model import build_api
from pipeline_model.cli import shape_arg
from pipeline_model.cli.common import add_check_options, add_model_options, engine_failure, fail
from pipeline_model.consent import Consent
from pipeline_model.document import PipelineDocument, resolve_target, target_label
from pipeline_model.latency_stats import SAME_BUILD, verdict_text
from pipeline_model.resources import pipeline_argument

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def add_parser(subparsers: "argparse._SubParsersAction") -> None:
    """Register the ``compare`` sub-command."""
    p = subparsers.add_parser(
        "compare", help="compare two or more pipelines on the same model and inputs (latency, check, IR diff)",
        description="Build every pipeline's final module on the same model, target and inputs; report latency "
                    "(median, spread), build time, the numerical check and the final-IR diff between them.")
    p.add_argument("pipelines", metavar="PIPELINE", nargs="+", type=pipeline_argument,
                   help="pipeline files (.json) or bundled pipelines (builtin:NAME), two or more")
    add_model_options(p, "model for all pipelines (default: the first file's)",
                      "target for all pipelines: cpu, cuda or a JSON object (default: the first file's)")
    add_check_options(p)
    p.add_argument("--number", type=int, default=5, help="runs per measurement (default 5)")
    p.add_argument("--repeat", type=int, default=20,
                   help="measurements (default 20; the interval of each comparison narrows with more)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--trust", "--trust-custom-code", dest="trust", action="store_true",
                   help="allow custom Python code in the pipelines to run")
    p.add_argument("--timeout", metavar="S", type=float, default=600.0,
                   help="kill a step that runs longer than S seconds (default 600)")


def _load(args: argparse.Namespace) -> tuple[list[PipelineDocument], Optional[str]]:
    """The documents with the shared model and target applied, or an error message."""
    from pipeline_model import models
    from pipeline_model.fileformat import PipelineFileError, load_pipeline

    if len(args.pipelines) < 2:
        return [], "give at least two pipeline files"
    if args.number < 1 or args.repeat < 1:
        return [], "--number and --repeat must be >= 1"
    if args.inputs:
        from pipeline_model.safe_files import input_problem

        problem = input_problem(args.inputs, "--inputs")  # missing, or a FIFO/device/folder: said as such
        if problem:
            return [], problem
    docs = []
    for path in args.pipelines:
        try:
            docs.append(load_pipeline(path))
        except (PipelineFileError, OSError) as exc:
            return [], str(exc)
    model = docs[0].model
    base = docs[0].model_path_base()
    if args.model:
        model = args.model if args.model.startswith("builtin:") else os.path.abspath(args.model)
        base = None
    elif not model.startswith("builtin:") and not os.path.isabs(model):
        model = os.path.abspath(os.path.join(base or "", model))
    try:
        model = shape_arg.apply(model, getattr(args, "shape", None))
    except shape_arg.DimsError as exc:
        return [], str(exc)
    try:
        models.resolve_model(model, base)
    except models.ModelLoadError as exc:
        return [], f"--model: {exc}" if args.model else f"{args.pipelines[0]}: model: {exc}"
    target = docs[0].target
    if args.target:
        try:
            target = resolve_target(args.target)
        except ValueError as exc:
            return [], f"--target: {exc}"
    for doc in docs:
        doc.model = model
        doc.target = dict(target)
    return docs, None


def _labels(paths: list[str]) -> list[str]:
    names = [os.path.splitext(os.path.basename(p))[0] for p in paths]
    return [n if names.count(n) == 1 else p for n, p in zip(names, paths)]


def _versus_text(row: build_api.CompareRow, first: bool) -> str:
    """The "vs first" cell: the verdict against the first row."""
    if first:
        return "(first)"
    if row.vs_first is None:
        return "-"
    return verdict_text(row.vs_first)


def format_table(result: build_api.MultiCompareResult) -> list[str]:
    """Text lines: one row per module (the clearly fastest marked with ``*``), then one line per pair's IR diff."""
    header = ["", "pipeline", "build ms", "median us", "IQR us", "min..max us", "vs first", "check"]
    rows = []
    for i, r in enumerate(result.rows):
        if r.error:
            rows.append([" ", r.label, "-", "-", "-", "-", "-", f"ERROR: {r.error.splitlines()[0]}"])
            continue
        lat = r.latency
        chk = "-" if r.check is None else ("pass" if r.check.passed else "FAIL") + (
            f" ({r.check.max_abs_over_ref:.2g} of max|ref|)" if r.check.max_abs_over_ref is not None else "")
        if r.check is not None and r.check.warnings:
            chk += " [warning: outputs too small to check]"
        iqr = f"{lat.q1_us:.1f}..{lat.q3_us:.1f}" if lat and lat.q1_us is not None and lat.q3_us is not None else "-"
        rows.append(["*" if i == result.best and result.best_clear else " ", r.label,
                     f"{r.build_ms:.0f}" if r.build_ms else "-", f"{lat.median_us:.1f}" if lat else "-", iqr,
                     f"{lat.min_us:.1f}..{lat.max_us:.1f}" if lat else "-", _versus_text(r, i == 0) if lat else "-",
                     chk])
    widths = [max(len(h), *(len(row[k]) for row in rows)) for k, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    for d in result.diffs:
        a, b = result.rows[d["a"]].label, result.rows[d["b"]].label
        if d.get("identical"):
            lines.append(f"IR {a} vs {b}: identical")
            continue
        st = d.get("stats") or {}
        funcs = ", ".join(f"{f['name']} ({f['status']})" for f in d.get("functions", [])[:6])
        more = len(d.get("functions", [])) - 6
        lines.append(f"IR {a} vs {b}: {st.get('changed', 0)} changed, {st.get('added', 0)} added, "
                     f"{st.get('removed', 0)} removed function(s), +{st.get('added_lines', 0)}/"
                     f"-{st.get('removed_lines', 0)} lines: {funcs}" + (f" and {more} more" if more > 0 else ""))
    return lines


def verdict_line(result: build_api.MultiCompareResult) -> Optional[str]:
    """The closing line: the fastest (only when significantly faster than every other), else why none is."""
    if result.best is None:
        return None
    best = result.rows[result.best]
    if result.best_clear:
        return f"fastest: {best.label} (significantly faster than every other; use this one)"
    timed = [r for r in result.rows if r.latency is not None]
    if len(timed) > 1 and all(r.vs_first is not None and r.vs_first.verdict == SAME_BUILD for r in timed[1:]):
        return "no fastest: every pipeline compiles to the same build as the first"
    return (f"no clear fastest: {best.label} has the lowest median, but not significantly below every other "
            "(the spread of the repeats covers the difference; more --repeat narrows it)")


def main(args: argparse.Namespace, client: Any = None) -> int:
    """Compare the pipelines; returns the exit code (0 ok, 1 a build/check failed, 2 bad input)."""
    from pipeline_model.engine.client import EngineClient, EngineError

    docs, problem = _load(args)
    if problem:
        return fail(problem, args.json, EXIT_BAD_INPUT)
    labels = _labels(list(args.pipelines))
    requests = []
    for doc, label in zip(docs, labels):
        req = build_api.module_request(doc)
        req["label"] = label
        requests.append(req)
    own = client is None
    if client is None:
        client = EngineClient(step_timeout_s=args.timeout)
    progress = None if args.json else (
        lambda name, data: print(f"  {data.get('message', '')}", file=sys.stderr) if name == "build_progress" else None)
    try:
        try:
            # --trust is the client's consent for this command (the build requests carry it).
            with client.consented(Consent(trust_all=bool(args.trust))):
                result = build_api.compare_many(
                    client, requests, bench=build_api.BenchSettings(number=args.number, repeat=args.repeat),
                    check=(args.rtol, args.atol), on_event=progress,
                    inputs=build_api.InputSpec(path=os.path.abspath(args.inputs) if args.inputs else None))
        except EngineError as exc:
            message, code = engine_failure(exc.message)
            return fail(message, args.json, code, said="compare failed: ")
    finally:
        if own:
            client.close()
    failed = any(r.error or (r.check is not None and not r.check.passed) for r in result.rows)
    code = EXIT_FAILED if failed else EXIT_OK
    if args.json:
        out = result.to_json()
        out.update({"ok": not failed, "exit_code": code, "model": docs[0].model, "target": docs[0].target,
                    "pipelines": [os.path.abspath(p) for p in args.pipelines]})
        print(json.dumps(out, indent=2))
    else:
        print(f"compare: model {docs[0].model}, target {target_label(docs[0].target)}, function {result.function}")
        for line in format_table(result):
            print(line)
        closing = verdict_line(result)
        if closing:
            print(closing)
    return code
