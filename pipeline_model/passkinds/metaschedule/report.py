"""The step-report sections of the MetaSchedule kind (TVM-free): ``report["tuning"]`` (trials, best
latency per task, the targeted plan, each task's best schedule) and ``report["apply_database"]``."""

from __future__ import annotations

from typing import Any

from pipeline_model.i18n import translate
from pipeline_model.passkinds.report_html import esc


def format_best(value: Any) -> str:
    """A best latency in µs for the report table."""
    try:
        return f"{float(value):.1f} µs"
    except (TypeError, ValueError):
        return "–"


def tuning_html(value: Any, _target: dict, _error_css: str) -> str:
    """``report["tuning"]``: trials done, per-task best latency, the database folder."""
    if not isinstance(value, dict):
        return ""
    tasks = value.get("tasks") or []
    rows = "".join(
        f"<tr><td><code>{esc(t.get('name'))}</code></td><td align='right'>{esc(t.get('trials'))}</td>"
        f"<td align='right'>{esc(format_best(t.get('best_us')))}</td><td>{esc(t.get('status', ''))}</td></tr>"
        for t in tasks if isinstance(t, dict)
    )
    if value.get("stopped"):
        summary = translate("StepReport", "{done}/{total} trials, stopped")
    elif value.get("finished"):
        summary = translate("StepReport", "{done}/{total} trials, done")
    else:
        summary = translate("StepReport", "{done}/{total} trials")
    summary = summary.format(done=value.get("done"), total=value.get("total"))
    database = esc(translate("StepReport", "database"))
    return (f"<p><b>MetaSchedule</b>: {esc(summary)}; {database} <code>{esc(value.get('work_dir', ''))}</code></p>"
            f"<table>{rows}</table>" + sources_html(tasks, value.get("user_database"))
            + devices_html(value.get("devices")) + seeds_html(value.get("seeds")) + budget_html(value.get("budget")) + focus_html(value.get("focus"))
            + best_html(value.get("best")) + skipped_lines_html(value.get("warnings")))


def tuning_line(report: dict) -> str:
    """What a tuning step produced, in one line: the records it measured and how many PrimFuncs have a best
    schedule; for an apply step with ``keep_wins``, how many kept the tuned schedule ("" without either)."""
    value = report.get("tuning")
    if not isinstance(value, dict):
        info = report.get("apply_database")
        return keep_line(info.get("keep")) if isinstance(info, dict) else ""
    tasks = [t for t in value.get("tasks") or [] if isinstance(t, dict)]
    best = sum(1 for t in tasks if t.get("best_us") is not None)
    measured = value.get("measured", value.get("done")) or 0
    line = translate("StepReport", "{0} record(s) measured, a best schedule for {1} of {2} PrimFunc(s)").format(
        measured, best, len(tasks))
    if value.get("devices_served"):
        line += translate("StepReport", ", on {0} RPC device(s)").format(value["devices_served"])
    return line


def devices_html(devices: Any) -> str:
    """``runner = rpc``: how many devices of the farm served and what each measured, failed and re-queued."""
    if not isinstance(devices, dict) or not devices:
        return ""
    counts = {str(d): c for d, c in devices.items() if isinstance(c, dict)}
    served = sum(1 for c in counts.values() if c.get("measured"))
    head = translate("StepReport", "Measured on {0} RPC device(s)").format(served)
    titles = "".join(f"<th>{esc(t)}</th>" for t in (
        translate("StepReport", "device"), translate("StepReport", "measured"), translate("StepReport", "failed"),
        translate("StepReport", "re-queued")))
    rows = "".join(f"<tr><td><code>{esc(d)}</code></td>" + "".join(
        f"<td align='right'>{esc(c.get(k, 0))}</td>" for k in ("measured", "failed", "requeued")) + "</tr>"
        for d, c in sorted(counts.items()))
    return f"<p>{esc(head)}</p><table><tr>{titles}</tr>{rows}</table>"


def skipped_lines_html(warnings: Any) -> str:
    """The database lines a step skipped when it read them (file, line, why), as a list."""
    if not isinstance(warnings, list) or not warnings:
        return ""
    title = esc(translate("StepReport", "Tuning database lines skipped"))
    return f"<p><b>{title}</b></p><ul>" + "".join(f"<li>{esc(w)}</li>" for w in warnings) + "</ul>"


def seed_counts(seeds: Any) -> dict[str, int]:
    """``{seeded, skipped, no_rule, app, tuned}`` of a step's ``report["tuning"]["seeds"]``
    (:mod:`pipeline_model.passkinds.metaschedule.seed`): PrimFuncs seeded with the app's schedule, those whose
    seed was refused, those no rule schedules, and after tuning how many kept the app's schedule / a tuned one."""
    tasks = [t for t in (seeds.get("tasks") or {}).values() if isinstance(t, dict)] if isinstance(seeds, dict) else []
    outcome = (seeds.get("outcome") if isinstance(seeds, dict) else None) or {}
    return {"seeded": sum(1 for t in tasks if t.get("status") in ("seeded", "present")),
            "skipped": sum(1 for t in tasks if t.get("status") == "skipped"),
            "no_rule": len(seeds.get("no_rule") or []) if isinstance(seeds, dict) else 0,
            "app": int(outcome.get("app") or 0), "tuned": int(outcome.get("tuned") or 0)}


def seeds_html(seeds: Any) -> str:
    """The app's schedules that seeded the search: how many PrimFuncs kept them, how many got a tuned one,
    and why a seed was refused (its trace does not replay, the build or run failed)."""
    if not isinstance(seeds, dict):
        return ""
    counts = seed_counts(seeds)
    rules = ", ".join(str(r) for r in seeds.get("rules") or [])
    title = translate("StepReport", "Seeded with the app's schedules ({0})").format(rules)
    text = translate("StepReport", "{seeded} PrimFunc(s) seeded, {skipped} refused, {no_rule} without a rule "
                                   "(in {seconds:.0f} s); best schedule: the app's for {app}, a tuned one for {tuned}").format(
        seconds=float(seeds.get("seconds") or 0), **counts)
    refused = "".join(f"<li><code>{esc(name)}</code>: {esc(t.get('reason'))}</li>"
                      for name, t in (seeds.get("tasks") or {}).items()
                      if isinstance(t, dict) and t.get("status") == "skipped")
    return f"<p><b>{esc(title)}</b>: {esc(text)}</p>" + (f"<ul>{refused}</ul>" if refused else "")


def task_sources(tasks: Any) -> dict[str, list[str]]:
    """The tasks' names by where their schedule comes from: ``user database`` (reused by workload, zero
    trials), ``work dir`` (tuned by an earlier run of this pipeline), ``tuned`` (now) and ``untuned``."""
    out: dict[str, list[str]] = {"user database": [], "work dir": [], "tuned": [], "untuned": []}
    for t in tasks or []:
        if not isinstance(t, dict):
            continue
        source = str(t.get("source") or "")
        if source not in out:
            source = "work dir" if t.get("reused") else ("tuned" if int(t.get("trials") or 0) > 0 else "untuned")
        out[source].append(str(t.get("name")))
    return out


def sources_html(tasks: Any, user_db: Any) -> str:
    """Which PrimFuncs came from the per-user database, which were tuned now, which stay untuned."""
    groups = task_sources(tasks)
    labels = {"user database": translate("StepReport", "From the user database (no trials)"),
              "work dir": translate("StepReport", "From this pipeline's earlier tuning"),
              "tuned": translate("StepReport", "Tuned now"),
              "untuned": translate("StepReport", "Not tuned (a later schedule step, if any, schedules them)")}
    lines = [f"<li>{esc(labels[k])}: {esc(', '.join(v[:20]) + (' …' if len(v) > 20 else ''))}</li>"
             for k, v in groups.items() if v]
    db = user_db if isinstance(user_db, dict) else {}
    if db.get("path"):
        note = translate("StepReport", "user tuning database {path}: {added} record(s) added").format(
            path=db.get("path"), added=int(db.get("added") or 0))
    else:
        note = translate("StepReport", "user tuning database off")
    problem = f" — {esc(db['problem'])}" if db.get("problem") else ""
    return f"<ul>{''.join(lines)}</ul><p><small>{esc(note)}{problem}</small></p>" if lines or db else ""


def budget_html(plan: Any) -> str:
    """The rounds of a time-budgeted step: kind, where the weights came from, trials asked and measured."""
    if not isinstance(plan, dict) or "rounds" not in plan:
        return ""
    title = translate("StepReport", "Time budget {budget:.0f} s, spent {spent:.0f} s, ends: {end}").format(
        budget=float(plan.get("budget_s") or 0), spent=float(plan.get("spent_s") or 0), end=plan.get("end"))
    heads = "".join(f"<th>{esc(h)}</th>" for h in (translate("StepReport", "round"), translate("StepReport", "weights"),
                                                   translate("StepReport", "trials asked"),
                                                   translate("StepReport", "measured"), translate("StepReport", "seconds")))
    rows = "".join(
        f"<tr><td>{esc(r.get('kind'))}</td><td>{esc(r.get('weights_from'))}</td>"
        f"<td align='right'>{sum((r.get('allocation') or {}).values())}</td>"
        f"<td align='right'>{sum((r.get('measured') or {}).values())}</td>"
        f"<td align='right'>{float(r.get('seconds') or 0):.0f}</td></tr>"
        for r in plan.get("rounds") or [] if isinstance(r, dict))
    missed = plan.get("not_reached") or []
    tail = ""
    if missed:
        tail = "<p>" + esc(translate("StepReport", "Not reached before the deadline: {0}").format(", ".join(map(str, missed)))) + "</p>"
    return f"<p><b>{esc(title)}</b></p><table><tr>{heads}</tr>{rows}</table>{tail}"


def focus_html(plan: Any) -> str:
    """The targeted tuning plan: chosen PrimFuncs with their time share and trials, the others."""
    if not isinstance(plan, dict):
        return ""
    rows = "".join(
        f"<tr><td><code>{esc(c.get('name'))}</code></td><td align='right'>{float(c.get('share') or 0) * 100:.1f} %</td>"
        f"<td align='right'>{esc(c.get('trials'))}</td></tr>"
        for c in plan.get("chosen") or [] if isinstance(c, dict)
    )
    prof = plan.get("profile") or {}
    skipped = plan.get("skipped") or []
    source = {"stored": translate("StepReport", "the stored profile"), "measured": translate("StepReport", "a profile measured for this step")}.get(
        str(prof.get("source")), translate("StepReport", "no profile"))
    title = translate("StepReport", "Targeted")
    if plan.get("schedule_fn"):
        how = translate("StepReport", "focus {focus}, budget {budget} trials, from {source}, own schedule function")
    else:
        how = translate("StepReport", "focus {focus}, budget {budget} trials, from {source}")
    how = how.format(focus=plan.get("focus"), budget=plan.get("budget"), source=source)
    heads = "".join(f"<th>{esc(h)}</th>" for h in (translate("StepReport", "PrimFunc"),
                                                   translate("StepReport", "time share"),
                                                   translate("StepReport", "trials")))
    not_tuned = ""
    if skipped:
        listed = ", ".join(map(str, skipped[:20])) + (" …" if len(skipped) > 20 else "")
        not_tuned_text = translate("StepReport", "Not tuned: {0}").format(listed)
        not_tuned = f"<p>{esc(not_tuned_text)}</p>"
    return f"<p><b>{esc(title)}</b> ({esc(how)}):</p><table><tr>{heads}</tr>{rows}</table>{not_tuned}"


def best_html(best: Any) -> str:
    """Each task's best schedule: its trace and tuned TensorIR (shortened; the full texts' files named)."""
    if not isinstance(best, dict) or not best:
        return ""
    parts = []
    for name, entry in best.items():
        if not isinstance(entry, dict):
            continue
        files = " · ".join(f"<code>{esc(entry.get(k))}</code>" for k in ("trace_file", "tir_file") if entry.get(k))
        title = esc(translate("StepReport", "Best schedule of {0}")).format(f"<code>{esc(name)}</code>")
        full_word = esc(translate("StepReport", "full text:"))
        full = f" — {full_word} {files}" if files else ""
        parts.append(f"<p><b>{title}</b>{full}</p>"
                     f"<pre>{esc(entry.get('trace', ''))}</pre><pre>{esc(entry.get('tir', ''))}</pre>")
    return "".join(parts)


def apply_database_html(value: Any, _target: dict, _error_css: str) -> str:
    """``report["apply_database"]``: PrimFuncs that got a tuned schedule, and those without one; with
    ``keep_wins`` the in-model verdict per PrimFunc (:func:`keep_html`)."""
    if not isinstance(value, dict):
        return ""
    ok, missing = value.get("applied") or [], value.get("missing") or []
    title = esc(translate("StepReport", "Tuned schedules applied"))
    text = translate("StepReport", "to {0} PrimFunc(s); none found for {1}").format(len(ok), len(missing))
    listed = f": {esc(', '.join(map(str, missing[:12])))}" if missing else ""
    return (f"<p><b>{title}</b> {esc(text)}{listed}</p>" + keep_html(value.get("keep"))
            + skipped_lines_html(value.get("warnings")))


def keep_line(value: Any) -> str:
    """The apply step's result with ``keep_wins``: "tuned schedule kept for 2 of 4 PrimFunc(s) (faster in the
    model beyond noise), default for 2" ("" without it)."""
    if not isinstance(value, dict) or "kept_tuned" not in value:
        return ""
    tuned, default = value.get("kept_tuned") or [], value.get("kept_default") or []
    return translate("StepReport", "tuned schedule kept for {0} of {1} PrimFunc(s) (faster in the model beyond "
                     "noise), the default schedule for {2}").format(len(tuned), len(tuned) + len(default), len(default))


def _verdict_phrases() -> dict[str, str]:
    """What each in-model verdict decided (:data:`.keep.VERDICT_PHRASES`, translated)."""
    return {"faster": translate("StepReport", "faster beyond noise: tuned kept"),
            "slower": translate("StepReport", "slower beyond noise: default kept"),
            "no_difference": translate("StepReport", "within noise: default kept"),
            "same_build": translate("StepReport", "within noise: default kept"),
            "too_few": translate("StepReport", "too few runs to tell: default kept"),
            "missing": translate("StepReport", "not timed in the model: default kept")}


def keep_html(value: Any) -> str:
    """``report["apply_database"]["keep"]``: per PrimFunc its time in the model, tuned vs default, and what was
    kept; then the whole model's verdicts."""
    from pipeline_model.passkinds.metaschedule.keep import format_us

    if not isinstance(value, dict) or not isinstance(value.get("functions"), list):
        return ""
    phrases = _verdict_phrases()
    overruled = translate("StepReport", "overruled: the whole model is not faster beyond noise, default kept")
    rows = []
    for d in value["functions"]:
        if not isinstance(d, dict):
            continue
        phrase = overruled if d.get("overruled") else phrases.get(str(d.get("verdict")), str(d.get("verdict")))
        rows.append(f"<tr><td><code>{esc(d.get('name'))}</code></td><td align='right'>{esc(format_us(d.get('tuned_us')))}"
                    f"</td><td align='right'>{esc(format_us(d.get('default_us')))}</td><td>{esc(phrase)}</td></tr>")
    head = "".join(f"<th>{esc(h)}</th>" for h in (translate("StepReport", "PrimFunc"), translate("StepReport", "tuned"),
                                                 translate("StepReport", "default"), translate("StepReport", "verdict")))
    whole = translate("StepReport", "whole model ({0}): tuned {1} vs default {2}, {3}")
    whats = {"every tuned schedule": translate("StepReport", "every tuned schedule"),
             "the kept tuned schedules": translate("StepReport", "the kept tuned schedules")}
    verdicts = {"faster": translate("StepReport", "faster beyond noise"),
                "slower": translate("StepReport", "slower beyond noise"),
                "no_difference": translate("StepReport", "within noise")}
    lines = "".join(f"<li>{esc(whole.format(whats.get(str(w.get('what')), str(w.get('what'))), format_us(w.get('tuned_us')), format_us(w.get('default_us')), verdicts.get(str(w.get('verdict')), str(w.get('verdict')))))}</li>"
                    for w in value.get("whole") or [] if isinstance(w, dict))
    same = [str(n) for n in value.get("same") or []]
    if same:
        text = translate("StepReport", "{0} PrimFunc(s) whose best record is the default schedule itself (not timed): {1}")
        lines += f"<li>{esc(text.format(len(same), ', '.join(same[:12])))}</li>"
    title = esc(translate("StepReport", "Kept only where faster in the model"))
    table = f"<table><tr>{head}</tr>{''.join(rows)}</table>" if rows else ""
    return f"<p><b>{title}</b> {esc(keep_line(value))}</p>{table}" + (f"<ul>{lines}</ul>" if lines else "")


