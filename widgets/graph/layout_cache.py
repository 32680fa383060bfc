"""The graph view's cache of layouts (:class:`widgets.graph.prepare.Prepared` by ``(key, expansion)``): its
node budget, and letting whole graphs go while they are packed (:mod:`pipeline_model.graph_pack`): a cached
layout keeps its view graph, tiles, group tree and colouring, and gets its whole graph back when it is
decoded again, so a step shown again is painted at once from it meanwhile."""

from __future__ import annotations

from typing import Any, Iterable, MutableMapping, Optional

from widgets.graph.prepare import Prepared, release_later


def make_room(cache: MutableMapping[Any, Prepared], incoming: int, size: int, nodes: int,
              kept: Iterable[Optional[Prepared]]) -> None:
    """Drop the oldest layouts of ``cache`` (never one of ``kept``) until at most ``size`` remain and their
    nodes plus ``incoming`` (the nodes of a layout about to be made) are within ``nodes``; dropped before a
    new layout is made, their memory serves it (freed off the GUI thread, in pieces)."""
    keep = [p for p in kept if p is not None]

    def is_kept(p: Prepared) -> bool:
        return any(p is k for k in keep)

    total = incoming + sum(len(p.ids) for p in cache.values() if not is_kept(p))
    dropped: list[Prepared] = []
    for cache_key in list(cache):
        if len(cache) <= size and total <= nodes:
            break
        p = cache[cache_key]
        if is_kept(p):
            continue
        dropped.append(cache.pop(cache_key))
        total -= len(p.ids)
    release_later(dropped)


def detach(layouts: Iterable[Optional[Prepared]], graph: Any, stand_in: Any) -> None:
    """``graph`` is packed and ``stand_in`` stands for it: the layouts of it let it go (``full``), and those
    coloured against it (``hl_before``) name the stand-in instead, so they are still found as coloured so."""
    for p in layouts:
        if p is None:
            continue
        if p.full is graph:
            p.full, p.packed = None, stand_in
        if p.hl_before is graph:
            p.hl_before = stand_in


def attach(layouts: Iterable[Optional[Prepared]], stand_in: Any, graph: Any) -> None:
    """The packed graph ``stand_in`` stood for is decoded again as ``graph``: :func:`detach` undone."""
    for p in layouts:
        if p is None:
            continue
        if p.packed is stand_in:
            p.full, p.packed = graph, None
        if p.hl_before is stand_in:
            p.hl_before = graph
