"""The bench's table: per model file, the latencies (min / median of the interleaved rounds), the ratios
(median of the per-round ratios and, in brackets, the ratio of the minimums; < 1.0 means the app is faster),
the build times, the numerical check and the load average before and after the model's timing."""

from __future__ import annotations

import statistics
from typing import Any, Optional

from bench.latency import timing

EAGER, COMPILE, ORT = "PyTorch eager", "torch.compile", "ONNX Runtime"


def _num(ms: float) -> str:
    return f"{ms:.0f}" if ms >= 100 else f"{ms:.1f}" if ms >= 10 else f"{ms:.3g}"


def _ms(samples: Optional[list[float]]) -> str:
    if not samples:
        return "-"
    st = timing.summary(samples)
    return f"{_num(st['min'] / 1000)} / {_num(st['median'] / 1000)}"


def _ratio(a: Optional[list[float]], b: Optional[list[float]]) -> str:
    if not a or not b:
        return "-"
    r = timing.ratios(a, b)
    return f"{r['median']:.2f}x ({r['min']:.2f}x)"


def tuned_verdict(app: Optional[list[float]], tuned: Optional[list[float]], keep: Optional[list[dict[str, Any]]]) -> str:
    """"tuned vs default": the tuned column against the default one over the interleaved rounds (paired), by the
    app's honest-numbers verdict (:func:`pipeline_model.latency_stats.compare_runs`), and how many PrimFuncs the
    apply step's ``keep_wins`` left with a tuned schedule (``keep``)."""
    from pipeline_model.latency_stats import compare_runs, verdict_text

    if not app or not tuned:
        return "-"
    cmp = compare_runs(app, tuned, paired=len(app) == len(tuned))
    word = {"faster": "tuned faster beyond noise", "slower": "tuned SLOWER beyond noise",
            "no_difference": "within noise"}.get(cmp.verdict, cmp.verdict)
    text = f"{word}: {verdict_text(cmp)}"
    for k in keep or []:
        kept = len(k.get("kept_tuned") or [])
        text += f"; kept tuned {kept}/{kept + len(k.get('kept_default') or [])}"
    return text


def best_label(row: dict[str, Any], timed: dict[str, Any], candidates: list[str]) -> Optional[str]:
    """The fastest (median) of the row's ``candidates`` app columns that were built and passed the check."""
    fmt = row["format"]
    ok = [c for c in candidates if f"{fmt}:{c}" in timed["samples"] and timed["checks"][f"{fmt}:{c}"]["ok"]]
    return min(ok, key=lambda c: timing.summary(timed["samples"][f"{fmt}:{c}"])["median"]) if ok else None


def table(rows: list[dict[str, Any]], timed: dict[str, dict[str, Any]], extras: list[str],
          best_from: Optional[list[str]]) -> tuple[list[str], list[list[str]]]:
    """``(header, lines)`` of the table; ``extras``: the other app columns by label; ``best_from``: the app
    columns "app best" picks from (None: no "app best" column)."""
    header = ["model", "format", "app default ms", "app tuned ms", "TVM default ms", "eager ms", "compile ms",
              "ORT ms", "app÷ORT", "app÷compile", "app÷eager", "tuned÷ORT", "tuned÷compile", "tuned vs default",
              "app÷TVM",
              *(f"{e} ms" for e in extras), *(f"{e}÷ORT" for e in extras),
              *(["app best", "best÷ORT", "best÷compile"] if best_from is not None else []),
              "build app / TVM (s)", "build ratio", "check (worst vs PyTorch, vs TVM)", "load before → after"]
    lines = []
    for row in rows:
        t = timed[row["model"]]
        s, fmt = t["samples"], row["format"]
        app, tuned, tvm = s.get(f"{fmt}:app default"), s.get(f"{fmt}:tuned"), s.get(f"{fmt}:TVM default")
        eager, comp, ort = s.get(EAGER), s.get(COMPILE), s.get(ORT)
        cells = [row["model"], fmt, _ms(app), _ms(tuned), _ms(tvm), _ms(eager), _ms(comp), _ms(ort),
                 _ratio(app, ort), _ratio(app, comp), _ratio(app, eager), _ratio(tuned, ort), _ratio(tuned, comp),
                 tuned_verdict(app, tuned, row["app"].get("tuned", {}).get("keep")), _ratio(app, tvm), *(_ms(s.get(f"{fmt}:{e}")) for e in extras),
                 *(_ratio(s.get(f"{fmt}:{e}"), ort) for e in extras)]
        if best_from is not None:
            best = best_label(row, t, best_from)
            b = s.get(f"{fmt}:{best}") if best else None
            cells += [f"{best}: {_ms(b)}" if best else "none passed", _ratio(b, ort), _ratio(b, comp)]
        cells += build_cells(row["app"].get("app default", {}), row["tvm"])
        cells += [check_cell(row, t), f"{t['load'][0]} → {t['load'][1]}"]
        lines.append(cells)
    return header, lines


def build_cells(app: dict[str, Any], tvm: dict[str, Any]) -> list[str]:
    """"build app / TVM (s)" and "build ratio": with ``build_rounds`` (seconds per round, both columns) the
    medians and the median of the per-round ratios (the ratio of the minimums); else the single builds."""
    if "build_s" not in app or "build_s" not in tvm:
        return ["error", "-"]
    a, d = app.get("build_rounds"), tvm.get("build_rounds")
    if a and d and len(a) == len(d) and len(a) > 1:
        r = timing.ratios(a, d)
        return [f"{statistics.median(a):.2f} / {statistics.median(d):.2f}", f"{r['median']:.2f}x ({r['min']:.2f}x)"]
    return [f"{app['build_s']:.1f} / {tvm['build_s']:.1f}", f"{app['build_s'] / tvm['build_s']:.2f}x"]


def check_cell(row: dict[str, Any], timed: dict[str, Any]) -> str:
    """"pass (a, b)" with the worst relative errors of the row's systems, or "FAIL: names"; errors of columns
    that did not build are named too."""
    fmt = row["format"]
    mine = {n: c for n, c in timed["checks"].items() if ":" not in n or n.startswith(f"{fmt}:")}
    failed = [n.split(":", 1)[-1] for n, c in mine.items() if not c["ok"]]
    failed += [f"{label} (error)" for label, col in [("TVM default", row["tvm"]), *row["app"].items()]
               if "error" in col]
    worst_t = max((c["vs_torch"] for c in mine.values()), default=float("nan"))
    worst_v = max((c["vs_tvm"] for c in mine.values()), default=float("nan"))
    return (f"pass ({worst_t:.1e}, {worst_v:.1e})" if not failed else "FAIL: " + ", ".join(failed))


def print_table(header: list[str], lines: list[list[str]], markdown: bool) -> None:
    """Markdown (``--markdown``) or aligned text."""
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + " --- |" * len(header))
        for line in lines:
            print("| " + " | ".join(line) + " |")
        return
    widths = [max(len(h), *(len(r[i]) for r in lines)) if lines else len(h) for i, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    for line in lines:
        print("  ".join(c.ljust(w) for c, w in zip(line, widths)))
