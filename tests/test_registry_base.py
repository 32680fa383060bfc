"""The shared registry base (pipeline_model.registry) and its loader (pipeline_model.plugins): built-in entries,
installed entry points and the development variable through one path, replacement, order, failures."""

from __future__ import annotations

import sys
import types

import pytest

from pipeline_model import plugins
from pipeline_model.registry import Registry

GROUP = "relax_pipeline_studio.pass_kinds"  # a real group, with a development variable


class _Member:
    def __init__(self, name: str, order: int = 50) -> None:
        self.name = name
        self.order = order


@pytest.fixture
def modules(monkeypatch):
    """Modules ``rps_test_a`` (defines ``FIRST``) and ``rps_test_b`` (adds a member when imported)."""
    a = types.ModuleType("rps_test_a")
    a.FIRST = _Member("first", 20)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "rps_test_a", a)
    monkeypatch.setitem(sys.modules, "rps_test_b", types.ModuleType("rps_test_b"))
    monkeypatch.setattr(plugins, "installed_entries", lambda group: [])
    yield
    plugins.forget_failures()


def test_builtin_entries_and_development_modules_load_once_in_order(monkeypatch, modules):
    reg: Registry[_Member] = Registry("thing", GROUP, ("first = rps_test_a:FIRST",), name_of=lambda m: m.name,
                                      order_of=lambda m: m.order, member_type=_Member)
    monkeypatch.setenv(plugins.DEV_VARIABLES[GROUP], " rps_test_b , rps_test_b")
    reg.add(_Member("late", 90))
    assert reg.names() == ["first", "late"]
    assert [e.name for e in reg.entries()] == ["first", "rps_test_b"]  # a development module once
    assert reg.entry_of("first").builtin and reg.entry_of("late") is None
    reg.add(_Member("first", 95))  # same name replaces and re-sorts
    assert reg.names() == ["late", "first"]
    assert reg.get("missing") is None and "late" in reg
    assert reg.first(lambda m: m.order > 50).name == "late"
    reg.remove("late")
    assert reg.names() == ["first"]


def test_a_plugin_that_fails_is_recorded_and_left_out(monkeypatch, modules):
    monkeypatch.setattr(plugins, "installed_entries", lambda group: [
        plugins.parse_entry("broken = rps_no_such_module_xyz:THING", group, dist="rps-broken", version="1.0",
                            origin=plugins.INSTALLED),
        plugins.parse_entry("wrong = rps_test_a:__name__", group, dist="rps-wrong", version="2",
                            origin=plugins.INSTALLED)])
    reg: Registry[_Member] = Registry("widget", GROUP, ("first = rps_test_a:FIRST",), name_of=lambda m: m.name,
                                      member_type=_Member)
    assert reg.names() == ["first"]
    lines = [f.line() for f in plugins.failures([GROUP])]
    assert lines[0].startswith("rps-broken 1.0: pass kind 'broken' (rps_no_such_module_xyz:THING): "
                               "ModuleNotFoundError")
    assert lines[1] == "rps-wrong 2: pass kind 'wrong' (rps_test_a:__name__): TypeError: rps_test_a:__name__ is a " \
                       "str, not a widget"


def test_a_builtin_that_fails_raises(modules):
    reg: Registry[_Member] = Registry("gadget", GROUP, ("x = rps_no_such_builtin_xyz:X",), name_of=lambda m: m.name)
    with pytest.raises(plugins.PluginError, match="built-in 'x'"):
        reg.names()


def test_entry_syntax_and_separators(monkeypatch):
    entry = plugins.parse_entry("app.CPUMatmul = pkg.mod:Cls", "g")
    assert (entry.name, entry.module, entry.attr, entry.value) == ("app.CPUMatmul", "pkg.mod", "Cls", "pkg.mod:Cls")
    assert plugins.parse_entry("cmds=pkg.handlers", "g").attr == ""
    with pytest.raises(plugins.PluginError, match="malformed"):
        plugins.parse_entry("no value", "g")
    monkeypatch.setenv("RPS_X", "a.b, c;d:e")
    assert plugins.dev_module_names("RPS_X") == ["a.b", "c", "d", "e"]
    monkeypatch.delenv("RPS_X")
    assert plugins.dev_module_names("RPS_X") == []
