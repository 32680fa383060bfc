#!/usr/bin/env python3
"""Relax Pipeline Studio entry point.

``python main.py [PIPELINE_FILE | builtin:NAME]`` opens the desktop app (``builtin:cpu_build``: the bundled
``resources/pipelines/cpu_build.json``). Headless sub-commands (PIPELINE: a file or ``builtin:NAME``)::

    python main.py passes [--json]
    python main.py run PIPELINE [--model SPEC] [--target T] [--until N] [--emit-ir DIR] [--json] ...
    python main.py export PIPELINE [-o FILE [--force]] [--model SPEC] [--target T]
    python main.py env [--json]
    python main.py compare A.json B.json [...] [--model SPEC] [--target T] [--json]
    python main.py devices [--tracker HOST:PORT] [--json]

Each sub-command lives in ``pipeline_model/cli/<name>_cmd.py`` and exposes ``add_parser(subparsers)``
and ``main(args) -> int``. Exit codes: 0 ok, 1 a step failed, 2 bad input. A first word that is neither a
command, an option, a bundled pipeline (``builtin:NAME``) nor an existing file is an error (exit 2, the
list of commands): the GUI does not start.
Installed with pip, the same entry point is the ``relax-pipeline-studio`` command.
"""

from __future__ import annotations

import importlib
import os
import sys


def _drop_current_folder_from_path() -> None:
    """Nothing is imported from the folder the app is run from (a planted ``numpy.py``): relative ``sys.path``
    entries (``""``, ``"."`` from ``PYTHONPATH``) and the current folder go, unless it is the app's own folder."""
    here = os.path.dirname(os.path.abspath(__file__))
    cwd = os.getcwd()
    sys.path[:] = [p for p in sys.path if p and os.path.isabs(p) and (p != cwd or p == here)]


_drop_current_folder_from_path()

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
    "devices": "devices_cmd",
}


def program_name() -> str:
    """How the user called us: ``main.py``, or ``relax-pipeline-studio`` for an installed copy."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return name if name and name not in ("-c", "__main__.py") else "main.py"


def cli_main(argv: list[str]) -> int:
    """Parse ``argv`` (without the program name) as a headless sub-command and run it."""
    import argparse

    parser = argparse.ArgumentParser(prog=program_name(), description="Relax Pipeline Studio (headless commands)")
    sub = parser.add_subparsers(dest="command", required=True)
    modules = {}
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(f"pipeline_model.cli.{module_name}")
        module.add_parser(sub)
        modules[name] = module
    args = parser.parse_args(argv)
    return int(modules[args.command].main(args) or 0)


def unknown_command_message(word: str) -> str:
    """The error for a first word that is neither a command nor an existing file."""
    prog = program_name()
    return (f"{prog}: error: {word!r} is not a command and no such file exists\n"
            f"commands: {', '.join(COMMANDS)} ({prog} COMMAND --help for each); "
            f"{prog} [PIPELINE_FILE] opens the desktop app")


def main(argv: list[str] | None = None) -> int:
    """GUI by default; a known sub-command as first argument runs headless; any other first word must be
    an existing (pipeline) file, else exit 2 with the list of commands."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and (argv[0] in COMMANDS or argv[0] in ("-h", "--help")):
        try:
            return cli_main(argv)
        except KeyboardInterrupt:
            return 130
    if argv and argv[0].startswith("builtin:"):  # a bundled pipeline, e.g. builtin:cpu_build
        from pipeline_model.resources import bundled_pipeline

        try:
            argv[0] = str(bundled_pipeline(argv[0]))
        except KeyError as exc:
            print(f"{program_name()}: error: {exc.args[0]}", file=sys.stderr)
            return 2
    if argv and not argv[0].startswith("-") and not os.path.exists(argv[0]):
        print(unknown_command_message(argv[0]), file=sys.stderr)
        return 2
    from app.application import run_app

    return run_app(argv)


if __name__ == "__main__":
    sys.exit(main())
