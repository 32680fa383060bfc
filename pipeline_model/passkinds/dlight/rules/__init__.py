"""DLight rules beyond TVM's: the app's own (group ``app``) and the plug-ins' (entry-point group
``relax_pipeline_studio.dlight_rules``), one module per rule, as TVM's ``s_tir/dlight/cpu/`` keeps its rules.

:data:`RULES` is a lazy :class:`pipeline_model.registry.Registry`: its members are the entries themselves
(``"app.CPUMatmul = pipeline_model.passkinds.dlight.rules.cpu_matmul_tvm:CPUMatmul"``), read without importing
anything, because a rule class needs TVM when it is defined. The GUI and the exporter only list names and read a
rule's source (:func:`rule_sources`, with :mod:`ast`); the engine imports the class (:func:`rule_class`).

A rule's name is ``<group>.<Class>``: ``group`` is the plug-in's own (not ``gpu``/``cpu``, TVM's), ``Class`` the
entry's attribute, a class defined at the top of its module that references only ``tvm`` (and, as bases,
classes of other rule modules, e.g. :class:`~.app_rule_tvm.AppRule`), so that exported scripts can hold its
source: what an exported script contains is the class the engine runs. TVM-free.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pipeline_model import emit, plugins
from pipeline_model.registry import Registry

#: The app's own rules' group.
APP_GROUP = "app"
#: Groups of TVM's own rules (``tvm.s_tir.dlight.<group>``); a plug-in cannot use them.
TVM_GROUPS = ("gpu", "cpu")
_RULE_NAME = re.compile(r"^([A-Za-z_]\w*)\.([A-Za-z_]\w*)$")

#: The app's own rules, declared as entry points are.
BUILTIN = tuple(f"{APP_GROUP}.{cls} = pipeline_model.passkinds.dlight.rules.{module}:{cls}" for module, cls in (
    ("cpu_int8_tvm", "CPUInt8"), ("cpu_matmul_tvm", "CPUMatmul"), ("cpu_conv2d_tvm", "CPUConv2d"),
    ("cpu_parallel_tvm", "CPUParallel")))


def entry_problem(entry: plugins.PluginEntry) -> Optional[str]:
    """Why ``entry`` cannot be a DLight rule (``None`` when it can): its name must be ``group.Class`` outside
    TVM's groups, its value ``module:Class``."""
    match = _RULE_NAME.match(entry.name)
    if match is None or match.group(1) in TVM_GROUPS:
        return f"a DLight rule's name is <group>.<Class> with a group other than {', '.join(TVM_GROUPS)}"
    if not entry.attr or not emit.is_identifier(entry.attr):
        return "a DLight rule's entry point is module:Class"
    return None


#: Every rule beyond TVM's by name (``app.CPUMatmul``, ``example.RowTiles``): the entries, nothing imported.
RULES: Registry[plugins.PluginEntry] = Registry("DLight rule", plugins.GROUP_DLIGHT_RULES, BUILTIN,
                                                name_of=lambda e: e.name, lazy=True, check_entry=entry_problem)


def rule_names() -> list[str]:
    """The names of the rules beyond TVM's (the app's first, then the plug-ins')."""
    return RULES.names()


def builtin_rule_names() -> list[str]:
    """The app's own rules' names (``app.CPUMatmul`` ...)."""
    return [plugins.parse_entry(line, RULES.group).name for line in BUILTIN]


def rule_entry(name: str) -> Optional[plugins.PluginEntry]:
    """The entry of rule ``name``, or ``None`` when no installed plug-in provides it."""
    return RULES.get(name)


def missing_rule_message(name: str) -> str:
    """Why rule ``name`` is not there: TVM's group, or the plug-in that would provide it is not installed."""
    group = name.partition(".")[0]
    if group in TVM_GROUPS:
        return f"DLight rule {name!r} is not in tvm.s_tir.dlight.{group}"
    return (f"DLight rule {name!r} is not installed (no installed plug-in provides DLight rules of group "
            f"{group!r}; Help ▸ Environment lists the plug-ins)")


def rule_call(name: str) -> emit.ScriptCall:
    """The expression that makes rule ``name``: its class called, imported by the engine and copied into
    exported scripts. Raises :class:`~pipeline_model.emit.EmitError` when no plug-in provides it."""
    entry = rule_entry(name)
    if entry is None:
        raise emit.EmitError(missing_rule_message(name))
    what = "" if entry.builtin else f"DLight rule {name!r} of {entry.dist or entry.origin} {entry.version}".rstrip()
    return emit.ScriptCall(entry.module, entry.attr, what=what)  # a plug-in's failure names it


def rule_sources(name: str) -> list[str]:
    """What an exported script holds to define rule ``name``: its bases from rule modules, then the class."""
    entry = rule_entry(name)
    if entry is None:
        raise emit.EmitError(missing_rule_message(name))
    return emit.script_sources(entry.module, entry.attr)


def rule_class(name: str) -> Any:
    """The class of rule ``name`` (engine side: importing the rule's module imports TVM). Raises
    ``ValueError`` naming the rule when it is not installed or its module cannot be imported."""
    entry = rule_entry(name)
    if entry is None:
        raise ValueError(missing_rule_message(name))
    cls = plugins.load_entry(entry)
    if cls is None:
        raise ValueError(f"DLight rule {name!r}: its plug-in could not be loaded ("
                         + "; ".join(f.error for f in plugins.failures([RULES.group]) if f.name == name) + ")")
    return cls


def name_of_rule(rule: Any) -> Optional[str]:
    """The registered name of a rule object (``app.CPUParallel``), or ``None`` for a rule of no entry."""
    cls = type(rule)
    for name in rule_names():
        entry = rule_entry(name)
        if entry is not None and entry.module == cls.__module__ and entry.attr == cls.__qualname__:
            return name
    return None


def load_all() -> None:
    """Import every rule's class (engine side), so the plug-ins that cannot be loaded are recorded."""
    for name in rule_names():
        entry = rule_entry(name)
        if entry is not None:
            plugins.load_entry(entry)
