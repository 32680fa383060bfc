"""The "app tuned" column: ``resources/pipelines/cpu_tuned_focus.json`` with a wall-clock budget per model.

Its tuning step is *targeted* (the app's own focus: the PrimFuncs holding at least ``--min-share`` of the untuned
profile, trials allocated by share). A calibration round measures the pace (trials per second), the final round
gets the trials that fit in the minutes left, and the app's Stop Tuning ends it at the deadline. The plan is
stored in the work folder (``<model>.best/``), so a re-run with the same minutes applies that folder's database
without tuning (only re-measures).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Callable

from bench.latency import appside, docs


def _replay(client: Any, prepare: Callable[[Any, str], Any], focus_doc: Any, label: str, out_dir: str,
            budget_s: float, stored: dict[str, Any], plan_path: str) -> dict[str, Any]:
    print(f"  {label}: applying the database tuned by the stored plan {plan_path}", file=sys.stderr, flush=True)
    doc = docs.replayed(prepare(focus_doc, "best"))
    col = appside.app_column(client, doc, label, out_dir, deadline_s=budget_s, profile_top=6)
    col["tuning_first_s"] = float(stored.get("tuning_s") or 0.0)
    col["plan"] = stored
    return col


def tuned_column(client: Any, prepare: Callable[[Any, str], Any], focus_doc: Any, label: str, minutes: float,
                 work: str, out_dir: str, opts: Any) -> dict[str, Any]:
    """Tune ``focus_doc`` (prepared by ``prepare(doc, "best")`` for the model) within ``minutes``, then build and
    export the tuned module into ``out_dir`` (:func:`bench.latency.appside.app_column`'s result, plus ``plan``)."""
    from pipeline_model.passkinds.metaschedule.budget import trials_for_budget, trials_per_second

    os.makedirs(work, exist_ok=True)
    plan_path = os.path.join(work, docs.BEST_PLAN_FILE)
    budget_s = minutes * 60.0
    settings = {"focus": "share", "min_share": float(opts.min_share), "num_trials_per_iter": int(opts.trials_per_iter)}
    stored = docs.read_json(plan_path)
    if stored and stored.get("minutes") == minutes and stored.get("settings") == settings and stored.get("chosen"):
        return _replay(client, prepare, focus_doc, label, out_dir, budget_s, stored, plan_path)
    t0 = time.perf_counter()
    cal = docs.targeted(prepare(focus_doc, "best"), {**settings, "min_trials": 1,
                                                     "total_trials": int(opts.calibration_trials)})
    first = appside.app_column(client, cal, f"{label}/calibration", None, deadline_s=budget_s)
    if "error" in first:
        return first
    done = sum(int(t.get("done") or 0) for t in first["tuning"])
    rate = trials_per_second(*first["pace"]) or trials_per_second(done, first["tuning_s"])
    if rate <= 0:  # nothing measured (every task already tuned in the work folder): an earlier pace
        rate = float((stored or {}).get("rate_per_min") or 20.0) / 60.0
    # the final round profiles its input and sets up again before it searches: that overhead is the
    # calibration's time outside its search
    overhead = max(0.0, first["tuning_s"] - float(first["pace"][1])) if first["pace"][1] else 0.0
    left = budget_s - (time.perf_counter() - t0)
    total = trials_for_budget(rate, left - overhead, safety=0.9, minimum=int(opts.calibration_trials))
    print(f"  {label}: calibration {done} trials in {first['tuning_s']:.0f} s (search pace {rate * 60:.0f} "
          f"trials/min, set-up {overhead:.0f} s); {left:.0f} s left -> {total} trials", file=sys.stderr, flush=True)
    doc = docs.targeted(prepare(focus_doc, "best"), {**settings, "min_trials": int(opts.min_trials),
                                                     "total_trials": total})
    col = appside.app_column(client, doc, label, out_dir, deadline_s=max(0.0, left), profile_top=6)
    col["tuning_s"] = float(col.get("tuning_s") or 0.0) + first["tuning_s"]
    plan = next((t.get("focus") for t in col.get("tuning") or [] if t.get("focus")), None) or {}
    info = {"minutes": minutes, "settings": settings, "tuning_s": col["tuning_s"], "rate_per_min": rate * 60,
            "calibration": done, "total_trials": total,
            "stopped": any(t.get("stopped") for t in col.get("tuning") or []),
            "chosen": [{"name": c["name"], "trials": c["trials"], "share": c.get("share")}
                       for c in plan.get("chosen") or []],
            "skipped": plan.get("skipped") or []}
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
        print(f"  {row['model']} ({row['format']}): {len(chosen)} PrimFuncs tuned, "
              f"{sum(int(c['trials']) for c in chosen)} trials"
              + (f" (pace {plan['rate_per_min']:.0f} trials/min)" if plan.get("rate_per_min") else "")
              + (", stopped at the deadline" if plan.get("stopped") else ""))
        names = {c["name"] for c in chosen}
        for entry_name, kind, share, total_us in tuned.get("profile") or []:
            mark = "tuned" if entry_name in names else ("not tuned" if kind == "prim_func" else kind)
            print(f"    {entry_name:40s} {share * 100:5.1f} %  {total_us:9.1f} us  ({mark})")
