"""Graph replies in bounded parts (TVM-free; used by the engine's ``graph`` handler and the client).

A 128-layer decoder's graph JSON is 2-4 MB. Sent as one protocol line, the client's reader thread decodes
it with one ``json.loads`` call, which holds the GIL for its whole length (100 ms to over 1 s with a large
heap): the GUI thread stalls that long. When the client asks with ``"parts": true``, the engine sends the
graph's nodes, edges and callee graphs as ``graph_part`` events of at most :data:`PART_ITEMS` items each
(one short ``json.loads`` per line, so other threads run in between) and replies with the graph's
skeleton; :func:`assemble` puts the graph back together.

Event data: ``{"field": "nodes" | "edges", "items": [...]}`` or ``{"callee": name, "graph": graph JSON}``
(a callee graph larger than a part comes as that without its nodes and edges, then
``{"callee": name, "field", "items"}`` parts).
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Optional

#: Event name of one part.
EV_GRAPH_PART = "graph_part"
#: Most nodes or edges in one part (about 200-400 kB of JSON).
PART_ITEMS = 800


def split_graph(graph: dict[str, Any], part_items: int = PART_ITEMS) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    """``(skeleton, parts)``: the graph without its nodes, edges and callee graphs, and the event data of
    the parts that carry them (a generator, so parts are encoded one at a time)."""
    meta = dict(graph.get("graph") or {})
    callees = dict(meta.pop("callees", None) or {})
    skeleton = {k: v for k, v in graph.items() if k not in ("nodes", "edges", "graph")}
    skeleton["graph"] = meta
    skeleton["nodes"], skeleton["edges"] = [], []
    skeleton["callee_names"] = list(callees)

    def parts() -> Iterator[dict[str, Any]]:
        for field in ("nodes", "edges"):
            items = graph.get(field) or []
            for start in range(0, len(items), part_items):
                yield {"field": field, "items": items[start:start + part_items]}
        for name, callee in callees.items():
            if len(callee.get("nodes") or []) + len(callee.get("edges") or []) <= part_items:
                yield {"callee": name, "graph": callee}
                continue
            yield {"callee": name, "graph": {k: v for k, v in callee.items() if k not in ("nodes", "edges")}}
            for field in ("nodes", "edges"):
                items = callee.get(field) or []
                for start in range(0, len(items), part_items):
                    yield {"callee": name, "field": field, "items": items[start:start + part_items]}

    return skeleton, parts()


def collector() -> tuple[list[dict[str, Any]], Callable[[str, Any], None]]:
    """``(parts, on_event)``: an event listener that keeps the ``graph_part`` events' data, each part's
    equal strings shared with those of the parts before it (:func:`share_strings`)."""
    parts: list[dict[str, Any]] = []
    strings: dict[str, str] = {}

    def on_event(name: str, data: Any) -> None:
        if name == EV_GRAPH_PART and isinstance(data, dict):
            share_strings(data.get("items") or (data.get("graph") or {}).get("nodes") or [], strings)
            share_strings((data.get("graph") or {}).get("edges") or [], strings)
            parts.append(data)

    return parts, on_event


def share_strings(items: list[Any], strings: dict[str, str]) -> None:
    """Replace, in place, each string value of the dicts in ``items`` (and the strings in their list and
    dict values: shapes, attrs) by the equal string first seen (``strings``). Each decoded part has its own
    copy of every op name, dtype, type text, module path and node id (an edge's ends): a 50,000-node
    graph holds ~25 % less once they are shared."""
    share = strings.setdefault
    for item in items:
        if not isinstance(item, dict):
            continue
        for key, value in item.items():
            if isinstance(value, str):
                item[key] = share(value, value)
            elif isinstance(value, list):
                for k, x in enumerate(value):
                    if isinstance(x, str):
                        value[k] = share(x, x)
            elif isinstance(value, dict):
                for k2, x in value.items():
                    if isinstance(x, str):
                        value[k2] = share(x, x)


def assemble(skeleton: Optional[dict[str, Any]], parts: list[dict[str, Any]]) -> Optional[dict[str, Any]]:
    """The graph JSON from a skeleton and its parts (in the order sent); ``None`` stays ``None``."""
    if skeleton is None:
        return None
    graph = dict(skeleton)
    names = graph.pop("callee_names", None)
    if names is None:  # not a split graph
        return graph
    graph["nodes"], graph["edges"] = list(graph.get("nodes") or []), list(graph.get("edges") or [])
    meta = dict(graph.get("graph") or {})
    callees: dict[str, Any] = {}
    for part in parts:
        callee = part.get("callee")
        if callee is None:
            graph[str(part["field"])].extend(part.get("items") or [])
        elif "graph" in part:
            inner = dict(part["graph"])
            inner["nodes"], inner["edges"] = list(inner.get("nodes") or []), list(inner.get("edges") or [])
            callees[str(callee)] = inner
        else:
            callees[str(callee)][str(part["field"])].extend(part.get("items") or [])
    missing = [n for n in names if n not in callees]
    if missing:
        raise ValueError(f"graph reply: the parts of callee graph(s) {', '.join(missing)} did not arrive")
    meta["callees"] = {n: callees[n] for n in names}
    graph["graph"] = meta
    return graph
