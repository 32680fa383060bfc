"""Horizontal coordinates by Brandes & Köpf, "Fast and Simple Horizontal Coordinate Assignment" (2001):
four vertical alignments (upwards or downwards, packed from the left or the right), balanced."""

from __future__ import annotations

from typing import Any


def bk_coordinates(
    rows: list[list[int]],
    up: list[list[int]],
    down: list[list[int]],
    widths: list[float],
    n_real: int,
    gap_of: Any,
) -> list[float]:
    """Horizontal coordinates by Brandes & Köpf ("Fast and Simple Horizontal Coordinate Assignment").

    ``up``/``down`` are each node's candidate neighbours for vertical alignment (already filtered by
    preference: dummy chains first, so long edges stay straight). Four alignments (aligned upwards or
    downwards, packed from the left or the right) are computed; each packs blocks of vertically aligned
    nodes as tightly as the per-layer separations allow; the result is the mean of the two middle values
    per node. That keeps every layer's separations, keeps long edges and the main chain straight, and --
    unlike iterated barycentres -- has no sideways drift down a deep network: a block's position depends
    only on its neighbours in the same layers, never on an accumulated shift from above.
    """
    total = len(widths)
    pos = [0] * total
    for row in rows:
        for k, i in enumerate(row):
            pos[i] = k
    # type 1 conflicts: a segment that is not between two dummies and crosses one that is
    marked: set[tuple[int, int]] = set()
    for li in range(len(rows) - 1):
        upper_len = len(rows[li])
        lower = rows[li + 1]
        k0 = 0
        start = 0
        last = len(lower) - 1
        for l1, v in enumerate(lower):
            inner = -1
            if v >= n_real:
                for u in up[v]:
                    if u >= n_real:
                        inner = u
                        break
            if l1 == last or inner >= 0:
                k1 = pos[inner] if inner >= 0 else upper_len - 1
                for w in lower[start:l1 + 1]:
                    for u in up[w]:
                        k = pos[u]
                        if k < k0 or k > k1:
                            if not (u >= n_real and w >= n_real):
                                marked.add((u, w))
                start = l1 + 1
                k0 = k1
    # neighbours sorted by position once
    up_sorted = [sorted(ns, key=pos.__getitem__) if len(ns) > 1 else ns for ns in up]
    down_sorted = [sorted(ns, key=pos.__getitem__) if len(ns) > 1 else ns for ns in down]

    results: list[list[float]] = []
    try:
        for vertical_up in (True, False):
            for from_left in (True, False):
                results.append(_bk_one(rows, pos, up_sorted if vertical_up else down_sorted, widths, gap_of,
                                       marked, vertical_up, from_left))
    except RuntimeError:  # fall back to centred rows, tightly packed
        out = [0.0] * total
        for row in rows:
            acc = 0.0
            for k, i in enumerate(row):
                if k:
                    acc += (widths[row[k - 1]] + widths[i]) / 2.0 + gap_of(row[k - 1], i)
                out[i] = acc
            for i in row:
                out[i] -= acc / 2.0
        return out
    # align the four to the narrowest: left-packed ones by their left edge, right-packed by their right edge
    spans = []
    for xs in results:
        lo = min(xs[i] - widths[i] / 2.0 for i in range(total))
        hi = max(xs[i] + widths[i] / 2.0 for i in range(total))
        spans.append((lo, hi))
    ref = min(range(4), key=lambda k: spans[k][1] - spans[k][0])
    ref_lo, ref_hi = spans[ref]
    for k, xs in enumerate(results):
        lo, hi = spans[k]
        delta = (ref_lo - lo) if k % 2 == 0 else (ref_hi - hi)
        if delta:
            results[k] = [v + delta for v in xs]
    a, b, c, d = results
    out = [0.0] * total
    for i in range(total):
        s = sorted((a[i], b[i], c[i], d[i]))
        out[i] = (s[1] + s[2]) / 2.0
    return out


def _bk_one(
    rows: list[list[int]],
    pos: list[int],
    nbrs: list[list[int]],
    widths: list[float],
    gap_of: Any,
    marked: set[tuple[int, int]],
    vertical_up: bool,
    from_left: bool,
) -> list[float]:
    """One of the four Brandes-Köpf alignments + compaction; x grows to the right in the result."""
    total = len(widths)
    root = list(range(total))
    align = list(range(total))
    if from_left:
        ppos = pos
    else:
        ppos = [0] * total
        for row in rows:
            n = len(row) - 1
            for k, i in enumerate(row):
                ppos[i] = n - k
    layer_seq = rows if vertical_up else rows[::-1]
    for row in layer_seq:
        r = -1
        for v in (row if from_left else reversed(row)):
            ns = nbrs[v]
            d = len(ns)
            if d == 0:
                continue
            if not from_left and d > 1:
                ns = ns[::-1]
            m_lo = (d - 1) // 2
            for m in ((m_lo,) if d % 2 else (m_lo, m_lo + 1)):
                if align[v] != v:
                    break
                u = ns[m]
                pu = ppos[u]
                if r < pu and ((u, v) if vertical_up else (v, u)) not in marked:
                    align[u] = v
                    root[v] = root[u]
                    align[v] = root[v]
                    r = pu
    # block graph: an edge from the block of each node to the block of the next node in its layer
    sep: dict[int, dict[int, float]] = {}
    indeg: dict[int, int] = {}
    for row in rows:
        seq = row if from_left else row[::-1]
        prev = -1
        for v in seq:
            if prev >= 0:
                a, b = root[prev], root[v]
                s = (widths[prev] + widths[v]) / 2.0 + gap_of(prev, v)
                out = sep.get(a)
                if out is None:
                    sep[a] = {b: s}
                    indeg[b] = indeg.get(b, 0) + 1
                else:
                    old = out.get(b)
                    if old is None:
                        out[b] = s
                        indeg[b] = indeg.get(b, 0) + 1
                    elif s > old:
                        out[b] = s
            prev = v
    roots = [v for v in range(total) if root[v] == v]
    xb: dict[int, float] = {b: 0.0 for b in roots}
    stack = [b for b in roots if b not in indeg]
    order: list[int] = []
    while stack:
        b = stack.pop()
        order.append(b)
        xa = xb[b]
        for c, s in sep.get(b, {}).items():
            if xa + s > xb[c]:
                xb[c] = xa + s
            indeg[c] -= 1
            if indeg[c] == 0:
                stack.append(c)
    # second pass: pull each block towards its right neighbours, closing gaps it does not need
    for b in reversed(order):
        out = sep.get(b)
        if out:
            lim = min(xb[c] - s for c, s in out.items())
            if lim > xb[b]:
                xb[b] = lim
    if len(order) != len(roots):  # cannot happen for a proper alignment; never leave blocks unplaced
        raise RuntimeError("block graph has a cycle")
    if from_left:
        return [xb[root[v]] for v in range(total)]
    return [-xb[root[v]] for v in range(total)]
