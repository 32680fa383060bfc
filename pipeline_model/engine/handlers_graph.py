"""Engine commands for the graph view: ``graph`` and ``prim_func``.

* ``graph`` ``{"key": str, "function": str | None}`` -> ``{"key", "functions": [names of the Relax functions],
  "function": the one shown, "requested": the function asked for, "missing": True when the module has no
  such function (then the default function is shown instead of failing), "graph": graph JSON (see
  :func:`pipeline_model.ir_graph.graph_to_json`) with ``module`` on every node (see
  :func:`pipeline_model.graph_hierarchy.annotate_modules`) and ``graph["callees"]``: the graph JSON of each
  Relax function it calls (fused/composite functions), so a view can expand a call in place, "graph_token":
  the same string for the very same graph object (a step that left the function as it was, below), so a
  client keeps one copy; absent when unknown}``. With ``"have": [tokens]`` (the graphs a client holds), a graph
  whose token is among them is answered with ``graph: None``, its ``graph_token`` and ``graph_held: True``
  instead of being sent again (~3 s and ~100 MB of decoding in a GUI for a 50,000-node function).
  With ``"parts": true`` the nodes, edges and callee graphs come first as ``graph_part`` events and
  ``graph`` is a skeleton (:mod:`pipeline_model.engine.graph_parts`; the client reassembles it).
  With ``"collapsed": true`` (and optionally ``"before"``: the key of the module before the step, whose
  graph is compared when the engine has already made it) a large function is answered with ``graph: None`` and ``collapsed``: its collapsed view, group tree and changed
  view nodes (:func:`pipeline_model.graph_collapsed.collapsed_summary`); a small one as without it. With
  neither this graph nor the one before made yet, the summary comes from an outline walk (names and
  edges; types and attrs read only for the nodes the collapsed view shows), not the whole graph.
* ``prim_func`` ``{"key": str, "name": str}`` -> ``{"key", "name", "text": TVMScript of that PrimFunc}``.

``key`` is a ``snapshot_key``/``input_key`` of a run (a module in the worker's cache). Graphs are memoised
per (key, function) in a small LRU, since a user flicks between steps, and by content: a step that left the
Relax function (and the Relax functions of the module) as they were — the same objects, e.g.
AnnotateTIROpPattern, which only annotates PrimFuncs — reuses the graph of the module before it.
"""

from __future__ import annotations

import collections
import uuid
from typing import TYPE_CHECKING, Any, Callable, Optional

from pipeline_model import gc_pause, graph_collapsed, graph_hierarchy
from pipeline_model.engine import graph_extract_tvm, graph_parts
from pipeline_model.engine.handler_registry import handler

if TYPE_CHECKING:  # the worker imports this module; only type checkers import it back
    from pipeline_model.engine.context import WorkerContext

_GRAPH_MEMO: "collections.OrderedDict[tuple[str, str], dict[str, Any]]" = collections.OrderedDict()
_GRAPH_MEMO_SIZE = 16
# (key, function, before key) -> collapsed summary (or None: the whole graph is the answer)
_SUMMARY_MEMO: "collections.OrderedDict[tuple[str, str, str], Any]" = collections.OrderedDict()
# (key, function) -> ([(outline graph, its fill)] of the function and its callees, the summary made from
# them), left by a collapsed reply made from an outline: the whole graph asked next completes it instead of
# walking the function again.
_OUTLINES: "collections.OrderedDict[tuple[str, str], tuple[list[tuple[dict[str, Any], Any]], Any]]" = \
    collections.OrderedDict()
_OUTLINES_SIZE = 2
# (function object, module's function table, graph, its token): graphs by the objects they were extracted from.
_SAME_OBJECTS_MEMO: "collections.deque[tuple[Any, list[tuple[str, str, Any]], dict[str, Any], str]]" = \
    collections.deque(maxlen=8)
# (graph, its collapsed summary with no changes): a step that leaves a large function as it was (the same
# objects: AnnotateTIROpPattern, DeadCodeElimination with nothing to remove) is answered without a summary pass.
_SUMMARY_BY_GRAPH: "collections.deque[tuple[dict[str, Any], Any]]" = collections.deque(maxlen=8)


def _function_table(mod: Any) -> list[tuple[str, str, Any]]:
    """What a function's graph reads of the rest of the module: each global function's name and kind,
    and the Relax functions themselves (callee graphs, composite names); PrimFunc bodies do not matter."""
    from tvm import relax  # noqa: PLC0415

    table = []
    for gv, func in mod.functions.items():
        is_relax = isinstance(func, relax.Function)
        table.append((str(gv.name_hint), type(func).__name__, func if is_relax else None))
    table.sort(key=lambda item: item[0])
    return table


def _same_table(a: list[tuple[str, str, Any]], b: list[tuple[str, str, Any]]) -> bool:
    if len(a) != len(b):
        return False
    for (name_a, kind_a, fa), (name_b, kind_b, fb) in zip(a, b):
        if name_a != name_b or kind_a != kind_b or (fa is None) != (fb is None):
            return False
        if fa is not None and not fa.same_as(fb):
            return False
    return True


def _same_objects_graph(mod: Any, function: str) -> Optional[dict[str, Any]]:
    """The graph of an earlier module whose function objects ``mod`` still has (no walk), or ``None``."""
    func = mod[function]
    table = _function_table(mod)
    for known_func, known_table, graph, _token in _SAME_OBJECTS_MEMO:
        if known_func.same_as(func) and _same_table(known_table, table):
            return graph
    return None


def _graph_by_objects(mod: Any, function: str, outline: Any = None) -> dict[str, Any]:
    """The graph of ``function``, reused when an earlier module had the very same function objects, else
    the ``outline`` (of :func:`_outline_summary`, with the summary made from it) completed, else walked."""
    graph = _same_objects_graph(mod, function)
    if graph is not None:
        return graph
    if outline is not None:
        outlines, summary = outline
        graph = _without_gc(_completed, outlines)
        _remember_summary(graph, summary)  # the outline's summary is the whole graph's (no changes)
    else:
        graph = _without_gc(_function_graph, mod, function)
    _SAME_OBJECTS_MEMO.append((mod[function], _function_table(mod), graph, uuid.uuid4().hex))
    return graph


def _graph_token(graph: dict[str, Any]) -> Optional[str]:
    """The token of a graph object still in the same-objects memo (None once it left it)."""
    return next((token for _f, _t, known, token in _SAME_OBJECTS_MEMO if known is graph), None)


def _module(args: dict, ctx: WorkerContext) -> tuple[str, Any]:
    key = str(args.get("key") or "")
    if not key:
        raise ValueError("graph request without a module key (run the pipeline first)")
    mod = ctx.cache.get(key)
    if mod is None:
        raise KeyError(f"module {key!r} is not in the engine's cache (evicted or from an earlier engine); run again")
    return key, mod


@handler("graph")
def handle_graph(args: dict, ctx: WorkerContext) -> dict:
    """Graph JSON of one Relax function of a cached module, with the list of its Relax functions.

    A function the module does not have (a fused function chosen on a later step, ``forward`` kept from an
    earlier model) falls back to the module's default function, with ``missing: True``.
    """
    key, mod = _module(args, ctx)
    functions = graph_extract_tvm.relax_functions(mod)
    requested = args.get("function") or None
    function = requested if requested in functions else graph_extract_tvm.default_function(mod)
    missing = bool(requested) and requested not in functions
    if function is None:
        return {"key": key, "functions": [], "function": None, "requested": requested, "missing": missing,
                "graph": None}
    if args.get("collapsed"):
        summary = _summary(key, mod, str(function), str(args.get("before") or ""))
        if summary is not None:
            return {"key": key, "functions": functions, "function": function, "requested": requested,
                    "missing": missing, "graph": None, "collapsed": summary}
    graph = _memo_graph(key, mod, str(function))
    token = _graph_token(graph)
    if token is not None and token in (args.get("have") or ()):
        # the client holds this very graph already (a step that left the function as it was): its token only
        return {"key": key, "functions": functions, "function": function, "requested": requested,
                "missing": missing, "graph": None, "graph_token": token, "graph_held": True}
    if args.get("parts"):
        # Large graphs go as bounded graph_part events (see graph_parts): the client decodes short lines.
        graph, parts = graph_parts.split_graph(graph)
        for part in parts:
            ctx.emit(graph_parts.EV_GRAPH_PART, part)
    reply = {"key": key, "functions": functions, "function": function, "requested": requested,
             "missing": missing, "graph": graph}
    if token is not None:
        reply["graph_token"] = token
    return reply


def _memo_graph(key: str, mod: Any, function: str) -> dict[str, Any]:
    """The graph of ``function`` of module ``key`` (memoised by key and by the function objects)."""
    memo_key = (key, function)
    graph = _GRAPH_MEMO.get(memo_key)
    if graph is None:
        graph = _graph_by_objects(mod, function, _OUTLINES.pop(memo_key, None))
        _GRAPH_MEMO[memo_key] = graph
        while len(_GRAPH_MEMO) > _GRAPH_MEMO_SIZE:
            _GRAPH_MEMO.popitem(last=False)
    else:
        _GRAPH_MEMO.move_to_end(memo_key)
    return graph


def _summary(key: str, mod: Any, function: str, before_key: str) -> Any:
    """The collapsed summary of ``function`` of module ``key``, memoised; ``None`` when the whole graph is
    the answer. Its changes are against module ``before_key`` when both graphs are already made (a
    collapsed view never waits for a function to be walked with its details: the whole graphs colour the
    changes when they come). A function whose graph is not made yet is summarised from an outline
    (:func:`_outline_summary`), also when the graph before the step is made; a step that left the function
    as it was (the same objects) reuses the summary of the graph before it, with no changes."""
    before = _GRAPH_MEMO.get((before_key, function)) if before_key else None
    whole = _GRAPH_MEMO.get((key, function))
    if whole is None:
        whole = _same_objects_graph(mod, function)
    if whole is None and not _may_collapse(mod[function]):
        whole = _memo_graph(key, mod, function)
    if before is whole:
        before = None  # the step left this function's graph as it was: nothing changed
    memo_key = (key, function, before_key if before is not None and whole is not None else "")
    if memo_key in _SUMMARY_MEMO:
        _SUMMARY_MEMO.move_to_end(memo_key)
        return _SUMMARY_MEMO[memo_key]
    if whole is None:
        outlines: list[tuple[dict[str, Any], Any]] = []
        summary = _without_gc(_outline_summary, mod, function, outlines)
        _OUTLINES[(key, function)] = (outlines, summary)  # the whole graph, asked next, completes it
        while len(_OUTLINES) > _OUTLINES_SIZE:
            _OUTLINES.popitem(last=False)
    else:
        summary = _known_summary(whole) if before is None else None
        if summary is None:
            summary = _without_gc(graph_collapsed.collapsed_summary, whole, before, graph_collapsed.COLLAPSE_MIN_NODES)
            if before is None:
                _remember_summary(whole, summary)
    _SUMMARY_MEMO[memo_key] = summary
    while len(_SUMMARY_MEMO) > _GRAPH_MEMO_SIZE:
        _SUMMARY_MEMO.popitem(last=False)
    return summary


def _known_summary(graph: dict[str, Any]) -> Any:
    """The change-free summary already made of this very graph object (``None`` if none)."""
    for known, summary in _SUMMARY_BY_GRAPH:
        if known is graph:
            return summary
    return None


def _remember_summary(graph: dict[str, Any], summary: Any) -> None:
    if summary is not None and _known_summary(graph) is None:
        _SUMMARY_BY_GRAPH.append((graph, summary))


def _without_gc(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` with the cyclic garbage collector paused (:mod:`pipeline_model.gc_pause`): building an
    8k-node graph allocates ~1M short-lived objects, and the full collections they trigger walk the
    engine's whole heap (TVM objects included): 1.6-2.4 s instead of 0.65-0.8 s for the 128-layer decoder.
    What is left (the memoised graph) is frozen: later collections skip it."""
    with gc_pause.paused(freeze=True):
        return fn(*args)


def _may_collapse(func: Any) -> bool:
    """Whether a Relax function has more nodes than :data:`graph_collapsed.COLLAPSE_MIN_NODES` for sure
    (parameters, bindings and the output; its constants not counted): one worth an outline walk."""
    from tvm import relax  # noqa: PLC0415

    body = func.body
    count = len(func.params) + 1
    if isinstance(body, relax.SeqExpr):
        count += sum(len(block.bindings) for block in body.blocks)
    return count > graph_collapsed.COLLAPSE_MIN_NODES


def _outline_summary(mod: Any, function: str, outlines: list[tuple[dict[str, Any], Any]]) -> Any:
    """The collapsed summary of ``function`` from an outline of it and its callees (names and edges:
    :func:`graph_extract_tvm.extract_graph_outline`), the types and attrs read only for the nodes the
    collapsed view shows; equal to the summary of the whole graph (``tests/test_graph_collapsed.py``).
    ``outlines`` gets each outline graph and its fill, the function's first (see :func:`_completed`)."""

    def outline_of(m: Any, name: str) -> dict[str, Any]:
        graph, fill = graph_extract_tvm.extract_graph_outline(m, name)
        outlines.append((graph, fill))
        return graph

    graph = _with_callees(graph_hierarchy.annotate_modules(outline_of(mod, function)), mod, function, outline_of)
    return graph_collapsed.collapsed_summary(graph, None, graph_collapsed.COLLAPSE_MIN_NODES, outlines[0][1])


def _completed(outlines: list[tuple[dict[str, Any], Any]]) -> dict[str, Any]:
    """The whole graph (as :func:`_function_graph` makes it) from the outlines of :func:`_outline_summary`:
    every node of the function and its callees filled."""
    for graph, fill in outlines:
        fill(graph["nodes"])
    return outlines[0][0]


def _function_graph(mod: Any, function: str) -> dict[str, Any]:
    """Graph JSON of ``function`` with module paths and the graphs of the Relax functions it calls."""
    graph = graph_hierarchy.annotate_modules(graph_extract_tvm.extract_graph_json(mod, function))
    return _with_callees(graph, mod, function, graph_extract_tvm.extract_graph_json)


def _with_callees(graph: dict[str, Any], mod: Any, function: str,
                  extract: Callable[[Any, str], dict[str, Any]]) -> dict[str, Any]:
    """``graph`` with ``graph["callees"]``: ``extract(mod, name)`` of each Relax function it calls."""
    names = set(graph_extract_tvm.relax_functions(mod))
    callees: dict[str, Any] = {}
    for node in graph["nodes"]:
        callee = node.get("callee")
        if (node.get("callee_kind") == "relax_function" and callee in names and callee != function
                and callee not in callees):
            callees[callee] = extract(mod, callee)
    graph["graph"]["callees"] = callees
    return graph


@handler("prim_func")
def handle_prim_func(args: dict, ctx: WorkerContext) -> dict:
    """TVMScript (TensorIR) of the PrimFunc ``name`` of a cached module."""
    key, mod = _module(args, ctx)
    name = str(args.get("name") or "")
    if not name:
        raise ValueError("prim_func request without a PrimFunc name")
    return {"key": key, "name": name, "text": graph_extract_tvm.prim_func_text(mod, name)}
