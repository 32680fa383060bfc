"""HTML builders of the step inspector: a step's report, a graph node's details, the details hint.

Pure functions of JSON data (no window, no engine); the step inspector shows what they return.
"""

from __future__ import annotations

import html
import json
from typing import Any

from PySide6.QtCore import QCoreApplication

from widgets.theme import status_css


def tr(text: str) -> str:
    """Translate ``text`` in the step inspector's context."""
    return QCoreApplication.translate("StepInspector", text)


def fused_node_ids(graph: dict) -> set[str]:
    """Ids of the graph nodes that call a composite/offloaded function (FuseOpsByPattern's work)."""
    return {str(n["id"]) for n in graph.get("nodes", []) if n.get("composite")}


def fusion_call_node_ids(graph: dict, report: dict) -> set[str]:
    """Ids of the graph nodes bound to the calls the step's ``report["fusion"]`` names
    (``groups[].call``: var names of the calls of the new composite/offloaded functions)."""
    fusion = report.get("fusion") if isinstance(report, dict) else None
    if not isinstance(fusion, dict):
        return set()
    calls = {str(g.get("call")) for g in fusion.get("groups") or [] if isinstance(g, dict) and g.get("call")}
    return {str(n["id"]) for n in graph.get("nodes", []) if n.get("kind", "binding") == "binding" and n.get("name") in calls}


def _esc(value: Any) -> str:
    return html.escape(str(value))


def step_report_html(pass_id: str, report: dict, target: dict) -> str:
    """HTML for a step's ``StepResult.report`` ("" when there is nothing to show).

    Known sections: ``dlight`` (rule per PrimFunc, unscheduled ones; a warning on GPU targets),
    ``fusion`` (FuseOpsByPattern: which bindings went into which composite/offloaded function),
    ``fused``/``patterns`` (older lists of composite functions), ``warnings`` (plain sentences),
    ``tuning`` and ``apply_database`` (MetaSchedule). Anything else is shown as JSON.
    """
    if not report:
        return ""
    from pipeline_model.targets import is_gpu_target

    parts: list[str] = []
    rest = dict(report)
    dl = rest.pop("dlight", None)
    if isinstance(dl, dict):
        scheduled = dl.get("scheduled") or {}
        if isinstance(scheduled, list):
            scheduled = {str(e.get("name", e.get("func", "?"))): e.get("rule") for e in scheduled if isinstance(e, dict)}
        unscheduled = [str(n) for n in dl.get("unscheduled") or dl.get("none") or []]
        rows = "".join(f"<tr><td><code>{_esc(f)}</code></td><td>{_esc(r or '–')}</td></tr>" for f, r in scheduled.items())
        rows += "".join(f"<tr><td><code>{_esc(f)}</code></td><td><i>no rule applied</i></td></tr>" for f in unscheduled)
        already = [str(n) for n in dl.get("already_scheduled") or []]
        rows += "".join(f"<tr><td><code>{_esc(f)}</code></td><td><i>already scheduled</i></td></tr>" for f in already)
        rules = ", ".join(str(r) for r in dl.get("rules") or []) if isinstance(dl.get("rules"), list) else ""
        parts.append(f"<p><b>DLight</b>{' (' + _esc(rules) + ')' if rules else ''}: {len(scheduled)} PrimFunc(s) scheduled, "
                     f"{len(unscheduled)} not</p><table>{rows}</table>")
        gpu = bool(dl["gpu"]) if "gpu" in dl else is_gpu_target(target)
        warnings = [str(w) for w in dl.get("warnings") or []]
        if gpu and (warnings or unscheduled):
            items = "".join(f"<li>{_esc(w)}</li>" for w in warnings) or (
                f"<li>{_esc(', '.join(unscheduled[:8]))}: no GPU schedule; building for {_esc(target.get('kind'))} will fail</li>"
            )
            parts.append(f"<p style='color:{status_css('error')}'><b>Warning</b>: {len(unscheduled)} PrimFunc(s) have no GPU schedule "
                         f"— add rules (e.g. gpu.Fallback) or a MetaSchedule step.</p><ul>{items}</ul>")
    warnings = rest.pop("warnings", None)
    if isinstance(warnings, list) and warnings:
        items = "".join(f"<li>{_esc(w)}</li>" for w in warnings)
        parts.append(f"<p style='color:{status_css('error')}'><b>Warning</b>:</p><ul>{items}</ul>")
    fusion = rest.pop("fusion", None)
    if isinstance(fusion, dict):
        groups = [g for g in fusion.get("groups") or [] if isinstance(g, dict)]
        items = []
        for g in groups:
            what = g.get("composite") or (f"offloaded to {g.get('codegen')}" if g.get("codegen") else "")
            nodes = ", ".join(str(n) for n in g.get("nodes") or [])
            items.append(f"<li><code>{_esc(g.get('function', '?'))}</code>{' (' + _esc(what) + ')' if what else ''}: "
                         f"{_esc(nodes) or '–'} → <code>{_esc(g.get('call', ''))}</code> in {_esc(g.get('caller', ''))}</li>")
        if groups:
            parts.append(f"<p><b>Fused by pattern</b>: {len(groups)} group(s), highlighted in the graph:</p><ul>{''.join(items)}</ul>")
        else:
            parts.append("<p><b>Fused by pattern</b>: no binding matched the patterns.</p>")
    for key in ("fused", "patterns", "composites"):
        fused = rest.pop(key, None)
        if isinstance(fused, list) and fused:
            items = []
            for entry in fused:
                if isinstance(entry, dict):
                    name = entry.get("function") or entry.get("name") or "?"
                    pattern = entry.get("pattern") or entry.get("composite") or ""
                    bindings = entry.get("bindings") or entry.get("ops") or []
                    items.append(f"<li><code>{_esc(name)}</code> {_esc(pattern)}: {_esc(', '.join(map(str, bindings)))}</li>")
                else:
                    items.append(f"<li>{_esc(entry)}</li>")
            parts.append(f"<p><b>Fused by pattern</b> (highlighted in the graph):</p><ul>{''.join(items)}</ul>")
    tuning = rest.pop("tuning", None)
    if isinstance(tuning, dict):
        tasks = tuning.get("tasks") or []
        rows = "".join(
            f"<tr><td><code>{_esc(t.get('name'))}</code></td><td align='right'>{_esc(t.get('trials'))}</td>"
            f"<td align='right'>{_esc(format_best(t.get('best_us')))}</td><td>{_esc(t.get('status', ''))}</td></tr>"
            for t in tasks if isinstance(t, dict)
        )
        state = "stopped" if tuning.get("stopped") else ("done" if tuning.get("finished") else "")
        parts.append(f"<p><b>MetaSchedule</b>: {_esc(tuning.get('done'))}/{_esc(tuning.get('total'))} trials {state}; "
                     f"database <code>{_esc(tuning.get('work_dir', ''))}</code></p><table>{rows}</table>")
    applied = rest.pop("apply_database", None)
    if isinstance(applied, dict):
        ok, missing = applied.get("applied") or [], applied.get("missing") or []
        parts.append(f"<p><b>Tuned schedules applied</b> to {len(ok)} PrimFunc(s); none found for {len(missing)}"
                     + (f": {_esc(', '.join(map(str, missing[:12])))}" if missing else "") + "</p>")
    if rest:
        parts.append("<pre>" + _esc(json.dumps(rest, indent=2, default=str)[:4000]) + "</pre>")
    return "".join(parts)


def format_best(value: Any) -> str:
    """A best latency in µs for the report table."""
    try:
        return f"{float(value):.1f} µs"
    except (TypeError, ValueError):
        return "–"


def details_placeholder_html(color: str) -> str:
    """The node details panel's hint, in ``color``."""
    return (f"<p style='color:{color}'>" + tr("Click a node to see its op, attributes and input/output types.") + "</p>"
            f"<p style='color:{color}'>" + tr("Double-click a <code>call_tir</code> node (or use its “show TensorIR” link) "
                                              "for the callee's TensorIR.") + "</p>")


def group_details_html(node: dict, view: dict, groups: dict) -> str:
    """HTML of a collapsed group node of the graph view (a module path or a fused call): what it is, its size,
    its inputs and outputs in the view, and how to open it."""
    node_id = node.get("id")
    info = groups.get(node.get("group_id") or node_id) or {}
    kind = node.get("group_kind") or info.get("kind") or ""
    names = {n["id"]: n.get("label") or n.get("name") or n["id"] for n in view.get("nodes", [])}
    edges = view.get("edges", [])
    ins = sorted({str(names.get(e["source"], e["source"])) for e in edges if e.get("target") == node_id})
    outs = sorted({str(names.get(e["target"], e["target"])) for e in edges if e.get("source") == node_id})
    what = tr("module group") if kind == "module" else tr("call of a Relax function")
    rows = [f"<h3 style='margin:0'>{_esc(node.get('label') or node.get('name') or node_id)}</h3>",
            f"<p><b>{_esc(what)}</b> — {_esc(tr('{0} nodes inside').format(node.get('size', info.get('size', '?'))))}</p>"]
    if node.get("module"):
        rows.append(f"<p>{_esc(tr('module'))}: <code>{_esc(node['module'])}</code></p>")
    for title, items in ((tr("inputs"), ins), (tr("outputs"), outs)):
        if items:
            shown = "".join(f"<li><code>{_esc(i)}</code></li>" for i in items[:20])
            more = f"<li>{_esc(tr('… {0} more').format(len(items) - 20))}</li>" if len(items) > 20 else ""
            rows.append(f"<p>{_esc(title)}:</p><ul style='margin-top:0'>{shown}{more}</ul>")
    rows.append(f"<p><i>{_esc(tr('Click the group to expand it; click its frame title to collapse it again.'))}</i></p>")
    return "".join(rows)


def node_details_html(node: dict, graph: dict) -> str:
    """HTML of one graph node: op, callee (a link to its TensorIR), composite, types, inputs, attributes."""
    node_id = node.get("id")
    nodes = {n["id"]: n for n in graph.get("nodes", [])}
    inputs = sorted(((e.get("index", 0) or 0, e["source"]) for e in graph.get("edges", []) if e.get("target") == node_id),
                    key=lambda t: (t[0], str(t[1])))
    rows = [f"<h3 style='margin:0'>{_esc(node.get('label') or node.get('name') or node_id)}</h3>"]
    rows.append(f"<p><b>{_esc(node.get('kind', ''))}</b> <code>{_esc(node.get('name', ''))}</code></p>")
    if node.get("op"):
        rows.append(f"<p>op: <code>{_esc(node['op'])}</code></p>")
    if node.get("callee"):
        link = ""
        if node.get("callee_kind") == "prim_func":
            link = f" — <a href='primfunc:{_esc(node['callee'])}'>{tr('show TensorIR')}</a>"
        rows.append(f"<p>callee: <code>{_esc(node['callee'])}</code>{link}</p>")
    if node.get("composite"):
        rows.append(f"<p>composite: <code>{_esc(node['composite'])}</code></p>")
    rows.append(f"<p>output: <code>{_esc(node.get('type_text') or '')}</code></p>")
    if inputs:
        items = "".join(
            f"<li><code>{_esc(nodes.get(src, {}).get('name', src))}</code>: <code>{_esc(nodes.get(src, {}).get('type_text', ''))}</code></li>"
            for _i, src in inputs
        )
        rows.append(f"<p>inputs:</p><ul style='margin-top:0'>{items}</ul>")
    attrs = node.get("attrs") or {}
    if attrs:
        items = "".join(f"<tr><td><code>{_esc(k)}</code></td><td><code>{_esc(v)}</code></td></tr>" for k, v in attrs.items())
        rows.append(f"<p>attributes:</p><table>{items}</table>")
    return "".join(rows)
