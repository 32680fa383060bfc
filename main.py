#!/usr/bin/env python3
"""Relax Pipeline Studio entry point.

``python main.py [PIPELINE_FILE]`` opens the desktop app. Headless sub-commands::

    python main.py passes [--json]
    python main.py run PIPELINE [--model SPEC] [--target T] [--until N] [--emit-ir DIR] [--json] ...
    python main.py export PIPELINE [-o FILE] [--model SPEC] [--target T]
    python main.py env [--json]
    python main.py compare A.json B.json [...] [--model SPEC] [--target T] [--json]

Each sub-command lives in ``pipeline_model/cli/<name>_cmd.py`` and exposes ``add_parser(subparsers)``
and ``main(args) -> int``. Exit codes: 0 ok, 1 a step failed, 2 bad input.
"""

from __future__ import annotations

import importlib
import sys

# Sub-command name -> module under pipeline_model.cli
COMMANDS = {
    "passes": "passes_cmd",
    "run": "run_cmd",
    "export": "export_cmd",
    "env": "env_cmd",
    "compare": "compare_cmd",
    "bisect": "bisect_cmd",
    "reduce": "reduce_cmd",
    "diverge": "diverge_cmd",
}


def cli_main(argv: list[str]) -> int:
    """Parse ``argv`` (without the program name) as a headless sub-command and run it."""
    import argparse

    parser = argparse.ArgumentParser(prog="main.py", description="Relax Pipeline Studio (headless commands)")
    sub = parser.add_subparsers(dest="command", required=True)
    modules = {}
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(f"pipeline_model.cli.{module_name}")
        module.add_parser(sub)
        modules[name] = module
    args = parser.parse_args(argv)
    return int(modules[args.command].main(args) or 0)


def main(argv: list[str] | None = None) -> int:
    """GUI by default; a known sub-command as first argument runs headless."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and (argv[0] in COMMANDS or argv[0] in ("-h", "--help")):
        try:
            return cli_main(argv)
        except KeyboardInterrupt:
            return 130
    from app.application import run_app

    return run_app(argv)


if __name__ == "__main__":
    sys.exit(main())
