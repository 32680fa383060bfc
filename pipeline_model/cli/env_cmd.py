"""``python main.py env [--json]``: the environment report (TVM, tvm-ffi, build flags, devices, codegens,
packages) with known problems and their fixes. Exit codes: 0 no errors found (warnings may be listed),
1 an error was found (e.g. the engine refuses to start with a tvm-ffi version known to crash)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_parser(subparsers: "argparse._SubParsersAction") -> None:
    """Register the ``env`` sub-command."""
    p = subparsers.add_parser("env", help="report the TVM installation and flag known problems",
                              description="Versions, paths, build flags, devices, codegens and Python packages, "
                                          "with known problems and how to fix them.")
    p.add_argument("--json", action="store_true", help="print one JSON document")


def main(args: argparse.Namespace, client: Any = None) -> int:
    """Print the report; 0 when no error was found, 1 otherwise. ``client``: an existing
    :class:`~pipeline_model.engine.client.EngineClient` to ask (left open); by default a new engine is used."""
    from pipeline_model.env_report import collect, render_json, render_text

    report = collect(client)
    if args.json:
        print(json.dumps(render_json(report), indent=2))
    else:
        sys.stdout.write(render_text(report))
    return 1 if report.has_errors else 0
