"""The shared registry base (pipeline_model.registry): loading, plug-ins, replacement, order, errors."""

from __future__ import annotations

import sys
import types

import pytest

from pipeline_model.registry import Registry, plugin_module_names


class _Member:
    def __init__(self, name: str, order: int = 50) -> None:
        self.name = name
        self.order = order


def test_builtin_and_plugin_modules_load_once_in_order(monkeypatch):
    reg: Registry[_Member] = Registry("thing", ("rps_test_builtin_a",), "RPS_TEST_THINGS",
                                      name_of=lambda m: m.name, order_of=lambda m: m.order)
    calls = []
    monkeypatch.setitem(sys.modules, "rps_test_builtin_a", types.ModuleType("rps_test_builtin_a"))
    monkeypatch.setitem(sys.modules, "rps_test_plugin_b", types.ModuleType("rps_test_plugin_b"))
    monkeypatch.setenv("RPS_TEST_THINGS", " rps_test_plugin_b , rps_test_plugin_b")
    reg.add(_Member("late", 90))
    reg.add(_Member("early", 10))
    calls.append(reg.names())
    assert calls == [["early", "late"]]
    assert reg.plugin_modules() == ["rps_test_plugin_b"]
    reg.add(_Member("early", 95))  # same name replaces and re-sorts
    assert reg.names() == ["late", "early"]
    assert reg.get("missing") is None and "late" in reg
    assert reg.first(lambda m: m.order > 50).name == "late"
    reg.remove("late")
    assert reg.names() == ["early"]


def test_plugin_import_error_names_variable_and_module(monkeypatch):
    class MyError(ImportError):
        pass

    reg: Registry[_Member] = Registry("widget", (), "RPS_TEST_WIDGETS", name_of=lambda m: m.name, load_error=MyError)
    monkeypatch.setenv("RPS_TEST_WIDGETS", "rps_no_such_module_xyz")
    with pytest.raises(MyError, match=r"RPS_TEST_WIDGETS: cannot import widget module 'rps_no_such_module_xyz'"):
        reg.members()


def test_separators(monkeypatch):
    monkeypatch.setenv("RPS_X", "a.b, c;d:e")
    assert plugin_module_names("RPS_X") == ["a.b", "c", "d", "e"]
    monkeypatch.delenv("RPS_X")
    assert plugin_module_names("RPS_X") == []
