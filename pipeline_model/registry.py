"""One registry mechanism for every pluggable table of the app: pass kinds, model formats, DLight rules, engine commands.

Modelled on glue's ``config.Registry``: a :class:`Registry` holds named members of one entry-point group
(:mod:`pipeline_model.plugins`). On first use it loads the group's entries — the app's own (``"name =
module:attr"`` lines, the shape of an entry point), the installed plug-ins' entry points, then the
development modules of the group's environment variable — through one loader, and answers lookups. The
tables differ only in what a member is:

* pass kinds (:mod:`pipeline_model.passkinds.registry`), members ``PassKind`` instances named by ``.name``;
* model formats (:mod:`pipeline_model.importers.registry`), members ``ModelFormat`` instances;
* DLight rules (:mod:`pipeline_model.passkinds.dlight.rules`), members the entries themselves (a rule class
  needs TVM: only the engine imports it);
* engine commands (:mod:`pipeline_model.engine.handler_registry`), members handler functions named by command.

An entry's object is registered by the registry: an instance (or a class, instantiated) of ``member_type``
under ``name_of(member)``, a callable under the entry's name (``named_by_entry``); an entry that names only a
module registers its members itself when imported (``register(...)``, ``@handler``). A plug-in that cannot be
loaded is recorded (:func:`pipeline_model.plugins.failures`) and left out; a built-in that cannot be loaded
raises. TVM-free and Qt-free.
"""

from __future__ import annotations

import types
from typing import Any, Callable, Generic, Iterator, Optional, TypeVar

from pipeline_model import plugins

T = TypeVar("T")


class Registry(Generic[T]):
    """Named members of the entry-point ``group``, loaded lazily from its entries (see the module docstring).

    ``builtin`` are the app's own entries (``"name = module:attr"``). ``name_of`` gives a member's name (a member
    added under a known name replaces the earlier one); ``order_of`` sorts :meth:`members` (ascending;
    insertion order breaks ties). ``member_type``: what an entry's object must be (else the entry is a failure);
    ``named_by_entry``: members are registered under their entry's name; ``lazy``: the members are the
    :class:`~pipeline_model.plugins.PluginEntry` objects themselves, nothing is imported; ``check_entry`` says
    why an entry cannot be a member (``None`` when it can).
    """

    def __init__(self, what: str, group: str, builtin: tuple[str, ...], *,
                 name_of: Callable[[T], str], order_of: Optional[Callable[[T], float]] = None,
                 member_type: Optional[type] = None, named_by_entry: bool = False, lazy: bool = False,
                 check_entry: Optional[Callable[[plugins.PluginEntry], Optional[str]]] = None) -> None:
        self.what = what
        self.group = group
        self.builtin = tuple(builtin)
        self._name_of = name_of
        self._order_of = order_of
        self._member_type = member_type
        self._named_by_entry = named_by_entry
        self._lazy = lazy
        self._check_entry = check_entry
        self._members: dict[str, T] = {}
        self._entries: dict[str, plugins.PluginEntry] = {}
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
    def entries(self) -> list[plugins.PluginEntry]:
        """The group's entries: built-in, installed, development (:func:`pipeline_model.plugins.entries`)."""
        return plugins.entries(self.group, self.builtin)

    def entry_of(self, name: str) -> Optional[plugins.PluginEntry]:
        """The entry that registered the member called ``name`` (``None`` for one added at run time)."""
        self.load()
        return self._entries.get(name)

    def load(self) -> None:
        """Load every entry (once per process; re-entrant calls made while loading return at once). A plug-in
        that cannot be loaded is recorded and skipped; a built-in one raises
        :class:`~pipeline_model.plugins.PluginError`."""
        if self._loaded or self._loading:
            return
        self._loading = True
        try:
            for entry in self.entries():
                self._load_entry(entry)
            self._loaded = True
        finally:
            self._loading = False

    def _load_entry(self, entry: plugins.PluginEntry) -> None:
        problem = self._check_entry(entry) if self._check_entry is not None else None
        if problem:
            self._refuse(entry, ValueError(problem))
            return
        if self._lazy:
            self._entries[entry.name] = entry
            self.add(entry, entry.name)  # type: ignore[arg-type]
            return
        before = set(self._members)
        obj = plugins.load_entry(entry)
        if obj is None or isinstance(obj, types.ModuleType):  # failed (recorded), or a self-registering module
            for added in set(self._members) - before:
                self._entries[added] = entry
            return
        member = self._member_of(entry, obj)
        if member is not None:
            key = entry.name if self._named_by_entry else self._name_of(member)
            self.add(member, key)
            self._entries[key] = entry

    def _member_of(self, entry: plugins.PluginEntry, obj: Any) -> Optional[T]:
        kind = self._member_type
        if kind is not None and isinstance(obj, type) and issubclass(obj, kind):
            obj = obj()
        ok = isinstance(obj, kind) if kind is not None else callable(obj)
        if ok:
            return obj  # type: ignore[no-any-return]
        self._refuse(entry, TypeError(f"{entry.value} is a {type(obj).__name__}, not a {self.what}"))
        return None

    @staticmethod
    def _refuse(entry: plugins.PluginEntry, error: Exception) -> None:
        """A built-in entry that is not a member is a bug (raises); a plug-in's is recorded."""
        if entry.builtin:
            raise plugins.PluginError(f"{entry.group}: built-in {entry.name!r}: {error}")
        plugins.record_failure(entry, error)

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
