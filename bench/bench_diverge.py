"""Benchmark of ``diverge`` (issue 21): how often the first node marked is the wrong binding, and its time on
the 32-layer decoder against one build-and-run.

Accuracy (``--cases N``): seeded pipelines (``tests/debug_fixtures.diverge_case``) on ``builtin:mlp``,
``builtin:transformer`` and ``resources/models/cnn_bn.onnx``, each with one wrong custom step at a random
position: a Relax-level rewrite of a random binding (of the entry function or inside a fused function: scaled,
offset, ``R.add`` -> ``R.subtract``) or a TIR-level one (the last store of a random PrimFunc scaled), sometimes
after the whole ``default_build`` lowering. ``diverge`` runs on the wrong step; a case is a hit when the first
node marked is the rewritten binding or the fused call that holds it (for a PrimFunc, the first binding that
calls it); ``inside`` counts the cases where the rewritten binding inside a fused call is also named.

Speed (``--decoder``): on ``builtin:decoder`` with a wrong ``R.add`` at step 2 of 4 (CanonicalizeBindings,
wrong step, LegalizeOps, DeadCodeElimination), rounds of one ``build_run`` with the check (the optimized build,
its run and the reference build) and one ``diverge`` of step 2 each way (``instrument``, ``expose``) in one
engine; prints each round (wall seconds, and CPU seconds of the engine process: steadier on a busy machine)
and the medians of seconds and of per-round ratios (the issue's bound: ``diverge`` <= 3 x one build-and-run).

Structure (``--structure N``, issue 31): seeded cases of ``tests/diverge_cases.structure_case`` on
``builtin:mlp``, ``builtin:transformer``, ``cnn_bn.onnx`` and the decoder with 2 layers, half of them after
``FuseOpsByPattern`` with the cuBLAS table (composite functions that all bind ``lv``/``gv``): the wrong value at
the top level, inside a fused or composite function, in a PrimFunc or a lowered module; a hit when the first node
marked is the *key* of the call holding it (names repeat); prints the rate per place.

Run: ``.venv/bin/python -m bench.bench_diverge [--cases 45] [--structure 40] [--seed 0] [--decoder] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from typing import Any, Optional

from pipeline_model import build_api
from pipeline_model.consent import Consent
from pipeline_model.document import PipelineDocument, Step
from pipeline_model.engine.client import EngineClient, EngineError
from pipeline_model.fileformat import load_pipeline, save_pipeline
from tests.debug_fixtures import RELAX_WRONG, ROOT, diverge_case
from tests.diverge_cases import MODELS as STRUCTURE_MODELS, structure_case

CNN = os.path.join(ROOT, "resources", "models", "cnn_bn.onnx")
MODELS = ("builtin:mlp", "builtin:transformer", CNN)


def diverge_request(path: str, step: int, via: str = "instrument") -> dict[str, Any]:
    """The engine's ``diverge`` arguments for ``step`` (1-based) of the pipeline at ``path``."""
    from pipeline_model.cli.bisect_cmd import bisect_request

    args = argparse.Namespace(trust=True, rtol=1e-4, atol=1e-4, check_against="tvm", inputs=None)
    return dict(bisect_request(load_pipeline(path), args), step_index=step - 1, via=via)


def _ask(client: EngineClient, made: tuple[str, int, str], seed: int, model: str,
         level: str) -> tuple[dict[str, Any], Optional[dict], dict]:
    """``(out, reply, facts)`` of a seeded case ``made`` (pipeline path, wrong step, facts file) asked of the
    engine: ``out`` holds the case's seed, model, level and step, and on an engine error ``hit=False`` and the
    error's first line (``reply`` then None)."""
    path, wrong, facts_path = made
    out: dict[str, Any] = {"seed": seed, "model": os.path.basename(model), "level": level, "step": wrong}
    try:
        reply = client.request("diverge", diverge_request(path, wrong))
    except EngineError as exc:
        return dict(out, hit=False, error=exc.message.splitlines()[0][:200]), None, {}
    with open(facts_path, encoding="utf-8") as f:
        return out, reply, json.load(f)


def run_case(client: EngineClient, folder: str, seed: int, model: str, level: str) -> dict[str, Any]:
    """One injected case: the facts the wrong step wrote, the reply's first node, hit or not."""
    out, reply, facts = _ask(client, diverge_case(folder, seed, model, level, name=f"case{seed}"), seed, model, level)
    if reply is None:
        return out
    expected = facts["expected"][:1]
    first = reply.get("first_divergent")
    inside = reply.get("first_inside")
    out.update(mode=facts["mode"], target=facts["target"], expected=expected, first=first, inside=inside,
               expected_inside=facts.get("inside"), hit=first in expected, ms=reply.get("ms"),
               nodes=len(reply.get("nodes") or []))
    if facts.get("inside"):
        out["inside_hit"] = bool(inside) and str(inside).split("/")[-1] == facts["inside"]
    return out


def run_structure_case(client: EngineClient, folder: str, seed: int, model: str, level: str) -> dict[str, Any]:
    """One case of ``tests/diverge_cases.structure_case`` (issue 31: keys, not names): hit when the first node
    marked is the key of the call holding the rewrite; ``inside_hit`` when the value inside it is named too."""
    made = structure_case(folder, seed, model, level, name=f"struct{seed}")
    out, reply, facts = _ask(client, made, seed, model, level)
    if reply is None:
        return out
    path, wrong = made[0], made[1]
    first, inside = reply.get("first_divergent"), reply.get("first_inside")
    keys = [n["key"] for n in reply.get("nodes") or []]
    steps = load_pipeline(path).steps[:wrong]
    out["where"] = ("lowered" if facts.get("lowered") else "composite" if str(facts["target"]).startswith(
        "fused_relax_") else "fused" if facts.get("inside") else "top")
    out["pattern"] = any(s.pass_id == "relax.FuseOpsByPattern" for s in steps)
    out.update(mode=facts["mode"], target=facts["target"], expected=facts["expected"], first=first, inside=inside,
               expected_inside=facts.get("inside"), hit=first == facts["expected"][0], ms=reply.get("ms"),
               culprit=(reply.get("likelier_culprit") or {}).get("key"), lowered=facts.get("lowered"),
               unique=len(keys) == len(set(keys)), nodes=len(keys))
    if facts.get("inside"):
        out["inside_hit"] = bool(inside) and (inside == facts["inside"] or str(inside).endswith("/" + facts["inside"]))
    return out


def _seeded(client: EngineClient, cases: int, seed: int, models: Any, run: Any, line: Any) -> list[dict[str, Any]]:
    """``cases`` seeded cases ``run(client, folder, seed, model, level)`` over ``models``, levels in turn (relax for
    a round of the models, then tir), each printed as ``hit``/``MISS``, its seed and ``line(case, level)``."""
    results = []
    with tempfile.TemporaryDirectory() as folder:
        for i in range(cases):
            model = models[i % len(models)]
            level = ("relax", "tir")[(i // len(models)) % 2]
            got = run(client, folder, seed + i, model, level)
            results.append(got)
            print(f"{'hit ' if got['hit'] else 'MISS'} seed {got['seed']:<4} {line(got, level)}", flush=True)
    return results


def structure_accuracy(client: EngineClient, cases: int, seed: int) -> list[dict[str, Any]]:
    """``cases`` seeded cases of :func:`run_structure_case` over the four models, levels in turn."""
    return _seeded(client, cases, seed, STRUCTURE_MODELS, run_structure_case, lambda got, level: (
        f"{got['model']:<15} {level:<5} step {got['step']:<2} {got.get('mode', ''):<6} {str(got.get('target')):<40} "
        f"first {got.get('first')!s:<12} expected {got.get('expected')} inside {got.get('inside')} "
        f"({got.get('expected_inside')}) {got.get('error', '')}"))


def accuracy(client: EngineClient, cases: int, seed: int) -> list[dict[str, Any]]:
    """``cases`` seeded cases, models and levels in turn."""
    return _seeded(client, cases, seed, MODELS, run_case, lambda got, level: (
        f"{got['model']:<12} {level:<5} step {got['step']:<2} {got.get('mode', ''):<6} {str(got.get('target')):<24} "
        f"first {got.get('first')!s:<16} expected {got.get('expected')} {got.get('error', '')}"))


def _hit_counts(results: list[dict[str, Any]]) -> tuple[int, list[bool]]:
    """How many cases hit, and the ``inside_hit`` of those that have one."""
    return sum(r["hit"] for r in results), [r["inside_hit"] for r in results if "inside_hit" in r]


def _engine_cpu(client: EngineClient) -> float:
    """CPU seconds the engine process (and its children) used so far."""
    import psutil

    times = psutil.Process(client.pid).cpu_times()
    return float(times.user + times.system + times.children_user + times.children_system)


def decoder_timing(client: EngineClient, repeat: int) -> dict[str, Any]:
    """Seconds of one build-and-run and of ``diverge`` (instrument, expose) on the 32-layer decoder: ``repeat``
    rounds of the three in turn (so each round's ratios are measured under the same load); medians."""
    with tempfile.TemporaryDirectory() as folder:
        doc = PipelineDocument(name="decoder", model="builtin:decoder", target={"kind": "llvm"},
                               steps=[Step("relax.CanonicalizeBindings"),
                                      Step("custom.python", {"source": RELAX_WRONG}),
                                      Step("relax.LegalizeOps"), Step("relax.DeadCodeElimination")])
        path = os.path.join(folder, "decoder.json")
        save_pipeline(doc, path)
        client.run(doc, scripts=False)
        request = dict(build_api.module_request(doc), bench=None, check={"rtol": 1e-4, "atol": 1e-4})
        rounds: list[dict[str, float]] = []
        out: dict[str, Any] = {}
        for _ in range(repeat):
            got: dict[str, float] = {}
            for what in ("build_run", "instrument", "expose"):
                cpu0, t0 = _engine_cpu(client), time.perf_counter()
                if what == "build_run":
                    client.request("build_run", request)
                else:
                    reply = client.request("diverge", diverge_request(path, 2, what))
                    out[what] = {"first": reply.get("first_divergent"), "nodes": len(reply.get("nodes") or [])}
                got[what] = time.perf_counter() - t0
                got[what + "_cpu"] = _engine_cpu(client) - cpu0
            rounds.append(got)
            print(f"  round: build_run {got['build_run']:.1f} s (cpu {got['build_run_cpu']:.1f}), instrument "
                  f"{got['instrument']:.1f} s (cpu {got['instrument_cpu']:.1f}), expose {got['expose']:.1f} s "
                  f"(cpu {got['expose_cpu']:.1f})", flush=True)
        out["build_run_s"] = statistics.median(r["build_run"] for r in rounds)
        out["build_run_cpu_s"] = statistics.median(r["build_run_cpu"] for r in rounds)
        for via in ("instrument", "expose"):
            out[via].update(s=statistics.median(r[via] for r in rounds),
                            ratio=statistics.median(r[via] / r["build_run"] for r in rounds),
                            cpu_s=statistics.median(r[via + "_cpu"] for r in rounds),
                            cpu_ratio=statistics.median(r[via + "_cpu"] / r["build_run_cpu"] for r in rounds))
        out["rounds"] = rounds
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=45)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--structure", type=int, default=0, metavar="N",
                        help="N seeded cases of tests/diverge_cases (composites, fused functions, 4 models)")
    parser.add_argument("--decoder", action="store_true", help="also time the 32-layer decoder")
    parser.add_argument("--repeat", type=int, default=3, help="rounds on the decoder (medians)")
    parser.add_argument("--json", metavar="FILE", help="write every result to FILE")
    args = parser.parse_args()
    with open("/proc/loadavg", encoding="utf-8") as f:
        print("load:", f.read().strip())
    summary: dict[str, Any] = {}
    with EngineClient(step_timeout_s=900, consent=Consent.everything()) as client:
        if args.cases:
            results = accuracy(client, args.cases, args.seed)
            hits, inside = _hit_counts(results)
            print(f"first node marked is the rewritten binding (or the fused call holding it): {hits}/{len(results)}"
                  f" = {100.0 * hits / len(results):.1f} %; rewritten binding inside a fused call also named: "
                  f"{sum(inside)}/{len(inside)}")
            summary["cases"] = results
        if args.structure:
            results = structure_accuracy(client, args.structure, args.seed)
            hits, inside = _hit_counts(results)
            print(f"structure cases: first node marked is the call holding the rewrite: {hits}/{len(results)} = "
                  f"{100.0 * hits / len(results):.1f} %; value inside named: {sum(inside)}/{len(inside)}; "
                  f"duplicate keys in {sum(not r.get('unique', True) for r in results)} replies")
            for where in ("top", "fused", "composite", "lowered"):
                some = [r for r in results if r.get("where") == where]
                print(f"  {where}: {sum(r['hit'] for r in some)}/{len(some)}")
            summary["structure"] = results
        if args.decoder:
            got = decoder_timing(client, args.repeat)
            base = got["build_run_s"]
            print(f"decoder (medians): build_run {base:.1f} s; diverge instrument {got['instrument']['s']:.1f} s "
                  f"(ratio {got['instrument']['ratio']:.2f}x, cpu ratio {got['instrument']['cpu_ratio']:.2f}x, "
                  f"first {got['instrument']['first']}, {got['instrument']['nodes']} rows); expose "
                  f"{got['expose']['s']:.1f} s (ratio {got['expose']['ratio']:.2f}x, cpu ratio "
                  f"{got['expose']['cpu_ratio']:.2f}x, first {got['expose']['first']}, {got['expose']['nodes']} rows)")
            summary["decoder"] = got
    with open("/proc/loadavg", encoding="utf-8") as f:
        print("load:", f.read().strip())
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=2)


if __name__ == "__main__":
    main()
