"""Counting edge crossings between consecutive layers (a Fenwick-tree inversion count)."""

from __future__ import annotations

from typing import Any, Hashable

def count_crossings_between(order_pos: list[float], pairs: list[tuple[int, int]]) -> int:
    """Crossings of the edges ``pairs`` (upper index, lower index) given positions (BIT inversion count)."""
    n = len(pairs)
    if n < 2:
        return 0
    if n <= 16:  # the usual case (a few edges between two layers): a direct count is cheaper in CPython
        ends = [(order_pos[u], order_pos[v]) for u, v in pairs]
        count = 0
        for a in range(n - 1):
            ua, va = ends[a]
            for ub, vb in ends[a + 1:]:
                if (ua - ub) * (va - vb) < 0:
                    count += 1
        return count
    keyed = sorted((order_pos[u], order_pos[v]) for u, v in pairs)
    lower = sorted({b for _, b in keyed})
    rank = {b: i + 1 for i, b in enumerate(lower)}
    size = len(lower)
    tree = [0] * (size + 1)
    crossings = 0
    seen = 0
    for _, b in keyed:
        r = rank[b]
        # count already-inserted items with rank > r
        i = r
        le = 0
        while i > 0:
            le += tree[i]
            i -= i & (-i)
        crossings += seen - le
        seen += 1
        i = r
        while i <= size:
            tree[i] += 1
            i += i & (-i)
    return crossings


def count_crossings(g: Any, rows: list[list[Hashable]]) -> int:
    """Crossings between consecutive rows for the edges of ``g`` that join consecutive rows (test helper)."""
    pos: dict[Hashable, float] = {}
    row_of: dict[Hashable, int] = {}
    for r, row in enumerate(rows):
        for k, n in enumerate(row):
            pos[n] = float(k)
            row_of[n] = r
    ids = list(pos)
    idx = {n: i for i, n in enumerate(ids)}
    flat = [pos[n] for n in ids]
    per: dict[int, list[tuple[int, int]]] = {}
    for u, v in g.edges():
        if u in row_of and v in row_of and row_of[v] == row_of[u] + 1:
            per.setdefault(row_of[u], []).append((idx[u], idx[v]))
    return sum(count_crossings_between(flat, pairs) for pairs in per.values())
