"""Which value before a step each value after it stands for, by its place in the dataflow (no TVM).

Names are labels only (``FuseOps`` and ``FuseOpsByPattern`` make up ``lv``, ``gv`` in every function they
build): a value is matched by what it reads. The leaves are the same on both sides (the entry function's
parameters by name, constants by dtype, shape and data, literals by text); a value whose inputs are all matched
is matched with the value before the step that reads the same inputs and has the same dtype and shape,
whatever computes it (so a rewritten operator, ``R.add`` -> ``R.subtract``, is compared with the one it
replaced). Through called functions: a value inside a fused or composite function reads the caller's
arguments, so ``FuseOps`` moving operators into a function keeps their counterparts, and the call itself
stands for the value its function returns (matched first by that, then by its arguments: ``FuseTIR``'s
PrimFunc call reads what the fused function's call read). Where that finds nothing:

- ``relaxed``: the same inputs but a constant changed (compared: a changed constant changes values) or a
  literal (a shape given as an argument or held in a PrimFunc);
- ``inserted``: one value read with constants only and of the same type (an operation the step inserted
  after a value, ``x * 1.5``): compared with the value before the step it was computed from;
- ``dtype``: the same inputs and shape but another dtype (a step that changed a value's precision, e.g. a
  rewrite that dropped ``out_dtype``): compared after casting, so the error the change makes shows;
- ``result``: the value the entry function returns, when nothing else matched it, is the value returned before
  the step if it has the same shape (the function's result is the same place in the dataflow whatever computes
  it);
- ``resync``: where the structure meets again after a change (an input without counterpart, e.g. after
  ``DecomposeOpsForInference`` turned ``batch_norm`` into several operators): the first value before the step
  not yet taken, of the same operation and type, reading the inputs that do have counterparts; the input
  without one is matched with the value it replaces when that is alone and of its type;
- none: no counterpart, the step changed the structure here (``origin`` when all its inputs were matched:
  where the change starts, as opposed to values downstream of an unmatched one).

A call of a Relax function and an alias are the value they return / name (``counterpart`` gives that value's
key). Among several candidates: one not yet taken, the inputs in the same order, the same operation (``Entry.op``,
made-up numbering ignored), the same name, the first in binding order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional


@dataclass
class Alignment:
    """``counterpart``: key after -> key before; ``how``: key after -> the rule that matched it (``inputs``,
    ``output``, ``relaxed``, ``dtype``, ``inserted``, ``resync``, ``result``); ``origins``: keys after with no counterpart although all their
    inputs had one (where the step changed the structure)."""

    counterpart: dict[str, str] = field(default_factory=dict)
    how: dict[str, str] = field(default_factory=dict)
    origins: list[str] = field(default_factory=list)


_LEAVES = ("param:", "const:", "lit:", "?:")


def _leaf(ident: str) -> bool:
    return ident.startswith(_LEAVES)


def _general(ident: str) -> str:
    """A constant's id without its data (``const:float32[]``): the relaxed key of :func:`align`."""
    return ident.rsplit(":", 1)[0] if ident.startswith("const:") and ident.count(":") >= 2 else ident


_DTYPE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?=\[)")


def shape_only(ty: str) -> str:
    """A type text without its dtypes (``float16[2,3]`` -> ``?[2,3]``): the key of the ``dtype`` rule."""
    return _DTYPE.sub("?", ty)


def _relaxed(idents: Iterable[str]) -> tuple[str, ...]:
    """The relaxed key: constants without their data, literals (shapes, attributes) left out (``R.reshape(x,
    shape)`` and a ``call_tir`` of a reshape PrimFunc on ``x`` agree)."""
    return tuple(sorted(_general(i) for i in idents if not i.startswith("lit:")))


def inner_first(entries: Iterable[Any]) -> list[Any]:
    """``entries`` (each call followed by the entries inside it, keys ``call/name``) in the order the values are
    made: the values inside a call before the call's own."""
    out: list[Any] = []
    pending: list[Any] = []
    for entry in entries:
        while pending and not entry.key.startswith(pending[-1].key + "/"):
            out.append(pending.pop())
        pending.append(entry)
    out.extend(reversed(pending))
    return out


def _what(op: str) -> str:
    """``Entry.op`` without how it is called (``call:fused_matmul_add`` and ``fn:fused_matmul_add`` agree)."""
    return op.split(":", 1)[-1]


def _score(b: Any, a: Any, ins: list[str], taken: set[str], order: dict[str, int]) -> tuple[Any, ...]:
    return (b.key not in taken, list(b.inputs) == ins, _what(b.op) == _what(a.op), b.name == a.name, -order[b.key])


def align(after: list[Any], before: list[Any],
          results: tuple[Optional[str], Optional[str]] = (None, None)) -> Alignment:
    """Match every entry after the step (:class:`~.capture_tvm.Entry`: ``key``, ``inputs``, ``op``, ``ty``,
    ``name``, ``kind``, ``returns``) with one before it (see the module docstring); ``results``: the ids of the
    values the entry function returns after and before the step (the ``result`` rule)."""
    result = Alignment()
    by_key = {b.key: b for b in before}
    after_by_key = {a.key: a for a in after}
    order = {b.key: i for i, b in enumerate(before)}
    canon = canonical(before)
    exact: dict[tuple[Any, ...], list[Any]] = {}
    relaxed: dict[tuple[Any, ...], list[Any]] = {}
    same_op: dict[tuple[str, str], list[Any]] = {}
    retyped: dict[tuple[Any, ...], list[Any]] = {}
    for b in before:
        ins = [canon.get(i, i) for i in b.inputs]
        exact.setdefault((tuple(sorted(ins)), b.ty), []).append(b)
        relaxed.setdefault((_relaxed(ins), b.ty), []).append(b)
        retyped.setdefault((tuple(sorted(ins)), shape_only(b.ty)), []).append(b)
        if b.kind not in ("alias", "struct"):
            same_op.setdefault((_what(b.op), b.ty), []).append(b)
    match = result.counterpart
    taken: set[str] = set()

    def mapped(ident: str) -> Optional[str]:
        return ident if _leaf(ident) else match.get(ident)

    for a in inner_first(after):
        ins = [mapped(i) for i in a.inputs]
        found: Optional[Any] = None
        how = ""
        if a.returns is not None and mapped(a.returns) in by_key:  # a call stands for what its function returns
            found, how = by_key[str(mapped(a.returns))], "output"
        elif all(i is not None for i in ins):
            known = [str(i) for i in ins]
            pool = exact.get((tuple(sorted(known)), a.ty), [])
            if a.kind == "alias":
                pool = [b for b in pool if b.kind == "alias"]
            how = "inputs"
            if not pool and a.kind != "alias":
                pool = relaxed.get((_relaxed(known), a.ty), [])
                how = "relaxed"
            if not pool and a.kind != "alias":
                pool = [b for b in retyped.get((tuple(sorted(known)), shape_only(a.ty)), []) if b.key not in taken]
                how = "dtype"
            if pool:
                found = max(pool, key=lambda b: _score(b, a, known, taken, order))
        if found is None and a.kind == "alias" and ins and ins[0] in by_key:
            found, how = by_key[str(ins[0])], "output"
        if found is None:
            found = _inserted(a, ins, by_key)
            how = "inserted"
        if found is None and any(i is None for i in ins) and a.kind not in ("alias", "struct"):
            found = _resync(a, ins, same_op.get((_what(a.op), a.ty), []), canon, taken, by_key, match)
            if found is not None:
                _fields(after_by_key, before, match, taken)
            how = "resync"
        if found is None:
            if all(i is not None for i in ins):
                result.origins.append(a.key)
            continue
        match[a.key] = canon.get(found.key, found.key)
        result.how[a.key] = how
        taken.add(found.key)
    _result(result, results, after_by_key, by_key, taken)
    return result


def _result(result: Alignment, results: tuple[Optional[str], Optional[str]], after: dict[str, Any],
            before: dict[str, Any], taken: set[str]) -> None:
    """The ``result`` rule: the entry function's returned value after the step, still unmatched, stands for the
    one returned before it when their shapes agree."""
    mine, theirs = results
    a, b = after.get(mine or ""), before.get(theirs or "")
    if a is None or b is None or a.key in result.counterpart or b.key in taken:
        return
    if shape_only(a.ty) != shape_only(b.ty):
        return
    result.counterpart[a.key] = b.key
    result.how[a.key] = "result"
    taken.add(b.key)
    if a.key in result.origins:
        result.origins.remove(a.key)


def canonical(entries: list[Any]) -> dict[str, str]:
    """key -> the key of the value it is: a call of a Relax function is the value its function returns, an
    alias the value it names (so what reads a call and what reads the value returned inside it agree)."""
    by_key = {e.key: e for e in entries}
    out: dict[str, str] = {}

    def follow(key: str, depth: int = 0) -> str:
        entry = by_key.get(key)
        if entry is None or depth > 64:
            return key
        nxt = entry.returns if entry.kind == "relax" else entry.inputs[0] if entry.kind == "alias" and \
            entry.inputs else None
        return key if nxt is None or nxt not in by_key else follow(nxt, depth + 1)

    for entry in entries:
        target = follow(entry.key)
        if target != entry.key:
            out[entry.key] = target
    return out


def _resync(a: Any, ins: list[Optional[str]], pool: list[Any], canon: dict[str, str], taken: set[str],
            by_key: dict[str, Any], match: dict[str, str]) -> Optional[Any]:
    """Where the structure meets again after a change: the first value before the step not yet taken that is
    computed by the same operation with the same type, reads every input of ``a`` that has a counterpart, and
    whose other inputs are values no one took (the ones the step changed). The one input of ``a`` without a
    counterpart then gets that other input as its counterpart when it is alone and of the same type (a
    decomposed ``batch_norm``'s result and the ``batch_norm``'s)."""
    known = {str(i) for i in ins if i is not None}
    for b in pool:
        b_ins = [canon.get(i, i) for i in b.inputs]
        if b.key in taken or canon.get(b.key, b.key) in taken or not known <= set(b_ins):
            continue
        rest = [i for i in b_ins if i not in known]
        if any(_leaf(i) or i in taken for i in rest):
            continue
        lost = [raw for raw, i in zip(a.inputs, ins) if i is None]
        if len(lost) == 1 and len(rest) == 1 and rest[0] in by_key:
            taken.add(rest[0])
            match.setdefault(lost[0], rest[0])
        return b
    return None


def _fields(after: dict[str, Any], before: list[Any], match: dict[str, str], taken: set[str]) -> None:
    """A tuple the step built (``(y, mean, var)`` in place of ``batch_norm``'s result) matched by
    :func:`_resync`: its fields get the items of the value it was matched with, by position and type."""
    for key, other in list(match.items()):
        tup = after.get(key)
        if tup is None or tup.kind != "struct" or tup.op != "tuple":
            continue
        items = {b.index: b for b in before if b.kind == "item" and b.source == other}
        for i, field_id in enumerate(tup.inputs):
            item = items.get(i)
            field = after.get(field_id)
            if item is not None and field is not None and field_id not in match and field.ty == item.ty:
                match[field_id] = item.key
                taken.add(item.key)


def _inserted(a: Any, ins: list[Optional[str]], by_key: dict[str, Any]) -> Optional[Any]:
    """The value before the step that ``a`` was computed from when ``a`` reads one value and constants only
    and has its type (an operation inserted after it)."""
    values = [(raw, i) for raw, i in zip(a.inputs, ins) if not raw.startswith(("const:", "lit:"))]
    if len(values) != 1 or values[0][1] is None or a.kind in ("struct", "alias"):
        return None
    b = by_key.get(str(values[0][1]))
    return b if b is not None and b.ty == a.ty else None


def ancestors(key: str, entries: dict[str, Any]) -> list[str]:
    """Keys of the entries ``key``'s value depends on (its inputs, theirs ...; a call's returned value too)."""
    seen: list[str] = []
    todo = [key]
    while todo:
        entry = entries.get(todo.pop())
        if entry is None:
            continue
        for ident in (*entry.inputs, *([entry.returns] if entry.returns else [])):
            if ident in entries and ident not in seen:
                seen.append(ident)
                todo.append(ident)
    return seen
