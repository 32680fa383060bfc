"""The words the graph says about a node — its kind and the field names of its hover tooltip and of the node
details beside the graph — in the interface's language (issue 33). The node's name, op, callee, type and
attributes are the IR's identifiers and code: they are shown as they are, in a code font."""

from __future__ import annotations

import html
from typing import Any, Mapping

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

CONTEXT = "GraphNode"
#: A node's ``kind`` (``pipeline_model.ir_graph``, ``graph_hierarchy``), translated where shown.
KINDS = {
    "binding": QT_TRANSLATE_NOOP("GraphNode", "binding"),
    "param": QT_TRANSLATE_NOOP("GraphNode", "parameter"),
    "constant": QT_TRANSLATE_NOOP("GraphNode", "constant"),
    "output": QT_TRANSLATE_NOOP("GraphNode", "output"),
    "group": QT_TRANSLATE_NOOP("GraphNode", "group"),
    "module": QT_TRANSLATE_NOOP("GraphNode", "module group"),
    "call": QT_TRANSLATE_NOOP("GraphNode", "call of a Relax function"),
}
#: The fields of the tooltip and the details (``{0}``: the value, in a code font).
FIELDS = {
    "op": QT_TRANSLATE_NOOP("GraphNode", "op: {0}"),
    "callee": QT_TRANSLATE_NOOP("GraphNode", "callee: {0}"),
    "composite": QT_TRANSLATE_NOOP("GraphNode", "composite: {0}"),
    "type": QT_TRANSLATE_NOOP("GraphNode", "type: {0}"),
    "output": QT_TRANSLATE_NOOP("GraphNode", "output: {0}"),
    "inputs": QT_TRANSLATE_NOOP("GraphNode", "inputs:"),
    "attributes": QT_TRANSLATE_NOOP("GraphNode", "attributes:"),
    "changed": QT_TRANSLATE_NOOP("GraphNode", "changed by the selected step"),
}


def word(key: str) -> str:
    """The translated field ``key`` of :data:`FIELDS` (HTML-escaped; ``{0}`` left for :func:`field`)."""
    return html.escape(QCoreApplication.translate(CONTEXT, FIELDS[key]), quote=False)


def field(key: str, value: Any) -> str:
    """The field ``key`` with ``value`` in a code font (HTML)."""
    return word(key).format(code(value))


def kind_word(kind: Any) -> str:
    """A node kind in the interface's language (an unknown kind as it is)."""
    text = str(kind or "")
    return QCoreApplication.translate(CONTEXT, KINDS[text]) if text in KINDS else text


def code(value: Any) -> str:
    """``value`` escaped, in a code font."""
    return f"<code>{html.escape(str(value), quote=False)}</code>"


def tooltip_html(node_id: str, info: Mapping[str, Any], error_line: str = "") -> str:
    """The hover tooltip of a graph node (``info``: :meth:`widgets.graph_view.GraphView.node_info`): its name and
    kind, op, callee, composite, type, attributes, whether the selected step changed it, and ``error_line``
    (HTML: the "where values diverge" overlay's line)."""
    esc = html.escape
    lines = [f"<b>{esc(str(info.get('name') or node_id))}</b> <i>({esc(kind_word(info.get('kind')))})</i>"]
    for key, name in (("op", "op"), ("callee", "callee"), ("composite", "composite"), ("type", "type_text")):
        if info.get(name):
            extra = f" [{code(info['callee_kind'])}]" if key == "callee" and info.get("callee_kind") else ""
            lines.append(field(key, info[name]) + extra)
    for k, v in (info.get("attrs") or {}).items():
        lines.append(f"{code(k)} = {code(v)}")
    if info.get("changed"):
        lines.append(f"<i>{word('changed')}</i>")
    if error_line:
        lines.append(error_line)
    return "<br>".join(lines)
