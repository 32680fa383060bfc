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

import difflib
import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional

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
    lines = script.splitlines()
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


@dataclass
class FunctionDiff:
    """How one function (or the module header/footer) differs between two snapshots."""

    name: str
    kind: str
    status: str
    before: Optional[FunctionBlock]
    after: Optional[FunctionBlock]
    rows: list[DiffRow] = field(default_factory=list)
    hunks: list[Hunk] = field(default_factory=list)
    added_lines: int = 0
    removed_lines: int = 0

    @property
    def is_function(self) -> bool:
        """False for the module-level pseudo-blocks (header/footer)."""
        return self.kind != "module"


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
        out: list[DiffRow] = []
        for f in self.functions:
            if hide_unchanged and f.status == UNCHANGED:
                continue
            if out:
                out.append(DiffRow(None, "", None, "", GAP))
            out.extend(f.rows)
        return out

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

Opcode = tuple[str, int, int, int, int]


def _lis(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Longest chain of ``pairs`` (sorted by first item) increasing in the second item (patience sorting)."""
    import bisect

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


def _rows_for(a: Optional[FunctionBlock], b: Optional[FunctionBlock]) -> tuple[list[DiffRow], list[Hunk], int, int]:
    a_lines = a.lines if a else []
    b_lines = b.lines if b else []
    a0 = a.start if a else 1
    b0 = b.start if b else 1
    if a_lines == b_lines:
        return [DiffRow(a0 + i, t, b0 + i, t, EQUAL) for i, t in enumerate(a_lines)], [], 0, 0
    matcher = _Opcodes(diff_opcodes(a_lines, b_lines))
    rows: list[DiffRow] = []
    added = removed = 0
    tag: str
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == EQUAL:
            rows.extend(DiffRow(a0 + i1 + k, a_lines[i1 + k], b0 + j1 + k, b_lines[j1 + k], EQUAL) for k in range(i2 - i1))
            continue
        removed += i2 - i1
        added += j2 - j1
        for k in range(max(i2 - i1, j2 - j1)):
            left = i1 + k < i2
            right = j1 + k < j2
            row_tag = REPLACE if (left and right) else (DELETE if left else INSERT)
            rows.append(
                DiffRow(
                    a0 + i1 + k if left else None,
                    a_lines[i1 + k] if left else "",
                    b0 + j1 + k if right else None,
                    b_lines[j1 + k] if right else "",
                    row_tag,
                )
            )
    hunks = []
    for group in matcher.get_grouped_opcodes(3):
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
    return rows, hunks, added, removed


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
    result = []
    for name in _merged_order(list(a_blocks), list(b_blocks)):
        a = a_blocks.get(name)
        b = b_blocks.get(name)
        if a is None:
            status = ADDED
        elif b is None:
            status = REMOVED
        elif a.lines == b.lines:
            status = UNCHANGED
        else:
            status = CHANGED
        rows, hunks, added, removed = _rows_for(a, b)
        kind = (b or a).kind  # type: ignore[union-attr]
        result.append(FunctionDiff(name, kind, status, a, b, rows, hunks, added, removed))
    return ModuleDiff(result)


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
