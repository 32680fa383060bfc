"""``python main.py passes [--json] [--category C]``: the pass catalogue (asked from the engine process)."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap

from pipeline_model.catalogue import Catalogue


def add_parser(subparsers: "argparse._SubParsersAction") -> None:
    """Register the ``passes`` sub-command."""
    p = subparsers.add_parser("passes", help="list the pass catalogue")
    p.add_argument("--json", action="store_true", help="print the catalogue as JSON")
    p.add_argument("--category", metavar="C", help="only this category (case-insensitive)")


def fetch_catalogue() -> Catalogue:
    """The catalogue from the engine process (the CLI never imports TVM)."""
    from pipeline_model.engine.client import EngineClient

    client = EngineClient()
    try:
        return Catalogue.from_json(client.catalogue())
    finally:
        client.close()


def format_table(cat: Catalogue, category: str | None = None) -> str:
    """A readable listing grouped by category; unavailable passes show their reason."""
    lines: list[str] = []
    for cat_name in cat.categories():
        if category and cat_name.lower() != category.lower():
            continue
        lines.append(f"== {cat_name} ==")
        for spec in cat.specs_in(cat_name):
            params = ", ".join(f"{p.name}={json.dumps(p.default)}" if p.kind != "code" else f"{p.name}=<code>"
                               for p in spec.params)
            mark = "" if spec.available else "  [unavailable]"
            trust = "  [needs trust]" if spec.needs_trust else ""
            lines.append(f"  {spec.id:<44} {spec.title}{mark}{trust}")
            if params:
                lines.append(textwrap.fill(params, 110, initial_indent="      params: ", subsequent_indent="        "))
            for name, why in sorted(spec.omitted_params.items()):
                lines.append(f"      not settable: {name} ({why or 'no reason recorded'}; TVM's default is used)")
            if not spec.available:
                lines.append(f"      reason: {spec.unavailable_reason}")
            if spec.warning:
                lines.append(f"      note: {spec.warning}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def main(args: argparse.Namespace) -> int:
    """Print the catalogue; exit 2 for an unknown category, 1 if the engine fails."""
    try:
        cat = fetch_catalogue()
    except Exception as exc:  # noqa: BLE001 - engine problems are reported plainly
        print(f"error: cannot get the pass catalogue from the engine: {exc}", file=sys.stderr)
        return 1
    if args.category and args.category.lower() not in [c.lower() for c in cat.categories()]:
        print(f"error: unknown category {args.category!r}; categories: {', '.join(cat.categories())}",
              file=sys.stderr)
        return 2
    if args.json:
        data = cat.to_json()
        if args.category:
            data["passes"] = [p for p in data["passes"] if p["category"].lower() == args.category.lower()]
        print(json.dumps(data, indent=1))
    else:
        sys.stdout.write(format_table(cat, args.category))
    return 0
