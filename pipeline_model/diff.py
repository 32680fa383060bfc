"""Line diffs of two TVMScript snapshots, grouped by function, and "which steps changed nothing".

TVM-free: works on the text that ``IRModule.script()`` prints::

    # from tvm.script import ir as I            <- header (module-level lines)
    @I.ir_module
    class Module:
        @T.prim_func(private=True, s_tir=True)  <- function "add" (decorators included)
        def add(...):
            ...
        @R.function
        def main(...):
            ...
    # Metadata omitted ...                       <- footer (module-level lines)

:func:`split_functions` cuts such a text into blocks (header, one block per function, footer),
:func:`diff_snapshots` compares two texts block by block and returns a :class:`ModuleDiff` with a
status per function (added / removed / changed / unchanged), unified-style hunks and rows for a
side-by-side view whose line numbers are those of the full module texts.
"""

from __future__ import annotations

import bisect
import difflib
import re
from dataclasses import dataclass, field
from typing import Any, Iterator, NamedTuple, Optional

ADDED = "added"
REMOVED = "removed"
CHANGED = "changed"
UNCHANGED = "unchanged"

#: Pseudo-function names for the module-level text before the first / after the last function.
HEADER = "<header>"
FOOTER = "<footer>"

# Row tags of the side-by-side view (difflib's opcode names, plus "gap" between blocks).
EQUAL = "equal"
REPLACE = "replace"
DELETE = "delete"
INSERT = "insert"
GAP = "gap"

_CLASS_RE = re.compile(r"^(\s*)class\s+\w+\s*(\(.*\))?\s*:")
_DEF_RE = re.compile(r"^(\s*)def\s+([A-Za-z_]\w*)\s*\(")
_DECO_RE = re.compile(r"^(\s*)@")


@dataclass
class FunctionBlock:
    """A contiguous block of a TVMScript module: one function (decorators included) or module text.

    ``start`` is the 1-based line of the block's first line in the module text; ``kind`` is
    ``"relax"`` (``@R.function``), ``"prim_func"`` (``@T.prim_func``), ``"function"`` (another
    decorator or none) or ``"module"`` for the header/footer pseudo-blocks.
    """

    name: str
    kind: str
    start: int
    lines: list[str]

    @property
    def end(self) -> int:
        """1-based line of the block's last line."""
        return self.start + len(self.lines) - 1

    @property
    def text(self) -> str:
        """The block's text (lines joined with newlines)."""
        return "\n".join(self.lines)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _kind_of(decorators: list[str]) -> str:
    joined = " ".join(d.strip() for d in decorators)
    if "R.function" in joined:
        return "relax"
    if "T.prim_func" in joined:
        return "prim_func"
    return "function"


def split_functions(script: str) -> list[FunctionBlock]:
    """Split a TVMScript module into blocks: header, one block per function, footer.

    Functions are the ``def name(`` lines directly in the ``class Module:`` body (or at top level
    when there is no class, as for a printed single PrimFunc), together with the decorator lines
    above them. Blank lines between functions belong to no block; the header and footer are
    omitted when empty. Names are unique per module, as TVM's global names are.
    """
    return _split_lines(script.splitlines())


def _split_lines(lines: list[str]) -> list[FunctionBlock]:
    """:func:`split_functions` of a module text given as its lines (``str.splitlines()``)."""
    n = len(lines)
    body_indent = 0
    first = 0
    for i, line in enumerate(lines):
        m = _CLASS_RE.match(line)
        if m:
            for j in range(i + 1, n):
                if lines[j].strip():
                    body_indent = _indent(lines[j])
                    break
            first = i + 1
            break

    # Find the function starts (first decorator line) at the body indent.
    starts: list[tuple[int, int, str, str]] = []  # (start_idx, def_idx, name, kind)
    i = first
    while i < n:
        line = lines[i]
        if line.strip() and _indent(line) == body_indent:
            deco_start = i
            decorators = []
            while i < n and _DECO_RE.match(lines[i]) and _indent(lines[i]) == body_indent:
                decorators.append(lines[i])
                i += 1
                # a decorator's arguments may continue on following lines
                while i < n and lines[i].strip() and _indent(lines[i]) > body_indent and not _DEF_RE.match(lines[i]):
                    decorators.append(lines[i])
                    i += 1
            m = _DEF_RE.match(lines[i]) if i < n else None
            if m and _indent(lines[i]) == body_indent:
                starts.append((deco_start, i, m.group(2), _kind_of(decorators)))
                i += 1
                continue
            if decorators:
                continue
        i += 1

    blocks: list[FunctionBlock] = []

    def add(name: str, kind: str, lo: int, hi: int) -> None:
        # trim blank lines at both ends; lo/hi are 0-based, hi exclusive
        while lo < hi and not lines[lo].strip():
            lo += 1
        while hi > lo and not lines[hi - 1].strip():
            hi -= 1
        if hi > lo:
            blocks.append(FunctionBlock(name, kind, lo + 1, lines[lo:hi]))

    if not starts:
        add(HEADER, "module", 0, n)
        return blocks
    add(HEADER, "module", 0, starts[0][0])
    for k, (start, def_idx, name, kind) in enumerate(starts):
        if k + 1 < len(starts):
            # up to the next function; stray module-level lines in between stay with this block
            add(name, kind, start, starts[k + 1][0])
            continue
        # the last function ends at the first line dedented to (or out of) the class body
        j = def_idx + 1
        while j < n and not (lines[j].strip() and _indent(lines[j]) <= body_indent):
            j += 1
        add(name, kind, start, j)
        add(FOOTER, "module", j, n)
    return blocks


def function_names(script: str) -> list[str]:
    """Names of the functions (Relax and PrimFuncs) of a TVMScript module, in text order."""
    return [b.name for b in split_functions(script) if b.kind != "module"]


class DiffRow(NamedTuple):
    """One row of the side-by-side view; line numbers are 1-based in the module texts (or None)."""

    left_no: Optional[int]
    left_text: str
    right_no: Optional[int]
    right_text: str
    tag: str


@dataclass
class Hunk:
    """A group of changes with context, unified-diff style (``lines`` start with ' ', '-' or '+')."""

    before_start: int
    before_count: int
    after_start: int
    after_count: int
    lines: list[str]

    def header(self) -> str:
        """The ``@@ -a,b +c,d @@`` line."""
        return f"@@ -{self.before_start},{self.before_count} +{self.after_start},{self.after_count} @@"


Opcode = tuple[str, int, int, int, int]


@dataclass
class FunctionDiff:
    """How one function (or the module header/footer) differs between two snapshots.

    ``opcodes`` (``difflib``-style, over the lines of ``before`` and ``after``; one ``equal`` opcode for an
    unchanged block) are what is computed; ``rows`` and ``hunks`` are made from them when first asked for,
    and a :class:`RowTable` (:meth:`row_table`) gives rows piece by piece without making them all."""

    name: str
    kind: str
    status: str
    before: Optional[FunctionBlock]
    after: Optional[FunctionBlock]
    opcodes: list[Opcode] = field(default_factory=list)
    added_lines: int = 0
    removed_lines: int = 0
    _rows: Optional[list[DiffRow]] = field(default=None, init=False, repr=False, compare=False)
    _hunks: Optional[list[Hunk]] = field(default=None, init=False, repr=False, compare=False)

    @property
    def is_function(self) -> bool:
        """False for the module-level pseudo-blocks (header/footer)."""
        return self.kind != "module"

    @property
    def rows(self) -> list[DiffRow]:
        """Side-by-side rows of this block (line numbers are those of the module texts)."""
        if self._rows is None:
            self._rows = list(self.row_table())
        return self._rows

    @property
    def hunks(self) -> list[Hunk]:
        """Unified-diff hunks with 3 lines of context (none for an unchanged block)."""
        if self._hunks is None:
            self._hunks = _hunks_for(self)
        return self._hunks

    def row_table(self) -> "RowTable":
        """This block's rows as a :class:`RowTable` (nothing made per row until asked for)."""
        table = RowTable()
        table.add_function(self)
        return table


class RowTable:
    """Side-by-side rows kept as segments (one per opcode, one per gap row between blocks) instead of one
    object per row: a 50,000-line module diff is a few thousand segments, and :meth:`rows` makes only the
    rows asked for (a view puts a large diff in piece by piece). Behaves as a read-only sequence of
    :class:`DiffRow` (``len``, indexing, slicing, iteration)."""

    def __init__(self) -> None:
        # (first row, rows, function diff or None for a gap row, opcode or None)
        self._segments: list[tuple[int, int, Optional[FunctionDiff], Optional[Opcode]]] = []
        self._starts: list[int] = []
        self._total = 0

    def add_gap(self) -> None:
        """Append one gap row (between blocks)."""
        self._append(1, None, None)

    def add_function(self, f: FunctionDiff) -> None:
        """Append the rows of one block."""
        for code in f.opcodes:
            tag, i1, i2, j1, j2 = code
            n = i2 - i1 if tag == EQUAL else max(i2 - i1, j2 - j1)
            if n > 0:
                self._append(n, f, code)

    def _append(self, n: int, f: Optional[FunctionDiff], code: Optional[Opcode]) -> None:
        self._segments.append((self._total, n, f, code))
        self._starts.append(self._total)
        self._total += n

    def __len__(self) -> int:
        return self._total

    def __iter__(self) -> Iterator[DiffRow]:
        for k in range(len(self._segments)):
            yield from self._segment_rows(k, 0, self._segments[k][1])

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            lo, hi, step = index.indices(self._total)
            if step != 1:
                return self.rows(0, self._total)[index]
            return self.rows(lo, hi)
        if index < 0:
            index += self._total
        if not 0 <= index < self._total:
            raise IndexError(index)
        return self.rows(index, index + 1)[0]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (RowTable, list)):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, compares by content

    def rows(self, lo: int, hi: int) -> list[DiffRow]:
        """Rows ``lo..hi-1`` (clipped to the table)."""
        lo, hi = max(0, lo), min(hi, self._total)
        out: list[DiffRow] = []
        if lo >= hi:
            return out
        k = bisect.bisect_right(self._starts, lo) - 1
        while lo < hi:
            start, n, _f, _code = self._segments[k]
            take = min(hi, start + n) - lo
            out.extend(self._segment_rows(k, lo - start, lo - start + take))
            lo += take
            k += 1
        return out

    def _segment_rows(self, k: int, r0: int, r1: int) -> Iterator[DiffRow]:
        _start, _n, f, code = self._segments[k]
        if f is None or code is None:
            yield from [DiffRow(None, "", None, "", GAP)] * (r1 - r0)
            return
        tag, i1, i2, j1, j2 = code
        a_lines = f.before.lines if f.before else []
        b_lines = f.after.lines if f.after else []
        a0 = f.before.start if f.before else 1
        b0 = f.after.start if f.after else 1
        if tag == EQUAL:
            for k2 in range(r0, r1):
                yield DiffRow(a0 + i1 + k2, a_lines[i1 + k2], b0 + j1 + k2, b_lines[j1 + k2], EQUAL)
            return
        for k2 in range(r0, r1):
            left = i1 + k2 < i2
            right = j1 + k2 < j2
            yield DiffRow(a0 + i1 + k2 if left else None, a_lines[i1 + k2] if left else "",
                          b0 + j1 + k2 if right else None, b_lines[j1 + k2] if right else "",
                          REPLACE if (left and right) else (DELETE if left else INSERT))

    def first_change(self) -> Optional[int]:
        """Index of the first row that is not ``equal`` or a gap (``None`` if every row is)."""
        for start, _n, f, code in self._segments:
            if f is not None and code is not None and code[0] != EQUAL:
                return start
        return None

    def last_number(self, side: str) -> Optional[int]:
        """The line number of the last row that has one on ``side`` (``"left"``/``"right"``)."""
        for _start, _n, f, code in reversed(self._segments):
            if f is None or code is None:
                continue
            _tag, i1, i2, j1, j2 = code
            if side == "left" and i2 > i1 and f.before is not None:
                return f.before.start + i2 - 1
            if side == "right" and j2 > j1 and f.after is not None:
                return f.after.start + j2 - 1
        return None


@dataclass
class ModuleDiff:
    """The diff of two module snapshots, function by function (merged order of both texts)."""

    functions: list[FunctionDiff]

    @property
    def changed(self) -> bool:
        """True when any block differs."""
        return any(f.status != UNCHANGED for f in self.functions)

    def names(self, functions_only: bool = True) -> list[str]:
        """Block names in display order (without header/footer by default)."""
        return [f.name for f in self.functions if f.is_function or not functions_only]

    def function(self, name: str) -> FunctionDiff:
        """The diff of the function called ``name`` (``KeyError`` if absent)."""
        for f in self.functions:
            if f.name == name:
                return f
        raise KeyError(name)

    def by_status(self, status: str) -> list[str]:
        """Names of the functions with the given status."""
        return [f.name for f in self.functions if f.status == status and f.is_function]

    def rows(self, function: Optional[str] = None, hide_unchanged: bool = False) -> list[DiffRow]:
        """Side-by-side rows for one function or the whole module (blocks separated by gap rows).

        With ``hide_unchanged`` the unchanged blocks are left out of the whole-module rows.
        """
        if function is not None:
            return list(self.function(function).rows)
        return list(self.row_table(None, hide_unchanged))

    def row_table(self, function: Optional[str] = None, hide_unchanged: bool = False) -> RowTable:
        """The rows of :meth:`rows` as a :class:`RowTable` (made piece by piece when asked for)."""
        if function is not None:
            return self.function(function).row_table()
        table = RowTable()
        for f in self.functions:
            if hide_unchanged and f.status == UNCHANGED:
                continue
            if len(table):
                table.add_gap()
            table.add_function(f)
        return table

    def unified(self) -> str:
        """A unified diff text of the changed blocks (one ``@@`` section per hunk with 3 lines of
        context, named by function)."""
        parts = []
        for f in self.functions:
            for h in f.hunks:
                parts.append(f"{h.header()} {f.name}")
                parts.extend(h.lines)
        return "\n".join(parts)

    def stats(self) -> dict[str, Any]:
        """Counts: functions per status and added/removed lines."""
        out: dict[str, Any] = {s: len(self.by_status(s)) for s in (ADDED, REMOVED, CHANGED, UNCHANGED)}
        out["added_lines"] = sum(f.added_lines for f in self.functions)
        out["removed_lines"] = sum(f.removed_lines for f in self.functions)
        return out


#: Above this many line pairs (len(a) * len(b)) a block is diffed by unique-line anchors (patience diff)
#: instead of ``difflib`` alone, whose matching grows faster than linearly on large functions.
DIFFLIB_MAX_PAIRS = 250_000


def _lis(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Longest chain of ``pairs`` (sorted by first item) increasing in the second item (patience sorting)."""
    tails: list[int] = []  # second items of the chain ends, by chain length
    tail_idx: list[int] = []
    back: list[int] = [-1] * len(pairs)
    for k, (_i, j) in enumerate(pairs):
        pos = bisect.bisect_left(tails, j)
        if pos == len(tails):
            tails.append(j)
            tail_idx.append(k)
        else:
            tails[pos] = j
            tail_idx[pos] = k
        back[k] = tail_idx[pos - 1] if pos > 0 else -1
    out: list[tuple[int, int]] = []
    k = tail_idx[-1] if tail_idx else -1
    while k >= 0:
        out.append(pairs[k])
        k = back[k]
    return out[::-1]


def _match_blocks(a: list[str], b: list[str], alo: int, ahi: int, blo: int, bhi: int,
                  out: list[tuple[int, int, int]]) -> None:
    """Matching blocks ``(i, j, size)`` of ``a[alo:ahi]`` and ``b[blo:bhi]``, appended in order: common
    prefix/suffix, then lines unique on both sides as anchors (their longest increasing chain), recursing
    between anchors; small regions go to ``difflib``."""
    start_a, start_b = alo, blo
    while alo < ahi and blo < bhi and a[alo] == b[blo]:
        alo += 1
        blo += 1
    if alo > start_a:
        out.append((start_a, start_b, alo - start_a))
    suffix = 0
    while ahi - suffix > alo and bhi - suffix > blo and a[ahi - suffix - 1] == b[bhi - suffix - 1]:
        suffix += 1
    ahi_in, bhi_in = ahi - suffix, bhi - suffix
    if alo < ahi_in and blo < bhi_in:
        if (ahi_in - alo) * (bhi_in - blo) <= DIFFLIB_MAX_PAIRS:
            matcher = difflib.SequenceMatcher(None, a[alo:ahi_in], b[blo:bhi_in], autojunk=False)
            out.extend((alo + i, blo + j, n) for i, j, n in matcher.get_matching_blocks() if n)
        else:
            count_a: dict[str, int] = {}
            for i in range(alo, ahi_in):
                count_a[a[i]] = count_a.get(a[i], 0) + 1
            count_b: dict[str, int] = {}
            pos_b: dict[str, int] = {}
            for j in range(blo, bhi_in):
                count_b[b[j]] = count_b.get(b[j], 0) + 1
                pos_b[b[j]] = j
            pairs = [(i, pos_b[a[i]]) for i in range(alo, ahi_in)
                     if count_a[a[i]] == 1 and count_b.get(a[i]) == 1]
            anchors = _lis(pairs)
            if not anchors:
                # nothing unique in common: no anchor to split on; leave the region as one replacement
                pass
            else:
                i0, j0 = alo, blo
                for i, j in anchors:
                    _match_blocks(a, b, i0, i, j0, j, out)
                    out.append((i, j, 1))
                    i0, j0 = i + 1, j + 1
                _match_blocks(a, b, i0, ahi_in, j0, bhi_in, out)
    if suffix:
        out.append((ahi_in, bhi_in, suffix))


def diff_opcodes(a: list[str], b: list[str]) -> list[Opcode]:
    """``difflib``-style opcodes turning line list ``a`` into ``b``: ``difflib`` on small inputs, a
    patience diff (unique-line anchors, near-linear) on large ones."""
    if len(a) * len(b) <= DIFFLIB_MAX_PAIRS:
        return list(difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes())
    blocks: list[tuple[int, int, int]] = []
    _match_blocks(a, b, 0, len(a), 0, len(b), blocks)
    merged: list[list[int]] = []
    for i, j, n in blocks:
        if merged and merged[-1][0] + merged[-1][2] == i and merged[-1][1] + merged[-1][2] == j:
            merged[-1][2] += n
        else:
            merged.append([i, j, n])
    codes: list[Opcode] = []
    i = j = 0
    for bi, bj, n in merged + [[len(a), len(b), 0]]:
        tag = REPLACE if i < bi and j < bj else (DELETE if i < bi else (INSERT if j < bj else ""))
        if tag:
            codes.append((tag, i, bi, j, bj))
        if n:
            codes.append((EQUAL, bi, bi + n, bj, bj + n))
        i, j = bi + n, bj + n
    return codes or [(EQUAL, 0, 0, 0, 0)]


class _Opcodes(difflib.SequenceMatcher):
    """A ``SequenceMatcher`` whose opcodes are given (for ``get_grouped_opcodes``)."""

    def __init__(self, codes: list[Opcode]) -> None:
        super().__init__(None, [], [], autojunk=False)
        self._codes = codes

    def get_opcodes(self) -> list[Opcode]:  # type: ignore[override]  # noqa: D102 - difflib API (its tag is a str here)
        return list(self._codes)


def _function_diff(name: str, a: Optional[FunctionBlock], b: Optional[FunctionBlock]) -> FunctionDiff:
    """Status, opcodes and line counts of one block (``None``: absent on that side)."""
    a_lines = a.lines if a else []
    b_lines = b.lines if b else []
    if a is None:
        status = ADDED
    elif b is None:
        status = REMOVED
    elif a_lines == b_lines:
        status = UNCHANGED
    else:
        status = CHANGED
    kind = (b or a).kind  # type: ignore[union-attr]
    if status == UNCHANGED:
        return FunctionDiff(name, kind, status, a, b, [(EQUAL, 0, len(a_lines), 0, len(b_lines))])
    codes = diff_opcodes(a_lines, b_lines)
    added = sum(j2 - j1 for tag, _i1, _i2, j1, j2 in codes if tag != EQUAL)
    removed = sum(i2 - i1 for tag, i1, i2, _j1, _j2 in codes if tag != EQUAL)
    return FunctionDiff(name, kind, status, a, b, codes, added, removed)


def _hunks_for(f: FunctionDiff) -> list[Hunk]:
    if f.status == UNCHANGED:
        return []
    a_lines = f.before.lines if f.before else []
    b_lines = f.after.lines if f.after else []
    a0 = f.before.start if f.before else 1
    b0 = f.after.start if f.after else 1
    hunks = []
    tag: str
    for group in _Opcodes(f.opcodes).get_grouped_opcodes(3):
        i_lo, i_hi = group[0][1], group[-1][2]
        j_lo, j_hi = group[0][3], group[-1][4]
        hl: list[str] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == EQUAL:
                hl.extend(" " + t for t in a_lines[i1:i2])
                continue
            hl.extend("-" + t for t in a_lines[i1:i2])
            hl.extend("+" + t for t in b_lines[j1:j2])
        hunks.append(Hunk(a0 + i_lo, i_hi - i_lo, b0 + j_lo, j_hi - j_lo, hl))
    return hunks


def _merged_order(before: list[str], after: list[str]) -> list[str]:
    after_set = set(after)
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in (DELETE, REPLACE):
            out.extend(n for n in before[i1:i2] if n not in after_set)
        if tag in (EQUAL, INSERT, REPLACE):
            out.extend(after[j1:j2])
    # header first, footer last whatever happened
    body = [n for n in out if n not in (HEADER, FOOTER)]
    head = [HEADER] if HEADER in out else []
    foot = [FOOTER] if FOOTER in out else []
    return head + body + foot


def diff_snapshots(before: Optional[str], after: Optional[str]) -> ModuleDiff:
    """Compare two TVMScript module texts function by function.

    ``None`` stands for "no module" (everything in the other text is added/removed). Functions are
    matched by name; each gets a status, side-by-side rows and hunks.
    """
    a_blocks = {b.name: b for b in split_functions(before)} if before is not None else {}
    b_blocks = {b.name: b for b in split_functions(after)} if after is not None else {}
    return ModuleDiff([_function_diff(name, a_blocks.get(name), b_blocks.get(name))
                       for name in _merged_order(list(a_blocks), list(b_blocks))])


# ----------------------------------------------------------------------------------------------
# The diff as compact data (computed in another process, assembled where the texts are)

#: Lines per piece when a text is split again on the assembling side (each ``splitlines`` call holds the
#: GIL; a piece of this many lines takes well under a millisecond).
SPLIT_PIECE_LINES = 2048

#: One block of the compact form: name, kind, status, then (start, line count, kind) of the block before
#: and after (start 0: absent), the opcodes, added and removed lines.
BlockRecord = tuple[str, str, str, int, int, str, int, int, str, list[Opcode], int, int]


class DiffStructure(NamedTuple):
    """A :class:`ModuleDiff` without the texts: what :func:`diff_structure` returns and
    :func:`assemble_diff` turns back into the same ``ModuleDiff`` given the two texts. A few small tuples
    (a 50,000-line module: ~3,000 opcodes, tens of kB pickled) instead of ~10^5 row objects, so it is cheap
    to send between processes."""

    before_offsets: Optional[list[int]]
    after_offsets: Optional[list[int]]
    blocks: list[BlockRecord]


def _piece_offsets(text: str) -> tuple[list[str], list[int]]:
    """The text's lines and the character offset of every :data:`SPLIT_PIECE_LINES`-th line's start."""
    ends = text.splitlines(keepends=True)
    offsets = [0]
    pos = 0
    for k in range(0, len(ends), SPLIT_PIECE_LINES):
        if k:
            offsets.append(pos)
        pos += sum(map(len, ends[k:k + SPLIT_PIECE_LINES]))
    return text.splitlines(), offsets


def diff_structure(before: Optional[str], after: Optional[str]) -> DiffStructure:
    """The compact form of ``diff_snapshots(before, after)`` (see :class:`DiffStructure`)."""
    a_lines, a_offsets = _piece_offsets(before) if before is not None else ([], None)
    b_lines, b_offsets = _piece_offsets(after) if after is not None else ([], None)
    a_blocks = {b.name: b for b in _split_lines(a_lines)} if before is not None else {}
    b_blocks = {b.name: b for b in _split_lines(b_lines)} if after is not None else {}
    records: list[BlockRecord] = []
    for name in _merged_order(list(a_blocks), list(b_blocks)):
        a, b = a_blocks.get(name), b_blocks.get(name)
        f = _function_diff(name, a, b)
        records.append((f.name, f.kind, f.status,
                        a.start if a else 0, len(a.lines) if a else 0, a.kind if a else "",
                        b.start if b else 0, len(b.lines) if b else 0, b.kind if b else "",
                        f.opcodes, f.added_lines, f.removed_lines))
    return DiffStructure(a_offsets, b_offsets, records)


def split_at(text: str, offsets: list[int]) -> list[str]:
    """``text.splitlines()``, one piece at a time at the given line-start offsets (see
    :func:`diff_structure`): no single call holds the GIL for the whole text."""
    lines: list[str] = []
    for k, lo in enumerate(offsets):
        hi = offsets[k + 1] if k + 1 < len(offsets) else len(text)
        lines.extend(text[lo:hi].splitlines())
    return lines


def assemble_diff(before: Optional[str], after: Optional[str], structure: DiffStructure) -> ModuleDiff:
    """The :class:`ModuleDiff` of ``before``/``after`` from its compact form (made from the same texts)."""
    a_lines = split_at(before, structure.before_offsets or [0]) if before is not None else []
    b_lines = split_at(after, structure.after_offsets or [0]) if after is not None else []
    out = []
    for (name, kind, status, a_start, a_count, a_kind, b_start, b_count, b_kind,
         codes, added, removed) in structure.blocks:
        a = FunctionBlock(name, a_kind, a_start, a_lines[a_start - 1:a_start - 1 + a_count]) if a_start else None
        b = FunctionBlock(name, b_kind, b_start, b_lines[b_start - 1:b_start - 1 + b_count]) if b_start else None
        out.append(FunctionDiff(name, kind, status, a, b, [tuple(c) for c in codes],  # type: ignore[misc]
                                added, removed))
    return ModuleDiff(out)


# ----------------------------------------------------------------------------------------------
# Run results


def unchanged_steps(run_result: Any) -> list[int]:
    """Indices of the steps of a :class:`~pipeline_model.engine.results.RunResult` that ran and
    changed nothing (state ``unchanged``: the engine's structural equality, not a text compare)."""
    from pipeline_model.engine.results import UNCHANGED as STATE_UNCHANGED

    return [s.index for s in run_result.steps if s.state == STATE_UNCHANGED]


def step_snapshots(run_result: Any, index: int) -> tuple[Optional[str], Optional[str]]:
    """The module texts before and after step ``index`` of a run result.

    "Before" is the script of the nearest earlier step that has one (or the run's input); "after"
    is the step's own script (``None`` when it failed or did not run).
    """
    before = run_result.input_script
    after = None
    for step in run_result.steps:
        if step.index < index and step.script is not None:
            before = step.script
        elif step.index == index:
            after = step.script
    return before, after


def text_equal_steps(run_result: Any) -> list[int]:
    """Indices of steps whose printed script is identical to the one before (a text check that
    complements :func:`unchanged_steps`; a step can change attributes that print the same)."""
    out = []
    for step in run_result.steps:
        if step.script is None:
            continue
        before, after = step_snapshots(run_result, step.index)
        if before is not None and before == after:
            out.append(step.index)
    return out
