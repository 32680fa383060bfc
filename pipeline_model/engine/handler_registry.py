"""The engine's command table: ``@handler("name")`` registers ``fn(args, ctx) -> dict``.

A :class:`pipeline_model.registry.Registry` of handler functions named by their command, the entry-point group
``relax_pipeline_studio.engine_commands`` (:mod:`pipeline_model.plugins`; loaded in the engine only). Its
built-in entries are every ``pipeline_model/engine/handlers_*.py`` (:func:`discover_handler_modules`: a new
engine command is one new file; each entry names the module, whose ``@handler`` functions register
themselves); a plug-in's entry point names either such a module or one function (``cmd = pkg.mod:fn``,
registered under the entry's name); ``RPS_ENGINE_HANDLER_MODULES`` is the development shortcut. Shared by :mod:`pipeline_model.engine.worker` (which loads the table at start
and dispatches requests through :data:`HANDLERS`) and the ``handlers_*`` modules (which register their
commands here), so neither imports the other: no import cycle. TVM-free (the handler modules import TVM
when loaded).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Callable, Iterator

from pipeline_model import plugins
from pipeline_model.registry import Registry

#: A command handler: ``fn(args, ctx) -> reply dict`` (``ctx`` is a ``worker.WorkerContext``).
HandlerFn = Callable[[dict, Any], dict]
#: Development shortcut: handler modules (comma-separated dotted names) imported at start without installing them.
ENV_HANDLER_MODULES = plugins.DEV_VARIABLES[plugins.GROUP_ENGINE_COMMANDS]


def discover_handler_modules() -> list[str]:
    """The built-in handler modules: every ``pipeline_model/engine/handlers_*.py``, then the commands of pass
    kinds — ``pipeline_model/passkinds/<kind>/handlers_tvm.py`` (a kind's engine commands live in its folder,
    e.g. MetaSchedule's ``tune``) — each sorted."""
    folder = os.path.dirname(os.path.abspath(__file__))
    engine = sorted(f"pipeline_model.engine.{entry[:-3]}" for entry in os.listdir(folder)
                    if entry.startswith("handlers_") and entry.endswith(".py"))
    kinds_folder = os.path.join(os.path.dirname(folder), "passkinds")
    kinds = sorted(f"pipeline_model.passkinds.{entry}.handlers_tvm" for entry in os.listdir(kinds_folder)
                   if os.path.isfile(os.path.join(kinds_folder, entry, "handlers_tvm.py")))
    return engine + kinds


#: Command name -> handler, loaded on first lookup (built-in handler modules, then the plug-ins).
COMMANDS: Registry[HandlerFn] = Registry(
    "engine command", plugins.GROUP_ENGINE_COMMANDS,
    tuple(f"{module.rpartition('.')[2]} = {module}" for module in discover_handler_modules()),
    name_of=lambda fn: fn.__name__, named_by_entry=True)


def handler(name: str) -> Callable[[HandlerFn], HandlerFn]:
    """Register ``fn(args, ctx) -> dict`` as the handler of command ``name``."""

    def register(fn: HandlerFn) -> HandlerFn:
        return COMMANDS.add(fn, name)

    return register


def handler_modules() -> list[str]:
    """Every module the table imports: the built-in handler modules, then the plug-in ones."""
    names: list[str] = []
    for entry in COMMANDS.entries():
        if entry.module not in names:
            names.append(entry.module)
    return names


def load_handlers() -> list[str]:
    """Import every handler module (once; a plug-in that cannot be loaded is recorded in
    :func:`pipeline_model.plugins.failures` and left out); returns :func:`handler_modules`."""
    COMMANDS.load()
    return handler_modules()


class _CommandTable(Mapping[str, HandlerFn]):
    """A read-only ``{command: handler}`` view of :data:`COMMANDS` (loads it on first use)."""

    def __getitem__(self, name: str) -> HandlerFn:
        fn = COMMANDS.get(name)
        if fn is None:
            raise KeyError(name)
        return fn

    def __iter__(self) -> Iterator[str]:
        return iter([name for name, _fn in COMMANDS.items()])

    def __len__(self) -> int:
        return len(COMMANDS.items())


#: Command name -> handler (what the worker dispatches through).
HANDLERS: Mapping[str, HandlerFn] = _CommandTable()
