"""Benchmark of ``reduce`` (issue 31: reduce to the essence): how often a reproducer whose failure needs k
operations is reduced to at most k + 2 bindings.

Seeded cases (``tests/debug_fixtures.reduce_case``): ``builtin:transformer`` (37 bindings) or
``cnn_bn.onnx`` (17), maybe after FoldConstant or CanonicalizeBindings, then a custom step that fails only on
a seeded chain of k = 1..3 operations (the head fed by the next, ...): a Python exception, a TVM error, a
segfault, a hang (``--hang-s`` watchdog, 3 s; each reproducing candidate waits for it and a new engine) or a wrong result
(the head scaled by 1.5; reproducer of ``bisect``). Prints each case and the rate per kind and overall.

Run: ``.venv/bin/python -m bench.bench_reduce [--cases 10] [--kinds exception,tvm,crash,hang,numeric]
[--seed 0] [--hang-s 3] [--json]`` (``--cases`` per kind).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from typing import Any

from pipeline_model.engine.client import EngineClient
from tests.debug_fixtures import run_reduce_case

KINDS = ("exception", "tvm", "crash", "hang", "numeric")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10, help="seeded cases per kind")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--hang-s", type=float, default=3.0, help="watchdog of the hang cases (raise on a busy machine)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    client = EngineClient(step_timeout_s=300.0)
    try:
        for kind in args.kinds.split(","):
            for seed in range(args.seed, args.seed + args.cases):
                with tempfile.TemporaryDirectory() as folder:
                    try:
                        row = run_reduce_case(client, folder, seed, kind, hang_s=args.hang_s)
                    except Exception as exc:  # noqa: BLE001 - a case that fails is a miss, said so
                        row = {"seed": seed, "mode": kind, "ok": False, "error": str(exc).splitlines()[0][:200]}
                row.pop("folder", None)
                rows.append(row)
                if not args.json:
                    print(f"{kind:9} seed {seed:3}  k={row.get('k', '?')}  {row.get('before', '?'):>3} -> "
                          f"{row.get('after', '?'):>3} bindings  {row.get('checks', '?'):>4} checks  "
                          f"{row.get('seconds', '?'):>6} s  {'ok' if row['ok'] else 'MISS'}  "
                          f"{' <- '.join(row.get('chain', [])) or row.get('error', '')}", flush=True)
    finally:
        client.close()
    summary = {}
    for kind in args.kinds.split(","):
        mine = [r for r in rows if r["mode"] == kind]
        summary[kind] = f"{sum(r['ok'] for r in mine)}/{len(mine)}"
    total = f"{sum(r['ok'] for r in rows)}/{len(rows)}"
    if args.json:
        print(json.dumps({"rows": rows, "per_kind": summary, "total": total}, indent=2))
    else:
        print("at most k + 2 bindings left:", ", ".join(f"{k} {v}" for k, v in summary.items()), "- all", total)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
