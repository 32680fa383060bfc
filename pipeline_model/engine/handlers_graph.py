"""Engine commands for the graph view: ``graph`` and ``prim_func``.

* ``graph`` ``{"key": str, "function": str | None}`` -> ``{"key", "functions": [names of the Relax functions],
  "function": the one shown, "graph": graph JSON (see :func:`pipeline_model.ir_graph.graph_to_json`)}``.
* ``prim_func`` ``{"key": str, "name": str}`` -> ``{"key", "name", "text": TVMScript of that PrimFunc}``.

``key`` is a ``snapshot_key``/``input_key`` of a run (a module in the worker's cache). Graphs are memoised
per (key, function) in a small LRU, since a user flicks between steps.
"""

from __future__ import annotations

import collections
from typing import TYPE_CHECKING, Any

from pipeline_model import ir_graph
from pipeline_model.engine.handler_registry import handler

if TYPE_CHECKING:  # the worker imports this module; only type checkers import it back
    from pipeline_model.engine.worker import WorkerContext

_GRAPH_MEMO: "collections.OrderedDict[tuple[str, str], dict[str, Any]]" = collections.OrderedDict()
_GRAPH_MEMO_SIZE = 16


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
    """Graph JSON of one Relax function of a cached module, with the list of its Relax functions."""
    key, mod = _module(args, ctx)
    functions = ir_graph.relax_functions(mod)
    function = args.get("function") or ir_graph.default_function(mod)
    if function is None:
        return {"key": key, "functions": [], "function": None, "graph": None}
    memo_key = (key, str(function))
    graph = _GRAPH_MEMO.get(memo_key)
    if graph is None:
        graph = ir_graph.graph_to_json(ir_graph.extract_graph(mod, str(function)))
        _GRAPH_MEMO[memo_key] = graph
        while len(_GRAPH_MEMO) > _GRAPH_MEMO_SIZE:
            _GRAPH_MEMO.popitem(last=False)
    else:
        _GRAPH_MEMO.move_to_end(memo_key)
    return {"key": key, "functions": functions, "function": function, "graph": graph}


@handler("prim_func")
def handle_prim_func(args: dict, ctx: WorkerContext) -> dict:
    """TVMScript (TensorIR) of the PrimFunc ``name`` of a cached module."""
    key, mod = _module(args, ctx)
    name = str(args.get("name") or "")
    if not name:
        raise ValueError("prim_func request without a PrimFunc name")
    return {"key": key, "name": name, "text": ir_graph.prim_func_text(mod, name)}
