"""Plug-ins: installed packages that add pass kinds, model formats, DLight rules and engine commands.

A plug-in is a distribution that declares entry points in one of the :data:`GROUPS` (like pytest's
``pytest11`` plug-ins: installing the package is the user's consent to run its code). The app's own kinds,
formats, rules and commands are declared in the same shape (``"name = module:attr"`` lines, see
:func:`parse_entry`) and go through the same loader: each :class:`pipeline_model.registry.Registry` lists
its built-in entries, then the installed entry points of its group (:func:`installed_entries`, read with
:mod:`importlib.metadata`), then the development shortcut (modules named in an environment variable,
:func:`dev_entries`).

Loading an entry (:meth:`PluginEntry.load`) imports its module and reads its attribute. A plug-in that fails
to import is recorded (:func:`record_failure`, :func:`failures`) and left out: the app starts without it and
the environment report, Help ▸ About and a status message name it. A built-in that fails is a bug and raises.

Nothing read from a pipeline or model file names a module: files name pass ids and rule names, which are
looked up among the loaded entries. TVM-free and Qt-free.
"""

from __future__ import annotations

import importlib
import os
import re
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Optional

#: Entry-point groups (what a plug-in's ``pyproject.toml`` names under ``[project.entry-points."<group>"]``).
GROUP_PASS_KINDS = "relax_pipeline_studio.pass_kinds"
GROUP_MODEL_FORMATS = "relax_pipeline_studio.model_formats"
GROUP_DLIGHT_RULES = "relax_pipeline_studio.dlight_rules"
GROUP_ENGINE_COMMANDS = "relax_pipeline_studio.engine_commands"
GROUPS = (GROUP_PASS_KINDS, GROUP_MODEL_FORMATS, GROUP_DLIGHT_RULES, GROUP_ENGINE_COMMANDS)
#: Short names of the groups (reports).
GROUP_TITLES = {GROUP_PASS_KINDS: "pass kind", GROUP_MODEL_FORMATS: "model format",
                GROUP_DLIGHT_RULES: "DLight rule", GROUP_ENGINE_COMMANDS: "engine command"}

#: The development shortcut: an environment variable naming modules to import as plug-ins of a group
#: (comma-separated; for working on a plug-in without installing it). DLight rules have none.
DEV_VARIABLES = {GROUP_PASS_KINDS: "RPS_PASSKIND_MODULES", GROUP_MODEL_FORMATS: "RPS_MODEL_FORMAT_MODULES",
                 GROUP_ENGINE_COMMANDS: "RPS_ENGINE_HANDLER_MODULES"}

#: Where an entry comes from: the app itself, an installed distribution, or a development variable.
BUILTIN, INSTALLED = "builtin", "entry point"

#: Separators accepted between module names in a development variable (commas; ``;`` and ``os.pathsep``
#: for values written for older versions).
_SEPARATORS = re.compile(r"[,;" + re.escape(os.pathsep) + r"]")
_ENTRY = re.compile(r"^\s*([^=\s][^=]*?)\s*=\s*([\w.]+)\s*(?::\s*([\w.]+)\s*)?$")


class PluginError(ImportError):
    """A built-in entry is malformed or cannot be loaded (a bug of the app, not of a plug-in)."""


@dataclass(frozen=True)
class PluginEntry:
    """One entry: ``name = module[:attr]`` of ``group``, from ``dist`` (``version``); ``origin`` is
    :data:`BUILTIN`, :data:`INSTALLED` or the development variable that named it."""

    group: str
    name: str
    module: str
    attr: str = ""
    dist: str = ""
    version: str = ""
    origin: str = BUILTIN

    @property
    def builtin(self) -> bool:
        """True for the app's own entries."""
        return self.origin == BUILTIN

    @property
    def value(self) -> str:
        """``module:attr`` (or ``module``), as an entry point writes it."""
        return f"{self.module}:{self.attr}" if self.attr else self.module

    def load(self) -> Any:
        """Import :attr:`module` and return :attr:`attr` of it (the module itself when there is none)."""
        obj: Any = importlib.import_module(self.module)
        for part in self.attr.split(".") if self.attr else ():
            obj = getattr(obj, part)
        return obj


@dataclass(frozen=True)
class PluginFailure:
    """A plug-in entry that could not be loaded: which, from what package, and why (one line)."""

    group: str
    name: str
    value: str
    dist: str
    version: str
    error: str

    def to_json(self) -> dict[str, str]:
        """The failure as a JSON object."""
        return asdict(self)

    def line(self, titles: Optional[dict[str, str]] = None) -> str:
        """``"rps-broken 1.0: pass kind 'broken' (rps_broken.kind:KIND): ImportError: ..."`` (``titles``: the
        groups' names to show, default :data:`GROUP_TITLES`)."""
        package = f"{self.dist} {self.version}".strip() or "(no package)"
        title = (titles or GROUP_TITLES).get(self.group, self.group)
        return f"{package}: {title} {self.name!r} ({self.value}): {self.error}"


def parse_entry(line: str, group: str, *, dist: str = "", version: str = "", origin: str = BUILTIN) -> PluginEntry:
    """The entry of one ``"name = module:attr"`` line (the entry-point syntax; ``:attr`` optional)."""
    match = _ENTRY.match(line)
    if match is None:
        raise PluginError(f"{group}: malformed entry {line!r} (expected 'name = module:attr')")
    name, module, attr = match.group(1), match.group(2), match.group(3) or ""
    return PluginEntry(group, name, module, attr, dist, version, origin)


def installed_entries(group: str) -> list[PluginEntry]:
    """The entry points of ``group`` declared by installed distributions (sorted by package, then name)."""
    from importlib import metadata

    out = []
    for ep in metadata.entry_points(group=group):
        dist = getattr(ep, "dist", None)
        name = str(dist.metadata["Name"] or "") if dist is not None else ""
        version = str(dist.version or "") if dist is not None else ""
        try:
            out.append(parse_entry(f"{ep.name} = {ep.value}", group, dist=name, version=version, origin=INSTALLED))
        except PluginError as exc:
            record(PluginFailure(group, ep.name, ep.value, name, version, str(exc)))
    return sorted(out, key=lambda e: (e.dist, e.name))


def dev_module_names(env_var: str) -> list[str]:
    """The dotted module names listed in the environment variable ``env_var`` (empty when unset)."""
    out: list[str] = []
    for name in _SEPARATORS.split(os.environ.get(env_var, "") if env_var else ""):
        name = name.strip()
        if name and name not in out:
            out.append(name)
    return out


def dev_entries(group: str) -> list[PluginEntry]:
    """The development shortcut: each module named in the group's variable (:data:`DEV_VARIABLES`) as an entry
    (named after the module, no attribute: importing it registers what it defines)."""
    env_var = DEV_VARIABLES.get(group, "")
    return [PluginEntry(group, name, name, origin=env_var) for name in dev_module_names(env_var)]


def entries(group: str, builtin: Iterable[str] = ()) -> list[PluginEntry]:
    """Every entry of ``group``: the built-in lines, the installed entry points, the development modules."""
    return [parse_entry(line, group) for line in builtin] + installed_entries(group) + dev_entries(group)


# ---- failures ------------------------------------------------------------------------------------------
_FAILURES: dict[tuple[str, str, str], PluginFailure] = {}


def record(failure: PluginFailure) -> None:
    """Remember ``failure`` (once per group, name and value)."""
    _FAILURES[(failure.group, failure.name, failure.value)] = failure


def record_failure(entry: PluginEntry, exc: BaseException) -> PluginFailure:
    """Remember that ``entry`` could not be loaded because of ``exc``; returns the failure."""
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    failure = PluginFailure(entry.group, entry.name, entry.value, entry.dist or entry.origin, entry.version,
                            f"{type(exc).__name__}: {message}" if message else type(exc).__name__)
    record(failure)
    return failure


def failures(groups: Optional[Iterable[str]] = None) -> list[PluginFailure]:
    """The plug-ins this process could not load (of ``groups``, all when ``None``)."""
    wanted = set(groups) if groups is not None else None
    return [f for f in _FAILURES.values() if wanted is None or f.group in wanted]


def forget_failures() -> None:
    """Clear the recorded failures (tests)."""
    _FAILURES.clear()


def load_entry(entry: PluginEntry) -> Optional[Any]:
    """``entry.load()``; for a plug-in, a failure is recorded and ``None`` returned (a built-in raises)."""
    try:
        return entry.load()
    except Exception as exc:  # noqa: BLE001 - a plug-in's failure is reported with its name, the app goes on
        if entry.builtin:
            raise PluginError(f"{entry.group}: built-in {entry.name!r} ({entry.value}): "
                              f"{type(exc).__name__}: {exc}") from exc
        record_failure(entry, exc)
        return None


def report(groups: Iterable[str] = GROUPS) -> dict[str, Any]:
    """What the environment report and Help ▸ About show of ``groups``: the plug-in entries (installed and
    development ones, not the app's own) with their packages and versions, and the failures recorded in this
    process (a failed entry is listed among the failures only). JSON-plain."""
    groups = tuple(groups)
    found = []
    for group in groups:
        for entry in installed_entries(group) + dev_entries(group):
            found.append({"group": group, "name": entry.name, "value": entry.value,
                          "dist": entry.dist or entry.origin, "version": entry.version})
    return merge_reports({"plugins": found, "failures": [f.to_json() for f in failures(groups)]})


def merge_reports(*reports: Optional[dict[str, Any]]) -> dict[str, Any]:
    """One report out of several processes' (the GUI's and the engine's): entries and failures each once, an
    entry that failed in any of them listed among the failures only."""
    plugins: list[dict[str, Any]] = []
    broken: list[dict[str, Any]] = []
    for rep in reports:
        for key, out in (("plugins", plugins), ("failures", broken)):
            for item in (rep or {}).get(key) or []:
                if isinstance(item, dict) and item not in out:
                    out.append(item)
    failed = {(f.get("group"), f.get("name"), f.get("value")) for f in broken}
    return {"plugins": [p for p in plugins if (p.get("group"), p.get("name"), p.get("value")) not in failed],
            "failures": broken}


def failure_lines(rep: dict[str, Any], titles: Optional[dict[str, str]] = None) -> list[str]:
    """One line per failure of a (merged) report (``titles``: the groups' names to show)."""
    out = []
    for item in rep.get("failures") or []:
        if isinstance(item, dict):
            fields = {k: str(item.get(k, "")) for k in PluginFailure.__dataclass_fields__}
            out.append(PluginFailure(**fields).line(titles))
    return out


def plugin_lines(rep: dict[str, Any], titles: Optional[dict[str, str]] = None) -> list[str]:
    """One line per plug-in entry of a (merged) report: ``"rps-example-plugin 0.1: pass kind 'example'"``."""
    titles = titles or GROUP_TITLES
    return [f"{item.get('dist') or '?'} {item.get('version') or ''}".rstrip()
            + f": {titles.get(str(item.get('group')), item.get('group'))} {str(item.get('name'))!r}"
            for item in rep.get("plugins") or [] if isinstance(item, dict)]
