"""The "app tuned" column: ``resources/pipelines/cpu_tuned_app.json`` with a wall-clock budget per model.

``cpu_tuned_app.json`` is the app's default CPU pipeline with a time-budgeted ``relax.MetaScheduleTuneTIR`` step
seeded with the app's own DLight schedules (``seed_rules``): every PrimFunc's app schedule is measured into the
database first, so applying the database keeps it wherever the search found nothing faster. One run: the step's
``time_budget_s`` is the minutes × 60 (the engine's rounds spend it: a floor of trials per PrimFunc, the rest by
FLOPs × calls, then by the tuned profile; the seeding counts in it), and a Stop Tuning a little after the deadline
is only a safety net. The run's summary is stored in the work folder (``<model>.best/``), so a re-run with the
same minutes applies that folder's database without tuning (only re-measures).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable

from bench.latency import appside, docs

#: Seconds after the step's own deadline at which the bench stops tuning (the step ends itself at its budget).
GRACE_S = 60.0


def _replay(client: Any, prepare: Callable[[Any, str], Any], app_doc: Any, label: str, out_dir: str,
            budget_s: float, stored: dict[str, Any], plan_path: str) -> dict[str, Any]:
    print(f"  {label}: applying the database tuned by the stored run {plan_path}", file=sys.stderr, flush=True)
    doc = docs.replayed(prepare(app_doc, "best"))
    col = appside.app_column(client, doc, label, out_dir, deadline_s=budget_s, profile_top=6)
    col["tuning_first_s"] = float(stored.get("tuning_s") or 0.0)
    col["plan"] = stored
    return col


def run_summary(reports: list[dict[str, Any]], tuning_s: float) -> dict[str, Any]:
    """What the bench keeps of a tuned run (the tuning step's ``report["tuning"]``): trials per PrimFunc
    (``chosen``: those that got any), the pace, how the rounds ended and how many PrimFuncs kept the app's
    schedule (``seeds``)."""
    from pipeline_model.passkinds.metaschedule.report import seed_counts

    budget = next((r.get("budget") for r in reports if isinstance(r.get("budget"), dict)), None) or {}
    seeds = next((r.get("seeds") for r in reports if isinstance(r.get("seeds"), dict)), None)
    trials = {str(n): int(k) for n, k in (budget.get("trials") or {}).items()}
    total = sum(trials.values())
    return {"tuning_s": tuning_s, "trials": total, "rate_per_min": total / tuning_s * 60.0 if tuning_s > 0 else 0.0,
            "end": budget.get("end"), "stopped": any(r.get("stopped") for r in reports),
            "chosen": [{"name": n, "trials": k} for n, k in trials.items() if k > 0],
            "not_reached": list(budget.get("not_reached") or []),
            "seeds": {**seed_counts(seeds), "seconds": float(seeds.get("seconds") or 0)} if seeds else None}


def tuned_column(client: Any, prepare: Callable[[Any, str], Any], app_doc: Any, label: str, minutes: float,
                 work: str, out_dir: str, opts: Any) -> dict[str, Any]:
    """Tune ``app_doc`` (``cpu_tuned_app.json``, prepared by ``prepare(doc, "best")`` for the model) with
    ``time_budget_s`` = ``minutes`` × 60, then build and export the tuned module into ``out_dir``
    (:func:`bench.latency.appside.app_column`'s result, plus ``plan``: :func:`run_summary`)."""
    os.makedirs(work, exist_ok=True)
    plan_path = os.path.join(work, docs.BEST_PLAN_FILE)
    budget_s = minutes * 60.0
    settings = {"time_budget_s": budget_s, "min_trials": int(opts.min_trials),
                "num_trials_per_iter": int(opts.trials_per_iter)}
    if int(getattr(opts, "search_population", 512)) != 512:  # (plans stored before the option replay as they were)
        settings["search_population"] = int(opts.search_population)
    stored = docs.read_json(plan_path)
    if stored and stored.get("minutes") == minutes and stored.get("settings") == settings:
        return _replay(client, prepare, app_doc, label, out_dir, budget_s, stored, plan_path)
    doc = docs.budgeted(prepare(app_doc, "best"), settings)
    col = appside.app_column(client, doc, label, out_dir, deadline_s=budget_s + GRACE_S, profile_top=6)
    info = {"minutes": minutes, "settings": settings,
            **run_summary(col.get("tuning") or [], float(col.get("tuning_s") or 0.0))}
    seeds = info["seeds"] or {}
    print(f"  {label}: {info['trials']} trials in {info['tuning_s']:.0f} s (ends: {info['end']}); best schedule: "
          f"the app's for {seeds.get('app', 0)}, a tuned one for {seeds.get('tuned', 0)} PrimFuncs",
          file=sys.stderr, flush=True)
    for keep in col.get("keep") or []:  # the apply step's keep_wins: each PrimFunc's in-model verdict
        for line in keep.get("lines") or []:
            print(f"  {label}: keep_wins: {line}", file=sys.stderr, flush=True)
    if "error" not in col:
        docs.write_json(plan_path, info)
    col["plan"] = info
    return col


def print_profiles(rows: list[dict[str, Any]]) -> None:
    """Where the time goes in each tuned module (the engine's profile after tuning)."""
    print("\nWhere the time goes in the tuned module (profile after tuning; share of the run, us per run):")
    for row in rows:
        tuned = row["app"].get("tuned") or {}
        plan = tuned.get("plan") or {}
        chosen = plan.get("chosen") or []
        seeds = plan.get("seeds") or {}
        print(f"  {row['model']} ({row['format']}): {len(chosen)} PrimFuncs tuned, "
              f"{sum(int(c['trials']) for c in chosen)} trials in {float(plan.get('tuning_s') or 0):.0f} s"
              + (f" (pace {plan['rate_per_min']:.0f} trials/min)" if plan.get("rate_per_min") else "")
              + (", stopped at the deadline" if plan.get("stopped") else "")
              + (f"; best schedule: the app's for {seeds.get('app', 0)}, tuned for {seeds.get('tuned', 0)}"
                 if seeds else ""))
        names = {c["name"] for c in chosen}
        reverted = {n for k in tuned.get("keep") or [] for n in k.get("kept_default") or []}  # keep_wins' choice
        for entry_name, kind, share, total_us in tuned.get("profile") or []:
            mark = ("tuned, default kept" if entry_name in reverted and entry_name in names else "tuned" if entry_name in names
                    else "not tuned" if kind == "prim_func" else kind)
            print(f"    {entry_name:40s} {share * 100:5.1f} %  {total_us:9.1f} us  ({mark})")
