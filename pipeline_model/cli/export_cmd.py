"""``python main.py export PIPELINE [-o FILE] [--build] [--full] [--model SPEC] [--target T]``: write a standalone
TVM script (``--model``/``--target`` override the pipeline file's, as for ``main.py run``).

A pipeline of stock TVM passes on a fixed target gives the plain script (the model, the passes in order, the printed
result: :func:`pipeline_model.export.export_script` with ``plain``); ``--build``, ``--full``, the app's own passes
or rules and ``"mcpu": "native"`` give the full one, with the code they need below a marker.

An enabled step whose pass id the engine's catalogue does not know (a typo such as ``relax.FuseOp``) is
an error naming the step (exit 2); a disabled one is left out of the script.

An existing file at the output path is replaced only with ``--force`` (exit 2 naming it otherwise, before the
engine is asked anything); a link, FIFO or device there is refused even then (``docs/RELIABILITY.md``)."""

from __future__ import annotations

import argparse
import os
import sys

from pipeline_model.cli import shape_arg
from pipeline_model.cli.common import add_model_options
from pipeline_model.resources import is_resource, pipeline_argument


def add_parser(subparsers: "argparse._SubParsersAction") -> None:
    """Register the ``export`` sub-command."""
    p = subparsers.add_parser("export", help="export a pipeline as a standalone Python script")
    p.add_argument("pipeline", type=pipeline_argument, help="pipeline file (.json) or bundled pipeline (builtin:NAME)")
    p.add_argument("-o", "--output", metavar="FILE", help="output file ('-' for stdout; default: next to the pipeline, "
                   "in the current folder for a bundled one)")
    p.add_argument("--build", action="store_true",
                   help="the script also compiles, runs, times and checks the model")
    p.add_argument("--full", action="store_true",
                   help="the full script even for stock TVM passes: it also takes --build, --save-script and "
                   "--save-json (the app's code for them below a marker)")
    add_model_options(p, "model instead of the file's: builtin:mlp, builtin:transformer or a path")
    p.add_argument("--no-engine", action="store_true",
                   help="do not ask the engine for the catalogue (parameters are used as written)")
    p.add_argument("--force", action="store_true",
                   help="replace the output file when it exists (without it an existing file is never replaced)")


def main(args: argparse.Namespace) -> int:
    """Export; exit 0 ok, 2 bad input (unreadable pipeline, bad step), 1 engine failure."""
    from pipeline_model.export import ExportError, default_output_path, export_script
    from pipeline_model.fileformat import PipelineFileError, load_pipeline

    if args.output and args.output != "-":
        from pipeline_model.safe_write import OutputPathError, check_output_file

        try:
            check_output_file(args.output, "output file", overwrite=bool(args.force))  # before the engine starts
        except OutputPathError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    catalogue = None
    if not args.no_engine:
        try:
            from pipeline_model.cli.passes_cmd import fetch_catalogue

            catalogue = fetch_catalogue()
        except Exception as exc:  # noqa: BLE001
            print(f"error: cannot get the pass catalogue from the engine: {exc}", file=sys.stderr)
            return 1
    try:
        doc = load_pipeline(args.pipeline, known_pass_ids=set(catalogue.ids()) if catalogue else None)
    except (PipelineFileError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from pipeline_model.cli.run_cmd import unknown_step_errors

    unknown = unknown_step_errors(doc)
    if unknown:
        for line in unknown:
            print(f"error: {line}", file=sys.stderr)
        return 2
    if getattr(args, "model", None):
        from pipeline_model import models

        spec = args.model if args.model.startswith("builtin:") else os.path.abspath(args.model)
        try:
            models.resolve_model(spec, None)
        except models.ModelLoadError as exc:
            print(f"error: --model: {exc}", file=sys.stderr)
            return 2
        doc.model = spec
    if getattr(args, "shape", None):
        from pipeline_model import models

        try:
            doc.model = shape_arg.apply(doc.model, args.shape)
            models.resolve_model(doc.model, doc.model_path_base())
        except models.ModelLoadError as exc:
            print(f"error: --shape: {exc}", file=sys.stderr)
            return 2
    if getattr(args, "target", None):
        from pipeline_model.document import resolve_target

        try:
            doc.target = resolve_target(args.target)
        except ValueError as exc:
            print(f"error: --target: {exc}", file=sys.stderr)
            return 2
    try:
        source = export_script(doc, build=args.build, catalogue=catalogue, plain=not getattr(args, "full", False))
    except ExportError as exc:
        print(f"error: {args.pipeline}: {exc}", file=sys.stderr)
        return 2
    if args.output == "-":
        sys.stdout.write(source)
        return 0
    from pipeline_model import safe_write

    out = args.output or default_output_path(doc)
    if not args.output and doc.path and is_resource(doc.path):  # the app's own files stay as shipped
        out = os.path.basename(out)
    try:
        # a link, FIFO or device is refused; an existing file only replaced with --force (looked at before the rename)
        safe_write.write_text(out, source, "output file", replace=bool(args.force))
    except safe_write.OutputPathError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {out}")
    return 0
