"""Whole graphs kept compact while nothing reads them (Qt-free, TVM-free; issue 33).

A 50,000-node function's graph JSON, decoded, is ~10^6 Python objects, ~60-70 MB; the GUI process kept one
per step (re-showing a step and colouring its changes read them) and passed 500 MB over the five default
steps of the 800-layer decoder. The graph of a step not shown is kept as its JSON, compressed, instead:
:func:`pack` writes it part by part (:func:`pipeline_model.engine.graph_parts.split_graph`: one short
``json.dumps`` per part, so other threads run in between; zlib runs without the interpreter lock) into a
:class:`PackedGraph` (~22 MB of JSON -> ~1 MB); :func:`unpack` decodes it part by part again, equal strings
shared as the engine client shares them; :func:`release` empties a graph nothing else holds in short pieces
(freeing 10^6 objects in one go held the interpreter for 200-600 ms). All three run on a worker thread.
"""

from __future__ import annotations

import json
import sys
import time
import zlib
from dataclasses import dataclass
from typing import Any, Optional

from pipeline_model.engine import graph_parts

__all__ = ["PackedGraph", "pack", "unpack", "release", "RELEASE_ITEMS"]

#: zlib level of packed graphs (6: ~22 MB of a 50,000-node graph's JSON -> ~1 MB in ~0.4 s; 1: ~1.5 MB, 0.3 s).
LEVEL = 6
#: Items (nodes, edges, callee graphs) freed per piece by :func:`release`.
RELEASE_ITEMS = 200
#: Nodes or edges per packed line: decoding one holds the interpreter ~1-2 ms (800: ~5 ms), so the GUI
#: thread gets it back that soon while a graph is unpacked.
PACK_ITEMS = 200
#: Decompressed per step by :func:`unpack`.
_CHUNK = 1 << 16


@dataclass(eq=False)
class PackedGraph:
    """A graph JSON as compressed lines: its skeleton, then its parts (one JSON document per line).
    Compared by identity: it stands for the graph it was made of while that graph is not decoded."""

    blob: bytes
    nodes: int
    json_bytes: int
    #: the graph had no ``graph`` field (0), one without ``callees`` (1), or one with (2): restored as it was
    meta: int = 2


def _line(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"


def pack(graph: dict[str, Any], level: int = LEVEL) -> PackedGraph:
    """``graph`` (graph JSON, not changed) compressed part by part (see the module docstring)."""
    skeleton, parts = graph_parts.split_graph(graph, PACK_ITEMS)
    comp = zlib.compressobj(level)
    first = _line(skeleton)
    out = [comp.compress(first)]
    size = len(first)
    for part in parts:
        line = _line(part)
        size += len(line)
        out.append(comp.compress(line))
        time.sleep(0)  # let the GUI thread take the interpreter between parts
    out.append(comp.flush())
    meta = 0 if "graph" not in graph else 2 if "callees" in (graph["graph"] or {}) else 1
    return PackedGraph(b"".join(out), len(graph.get("nodes") or ()), size, meta)


def unpack(packed: PackedGraph) -> dict[str, Any]:
    """The graph JSON of :func:`pack`, decoded again (a new object, equal to the packed graph)."""
    parts, on_event = graph_parts.collector()
    decomp = zlib.decompressobj()
    skeleton: Optional[dict[str, Any]] = None
    rest = b""
    blob = packed.blob
    for start in range(0, len(blob) + 1, _CHUNK):
        data = rest + (decomp.decompress(blob[start:start + _CHUNK]) if start < len(blob) else decomp.flush())
        *lines, rest = data.split(b"\n")
        for line in lines:
            obj = json.loads(line)
            if skeleton is None:
                skeleton = obj
            else:
                on_event(graph_parts.EV_GRAPH_PART, obj)
        time.sleep(0)
    if skeleton is None or rest.strip():
        raise ValueError("packed graph: truncated")
    graph = graph_parts.assemble(skeleton, parts)
    assert graph is not None
    if packed.meta == 0:
        del graph["graph"]
    elif packed.meta == 1:
        del graph["graph"]["callees"]
    return graph


def release(graph: dict[str, Any], holders: int = 0) -> bool:
    """Empty ``graph`` in short pieces when nothing but the caller holds it (``holders``: the references
    the caller holds besides the one it passes); True when it did. A graph (or its node or edge list) held
    elsewhere is left as it is (False): it is freed when its last holder lets it go."""
    # sys.getrefcount counts its own argument; the caller's reference is the one it passed
    if sys.getrefcount(graph) > 3 + holders:
        return False
    lists = [graph.get(field) for field in ("nodes", "edges")]
    for items in lists:  # held by the graph, ``lists``, ``items`` and getrefcount's argument
        if not isinstance(items, list) or sys.getrefcount(items) > 4:
            return False
    callees = (graph.get("graph") or {}).get("callees")
    graph.clear()
    for items in lists:
        while items:
            del items[-RELEASE_ITEMS:]
            time.sleep(0)
    if isinstance(callees, dict):
        while callees:
            for _ in range(min(len(callees), 16)):
                callees.popitem()
            time.sleep(0)
    return True
