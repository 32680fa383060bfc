"""One registry mechanism for every pluggable table of the app: pass kinds, model formats, engine commands.

Modelled on glue's ``config.Registry``: a :class:`Registry` holds named members, loads its built-in
modules (each registers its members when imported) and the plug-in modules named in one environment
variable on first use, and answers lookups. The three tables differ only in what a member is:

* pass kinds (:mod:`pipeline_model.passkinds.registry`), members ``PassKind`` instances named by ``.name``;
* model formats (:mod:`pipeline_model.importers.registry`), members ``ModelFormat`` instances;
* engine commands (:mod:`pipeline_model.engine.handler_registry`), members handler functions named by command.

Plug-in modules are listed in the registry's environment variable, separated by commas (``,``) — the one
separator all three accept (``;`` and ``os.pathsep`` are accepted too, for files written for older versions).
An import error of a plug-in module raises the registry's ``load_error`` type with a message naming the
variable and the module. TVM-free and Qt-free.
"""

from __future__ import annotations

import importlib
import os
import re
from typing import Callable, Generic, Iterator, Optional, TypeVar

T = TypeVar("T")

#: Separators accepted between module names in a plug-in environment variable.
_SEPARATORS = re.compile(r"[,;" + re.escape(os.pathsep) + r"]")


def plugin_module_names(env_var: str) -> list[str]:
    """The dotted module names listed in the environment variable ``env_var`` (empty when unset)."""
    raw = os.environ.get(env_var, "")
    out: list[str] = []
    for name in _SEPARATORS.split(raw):
        name = name.strip()
        if name and name not in out:
            out.append(name)
    return out


class Registry(Generic[T]):
    """Named members, loaded lazily from built-in and plug-in modules.

    ``builtin_modules`` are imported on first use (each calls :meth:`add` for its members), then the modules
    named in ``env_var``. ``name_of`` gives a member's name (a member added under a known name replaces
    the earlier one); ``order_of`` sorts :meth:`members` (ascending; insertion order breaks ties).
    ``load_error`` is the exception type raised when a plug-in module cannot be imported.
    """

    def __init__(self, what: str, builtin_modules: tuple[str, ...], env_var: str, *,
                 name_of: Callable[[T], str], order_of: Optional[Callable[[T], float]] = None,
                 load_error: type[Exception] = ImportError) -> None:
        self.what = what
        self.builtin_modules = tuple(builtin_modules)
        self.env_var = env_var
        self._name_of = name_of
        self._order_of = order_of
        self._load_error = load_error
        self._members: dict[str, T] = {}
        self._loading = False
        self._loaded = False

    # ---- registration -----------------------------------------------------------------------------
    def add(self, member: T, name: Optional[str] = None) -> T:
        """Register ``member`` (under ``name``, else ``name_of(member)``), replacing a member of that name."""
        self._members[name if name is not None else self._name_of(member)] = member
        return member

    def remove(self, name: str) -> None:
        """Forget the member called ``name`` (tests, plug-ins that withdraw)."""
        self._members.pop(name, None)

    # ---- loading ----------------------------------------------------------------------------------
    def plugin_modules(self) -> list[str]:
        """The plug-in modules named in :attr:`env_var`."""
        return plugin_module_names(self.env_var)

    def load(self) -> None:
        """Import the built-in modules, then the plug-in modules (once per process; re-entrant calls made
        while loading return at once). Raises ``load_error`` naming a plug-in module that fails to import."""
        if self._loaded or self._loading:
            return
        self._loading = True
        try:
            for name in self.builtin_modules:
                importlib.import_module(name)
            for name in self.plugin_modules():
                try:
                    importlib.import_module(name)
                except Exception as exc:  # noqa: BLE001 - a plug-in's failure is reported with its name
                    raise self._load_error(f"{self.env_var}: cannot import {self.what} module {name!r}: "
                                           f"{type(exc).__name__}: {exc}") from exc
            self._loaded = True
        finally:
            self._loading = False

    # ---- lookups ----------------------------------------------------------------------------------
    def get(self, name: str) -> Optional[T]:
        """The member called ``name``, or ``None``."""
        self.load()
        return self._members.get(name)

    def names(self) -> list[str]:
        """The members' names, in :meth:`members` order."""
        self.load()
        return [self._name_of_key(m) for m in self.members()]

    def members(self) -> list[T]:
        """Every member, sorted by ``order_of`` when given (else in registration order)."""
        self.load()
        members = list(self._members.values())
        if self._order_of is not None:
            members.sort(key=self._order_of)
        return members

    def items(self) -> list[tuple[str, T]]:
        """``(name, member)`` pairs in registration order."""
        self.load()
        return list(self._members.items())

    def first(self, predicate: Callable[[T], bool]) -> Optional[T]:
        """The first member (in :meth:`members` order) for which ``predicate`` holds, or ``None``."""
        return next((m for m in self.members() if predicate(m)), None)

    def __iter__(self) -> Iterator[T]:
        return iter(self.members())

    def __contains__(self, name: object) -> bool:
        self.load()
        return name in self._members

    def _name_of_key(self, member: T) -> str:
        for key, value in self._members.items():
            if value is member:
                return key
        return self._name_of(member)
