"""The engine's command table: ``@handler("name")`` registers ``fn(args, ctx) -> dict``.

Shared by :mod:`pipeline_model.engine.worker` (which dispatches requests through :data:`HANDLERS`
and imports the handler modules by name at start) and the ``handlers_*`` modules (which register
their commands here), so neither imports the other: no import cycle. TVM-free.
"""

from __future__ import annotations

from typing import Any, Callable

#: A command handler: ``fn(args, ctx) -> reply dict`` (``ctx`` is a ``worker.WorkerContext``).
HandlerFn = Callable[[dict, Any], dict]
#: Command name -> handler.
HANDLERS: dict[str, HandlerFn] = {}


def handler(name: str) -> Callable[[HandlerFn], HandlerFn]:
    """Register ``fn(args, ctx) -> dict`` as the handler of command ``name``."""

    def register(fn: HandlerFn) -> HandlerFn:
        HANDLERS[name] = fn
        return fn

    return register
