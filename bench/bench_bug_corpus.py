"""What the debugging commands say on the real-bug corpus (``tests/data/tvm_bugs``; docs/DEBUGGING.md,
"Real TVM bugs").

For each case: ``bisect`` (the step it blames), ``diverge`` at the expected step of a wrong result (the
first node it marks), the app's reproducer (``run --reproducer`` for a step that raises, ``bisect
--reproducer`` otherwise) run as ``python repro.py`` in a fresh interpreter started from another folder,
``reduce`` of that reproducer and the reduced ``repro.py`` run the same way. Prints the Markdown table of
docs/DEBUGGING.md (and, with ``--json FILE``, every answer).

    .venv/bin/python -m bench.bench_bug_corpus [--cases NAME,...] [--json FILE] [--max-checks N]

One engine for all cases (the client restarts it after a case that crashes it). Timings depend on the
machine's load: the table has none.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from typing import Any

from tests import tvm_bug_corpus as corpus

HEADER = ("| case | apache/tvm | kind | expected culprit | bisect says | diverge says | reproducer (fresh "
          "interpreter) | reduce | reduced repro |")
RULE = "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"


def _expected(case: corpus.Case) -> str:
    if case.culprit is None:
        return "none: TVM's default pipeline"
    return f"step {case.culprit} ({case.info.get('culprit_pass')})"


def _repro_says(code: int, text: str) -> str:
    lines = [line for line in text.splitlines() if line.startswith(("REPRODUCED", "not reproduced"))]
    said = corpus.first_line(lines[0] if lines else text, 60)
    return f"exit {code}: {said}" if said else f"exit {code}"


def measure(case: corpus.Case, client: Any, work: str, max_checks: int) -> dict[str, Any]:
    """Every command's answer on one case, and the table's cells."""
    row: dict[str, Any] = {"case": case.name, "issue": case.info["issue"], "kind": case.kind}
    started = time.perf_counter()
    code, answer = corpus.bisect(case, client)
    row["bisect"] = {"exit": code, **answer}
    row["bisect_says"] = corpus.bisect_says(answer)
    diverge = case.info.get("diverge")
    if diverge:
        code, answer = corpus.diverge(case, client, int(diverge["step"]))
        row["diverge"] = {"exit": code, **answer}
        row["diverge_says"] = corpus.diverge_says(answer)
    else:
        row["diverge_says"] = "n/a (no numbers to compare)"
    os.makedirs(os.path.join(work, case.name), exist_ok=True)
    folder = os.path.join(work, case.name, "repro")
    code, answer = corpus.reproducer_folder(case, client, folder)
    row["save_reproducer"] = {"exit": code, **answer}
    elsewhere = os.path.join(work, case.name, "elsewhere")
    os.makedirs(elsewhere, exist_ok=True)
    if os.path.isfile(os.path.join(folder, "repro.py")):
        code, text = corpus.run_repro(folder, elsewhere)
        row["repro"] = {"exit": code, "output": text[-2000:]}
        row["repro_says"] = _repro_says(code, text)
        reduced = os.path.join(work, case.name, "reduced")
        code, answer = corpus.reduce(folder, reduced, client, max_checks)
        row["reduce"] = {"exit": code, **answer}
        row["reduce_says"] = corpus.reduced_bindings(answer)
        if os.path.isfile(os.path.join(reduced, "repro.py")):
            code, text = corpus.run_repro(reduced, elsewhere)
            row["reduced_repro"] = {"exit": code, "output": text[-2000:]}
            row["reduced_repro_says"] = _repro_says(code, text)
        else:
            row["reduced_repro_says"] = "none written"
    else:
        row["repro_says"] = "none saved: " + corpus.first_line(
            row["save_reproducer"].get("reproducer_error") or row["save_reproducer"].get("message"), 60)
        row["reduce_says"] = row["reduced_repro_says"] = "n/a"
    row["seconds"] = round(time.perf_counter() - started, 1)
    return row


def table(rows: list[dict[str, Any]]) -> str:
    """The Markdown table of docs/DEBUGGING.md."""
    lines = [HEADER, RULE]
    for row in rows:
        case = corpus.Case(row["case"], json.load(open(os.path.join(corpus.CORPUS, row["case"], "case.json"),
                                                       encoding="utf-8")))
        cells = [f"`{row['case']}`", f"[#{row['issue']}](https://github.com/apache/tvm/issues/{row['issue']})",
                 row["kind"], _expected(case), row["bisect_says"], row["diverge_says"], row["repro_says"],
                 row["reduce_says"], row["reduced_repro_says"]]
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    parser.add_argument("--json", default="", help="also write every answer to this file")
    parser.add_argument("--max-checks", type=int, default=200, help="reduce's --max-checks")
    args = parser.parse_args()
    from pipeline_model.engine.client import EngineClient

    wanted = {n for n in args.cases.split(",") if n}
    chosen = [c for c in corpus.cases() if not wanted or c.name in wanted]
    rows = []
    client = EngineClient(step_timeout_s=600.0)
    try:
        with tempfile.TemporaryDirectory(prefix="rps-bug-corpus-") as work:
            for case in chosen:
                row = measure(case, client, work, args.max_checks)
                print(f"{case.name}: {row['bisect_says']} | {row['diverge_says']} | {row['repro_says']} | "
                      f"{row['reduce_says']} | {row['reduced_repro_says']} ({row['seconds']} s)", flush=True)
                rows.append(row)
    finally:
        client.close()
    print()
    print(table(rows))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1, default=str)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
