"""HTML builders of the step inspector: a graph node's details and the details hint (step reports are
rendered by their pass kind: :func:`app.pass_kinds.step_report_html`).

Pure functions of JSON data (no window, no engine); the step inspector shows what they return.
"""

from __future__ import annotations

import html
from typing import Any

from app.i18n import tr
from widgets.doc_text import labelled
from widgets.graph.node_texts import field, kind_word, word


def fused_node_ids(graph: dict) -> set[str]:
    """Ids of the graph nodes that call a composite/offloaded function (FuseOpsByPattern's work)."""
    return {str(n["id"]) for n in graph.get("nodes", []) if n.get("composite")}


def _esc(value: Any) -> str:
    return html.escape(str(value))


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
    if node.get("inputs"):  # the values crossing its border, with shapes (shared inputs have no edge)
        ins = [f"{p.get('name')}  {p.get('shape') or ''}".rstrip() for p in node["inputs"]]
    if node.get("outputs"):
        outs = [f"{p.get('shape') or p.get('name')}  → {', '.join(outs)}" if outs else str(p.get("shape"))
                for p in node["outputs"]]
    what = tr("module group") if kind == "module" else tr("call of a Relax function")
    size = tr("{0} nodes inside").format(node.get("size", info.get("size", "?")))
    if "ops" in node:
        size += " (" + tr("{0} ops, {1} weights").format(node["ops"], node.get("weights", 0)) + ")"
    rows = [f"<h3 style='margin:0'>{_esc(node.get('label') or node.get('name') or node_id)}</h3>",
            f"<p><b>{_esc(what)}</b> — {_esc(size)}</p>"]
    if node.get("module"):
        module_word = tr("module")
        rows.append(f"<p>{labelled(module_word, '<code>' + _esc(node['module']) + '</code>')}</p>")
    for title, items in ((tr("inputs"), ins), (tr("outputs"), outs)):
        if items:
            shown = "".join(f"<li><code>{_esc(i)}</code></li>" for i in items[:20])
            more_text = tr("… {0} more").format(len(items) - 20)
            more = f"<li>{_esc(more_text)}</li>" if len(items) > 20 else ""
            rows.append(f"<p>{labelled(title)}</p><ul style='margin-top:0'>{shown}{more}</ul>")
    hint = tr("Click the group to expand it; click its frame title to collapse it again.")
    rows.append(f"<p><i>{_esc(hint)}</i></p>")
    return "".join(rows)


def node_details_html(node: dict, graph: dict) -> str:
    """HTML of one graph node: op, callee (a link to its TensorIR), composite, types, inputs, attributes."""
    node_id = node.get("id")
    nodes = {n["id"]: n for n in graph.get("nodes", [])}
    inputs = sorted(((e.get("index", 0) or 0, e["source"]) for e in graph.get("edges", []) if e.get("target") == node_id),
                    key=lambda t: (t[0], str(t[1])))
    rows = [f"<h3 style='margin:0'>{_esc(node.get('label') or node.get('name') or node_id)}</h3>"]
    rows.append(f"<p><b>{_esc(kind_word(node.get('kind', '')))}</b> <code>{_esc(node.get('name', ''))}</code></p>")
    if node.get("op"):
        rows.append(f"<p>{field('op', node['op'])}</p>")
    if node.get("callee"):
        link = ""
        if node.get("callee_kind") == "prim_func":
            link = f" — <a href='primfunc:{_esc(node['callee'])}'>" + _esc(tr("show TensorIR")) + "</a>"
        rows.append(f"<p>{field('callee', node['callee'])}{link}</p>")
    if node.get("composite"):
        rows.append(f"<p>{field('composite', node['composite'])}</p>")
    rows.append(f"<p>{field('output', node.get('type_text') or '')}</p>")
    if inputs:
        items = "".join(
            f"<li><code>{_esc(nodes.get(src, {}).get('name', src))}</code>: <code>{_esc(nodes.get(src, {}).get('type_text', ''))}</code></li>"
            for _i, src in inputs
        )
        rows.append(f"<p>{word('inputs')}</p><ul style='margin-top:0'>{items}</ul>")
    attrs = node.get("attrs") or {}
    if attrs:
        items = "".join(f"<tr><td><code>{_esc(k)}</code></td><td><code>{_esc(v)}</code></td></tr>" for k, v in attrs.items())
        rows.append(f"<p>{word('attributes')}</p><table>{items}</table>")
    return "".join(rows)
